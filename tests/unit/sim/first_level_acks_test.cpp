// FabricOptions::first_level_acks off (REFERENCE 6.4: the mid-2025 router, before PR #33192):
// a sender slot frees only on the completion ack. Data moves bit for bit on a line and on the
// dateline-VC ring, the receivers send no first-level ack (the ack mailboxes' counters say so),
// and bubble flow control without them is refused by the plan; forced on the routers anyway,
// the ring flood that bubble flow control carries deadlocks (REFERENCE 6.7: "it needs
// first-level acks").
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>

#include "kernels/fabric/router_logic.hpp"
#include "tests/unit/sim/device_error_util.hpp"
#include "tests/unit/sim/device_test_util.hpp"
#include "tests/unit/sim/multicast_all_gather.hpp"
#include "topologies/builtin_systems.hpp"
#include "topologies/parametric.hpp"

namespace cclmesh::sim::device {
namespace {

using ::testing::HasSubstr;
using runtime::ChipId;
using runtime::FabricMode;

// Full 4352 B packets, 48 pages per chip, 7 hops one way round the T3K ring (dateline_flood_test).
constexpr testing::MulticastAllGather kFlood{48, 4352, 1, true};

kernels::FabricAckWord ack_word(SimMeshDevice& device, const runtime::FabricRouterSite& site, std::uint32_t vc) {
  const kernels::FabricRouterL1Layout layout = kernels::make_fabric_router_layout(site.config);
  const CoreCoord core{static_cast<int>(site.noc0.x), static_cast<int>(site.noc0.y)};
  MemoryRegion& l1 = device.system().chip(static_cast<ChipId>(site.chip)).l1(core);
  kernels::FabricAckWord word{};
  const std::uint64_t at = vc == 0 ? layout.ack_mailbox : layout.vc1_ack_mailbox;
  for (std::uint32_t i = 0; i < kernels::fabric_router::kNumSenderChannels; ++i) {
    word.first_level[i] = l1.read_u32(at + 4 * i);
    word.completions[i] = l1.read_u32(at + 4 * (kernels::fabric_router::kNumSenderChannels + i));
  }
  return word;
}

// Over every router and receiver VC: the packets the peer's receivers completed, and the
// first-level acks they sent (both as the sending routers' ack mailboxes hold them).
struct AckTotals {
  std::uint64_t completions = 0;
  std::uint64_t first_level = 0;
};

// Terminates the fabric first: routers drain gracefully, so every ack has landed.
AckTotals ack_totals(SimMeshDevice& device) {
  device.terminate_fabric();
  AckTotals t;
  for (const runtime::FabricRouterSite& site : device.fabric_plan().routers()) {
    for (std::uint32_t vc = 0; vc < (site.config.dateline_vcs ? 2u : 1u); ++vc) {
      const kernels::FabricAckWord w = ack_word(device, site, vc);
      t.completions += kernels::completions_total(w);
      t.first_level += w.first_level[0] + w.first_level[1];
    }
  }
  return t;
}

SimMeshDeviceOptions options_of(FabricMode mode, bool first_level_acks) {
  SimMeshDeviceOptions options;
  options.fabric.mode = mode;
  options.fabric.first_level_acks = first_level_acks;
  return options;
}

TEST(FirstLevelAcks, OffOnALineMovesDataBitForBitAndSendsNone) {
  SimMeshDevice device(topo::build_t3k(), options_of(FabricMode::Line, false));
  testing::multicast_all_gather(device, testing::MulticastAllGather{12, 2048, 2, false});
  const AckTotals t = ack_totals(device);
  EXPECT_GT(t.completions, 0u);
  EXPECT_EQ(t.first_level, 0u);
}

// The same op with them on: one first-level ack per packet, as many as completions.
TEST(FirstLevelAcks, OnALineEveryPacketIsAcknowledgedTwice) {
  SimMeshDevice device(topo::build_t3k(), options_of(FabricMode::Line, true));
  testing::multicast_all_gather(device, testing::MulticastAllGather{12, 2048, 2, false});
  const AckTotals t = ack_totals(device);
  EXPECT_GT(t.completions, 0u);
  EXPECT_EQ(t.first_level, t.completions);
}

// The era-accurate mid-2025 ring: dateline VCs and no first-level acks, through the flood that
// deadlocks a ring without avoidance; the VC1 receivers send none either.
TEST(FirstLevelAcks, OffOnTheDatelineRingCarriesTheFloodBitForBit) {
  SimMeshDeviceOptions options = options_of(FabricMode::Ring, false);
  options.fabric.ring_flow_control = runtime::RingFlowControl::Dateline;
  SimMeshDevice device(topo::build_t3k(), options);
  testing::multicast_all_gather(device, kFlood);
  const AckTotals t = ack_totals(device);
  EXPECT_GT(t.completions, 0u);
  EXPECT_EQ(t.first_level, 0u);
}

TEST(FirstLevelAcks, OffWithBubbleFlowControlIsRefusedByThePlan) {
  try {
    SimMeshDevice device(topo::build_t3k(), options_of(FabricMode::Ring, false));
    FAIL() << "expected a FabricPlanError";
  } catch (const runtime::FabricPlanError& e) {
    EXPECT_THAT(e.what(),
                HasSubstr("fabric: bubble flow control with first_level_acks off on the ring through chips "));
    EXPECT_THAT(e.what(), HasSubstr("bubble flow control needs first-level acks (REFERENCE 6.7), expected "
                                    "first_level_acks on, or ring_flow_control dateline"));
  }
}

// Why it is refused, in the model: a ring:4 flood through tight routers (1 sender slot, 2
// receiver slots, 1 KiB packets) with the bubble rule. With first-level acks it completes
// (as device_faults_test's); without them (set on the routers behind the plan's back) each
// forwarded packet holds its sender slot until the next router has passed it on, the forwarding
// channels close the cycle, and it deadlocks. (The T3K flood at the default 8 / 16 slots
// completes either way: the model needs the tight buffers to reach the cycle.)
SimMeshDeviceOptions tight_bubble_ring(bool first_level_acks) {
  SimMeshDeviceOptions options = options_of(FabricMode::Ring, true);
  options.fabric.sender_slots = 1;
  options.fabric.receiver_slots = 2;
  options.fabric.max_payload_bytes = 1024;
  if (!first_level_acks) {
    options.adjust_router_config = [](const runtime::FabricRouterSite&, kernels::FabricRouterConfig& config) {
      config.first_level_acks = false;
    };
  }
  return options;
}

constexpr testing::MulticastAllGather kTightFlood{48, 1024, 1, true};

TEST(FirstLevelAcks, TheTightRingFloodCompletesWithBubbleFlowControlAndThem) {
  SimMeshDevice device(topo::build_parametric(topo::parse_parametric_spec("ring:4")), tight_bubble_ring(true));
  testing::multicast_all_gather(device, kTightFlood);
}

TEST(FirstLevelAcks, BubbleFlowControlWithoutThemDeadlocksTheTightRingFlood) {
  SimMeshDevice device(topo::build_parametric(topo::parse_parametric_spec("ring:4")), tight_bubble_ring(false));
  ASSERT_TRUE(device.fabric_plan().routers().front().config.bubble_flow_control);
  const std::string text = testing::expect_device_error([&] { testing::multicast_all_gather(device, kTightFlood); },
                                                        runtime::DeviceError::Kind::Hang);
  EXPECT_THAT(text, HasSubstr("a cycle of full router buffers, each waiting for the next: a channel-dependency "
                              "deadlock (bubble flow control without first-level acks, which it needs: REFERENCE "
                              "6.7)"))
      << text;
}

}  // namespace
}  // namespace cclmesh::sim::device
