// The dateline-VC ring fabric's plan (mid-2025, REFERENCE 6.1, 6.2, 6.7): where the dateline is,
// each router kind's slot split, the VC switch on the dateline link, and the refusals.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "kernels/kernel_args.hpp"
#include "runtime/device/l1_map.hpp"
#include "runtime/fabric/fabric_plan.hpp"
#include "topologies/builtin_systems.hpp"

namespace cclmesh::runtime {
namespace {

using ::testing::HasSubstr;

FabricOptions dateline_ring(std::uint32_t payload_bytes = 4352) {
  FabricOptions o;
  o.mode = FabricMode::Ring;
  o.ring_flow_control = RingFlowControl::Dateline;
  o.max_payload_bytes = payload_bytes;
  return o;
}

struct Split {
  std::uint32_t sender0, sender1, sender2, receiver_vc0, receiver_vc1;
  bool operator==(const Split&) const = default;
};

Split split_of(const kernels::FabricRouterConfig& c) {
  return Split{c.sender_slots[0], c.sender_slots[1], c.sender2_slots, c.receiver_slots, c.vc1_receiver_slots};
}

std::string plan_error(const FabricOptions& o) {
  try {
    FabricPlan plan(topo::build_t3k(), o);
  } catch (const FabricPlanError& e) {
    return e.what();
  }
  return "";
}

// The dateline is the ring's closing hop, last chip -> first chip. Its two routers (the last
// chip's forward one, the first chip's backward one) are dateline routers: {8, 16} with sender
// channel 2 and the VC0 receiver dropped, and their channels 0 and 1 send into the peer's VC1
// receiver. The other router on those two chips is dateline-upstream: {8, 16} with sender channel
// 1 and the VC1 receiver dropped. Every other router has 3 sender channels and 2 receivers: the
// ring's {8, 8} does not fit 150 KiB five times over at 4352 B, so {4, 8} (REFERENCE 6.2).
TEST(FabricPlanDateline, T3kRingRouterKindsAndSlotSplits) {
  const FabricPlan plan(topo::build_t3k(), dateline_ring());
  ASSERT_EQ(plan.routers().size(), 16u);
  const auto& chips = plan.chips();
  const ChipId first = chips.front();
  const ChipId last = chips.back();
  for (const FabricRouterSite& site : plan.routers()) {
    const kernels::FabricRouterConfig& c = site.config;
    EXPECT_TRUE(c.dateline_vcs);
    EXPECT_FALSE(c.bubble_flow_control);  // no bubble rule before PR #33222
    EXPECT_TRUE(c.first_level_acks);
    EXPECT_EQ(c.topology, kernels::fabric_router::kTopologyRing);
    const bool dateline = (site.chip == last && site.forward) || (site.chip == first && !site.forward);
    const bool upstream = (site.chip == first && site.forward) || (site.chip == last && !site.forward);
    EXPECT_EQ(c.sends_into_vc1, dateline) << site.chip << (site.forward ? " fwd" : " bwd");
    if (dateline) {
      EXPECT_EQ(split_of(c), (Split{8, 8, 0, 0, 16})) << site.chip;
      EXPECT_EQ(c.receiver_packets_in_flight, 0u);
      EXPECT_EQ(c.vc1_receiver_packets_in_flight, 16u);
    } else if (upstream) {
      EXPECT_EQ(split_of(c), (Split{8, 0, 8, 16, 0})) << site.chip;
      EXPECT_EQ(c.receiver_packets_in_flight, 16u);
      EXPECT_EQ(c.vc1_receiver_packets_in_flight, 0u);
    } else {
      EXPECT_EQ(split_of(c), (Split{4, 4, 4, 8, 8})) << site.chip;
      EXPECT_EQ(c.receiver_packets_in_flight, 8u);
      EXPECT_EQ(c.vc1_receiver_packets_in_flight, 8u);  // transaction ids 8..15
    }
    // Each router knows its peer's and its downstream neighbour's split (their slots differ).
    const FabricRouterSite* peer = plan.router(site.peer, !site.forward);
    const FabricRouterSite* downstream = plan.router(site.chip, !site.forward);
    ASSERT_NE(peer, nullptr);
    ASSERT_NE(downstream, nullptr);
    const kernels::FabricRouterSlotCounts p = kernels::own_slot_counts(peer->config);
    const kernels::FabricRouterSlotCounts d = kernels::own_slot_counts(downstream->config);
    for (std::uint32_t i = 0; i < 3; ++i) {
      EXPECT_EQ(c.peer_slots.sender[i], p.sender[i]);
      EXPECT_EQ(c.downstream_slots.sender[i], d.sender[i]);
    }
    for (std::uint32_t i = 0; i < 2; ++i) {
      EXPECT_EQ(c.peer_slots.receiver[i], p.receiver[i]);
      EXPECT_EQ(c.downstream_slots.receiver[i], d.receiver[i]);
    }
    // Every router's layout fits the kernel region, and the control fields are where the peer's are.
    const kernels::FabricRouterL1Layout l = kernels::make_fabric_router_layout(c);
    EXPECT_LE(l.end, kEriscKernelBase + kEriscKernelBytes);
    EXPECT_EQ(l.vc1_ack_mailbox, kernels::make_fabric_router_layout(peer->config).vc1_ack_mailbox);
  }
  // The VC a packet uses is consistent end to end: whatever a router sends into, its peer has.
  for (const FabricRouterSite& site : plan.routers()) {
    const FabricRouterSite* peer = plan.router(site.peer, !site.forward);
    const kernels::FabricRouterConfig& c = site.config;
    if (c.sends_into_vc1) {
      EXPECT_GT(peer->config.vc1_receiver_slots, 0u);
    } else if (c.sender_slots[0] > 0) {
      EXPECT_GT(peer->config.receiver_slots, 0u);
    }
  }
}

// At 106 KiB the ordinary router holds neither {8, 8} nor {4, 8} (28 slots of 4416 B): REFERENCE
// 6.7's "T3K short of ERISC L1 for ring buffering" of the dateline era, refused by name.
TEST(FabricPlanDateline, TheOrdinaryRouterDoesNotFitTheSmallErisc) {
  FabricOptions o = dateline_ring();
  o.erisc_unreserved_bytes = kEriscUnreservedMinBytes;
  EXPECT_THAT(plan_error(o), HasSubstr("do not hold the smallest dateline-VC ring router option {4, 8} for a 4352 B "
                                       "payload"));
  // Nor does a 6144 B payload in 150 KiB (28 slots of 6208 B).
  EXPECT_THAT(plan_error(dateline_ring(6144)), HasSubstr("{4, 8} for a 6144 B payload"));
  // The largest payload that fits 150 KiB: 5344 B (28 slots of 5408 B); 5376 B needs 152768 B.
  EXPECT_EQ(plan_error(dateline_ring(5344)), "");
  EXPECT_THAT(plan_error(dateline_ring(5376)), HasSubstr("(it needs 152768 B)"));
}

TEST(FabricPlanDateline, RefusalsNameTheOption) {
  FabricOptions line = dateline_ring();
  line.mode = FabricMode::Line;
  EXPECT_THAT(plan_error(line), HasSubstr("ring_flow_control dateline needs a ring fabric; the fabric is line"));
  FabricOptions bubble = dateline_ring();
  bubble.bubble_flow_control = true;
  EXPECT_THAT(plan_error(bubble), HasSubstr("with bubble_flow_control on"));
  FabricOptions slots = dateline_ring();
  slots.sender_slots = 4;
  EXPECT_THAT(plan_error(slots), HasSubstr("sender_slots / receiver_slots set"));
}

// The default ring is unchanged: bubble flow control, 2 sender channels and one receiver.
TEST(FabricPlanDateline, TheDefaultRingHasNoDatelineVcs) {
  FabricOptions o;
  o.mode = FabricMode::Ring;
  const FabricPlan plan(topo::build_t3k(), o);
  for (const FabricRouterSite& site : plan.routers()) {
    EXPECT_FALSE(site.config.dateline_vcs);
    EXPECT_TRUE(site.config.bubble_flow_control);
    EXPECT_EQ(split_of(site.config), (Split{8, 8, 0, 8, 0}));
  }
}

}  // namespace
}  // namespace cclmesh::runtime
