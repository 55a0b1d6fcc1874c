// REFERENCE 6.7 / 11.1: the flood that fills every buffer of a ring (each chip multicasting its
// pages all the way round one way, multicast_all_gather.hpp) deadlocks routers without
// avoidance and completes, bit for bit, on the mid-2025 dateline-VC ring: the packets that cross
// the ring's closing hop move to VC1, whose channels end before the dateline, so the buffers
// form no cycle.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/unit/sim/device_error_util.hpp"
#include "tests/unit/sim/device_test_util.hpp"
#include "tests/unit/sim/multicast_all_gather.hpp"
#include "topologies/builtin_systems.hpp"

namespace cclmesh::sim::device {
namespace {

using ::testing::HasSubstr;

// Full 4352 B packets, 48 pages per chip, 7 hops one way: far more than the ring's buffers hold.
constexpr testing::MulticastAllGather kFlood{48, 4352, 1, true};

TEST(DatelineFlood, TheFloodThatDeadlocksARingWithoutAvoidanceCompletesOnTheDatelineRing) {
  SimMeshDeviceOptions options;
  options.fabric.mode = runtime::FabricMode::Ring;
  options.fabric.ring_flow_control = runtime::RingFlowControl::Dateline;
  SimMeshDevice device(topo::build_t3k(), options);
  testing::multicast_all_gather(device, kFlood);  // checks every chip's output byte for byte
}

TEST(DatelineFlood, TheSameFloodDeadlocksTheRingWithoutAvoidance) {
  SimMeshDeviceOptions options;
  options.fabric.mode = runtime::FabricMode::Ring;
  options.fabric.bubble_flow_control = false;
  SimMeshDevice device(topo::build_t3k(), options);
  const std::string text =
      testing::expect_device_error([&] { testing::multicast_all_gather(device, kFlood); }, runtime::DeviceError::Kind::Hang);
  EXPECT_THAT(text, HasSubstr("a cycle of full router buffers")) << text;
  EXPECT_THAT(text, HasSubstr("ring without bubble flow control")) << text;
}

TEST(DatelineFlood, AndCompletesWithBubbleFlowControl) {
  SimMeshDeviceOptions options;
  options.fabric.mode = runtime::FabricMode::Ring;
  SimMeshDevice device(topo::build_t3k(), options);
  testing::multicast_all_gather(device, kFlood);
}

}  // namespace
}  // namespace cclmesh::sim::device
