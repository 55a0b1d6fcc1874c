// Ops reach a device only through runtime::MeshDevice: with a strict gmock device, running an
// op asks for the topology, enqueues its workloads in one call (all or none) and waits for
// them, and nothing else; a device error comes back to the caller unchanged.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runtime/ccl/broadcast/broadcast.hpp"
#include "runtime/ccl/send_recv/send_recv.hpp"
#include "tests/unit/runtime/mock_mesh_device.hpp"
#include "topologies/builtin_systems.hpp"

namespace cclmesh::runtime {
namespace {

using ::testing::_;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::InSequence;
using ::testing::ResultOf;
using ::testing::ReturnRef;
using ::testing::SizeIs;
using ::testing::StrictMock;
using ::testing::Throw;

BufferHandle dram(std::uint32_t id, std::uint64_t address) {
  return BufferHandle{id, address, BufferConfig{BufferType::Dram, 8192, 2048, TensorMemoryLayout::Interleaved, {}}};
}

// The workloads of one enqueue_workloads call, as a vector (gmock's container matchers want
// one).
template <class Matcher>
auto workloads_are(Matcher matcher) {
  return ResultOf([](std::span<const MeshWorkload> w) { return std::vector<MeshWorkload>(w.begin(), w.end()); },
                  matcher);
}

FabricOptions line() {
  FabricOptions f;
  f.mode = FabricMode::Line;
  return f;
}

TEST(OpDeviceBoundary, SendRecvEnqueuesOneWorkloadAndWaits) {
  StrictMock<testing::MockMeshDevice> device;
  const topo::Topology t3k = topo::build_t3k();
  EXPECT_CALL(device, topology()).WillRepeatedly(ReturnRef(t3k));
  {
    InSequence order;
    EXPECT_CALL(device, enqueue_workloads(workloads_are(ElementsAre(AllOf(
                            Field(&MeshWorkload::name, "send_recv"), Field(&MeshWorkload::programs, SizeIs(2)))))));
    EXPECT_CALL(device, finish());
  }
  ccl::send_recv::Params params;
  params.sender = 0;
  params.receiver = 7;
  params.input = dram(1, 0x10000);
  params.output = dram(2, 0x20000);
  params.fabric = line();
  ccl::send_recv::run(device, params);
}

TEST(OpDeviceBoundary, BroadcastEnqueuesAProgramPerChip) {
  StrictMock<testing::MockMeshDevice> device;
  const topo::Topology t3k = topo::build_t3k();
  EXPECT_CALL(device, topology()).WillRepeatedly(ReturnRef(t3k));
  {
    InSequence order;
    EXPECT_CALL(device, enqueue_workloads(workloads_are(ElementsAre(AllOf(
                            Field(&MeshWorkload::name, "broadcast"), Field(&MeshWorkload::programs, SizeIs(8)))))));
    EXPECT_CALL(device, finish());
  }
  ccl::broadcast::Params params;
  params.root = 3;
  params.input = dram(1, 0x10000);
  params.output = dram(2, 0x20000);
  params.fabric = line();
  ccl::broadcast::run(device, params);
}

TEST(OpDeviceBoundary, DeviceErrorsReachTheCaller) {
  StrictMock<testing::MockMeshDevice> device;
  const topo::Topology t3k = topo::build_t3k();
  EXPECT_CALL(device, topology()).WillRepeatedly(ReturnRef(t3k));
  EXPECT_CALL(device, enqueue_workloads(_));
  EXPECT_CALL(device, finish()).WillOnce(Throw(DeviceError(DeviceError::Kind::Hang, "hang at 1 us")));
  ccl::send_recv::Params params;
  params.sender = 0;
  params.receiver = 1;
  params.input = dram(1, 0x10000);
  params.output = dram(2, 0x20000);
  params.fabric = line();
  EXPECT_THROW(ccl::send_recv::run(device, params), DeviceError);
}

TEST(OpDeviceBoundary, InvalidParamsNeverReachTheDevice) {
  StrictMock<testing::MockMeshDevice> device;  // any enqueue would fail the test
  const topo::Topology t3k = topo::build_t3k();
  EXPECT_CALL(device, topology()).WillRepeatedly(ReturnRef(t3k));
  ccl::send_recv::Params params;
  params.sender = 0;
  params.receiver = 1;
  params.input = dram(1, 0x10000);
  params.output = dram(2, 0x20000);  // fabric mode none: chip 0 -> 1 has no path
  EXPECT_THROW(ccl::send_recv::run(device, params), ccl::CclParamsError);
}

}  // namespace
}  // namespace cclmesh::runtime
