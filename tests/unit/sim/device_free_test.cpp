// MeshDevice::deallocate_buffer on the simulated and the planning device: a freed handle is dead
// for every call, a buffer an unfinished workload uses is not freed, both devices give the same
// addresses and refusals, and a library loop of all_gathers that frees what it allocates runs
// in the same memory every time with the right bytes.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/ccl/all_gather/allocate.hpp"
#include "runtime/ccl/common/collective.hpp"
#include "runtime/ccl/common/host_reference.hpp"
#include "sim/device/planning_mesh_device.hpp"
#include "sim/device/sim_mesh_device.hpp"
#include "tests/refusal.hpp"
#include "topologies/system_loader.hpp"

namespace cclmesh::sim::device {
namespace {

using cclmesh::testing::refusal;
using runtime::BufferConfig;
using runtime::BufferHandle;
using runtime::BufferType;
using Bytes = std::vector<std::byte>;

BufferConfig dram(std::uint64_t bytes) { return {BufferType::Dram, bytes, 2048}; }
BufferConfig l1(std::uint64_t bytes) { return {BufferType::L1, bytes, 2048}; }

runtime::FabricOptions ring_fabric() {
  runtime::FabricOptions fabric;
  fabric.mode = runtime::FabricMode::Ring;
  return fabric;
}

// A workload that runs nothing on chip 0 and names `buffers`.
runtime::MeshWorkload naming(std::vector<BufferHandle> buffers) {
  runtime::MeshWorkload w;
  w.name = "idle";
  w.programs[0] = runtime::Program{};
  w.buffers = std::move(buffers);
  return w;
}

TEST(DeviceFree, AFreedHandleIsDeadForEveryCall) {
  SimMeshDevice device(topo::load_system("n300"));
  const BufferHandle a = device.create_buffer(dram(12 * 2048));
  Bytes data(a.config.size_bytes, std::byte{7});
  device.write_buffer(1, a, data);
  device.deallocate_buffer(a);
  const std::string freed = "buffer 1 was freed already (deallocate_buffer)";
  EXPECT_EQ(refusal([&] { device.write_buffer(1, a, data); }), "write_buffer: " + freed);
  EXPECT_EQ(refusal([&] { device.read_buffer(1, a, data); }), "read_buffer: " + freed);
  EXPECT_EQ(refusal([&] { device.deallocate_buffer(a); }), "deallocate_buffer: " + freed);
  EXPECT_EQ(refusal([&] { device.enqueue_workload(naming({a})); }), "workload 'idle': " + freed);
  EXPECT_EQ(refusal([&] { device.read_buffer(1, BufferHandle{9, 0, dram(2048)}, data); }),
            "read_buffer: buffer 9 was not created on this device");
  // Its memory is the next buffer's; the new handle is live.
  const BufferHandle b = device.create_buffer(dram(12 * 2048));
  EXPECT_EQ(b.address, a.address);
  EXPECT_NE(b.id, a.id);
  device.write_buffer(1, b, data);
  Bytes back(data.size());
  device.read_buffer(1, b, back);
  EXPECT_EQ(back, data);
}

TEST(DeviceFree, ABufferAnUnfinishedWorkloadUsesIsFreedReadAndWrittenAfterFinish) {
  SimMeshDevice device(topo::load_system("n300"));
  const BufferHandle used = device.create_buffer(dram(12 * 2048));
  const BufferHandle spare = device.create_buffer(l1(64 * 2048));
  device.enqueue_workload(naming({used}));
  EXPECT_EQ(refusal([&] { device.deallocate_buffer(used); }),
            "deallocate_buffer: buffer 1 is used by workload 'idle', enqueued and not finished; call finish() first");
  Bytes data(used.config.size_bytes);
  const std::string io = "buffer 1 is used by workload 'idle', enqueued and not finished: host writes and reads happen "
                         "when called, not in order with enqueued work; call finish() first, or enqueue them "
                         "(enqueue_write_buffer, enqueue_read_buffer)";
  EXPECT_EQ(refusal([&] { device.write_buffer(0, used, data); }), "write_buffer: " + io);
  EXPECT_EQ(refusal([&] { device.read_buffer(0, used, data); }), "read_buffer: " + io);
  device.deallocate_buffer(spare);
  device.finish();
  device.write_buffer(0, used, data);
  device.read_buffer(0, used, data);
  device.deallocate_buffer(used);
  EXPECT_EQ(device.allocator().live_buffer_count(), 0u);
}

// The same calls on a planning device and a simulated one: the same handles and refusals.
TEST(DeviceFree, PlanningAndSimulatedDevicesFreeAlike) {
  const topo::Topology t3k = topo::load_system("t3k");
  SimMeshDeviceOptions options;
  options.data_mode = DataMode::TimingOnly;
  options.fabric = ring_fabric();
  SimMeshDevice device(t3k, options);
  PlanningMeshDevice planner(t3k, ring_fabric(), {}, DataMode::TimingOnly);
  std::vector<std::string> trail[2];
  int side = 0;
  for (runtime::MeshDevice* d : {static_cast<runtime::MeshDevice*>(&device), static_cast<runtime::MeshDevice*>(&planner)}) {
    std::vector<std::string>& out = trail[side++];
    const auto note = [&](const BufferHandle& h) { out.push_back(fmt::format("{}@{:#x}", h.id, h.address)); };
    const BufferHandle a = d->create_buffer(dram(1 << 20));
    const BufferHandle b = d->create_buffer(l1(64 * 4096));
    const BufferHandle c = d->create_buffer(dram(12 * 2048));
    note(a);
    note(b);
    note(c);
    d->deallocate_buffer(a);
    note(d->create_buffer(dram(12 * 2048)));  // a's place
    d->enqueue_workload(naming({b}));
    out.push_back(refusal([&] { d->deallocate_buffer(b); }));
    out.push_back(refusal([&] { d->deallocate_buffer(a); }));
    d->finish();
    d->deallocate_buffer(b);
    note(d->create_buffer(l1(64 * 2048)));
  }
  EXPECT_EQ(trail[0], trail[1]);
  EXPECT_EQ(trail[0].size(), 7u);
}

// A library user's loop (docs/library.md): allocate, write, run, read, deallocate. Every
// iteration's buffers land where the first's did, the allocator reaches no further, and every
// chip's output is the host reference's bytes.
TEST(DeviceFree, ALoopOfAllGathersRunsInTheSameMemory) {
  SimMeshDeviceOptions options;
  options.fabric = ring_fabric();
  SimMeshDevice device(topo::load_system("t3k"), options);
  namespace ag = runtime::ccl::all_gather;
  ag::Params params;
  params.input.shape = {1, 1, 32, 256};
  params.dim = 3;
  params.fabric = device.fabric();
  const std::vector<runtime::ChipId> ranks =
      runtime::ccl::resolve_groups(params.groups, device.topology(), params.fabric).front();
  std::mt19937_64 random(14);
  std::optional<std::pair<std::uint64_t, std::uint64_t>> first_addresses;
  std::uint64_t dram_reach = 0;
  std::uint64_t l1_reach = 0;
  constexpr int kIterations = 12;
  for (int i = 0; i < kIterations; ++i) {
    ag::allocate(device, params);
    if (!first_addresses) {
      first_addresses.emplace(params.input_buffer.address, params.output_buffer.address);
      dram_reach = device.allocator().dram().highest_end_ever_used();
      l1_reach = device.allocator().tensix_l1().lowest_ever_used();
    }
    EXPECT_EQ(std::make_pair(params.input_buffer.address, params.output_buffer.address), *first_addresses) << i;
    std::vector<Bytes> inputs;
    for (runtime::ChipId chip : ranks) {
      Bytes input(params.input_buffer.config.size_bytes);
      for (std::byte& b : input) b = static_cast<std::byte>(random() & 0xFF);
      device.write_buffer(chip, params.input_buffer, input);
      inputs.push_back(std::move(input));
    }
    ag::run(device, params);
    const Bytes expected = runtime::ccl::reference::concat(inputs, params.input, params.dim);
    Bytes output(params.output_buffer.config.size_bytes);
    for (runtime::ChipId chip : ranks) {
      device.read_buffer(chip, params.output_buffer, output);
      EXPECT_TRUE(output == expected) << "iteration " << i << " chip " << chip;
    }
    ag::deallocate(device, params);
  }
  EXPECT_EQ(device.allocator().dram().highest_end_ever_used(), dram_reach);
  EXPECT_EQ(device.allocator().tensix_l1().lowest_ever_used(), l1_reach);
  EXPECT_EQ(device.allocator().live_buffer_count(), 0u);
  EXPECT_EQ(device.allocator().dram().free_block_count(), 1u);  // all of DRAM in one block again
}

}  // namespace
}  // namespace cclmesh::sim::device
