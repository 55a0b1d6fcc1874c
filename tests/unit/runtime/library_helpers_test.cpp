// The helpers a library user calls around an op (docs/library.md): all_gather::allocate creates
// what the op needs through MeshDevice alone, sized from the params; worker_span is an op's
// time as `cclmesh run` takes it; resolve_groups on FabricOptions gives the fabric's ranks.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "runtime/ccl/all_gather/allocate.hpp"
#include "runtime/ccl/common/collective.hpp"
#include "runtime/device/worker_span.hpp"
#include "tests/unit/runtime/mock_mesh_device.hpp"
#include "topologies/builtin_systems.hpp"

namespace cclmesh::runtime {
namespace {

using ::testing::_;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::Return;
using ::testing::ReturnRef;
using ::testing::StrictMock;

namespace ag = ccl::all_gather;

KernelProfile kernel(CoreKind kind, std::uint64_t start_ns, std::uint64_t end_ns) {
  KernelProfile k;
  k.core_kind = kind;
  k.start_ns = start_ns;
  k.end_ns = end_ns;
  return k;
}

TEST(WorkerSpan, FirstWorkerStartToLastWorkerEndFromTheFirstEntry) {
  const std::vector<KernelProfile> profile = {
      kernel(CoreKind::Tensix, 1, 5),       // an earlier op: before first_entry
      kernel(CoreKind::Ethernet, 0, 100),   // an EDM or router: not a worker
      kernel(CoreKind::Tensix, 12, 30),
      kernel(CoreKind::Tensix, 10, 20),
  };
  const WorkerSpan span = worker_span(profile, 1);
  EXPECT_EQ(span.start_ns, 10u);
  EXPECT_EQ(span.end_ns, 30u);
  EXPECT_EQ(span.duration_ns(), 20u);
}

TEST(WorkerSpan, NoWorkerKernelIsAnError) {
  const std::vector<KernelProfile> profile = {kernel(CoreKind::Tensix, 1, 5), kernel(CoreKind::Ethernet, 0, 100)};
  try {
    (void)worker_span(profile, 1);
    FAIL() << "a span without a worker kernel";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("no worker kernel in the profile's 1 entries from entry 1"));
  }
  EXPECT_THROW((void)worker_span(profile, 2), std::invalid_argument);
}

FabricOptions ring() {
  FabricOptions f;
  f.mode = FabricMode::Ring;
  return f;
}

TEST(ResolveGroups, FromTheDevicesFabricOptions) {
  const topo::Topology t3k = topo::build_t3k();
  const std::vector<std::vector<ChipId>> groups = ccl::resolve_groups(ccl::GroupSelection{}, t3k, ring());
  EXPECT_EQ(groups, ccl::resolve_groups(ccl::GroupSelection{}, t3k, FabricPlan(t3k, ring())));
  EXPECT_EQ(groups, (std::vector<std::vector<ChipId>>{{4, 0, 2, 6, 7, 3, 1, 5}}));
}

BufferHandle handle(std::uint32_t id, const BufferConfig& config) { return BufferHandle{id, 0x10000u * id, config}; }

TEST(AllGatherAllocate, InputOutputAndDoneSemaphoreSizedFromTheParams) {
  StrictMock<testing::MockMeshDevice> device;
  const topo::Topology t3k = topo::build_t3k();
  EXPECT_CALL(device, topology()).WillRepeatedly(ReturnRef(t3k));
  ag::Params p;
  p.input.shape = {1, 1, 32, 2048};  // 64 bf16 tiles per chip
  p.fabric = ring();
  const BufferConfig input{BufferType::Dram, 64 * 2048, 2048};
  const BufferConfig output{BufferType::Dram, 8 * 64 * 2048, 2048};
  EXPECT_CALL(device, create_buffer(input)).WillOnce(Return(handle(1, input)));
  EXPECT_CALL(device, create_buffer(output)).WillOnce(Return(handle(2, output)));
  const GlobalSemaphore done{7, 0x30000, ag::semaphore_cores(p, t3k)};
  EXPECT_CALL(device, create_global_semaphore(ag::semaphore_cores(p, t3k), CoreKind::Tensix, 0u))
      .WillOnce(Return(done));
  ag::allocate(device, p);
  EXPECT_EQ(p.input_buffer, handle(1, input));
  EXPECT_EQ(p.output_buffer, handle(2, output));
  EXPECT_TRUE(p.broadcast_buffers.empty());
  EXPECT_EQ(p.done_semaphore, done);
  ag::validate(p, t3k);  // what allocate made is what the op accepts
}

TEST(AllGatherAllocate, TilePaddedGatherGetsTheFallbacksBroadcastBuffers) {
  StrictMock<testing::MockMeshDevice> device;
  const topo::Topology t3k = topo::build_t3k();
  EXPECT_CALL(device, topology()).WillRepeatedly(ReturnRef(t3k));
  ag::Params p;
  p.input.shape = {1, 1, 32, 16};  // dim 3 is half a tile: all_broadcast + concat
  p.fabric = ring();
  ASSERT_TRUE(ag::needs_broadcast_fallback(p));
  std::uint32_t next_id = 1;
  EXPECT_CALL(device, create_buffer(_)).Times(2 + 8).WillRepeatedly([&](const BufferConfig& c) {
    return handle(next_id++, c);
  });
  EXPECT_CALL(device, create_global_semaphore(_, CoreKind::Tensix, 0u))
      .WillOnce([](const std::vector<CoreRange>& cores, CoreKind, std::uint32_t) {
        return GlobalSemaphore{1, 0x30000, cores};
      });
  ag::allocate(device, p, BufferType::L1);
  EXPECT_EQ(p.output_buffer.config.type, BufferType::L1);
  ASSERT_EQ(p.broadcast_buffers.size(), 8u);
  for (const BufferHandle& b : p.broadcast_buffers) EXPECT_EQ(b.config, ag::broadcast_buffer_config(p));
  ag::validate(p, t3k);
}

// A dim out of range is the caller's mistake, named, and allocate creates nothing (the strict
// mock fails on any call). It used to create the input buffer and then throw std::out_of_range
// ("array::at: __n (which is 7) >= _Nm (which is 4)") from the output's spec.
TEST(AllGatherAllocate, ADimOutOfRangeIsNamedAndCreatesNothing) {
  StrictMock<testing::MockMeshDevice> device;
  const topo::Topology t3k = topo::build_t3k();
  EXPECT_CALL(device, topology()).WillRepeatedly(ReturnRef(t3k));
  ag::Params p;
  p.input.shape = {1, 1, 32, 2048};
  p.dim = 7;
  p.fabric = ring();
  try {
    ag::allocate(device, p);
    ADD_FAILURE() << "allocate took dim 7";
  } catch (const ccl::CclParamsError& e) {
    EXPECT_THAT(e.what(), HasSubstr("dim 7 is out of range; expected 0..3"));
  }
  EXPECT_THROW(ag::output_spec(p, t3k), ccl::CclParamsError);
}

// An empty input dimension is named on the input, which the caller gave, and nothing is created.
// It used to be named on the output's shape ("tensor shape [1,1,0,16384]: dimension 2 is 0"),
// which the caller never wrote (session 39's bug bash).
TEST(AllGatherAllocate, AnEmptyInputDimensionIsNamedOnTheInputAndCreatesNothing) {
  StrictMock<testing::MockMeshDevice> device;
  const topo::Topology t3k = topo::build_t3k();
  EXPECT_CALL(device, topology()).WillRepeatedly(ReturnRef(t3k));
  ag::Params p;
  p.input.shape = {1, 1, 0, 2048};
  p.fabric = ring();
  try {
    ag::allocate(device, p);
    ADD_FAILURE() << "allocate took an input with an empty dimension";
  } catch (const ccl::CclParamsError& e) {
    EXPECT_THAT(e.what(), HasSubstr("all_gather: input tensor shape [1,1,0,2048]: dimension 2 is 0; expected >= 1"));
  }
}

}  // namespace
}  // namespace cclmesh::runtime
