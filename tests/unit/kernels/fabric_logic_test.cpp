// The fabric's pure pieces: router L1 layout, worker connection slots and credits, the
// router's receiver decisions, flow control (bubble), drain, and the host's slot sizing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "kernels/api/fabric_connection.hpp"
#include "kernels/fabric/router_logic.hpp"
#include "kernels/host/kernel_args_builder.hpp"
#include "kernels/kernel_args.hpp"

namespace {

using namespace cclmesh;
using kernels::FabricRouterL1Layout;

// Every control field and buffer of the layout, as [begin, end) ranges.
std::vector<std::pair<uint32_t, uint32_t>> regions(const FabricRouterL1Layout& l) {
  std::vector<std::pair<uint32_t, uint32_t>> r;
  const uint32_t f = kernels::kFabricControlFieldBytes;
  for (uint32_t a : {l.status, l.handshake_mailbox, l.termination_signal, l.local_mailbox, l.ack_mailbox,
                     l.ack_staging, l.handshake_staging, l.downstream_flow_control_sem, l.downstream_teardown_sem,
                     l.downstream_buffer_index_sem}) {
    r.emplace_back(a, a + f);
  }
  // Sender channel 2 exists only with dateline VCs.
  const uint32_t channels = l.dateline_vcs ? kernels::fabric_router::kMaxSenderChannels
                                           : kernels::fabric_router::kNumSenderChannels;
  for (uint32_t c = 0; c < channels; ++c) {
    const auto& ch = l.sender[c];
    for (uint32_t a : {ch.connection_live, ch.worker_location_info, ch.packets_written, ch.packets_freed}) {
      r.emplace_back(a, a + f);
    }
    r.emplace_back(ch.buffer_base, ch.buffer_base + ch.num_slots * l.slot_size_bytes);
  }
  r.emplace_back(l.receiver_buffer_base, l.receiver_buffer_base + l.receiver_slots * l.slot_size_bytes);
  if (l.dateline_vcs) {
    for (uint32_t a : {l.vc1_ack_mailbox, l.vc1_ack_staging, l.vc1_downstream_flow_control_sem,
                       l.vc1_downstream_teardown_sem, l.vc1_downstream_buffer_index_sem}) {
      r.emplace_back(a, a + f);
    }
    r.emplace_back(l.vc1_receiver_buffer_base, l.vc1_receiver_buffer_base + l.vc1_receiver_slots * l.slot_size_bytes);
  }
  return r;
}

// A dateline-VC router (REFERENCE 6.1's mid-2025 row): 3 sender channels and 2 receivers, every
// field and buffer disjoint; the fields and buffers a bubble router has stay where they are
// only in the control region's first part (the VC1 fields follow), and a layout without dateline
// VCs is the one from before they existed.
TEST(FabricRouterLayout, DatelineVcLayoutIsDisjointAndExtendsTheOrdinaryOne) {
  const kernels::FabricRouterSlotCounts counts{{4, 4, 4}, {8, 8}};
  const FabricRouterL1Layout l = kernels::make_fabric_router_layout(0x18008, 4352, counts, true);
  auto r = regions(l);
  for (const auto& [b, e] : r) {
    EXPECT_EQ(b % 16, 0u);
    EXPECT_LE(e, l.end);
    EXPECT_GE(b, l.control_begin);
  }
  std::sort(r.begin(), r.end());
  for (std::size_t i = 1; i < r.size(); ++i) {
    EXPECT_LE(r[i - 1].second, r[i].first) << "overlap at " << r[i].first;
  }
  EXPECT_EQ(l.end - l.sender[0].buffer_base, 28 * l.slot_size_bytes);
  EXPECT_LE(l.control_end, l.sender[0].buffer_base);
  EXPECT_EQ(l.vc1_receiver_buffer_base % 32, 0u);
  const FabricRouterL1Layout plain = kernels::make_fabric_router_layout(0x18008, 4352, 8, 8, 16);
  EXPECT_EQ(l.ack_mailbox, plain.ack_mailbox);
  EXPECT_EQ(l.downstream_flow_control_sem, plain.downstream_flow_control_sem);
  EXPECT_FALSE(plain.dateline_vcs);
  EXPECT_EQ(plain.vc1_receiver_slots, 0u);
  // A router that drops channels (a dateline router: no sender channel 2, no VC0 receiver) keeps
  // its control fields where the others have them.
  const FabricRouterL1Layout dateline =
      kernels::make_fabric_router_layout(0x18008, 4352, kernels::FabricRouterSlotCounts{{8, 8, 0}, {0, 16}}, true);
  EXPECT_EQ(dateline.vc1_ack_mailbox, l.vc1_ack_mailbox);
  EXPECT_EQ(dateline.sender[2].packets_written, l.sender[2].packets_written);
  EXPECT_EQ(dateline.end - dateline.sender[0].buffer_base, 32 * l.slot_size_bytes);
}

// The VC rules: channel 2 forwards on VC1; channels 0 and 1 send on VC0 except across the
// dateline; a receiver VC forwards into the same VC's channel; each VC's ack word indexes the
// channels that feed it.
TEST(FabricRouterLogic, DatelineVcRules) {
  using kernels::sender_target_vc;
  EXPECT_EQ(sender_target_vc(0, false), 0u);
  EXPECT_EQ(sender_target_vc(1, false), 0u);
  EXPECT_EQ(sender_target_vc(2, false), 1u);
  EXPECT_EQ(sender_target_vc(0, true), 1u);
  EXPECT_EQ(sender_target_vc(1, true), 1u);
  EXPECT_EQ(kernels::forwarding_channel_of_vc(0), 1u);
  EXPECT_EQ(kernels::forwarding_channel_of_vc(1), 2u);
  EXPECT_EQ(kernels::ack_index_of_channel(0), 0u);
  EXPECT_EQ(kernels::ack_index_of_channel(1), 1u);
  EXPECT_EQ(kernels::ack_index_of_channel(2), 0u);
}

TEST(FabricRouterLayout, FieldsAndBuffersAreAlignedAndDisjoint) {
  const FabricRouterL1Layout l = kernels::make_fabric_router_layout(0x18008, 4352, 8, 8, 16);
  EXPECT_EQ(l.control_begin, 0x18010u);  // rounded up to 16 B
  EXPECT_EQ(l.slot_size_bytes, api::fabric_slot_size_bytes(4352));
  EXPECT_EQ(l.slot_size_bytes % 32, 0u);
  EXPECT_EQ(l.sync_offset_in_slot, 48u + 4352u);  // behind the 48 B header
  EXPECT_GE(l.slot_size_bytes, l.sync_offset_in_slot + 16);
  auto r = regions(l);
  for (const auto& [b, e] : r) {
    EXPECT_EQ(b % 16, 0u);
    EXPECT_LE(e, l.end);
    EXPECT_GE(b, l.control_begin);
  }
  EXPECT_EQ(l.sender[0].buffer_base % 32, 0u);
  EXPECT_EQ(l.receiver_buffer_base % 32, 0u);
  std::sort(r.begin(), r.end());
  for (std::size_t i = 1; i < r.size(); ++i) {
    EXPECT_LE(r[i - 1].second, r[i].first) << "overlap at " << r[i].first;
  }
  EXPECT_EQ(l.end, l.receiver_buffer_base + 16 * l.slot_size_bytes);
  // The zeroed control range covers every control field and no buffer.
  EXPECT_LE(l.control_end, l.sender[0].buffer_base);
  EXPECT_GE(l.control_end, l.downstream_buffer_index_sem + 16);
}

TEST(FabricRouterLayout, SlotSizeRoundsPayloadToEthWordsAndBuffersTo32) {
  EXPECT_EQ(api::fabric_slot_payload_capacity(4096), 4096u);
  EXPECT_EQ(api::fabric_slot_payload_capacity(4100), 4112u);
  EXPECT_EQ(api::fabric_slot_size_bytes(4096), 4160u);  // 48 + 4096 + 16, already 32 B aligned
  EXPECT_EQ(api::fabric_slot_size_bytes(4352), 4416u);  // 48 + 4352 + 16
  EXPECT_EQ(api::fabric_slot_size_bytes(4100), 4192u);  // 48 + 4112 + 16 -> 4176 -> 4192
  EXPECT_EQ(api::fabric_slot_sync_offset(4100), 48u + 4112u);
}

TEST(FabricConnection, ConnectionForChannelMatchesLayout) {
  kernels::FabricRouterConfig cfg{0x18000, 4352, {8, 4}, 16, true, 0, false, true, 1000, true, 1, 0, 16};
  const FabricRouterL1Layout l = kernels::make_fabric_router_layout(cfg);
  const api::FabricConnectionConfig c = kargs::worker_fabric_connection(cfg, 9, 0, 1, 2, 3);
  EXPECT_TRUE(api::fabric_connection_config_is_valid(c));
  EXPECT_EQ(c.edm_noc_x, 9u);
  EXPECT_EQ(c.buffer_base_address, l.sender[0].buffer_base);
  EXPECT_EQ(c.num_slots, 8u);
  EXPECT_EQ(c.packets_written_address, l.sender[0].packets_written);
  EXPECT_EQ(c.worker_teardown_sem, 2u);
  uint32_t words[api::kFabricConnectionArgWords] = {};
  api::write_fabric_connection_config(c, words);
  const api::FabricConnectionConfig back = api::read_fabric_connection_config(words);
  EXPECT_EQ(back.packets_freed_address, c.packets_freed_address);
  EXPECT_EQ(back.worker_buffer_index_sem, 3u);
  const api::FabricConnectionConfig ch1 = kernels::fabric_connection_for_channel(l, 1, 1, 0, 0x100, 0x110, 0x120);
  EXPECT_EQ(ch1.num_slots, 4u);
  EXPECT_EQ(ch1.connection_live_address, l.sender[1].connection_live);
}

TEST(FabricConnection, SlotsAndCreditsWrap) {
  api::FabricSenderSlots s{0x1000, 4, 0x100, 0};
  EXPECT_EQ(s.slot_address(), 0x1000u);
  EXPECT_TRUE(s.has_free_slot(0));
  EXPECT_EQ(s.free_slots(0), 4u);
  s.packets_sent = 4;
  EXPECT_FALSE(s.has_free_slot(0));
  EXPECT_EQ(s.free_slot_wait_target(), 1u);
  EXPECT_EQ(s.slot_address(), 0x1000u);
  s.packets_sent = 6;
  EXPECT_EQ(s.slot_address(), 0x1200u);
  EXPECT_EQ(s.free_slots(3), 1u);
  // Counters near the 32-bit wrap keep working by difference.
  s.packets_sent = 2;  // wrapped: 0xFFFFFFFE + 4
  EXPECT_EQ(s.slots_in_use(0xFFFFFFFEu), 4u);
  EXPECT_FALSE(s.has_free_slot(0xFFFFFFFEu));
  EXPECT_TRUE(s.has_free_slot(0xFFFFFFFFu));
}

TEST(FabricConnection, InvalidConfigs) {
  api::FabricConnectionConfig c{};
  c.num_slots = 1;
  c.max_payload_bytes = 1024;
  c.slot_size_bytes = api::fabric_slot_size_bytes(1024);
  EXPECT_TRUE(api::fabric_connection_config_is_valid(c));
  c.slot_size_bytes -= 32;
  EXPECT_FALSE(api::fabric_connection_config_is_valid(c));
  c.slot_size_bytes = api::fabric_slot_size_bytes(1024);
  c.num_slots = 0;
  EXPECT_FALSE(api::fabric_connection_config_is_valid(c));
}

TEST(FabricRouterLogic, ReceiverDecisionsFollowTheRoutingByte) {
  // Unicast 3 hops: forwarded twice, delivered on the third chip only.
  uint8_t r = api::unicast_routing(3);
  auto d = kernels::decide_receiver_action(r);
  EXPECT_FALSE(d.deliver_locally);
  EXPECT_TRUE(d.forward);
  d = kernels::decide_receiver_action(d.next_routing);
  EXPECT_FALSE(d.deliver_locally);
  EXPECT_TRUE(d.forward);
  d = kernels::decide_receiver_action(d.next_routing);
  EXPECT_TRUE(d.deliver_locally);
  EXPECT_FALSE(d.forward);
  // Multicast start 1 range 3: delivered on three chips, forwarded from the first two.
  r = api::multicast_routing(1, 3);
  int delivered = 0;
  int hops = 0;
  for (bool more = true; more; ++hops) {
    d = kernels::decide_receiver_action(r);
    delivered += d.deliver_locally ? 1 : 0;
    more = d.forward;
    r = d.next_routing;
  }
  EXPECT_EQ(delivered, 3);
  EXPECT_EQ(hops, 3);
}

TEST(FabricRouterLogic, BubbleFlowControlKeepsOneSlotForForwarding) {
  EXPECT_EQ(kernels::remote_receiver_free_slots(16, 10, 4), 10u);
  EXPECT_EQ(kernels::remote_receiver_free_slots(16, 20, 4), 0u);
  EXPECT_EQ(kernels::remote_receiver_free_slots(4, 2, 0xFFFFFFFFu), 1u);  // wrap
  // One free slot: forwarding may use it, injection may not.
  EXPECT_TRUE(kernels::sender_may_send(kernels::fabric_router::kForwardingChannel, true, 1));
  EXPECT_FALSE(kernels::sender_may_send(kernels::fabric_router::kWorkerChannel, true, 1));
  EXPECT_TRUE(kernels::sender_may_send(kernels::fabric_router::kWorkerChannel, true, 2));
  // Disabled (the deadlock reproducer): injection takes the last slot.
  EXPECT_TRUE(kernels::sender_may_send(kernels::fabric_router::kWorkerChannel, false, 1));
  EXPECT_FALSE(kernels::sender_may_send(kernels::fabric_router::kForwardingChannel, false, 0));
}

TEST(FabricRouterLogic, CreditsComeFromFirstLevelOrCompletionAcks) {
  const kernels::FabricAckWord a{{5, 2}, {3, 1}};
  EXPECT_EQ(kernels::freed_by_acks(a, 0, true), 5u);
  EXPECT_EQ(kernels::freed_by_acks(a, 1, true), 2u);
  EXPECT_EQ(kernels::freed_by_acks(a, 0, false), 3u);
  EXPECT_EQ(kernels::completions_total(a), 4u);
  const kernels::RouterSenderState s{7, 3, true};
  EXPECT_EQ(kernels::packets_waiting(9, s), 2u);
  EXPECT_FALSE(kernels::worker_overran_channel(11, s, 8));
  EXPECT_TRUE(kernels::worker_overran_channel(12, s, 8));
}

TEST(FabricRouterLogic, PacketSizesOnTheLink) {
  EXPECT_EQ(kernels::packet_send_bytes(0), 48u);
  EXPECT_EQ(kernels::packet_send_bytes(1), 64u);
  EXPECT_EQ(kernels::packet_send_bytes(4096), 4144u);
  EXPECT_TRUE(kernels::packet_fills_slot(4352, 4352));
  EXPECT_TRUE(kernels::packet_fills_slot(4350, 4352));  // same 16 B words
  EXPECT_FALSE(kernels::packet_fills_slot(2048, 4352));
}

api::PacketHeader write_header(uint8_t routing, uint16_t payload) {
  api::PacketHeader h = api::make_packet_header();
  h.to_noc_unicast_write(api::noc_xy_addr(1, 1, 0x1000), payload);
  h.routing_fields = routing;
  return h;
}

TEST(FabricRouterLogic, ReceivedPacketChecks) {
  const uint32_t ok = 0;
  kernels::EthChannelSync sync{api::kPacketHeaderSizeBytes + 1024, 0, 0, 0};
  EXPECT_EQ(kernels::check_received_packet(write_header(0x11, 1024), sync, 4096, false), ok);
  EXPECT_EQ(kernels::check_received_packet(write_header(0x12, 1024), sync, 4096, false),
            api::fault_code(api::KernelFaultCode::ROUTE_PAST_END));
  EXPECT_EQ(kernels::check_received_packet(write_header(0x12, 1024), sync, 4096, true), ok);
  EXPECT_EQ(kernels::check_received_packet(write_header(0x10, 1024), sync, 4096, true),
            api::fault_code(api::KernelFaultCode::BAD_PACKET_HEADER));  // start 0: never delivered
  EXPECT_EQ(kernels::check_received_packet(write_header(0x11, 1024), sync, 512, true),
            api::fault_code(api::KernelFaultCode::BAD_PACKET_HEADER));
  kernels::EthChannelSync wrong_size{api::kPacketHeaderSizeBytes + 1000, 0, 0, 0};
  EXPECT_NE(kernels::check_received_packet(write_header(0x11, 1024), wrong_size, 4096, true), ok);
  kernels::EthChannelSync bad_channel{api::kPacketHeaderSizeBytes + 1024, 0, 2, 0};
  EXPECT_NE(kernels::check_received_packet(write_header(0x11, 1024), bad_channel, 4096, true), ok);
  api::PacketHeader mcast_inc = api::make_packet_header();
  mcast_inc.noc_send_type = static_cast<uint8_t>(api::NocSendType::NOC_MULTICAST_ATOMIC_INC);
  mcast_inc.routing_fields = 0x11;
  kernels::EthChannelSync header_only{api::kPacketHeaderSizeBytes, 0, 1, 0};
  EXPECT_EQ(kernels::check_received_packet(mcast_inc, header_only, 4096, true),
            api::fault_code(api::KernelFaultCode::UNSUPPORTED_NOC_SEND_TYPE));
  api::PacketHeader inc = api::make_packet_header();
  inc.to_noc_unicast_atomic_inc(api::noc_xy_addr(1, 1, 0x20), 1).to_chip_unicast(1);
  EXPECT_EQ(kernels::check_received_packet(inc, header_only, 4096, false), ok);

  // Scatter writes: 2 .. 4 chunks, the stated ones non-empty and leaving the last chunk bytes.
  const uint64_t addresses[4] = {api::noc_xy_addr(1, 1, 0x1000), api::noc_xy_addr(2, 1, 0x1000),
                                 api::noc_xy_addr(3, 1, 0x1000), api::noc_xy_addr(4, 1, 0x1000)};
  const uint16_t halves[2] = {512, 512};
  api::PacketHeader scatter = api::make_packet_header();
  scatter.to_noc_unicast_scatter_write(addresses, halves, 2).to_chip_unicast(1);
  EXPECT_EQ(kernels::check_received_packet(scatter, sync, 4096, false), ok);
  api::PacketHeader one_chunk = scatter;
  one_chunk.command_fields.unicast_scatter_write.chunk_count = 1;
  EXPECT_EQ(kernels::check_received_packet(one_chunk, sync, 4096, false),
            api::fault_code(api::KernelFaultCode::BAD_PACKET_HEADER));
  api::PacketHeader five_chunks = scatter;
  five_chunks.command_fields.unicast_scatter_write.chunk_count = 5;
  EXPECT_NE(kernels::check_received_packet(five_chunks, sync, 4096, false), ok);
  api::PacketHeader no_tail = scatter;
  no_tail.command_fields.unicast_scatter_write.chunk_size[0] = 1024;  // leaves the last chunk nothing
  EXPECT_NE(kernels::check_received_packet(no_tail, sync, 4096, false), ok);
}

TEST(FabricRouterLogic, DrainedOnlyWhenNothingIsInFlight) {
  kernels::RouterDrainView v{};
  v.receiver_idle = true;
  v.receiver_slot_empty = true;
  EXPECT_TRUE(kernels::router_drained(v));
  v.packets_written[1] = 1;  // a packet not yet sent
  EXPECT_FALSE(kernels::router_drained(v));
  v.sender[1] = {1, 0, false};  // sent, not acked
  EXPECT_FALSE(kernels::router_drained(v));
  v.sender[1].freed = 1;
  v.remote_sent_total = 1;
  EXPECT_FALSE(kernels::router_drained(v));  // peer has not completed it
  v.remote_completed_total = 1;
  EXPECT_TRUE(kernels::router_drained(v));
  v.acks_pending = true;
  EXPECT_FALSE(kernels::router_drained(v));
}

TEST(FabricRouterArgs, SlotChoiceIsFirstFitOverTheReferenceOptions) {
  const uint32_t base = 0x18000;
  const auto size_of = [&](uint32_t s, uint32_t r) {
    return kernels::make_fabric_router_layout(base, 4352, s, s, r).end - base;
  };
  kargs::FabricRouterSlots slots = kargs::choose_fabric_router_slots(base, 150 * 1024, 4352, false);
  EXPECT_EQ(slots.sender_slots, 8u);
  EXPECT_EQ(slots.receiver_slots, 16u);
  slots = kargs::choose_fabric_router_slots(base, size_of(8, 16) - 1, 4352, false);
  EXPECT_EQ(slots.receiver_slots, 8u);
  slots = kargs::choose_fabric_router_slots(base, 106 * 1024, 4352, true);
  EXPECT_EQ(slots.sender_slots, 8u);  // {8, 8}: 24 slots of 4416 B = 103.5 KiB plus control
  slots = kargs::choose_fabric_router_slots(base, 100 * 1024, 4352, true);
  EXPECT_EQ(slots.sender_slots, 4u);
  EXPECT_EQ(slots.receiver_slots, 8u);
  EXPECT_THROW(kargs::choose_fabric_router_slots(base, size_of(4, 8) - 1, 4352, true), kargs::KernelArgsError);


  // The calibration's 6144 B payload (slots of 6208 B): the 106 KiB what-if kernel region
  // (REFERENCE 1.4 [ETHMAP]) holds only the ring's second option, so each sender channel, the
  // forwarding channel 1 included, has 4 slots; the default, [CDG]'s ~150 KB (REFERENCE 13:
  // unconfirmed), holds {8, 8}. 4 slots are what limited the 8-ring at 106 KiB
  // (docs/performance.md, "The 8-ring's forwarding chain").
  const uint32_t kernel_region_106k = 108544 - 1024;  // unreserved minus semaphores (runtime/device/l1_map.hpp)
  const uint32_t kernel_region_150k = 150 * 1024 - 1024;
  slots = kargs::choose_fabric_router_slots(base, kernel_region_106k, 6144, true);
  EXPECT_EQ(slots.sender_slots, 4u);
  EXPECT_EQ(slots.receiver_slots, 8u);
  slots = kargs::choose_fabric_router_slots(base, kernel_region_150k, 6144, true);
  EXPECT_EQ(slots.sender_slots, 8u);
  EXPECT_EQ(slots.receiver_slots, 8u);
  // A line at 6144 B: {8, 8} at 150 KiB (32 slots of {8, 16} would be 194 KiB), {4, 8} at 106.
  slots = kargs::choose_fabric_router_slots(base, kernel_region_150k, 6144, false);
  EXPECT_EQ(slots.sender_slots, 8u);
  EXPECT_EQ(slots.receiver_slots, 8u);
  slots = kargs::choose_fabric_router_slots(base, kernel_region_106k, 6144, false);
  EXPECT_EQ(slots.sender_slots, 4u);
  EXPECT_EQ(slots.receiver_slots, 8u);
  // REFERENCE 6.2 [TCO]'s typical line router at the default 4352 B payload, 2 x 8 + 16 slots of
  // 4416 B (141312 B plus control): it fits the 150 KiB kernel region, not the 106 KiB one.
  EXPECT_LE(size_of(8, 16), kernel_region_150k);
  EXPECT_GT(size_of(8, 16), kernel_region_106k);
  slots = kargs::choose_fabric_router_slots(base, kernel_region_150k, 4352, false);
  EXPECT_EQ(slots.sender_slots, 8u);
  EXPECT_EQ(slots.receiver_slots, 16u);
  slots = kargs::choose_fabric_router_slots(base, kernel_region_106k, 4352, false);
  EXPECT_EQ(slots.sender_slots, 8u);
  EXPECT_EQ(slots.receiver_slots, 8u);

  kernels::FabricRouterConfig cfg{base, 4352, {8, 8}, 16, false, kernels::fabric_router::kTopologyRing, true, true,
                                  200000, true, 2, 0, 16};
  const kargs::KernelArgs args = kargs::build_fabric_router_args(cfg);
  ASSERT_EQ(args.compile_time.size(), kernels::fabric_router::kNumCompileTimeArgs);
  const auto back = kernels::read_fabric_router_config([&](uint32_t i) { return args.compile_time.at(i); });
  EXPECT_EQ(back.receiver_slots, 16u);
  EXPECT_EQ(back.receiver_packets_in_flight, 16u);
  // Packets in flight: 1..min(receiver slots, 16 transaction ids).
  EXPECT_EQ(kernels::default_receiver_packets_in_flight(8), 8u);
  EXPECT_EQ(kernels::default_receiver_packets_in_flight(24), 16u);
  for (const uint32_t bad : {0u, 17u}) {
    kernels::FabricRouterConfig wrong = cfg;
    wrong.receiver_packets_in_flight = bad;
    EXPECT_THROW(kargs::build_fabric_router_args(wrong), kargs::KernelArgsError) << bad;
  }
  EXPECT_TRUE(back.bubble_flow_control);
  EXPECT_EQ(back.downstream_noc_x, 2u);
  cfg.has_downstream = false;
  EXPECT_THROW(kargs::build_fabric_router_args(cfg), kargs::KernelArgsError);
}

}  // namespace
