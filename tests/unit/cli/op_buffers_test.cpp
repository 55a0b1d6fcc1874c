// OpBuffers gives back what one op of `cclmesh run` / `sweep` created, its global semaphores as
// well as its buffers: after free_all the device holds none of them and the next op's land at
// the same addresses; free_all_quietly, after an op refused midway, does not throw and leaves
// what an enqueued workload still names.
#include "tools/cclmesh/op_buffers.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "sim/device/sim_mesh_device.hpp"
#include "topologies/system_loader.hpp"

namespace cclmesh::cli {
namespace {

using runtime::BufferHandle;
using runtime::CoreKind;
using runtime::GlobalSemaphore;

const std::vector<runtime::CoreRange> kWorkers{runtime::CoreRange{{0, 0}, {1, 0}}};
const runtime::BufferConfig kL1Buffer{runtime::BufferType::L1, 64 * 2048, 2048};

TEST(OpBuffers, FreeAllGivesBackTheOpsBuffersAndSemaphores) {
  sim::device::SimMeshDevice device(topo::load_system("n300"));
  OpBuffers first(device);
  const BufferHandle buffer = first.create(kL1Buffer);
  const GlobalSemaphore semaphore = first.create_semaphore(kWorkers, CoreKind::Tensix, 0);
  first.free_all();
  EXPECT_EQ(device.allocator().live_buffer_count(), 0u);
  EXPECT_EQ(device.allocator().live_global_semaphore_count(), 0u);
  OpBuffers next(device);
  EXPECT_EQ(next.create(kL1Buffer).address, buffer.address);
  EXPECT_EQ(next.create_semaphore(kWorkers, CoreKind::Tensix, 0).address, semaphore.address);
}

TEST(OpBuffers, FreeAllQuietlyKeepsWhatAnEnqueuedWorkloadNames) {
  sim::device::SimMeshDevice device(topo::load_system("n300"));
  OpBuffers op(device);
  const BufferHandle named_buffer = op.create(kL1Buffer);
  op.create(kL1Buffer);
  const GlobalSemaphore named_semaphore = op.create_semaphore(kWorkers, CoreKind::Tensix, 0);
  op.create_semaphore(kWorkers, CoreKind::Tensix, 0);
  runtime::MeshWorkload workload;
  workload.name = "enqueued before the refusal";
  workload.programs[0] = runtime::Program{};
  workload.buffers = {named_buffer};
  workload.global_semaphores = {named_semaphore};
  device.enqueue_workload(workload);
  op.free_all_quietly();  // never throws over the op's own error
  EXPECT_EQ(device.allocator().live_buffer_count(), 1u);
  EXPECT_EQ(device.allocator().live_global_semaphore_count(), 1u);
  device.finish();
  device.deallocate_buffer(named_buffer);
  device.deallocate_global_semaphore(named_semaphore);
}

}  // namespace
}  // namespace cclmesh::cli
