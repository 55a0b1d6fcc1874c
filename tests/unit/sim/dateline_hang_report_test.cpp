// A hang on the mid-2025 dateline-VC ring (REFERENCE 6.1, 6.7) reported as precisely as on a
// bubble ring: the wait-for chain goes through the VC a packet is on, so a packet past the
// dateline is found in its receiver's VC1 slots and followed into sender channel 2 (before,
// the chain read the VC0 slots alone: "0 of 0 slots hold packets ... the packets or acks between
// the two ends were lost", beside a link that had lost nothing).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "tests/unit/sim/device_error_util.hpp"
#include "tests/unit/sim/device_test_util.hpp"
#include "tests/unit/sim/multicast_all_gather.hpp"
#include "topologies/builtin_systems.hpp"
#include "topologies/embedding.hpp"

namespace cclmesh::sim::device {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// The T3K ring flood (dateline_flood_test): every chip multicasts 48 full packets all the way
// round forward, so packets from the ring's last chips cross the dateline (the closing hop, last
// chip to first) onto VC1 and ride it on.
constexpr testing::MulticastAllGather kFlood{48, 4352, 1, true};

// The flood with the ring's second forward hop (positions 1 -> 2) down from 20 us: what crossed
// the dateline piles up on VC1 at positions 0 and 1.
std::string second_hop_down_report(bool first_level_acks) {
  SimMeshDeviceOptions options;
  options.fabric.mode = runtime::FabricMode::Ring;
  options.fabric.ring_flow_control = runtime::RingFlowControl::Dateline;
  options.fabric.first_level_acks = first_level_acks;
  const topo::Topology t3k = topo::build_t3k();
  const topo::Embedding ring = topo::find_system_ring(t3k);
  const auto chip_at = [&ring](std::size_t i) { return static_cast<runtime::ChipId>(ring.chips.at(i)); };
  options.faults.link_down.push_back({chip_at(1), chip_at(2), SimTime::from_us(20), "link-down:x@20us"});
  SimMeshDevice device(t3k, options);
  return testing::expect_device_error([&] { testing::multicast_all_gather(device, kFlood); },
                                      runtime::DeviceError::Kind::Hang);
}

// Ring order 4-0-2-6-7-3-1-5 (the dateline is 5 -> 4); link 0-2 is down. Chip 5's worker injects
// across the dateline into chip 4's VC1, which chip 4's channel 2 carries on to chip 0's VC1 and
// chip 0's channel 2 to the down link. Before: chip 5's chain read chip 4's VC0 receiver ("0 of
// 0 slots hold packets; ... were lost") and chip 1's stopped at a "mismatched buffer sizes"
// between two dateline router kinds whose splits differ by design; the headline counted 1 of
// the 8 parked workers as waiting on the link, now all 8.
TEST(DatelineHangReport, AChainPastTheDatelineFollowsVc1ToTheDownLink) {
  const std::string text = second_hop_down_report(true);
  EXPECT_THAT(text, HasSubstr("8 of the 8 parked worker kernels (on 8 of the 8 chips with parked ones) wait on it"))
      << text;
  EXPECT_THAT(text, HasSubstr("router chip 5 ch 6 sender channel 0 (from workers): 8 of 8 slots in use (22 packets "
                              "written, 14 freed); its slots free when router chip 4 ch 6 receiver VC1 acknowledges "
                              "them\n"))
      << text;
  EXPECT_THAT(text, HasSubstr("<- router chip 4 ch 6 receiver VC1: 16 of 16 slots hold packets; it forwards into "
                              "router chip 4 ch 0 sender channel 2\n"))
      << text;
  EXPECT_THAT(text, HasSubstr("<- router chip 4 ch 0 sender channel 2 (forwarding on VC1): 8 of 8 slots in use (26 "
                              "packets written, 18 freed); its slots free when router chip 0 ch 8 receiver VC1 "
                              "acknowledges them\n"))
      << text;
  EXPECT_THAT(text, HasSubstr("<- router chip 0 ch 8 receiver VC1: 8 of 8 slots hold packets; it forwards into router "
                              "chip 0 ch 6 sender channel 2\n"))
      << text;
  EXPECT_THAT(text, HasSubstr("<- router chip 0 ch 6 sender channel 2 (forwarding on VC1): 4 of 4 slots in use (10 "
                              "packets written, 6 freed); it needs acks across the link chip 0 ch 6 <-> chip 2 ch 6, "
                              "which is down"))
      << text;
  EXPECT_THAT(text, Not(HasSubstr("mismatched buffer sizes"))) << text;
  EXPECT_THAT(text, Not(HasSubstr("were lost"))) << text;
}

// The mid-2025 router without first-level acks: a sender's slots wait for the completion ack,
// and the chain says so; it still ends at the down link through VC1.
TEST(DatelineHangReport, WithoutFirstLevelAcksTheSlotsWaitForCompletions) {
  const std::string text = second_hop_down_report(false);
  EXPECT_THAT(text, HasSubstr("its slots free when router chip 4 ch 6 receiver VC1 has handled them (completion acks; "
                              "first-level acks are off)"))
      << text;
  EXPECT_THAT(text, HasSubstr("sender channel 2 (forwarding on VC1): ")) << text;
  EXPECT_THAT(text, HasSubstr("which is down")) << text;
  EXPECT_THAT(text, Not(HasSubstr("mismatched buffer sizes"))) << text;
  EXPECT_THAT(text, Not(HasSubstr("were lost"))) << text;
}

}  // namespace
}  // namespace cclmesh::sim::device
