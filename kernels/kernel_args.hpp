#pragma once
// Compile-time and runtime argument layouts of every kernel in kernels/, and the L1 layouts
// they imply. The host (op builders, the fabric set-up, kernels/host/kernel_args_builder.hpp)
// and the kernels use these constants, so both sides agree on every index.
//
// Device-clean: <cstdint> and kernels/api only; constexpr, no heap, no exceptions.
//
// Conventions: "CT" indices are compile-time args (get_compile_time_arg_val), "RT" indices
// runtime args (get_arg_val). A block "at offset o" starts at runtime arg o. Offsets of 0 mean
// "absent" where documented (runtime arg 0 is never a block).

#include <cstdint>

#include "kernels/api/addrgen.hpp"
#include "kernels/api/fabric_connection.hpp"
#include "kernels/api/fabric_packet_header.hpp"

namespace cclmesh::kernels {

// Names in the kernel registry (kernel_registry.hpp) and in KernelSpec::kernel.
constexpr const char* kCclInterpreterKernelName = "ccl_interpreter";
constexpr const char* kFabricRouterKernelName = "fabric_router";
constexpr const char* kLegacyEdmKernelName = "legacy_edm";
constexpr const char* kReduceKernelName = "reduce";
constexpr const char* kConcatKernelName = "concat";
constexpr const char* kFabricMuxKernelName = "fabric_mux";
constexpr const char* kLegacyAllGatherSenderKernelName = "legacy_all_gather_sender";
constexpr const char* kLegacyAllGatherReceiverKernelName = "legacy_all_gather_receiver";
constexpr const char* kLegacyReduceScatterSenderKernelName = "legacy_reduce_scatter_sender";
constexpr const char* kLegacyReduceScatterReceiverKernelName = "legacy_reduce_scatter_receiver";

// =============================================================================================
// Command interpreter (ccl_interpreter.cpp; REFERENCE §4.7, simplified)
//
// CT:  [0] number of command streams (1 or 2)
//      [1] packet-header CB id: scratch L1 for fabric packet headers. Only its base address is
//          used (get_write_ptr); the CB must hold kInterpreterPacketHeaderSlots x 32 B.
//
// RT header:
//      [0] packet_size_in_pages: CB pages per packet (reads push, writes pop this many)
//      [1] semaphore id mask: bit i set <=> per-program semaphore id i exists on this core
//          (commands naming another id fault with UNKNOWN_SEMAPHORE)
//      [2] forward fabric connection block offset (0 = none), kFabricConnectionArgWords words
//      [3] backward fabric connection block offset (0 = none)
//      [4 + s * kStreamBlockWords ...] stream s block:
//          +0 tensor address (bank-relative base; patched on a program-cache hit)
//          +1 tensor page size in bytes
//          +2 address-generator block offset (0 = the stream has no tensor)
//          +3 number of commands
//          +4 offset of the stream's first word
//          +5 number of words in the stream
//
// Address-generator block (at its offset):
//      +0 TensorMemoryLayout, +1 BufferType (DRAM / L1)
//      interleaved: +2 number of banks, +3 aligned page size (bank stride of one page)
//      sharded:     +2 number of cores, +3 page stride in L1, +4 pages per tensor row,
//                   +5 ShardingContiguityMode, +6 pages per shard width, +7 rows per shard
//                   height, +8 .. +8+cores-1 core table: NoC0 x | y << 16, shard order
//
// Program-cache hits patch only the tensor addresses (RT 4 and 4 + kStreamBlockWords).
// =============================================================================================
namespace interpreter {
constexpr uint32_t kCtNumStreams = 0;
constexpr uint32_t kCtPacketHeaderCbId = 1;
constexpr uint32_t kNumCompileTimeArgs = 2;

constexpr uint32_t kMaxStreams = 2;

constexpr uint32_t kRtPacketSizeInPages = 0;
constexpr uint32_t kRtSemaphoreIdMask = 1;
constexpr uint32_t kRtForwardConnectionOffset = 2;
constexpr uint32_t kRtBackwardConnectionOffset = 3;
constexpr uint32_t kRtFirstStreamBlock = 4;

constexpr uint32_t kStreamTensorAddress = 0;
constexpr uint32_t kStreamTensorPageSize = 1;
constexpr uint32_t kStreamAddrGenOffset = 2;
constexpr uint32_t kStreamNumCommands = 3;
constexpr uint32_t kStreamCommandsOffset = 4;
constexpr uint32_t kStreamCommandsWords = 5;
constexpr uint32_t kStreamBlockWords = 6;

constexpr uint32_t stream_block(uint32_t stream) { return kRtFirstStreamBlock + stream * kStreamBlockWords; }
constexpr uint32_t header_words(uint32_t num_streams) { return kRtFirstStreamBlock + num_streams * kStreamBlockWords; }

constexpr uint32_t kAddrGenLayout = 0;
constexpr uint32_t kAddrGenBufferType = 1;
constexpr uint32_t kAddrGenInterleavedNumBanks = 2;
constexpr uint32_t kAddrGenInterleavedAlignedPageSize = 3;
// Pieces per buffer page (1 = whole pages; k > 1: the stream's page is one of k pieces of a
// buffer page, api::InterleavedAddrGenParams).
constexpr uint32_t kAddrGenInterleavedPiecesPerPage = 4;
// Bytes of a buffer page's last piece when pieces per page > 1 (0: as long as the others,
// api::InterleavedAddrGenParams::last_piece_bytes).
constexpr uint32_t kAddrGenInterleavedLastPieceBytes = 5;
constexpr uint32_t kAddrGenInterleavedWords = 6;
constexpr uint32_t kAddrGenShardedNumCores = 2;
constexpr uint32_t kAddrGenShardedPageStride = 3;
constexpr uint32_t kAddrGenShardedPagesPerTensorRow = 4;
constexpr uint32_t kAddrGenShardedContiguity = 5;
constexpr uint32_t kAddrGenShardedPagesPerShardWidth = 6;
constexpr uint32_t kAddrGenShardedRowsPerShardHeight = 7;
// Pieces per buffer page, as kAddrGenInterleavedPiecesPerPage (api::ShardedAddrGenParams).
constexpr uint32_t kAddrGenShardedPiecesPerPage = 8;
// The last piece's bytes, as kAddrGenInterleavedLastPieceBytes.
constexpr uint32_t kAddrGenShardedLastPieceBytes = 9;
constexpr uint32_t kAddrGenShardedCoreTable = 10;
constexpr uint32_t sharded_addrgen_words(uint32_t num_cores) { return kAddrGenShardedCoreTable + num_cores; }

constexpr uint32_t pack_core_xy(uint32_t noc0_x, uint32_t noc0_y) { return (noc0_x & 0xFFFF) | (noc0_y << 16); }
constexpr uint32_t core_xy_x(uint32_t xy) { return xy & 0xFFFF; }
constexpr uint32_t core_xy_y(uint32_t xy) { return xy >> 16; }

// The header pool: fabric packet headers are built on the stack, copied to one of these L1
// slots and NoC-written from there; the pool is flushed before a slot is reused.
constexpr uint32_t kInterpreterPacketHeaderSlots = 8;
constexpr uint32_t kPacketHeaderCbBytes = kInterpreterPacketHeaderSlots * api::kPacketHeaderSizeBytes;

// Semaphore ids the mask can name.
constexpr uint32_t kMaxSemaphoreIds = 32;
}  // namespace interpreter

// =============================================================================================
// Persistent 1D fabric router (fabric_router.cpp; REFERENCE §6.1-6.9). One per ethernet core
// that carries a link. All routers of a fabric share the layout parameters (base, payload,
// slot counts), so a router finds its peer's and its same-chip neighbour's words at its own
// addresses.
//
// CT:  [0] L1 base of the router's region (16 B aligned)
//      [1] max payload bytes per packet (the slot's payload capacity, REFERENCE §6.2)
//      [2] sender channel 0 slots (local workers)
//      [3] sender channel 1 slots (pass-through from the opposite-direction router)
//      [4] receiver channel slots
//      [5] 1 = handshake master (this chip's id is the lower of the link's two)
//      [6] topology: 0 = line, 1 = ring
//      [7] bubble flow control: 1 = sender channel 0 sends only when the peer's receiver has
//          >= 2 free slots (REFERENCE §6.7). 0 disables it (deadlock reproducer).
//      [8] first-level acks: 1 = the receiver acks on arrival and sender slots free then;
//          0 = they free on the completion ack. Must match on both ends of a link (§6.4).
//      [9] context-switch interval: run_routing() every this many idle passes
//      [10] 1 = this chip has the opposite-direction router (the downstream of our receiver)
//      [11], [12] its NoC0 x, y
//      [13] receiver packets in flight: how many received packets may have NoC writes
//           outstanding at once, each slot's tagged with its own transaction id (1..min(receiver
//           slots, 16); default_receiver_packets_in_flight())
//      [14] dateline VCs: 1 = the mid-2025 ring router (REFERENCE 6.1's "dateline VC" row, 6.7):
//           a third sender channel (2, forwarding on VC1) and a second receiver (VC1), each with
//           its own ack mailbox; the layout then has the VC1 control fields. 0 = [15..28] unused.
//      [15] sender channel 2 slots   [16] VC1 receiver slots (either may be 0: a dateline
//           router drops the channels it never uses, REFERENCE 6.2)
//      [17] 1 = this router's link is the dateline: sender channels 0 and 1 send into the
//           peer's VC1 receiver (the VC switch)
//      [18..22] the peer's slot counts (sender 0, 1, 2, receiver VC0, VC1): where its receiver
//           slots are   [23..27] the same for the opposite-direction router (our downstream)
//      [28] VC1 receiver packets in flight (its transaction ids follow VC0's)
// RT: none. The termination signal is an L1 word (FabricRouterL1Layout::termination_signal).
// =============================================================================================
namespace fabric_router {
constexpr uint32_t kCtL1Base = 0;
constexpr uint32_t kCtMaxPayloadBytes = 1;
constexpr uint32_t kCtSender0Slots = 2;
constexpr uint32_t kCtSender1Slots = 3;
constexpr uint32_t kCtReceiverSlots = 4;
constexpr uint32_t kCtIsHandshakeMaster = 5;
constexpr uint32_t kCtTopology = 6;
constexpr uint32_t kCtBubbleFlowControl = 7;
constexpr uint32_t kCtFirstLevelAcks = 8;
constexpr uint32_t kCtSwitchInterval = 9;
constexpr uint32_t kCtHasDownstream = 10;
constexpr uint32_t kCtDownstreamNocX = 11;
constexpr uint32_t kCtDownstreamNocY = 12;
constexpr uint32_t kCtReceiverPacketsInFlight = 13;
constexpr uint32_t kCtDatelineVcs = 14;
constexpr uint32_t kCtSender2Slots = 15;
constexpr uint32_t kCtVc1ReceiverSlots = 16;
constexpr uint32_t kCtSendsIntoVc1 = 17;
constexpr uint32_t kCtPeerSlots = 18;
constexpr uint32_t kCtDownstreamSlots = 23;
constexpr uint32_t kCtVc1ReceiverPacketsInFlight = 28;
constexpr uint32_t kNumCompileTimeArgs = 29;
// REFERENCE 1.1: 16 transaction ids per NoC; the receiver tags each packet in flight with one.
constexpr uint32_t kMaxReceiverPacketsInFlight = 16;

constexpr uint32_t kTopologyLine = 0;
constexpr uint32_t kTopologyRing = 1;
// The channels into one receiver VC: worker injection and forwarding (REFERENCE 6.1).
constexpr uint32_t kNumSenderChannels = 2;
constexpr uint32_t kWorkerChannel = 0;
constexpr uint32_t kForwardingChannel = 1;
// Dateline VCs (mid-2025 ring): forwarding on VC1, and the two receiver VCs.
constexpr uint32_t kVc1ForwardingChannel = 2;
constexpr uint32_t kMaxSenderChannels = 3;
constexpr uint32_t kNumVcs = 2;
constexpr uint32_t kSlotCountWords = 5;  // sender 0, 1, 2, receiver VC0, VC1
constexpr uint32_t kDefaultSwitchInterval = 200000;  // REFERENCE §1.4
}  // namespace fabric_router

// A router's slots per channel: what its L1 layout is made of.
struct FabricRouterSlotCounts {
  uint32_t sender[fabric_router::kMaxSenderChannels];
  uint32_t receiver[fabric_router::kNumVcs];
};

struct FabricRouterConfig {
  uint32_t l1_base;
  uint32_t max_payload_bytes;
  uint32_t sender_slots[fabric_router::kNumSenderChannels];
  uint32_t receiver_slots;
  bool is_handshake_master;
  uint32_t topology;
  bool bubble_flow_control;
  bool first_level_acks;
  uint32_t switch_interval;
  bool has_downstream;
  uint32_t downstream_noc_x;
  uint32_t downstream_noc_y;
  uint32_t receiver_packets_in_flight;
  // Dateline VCs (CT [14..28]); all zero / false on a bubble-flow-control or line router.
  bool dateline_vcs = false;
  uint32_t sender2_slots = 0;
  uint32_t vc1_receiver_slots = 0;
  bool sends_into_vc1 = false;
  FabricRouterSlotCounts peer_slots{};
  FabricRouterSlotCounts downstream_slots{};
  uint32_t vc1_receiver_packets_in_flight = 0;
};

// Every receiver slot may be in flight (as tt-metal's receiver, which gives each slot its own
// transaction id), within the NoC's 16 ids.
constexpr uint32_t default_receiver_packets_in_flight(uint32_t receiver_slots) {
  return receiver_slots < fabric_router::kMaxReceiverPacketsInFlight ? receiver_slots
                                                                      : fabric_router::kMaxReceiverPacketsInFlight;
}

template <typename CtArg>
constexpr FabricRouterSlotCounts read_slot_counts(CtArg&& ct, uint32_t first) {
  return FabricRouterSlotCounts{{ct(first), ct(first + 1), ct(first + 2)}, {ct(first + 3), ct(first + 4)}};
}

constexpr void write_slot_counts(const FabricRouterSlotCounts& c, uint32_t* ct, uint32_t first) {
  for (uint32_t i = 0; i < fabric_router::kMaxSenderChannels; ++i) {
    ct[first + i] = c.sender[i];
  }
  ct[first + 3] = c.receiver[0];
  ct[first + 4] = c.receiver[1];
}

template <typename CtArg>
constexpr FabricRouterConfig read_fabric_router_config(CtArg&& ct) {
  namespace r = fabric_router;
  return FabricRouterConfig{ct(r::kCtL1Base),
                            ct(r::kCtMaxPayloadBytes),
                            {ct(r::kCtSender0Slots), ct(r::kCtSender1Slots)},
                            ct(r::kCtReceiverSlots),
                            ct(r::kCtIsHandshakeMaster) != 0,
                            ct(r::kCtTopology),
                            ct(r::kCtBubbleFlowControl) != 0,
                            ct(r::kCtFirstLevelAcks) != 0,
                            ct(r::kCtSwitchInterval),
                            ct(r::kCtHasDownstream) != 0,
                            ct(r::kCtDownstreamNocX),
                            ct(r::kCtDownstreamNocY),
                            ct(r::kCtReceiverPacketsInFlight),
                            ct(r::kCtDatelineVcs) != 0,
                            ct(r::kCtSender2Slots),
                            ct(r::kCtVc1ReceiverSlots),
                            ct(r::kCtSendsIntoVc1) != 0,
                            read_slot_counts(ct, r::kCtPeerSlots),
                            read_slot_counts(ct, r::kCtDownstreamSlots),
                            ct(r::kCtVc1ReceiverPacketsInFlight)};
}

constexpr void write_fabric_router_config(const FabricRouterConfig& c, uint32_t* ct) {
  namespace r = fabric_router;
  ct[r::kCtL1Base] = c.l1_base;
  ct[r::kCtMaxPayloadBytes] = c.max_payload_bytes;
  ct[r::kCtSender0Slots] = c.sender_slots[0];
  ct[r::kCtSender1Slots] = c.sender_slots[1];
  ct[r::kCtReceiverSlots] = c.receiver_slots;
  ct[r::kCtIsHandshakeMaster] = c.is_handshake_master ? 1 : 0;
  ct[r::kCtTopology] = c.topology;
  ct[r::kCtBubbleFlowControl] = c.bubble_flow_control ? 1 : 0;
  ct[r::kCtFirstLevelAcks] = c.first_level_acks ? 1 : 0;
  ct[r::kCtSwitchInterval] = c.switch_interval;
  ct[r::kCtHasDownstream] = c.has_downstream ? 1 : 0;
  ct[r::kCtDownstreamNocX] = c.downstream_noc_x;
  ct[r::kCtDownstreamNocY] = c.downstream_noc_y;
  ct[r::kCtReceiverPacketsInFlight] = c.receiver_packets_in_flight;
  ct[r::kCtDatelineVcs] = c.dateline_vcs ? 1 : 0;
  ct[r::kCtSender2Slots] = c.sender2_slots;
  ct[r::kCtVc1ReceiverSlots] = c.vc1_receiver_slots;
  ct[r::kCtSendsIntoVc1] = c.sends_into_vc1 ? 1 : 0;
  write_slot_counts(c.peer_slots, ct, r::kCtPeerSlots);
  write_slot_counts(c.downstream_slots, ct, r::kCtDownstreamSlots);
  ct[r::kCtVc1ReceiverPacketsInFlight] = c.vc1_receiver_packets_in_flight;
}

// This router's own slot counts.
constexpr FabricRouterSlotCounts own_slot_counts(const FabricRouterConfig& c) {
  return FabricRouterSlotCounts{{c.sender_slots[0], c.sender_slots[1], c.sender2_slots},
                                {c.receiver_slots, c.vc1_receiver_slots}};
}

// The connection interface of one sender channel (fabric_connection.hpp) and its slots.
struct FabricSenderChannelLayout {
  uint32_t connection_live;
  uint32_t worker_location_info;
  uint32_t packets_written;
  uint32_t packets_freed;
  uint32_t buffer_base;
  uint32_t num_slots;
};

// Every word and buffer of a router's region. Control fields are 16 B each (REFERENCE §6.2),
// buffers 32 B aligned; a slot is [header | payload capacity | sync] (fabric_slot_size_bytes).
struct FabricRouterL1Layout {
  uint32_t status;                // EdmStatus, this router's progress (the host polls it)
  uint32_t handshake_mailbox;     // written by the peer router across the link
  uint32_t termination_signal;    // TerminationSignal, written by the host or a worker
  uint32_t local_mailbox;         // written by the same-chip neighbour router at start-up
  uint32_t ack_mailbox;           // FabricAckWord from the peer's receiver (credits)
  uint32_t ack_staging;           // our FabricAckWord, the source of its ethernet send
  uint32_t handshake_staging;     // source of the handshake's ethernet sends
  FabricSenderChannelLayout sender[fabric_router::kMaxSenderChannels];  // [2]: dateline VCs only
  // The receiver's connection into the neighbour's sender channel 1: its "worker" words.
  uint32_t downstream_flow_control_sem;
  uint32_t downstream_teardown_sem;
  uint32_t downstream_buffer_index_sem;
  uint32_t receiver_buffer_base;  // VC0
  uint32_t receiver_slots;
  // Dateline VCs (0 otherwise): the VC1 receiver's slots, its ack mailbox / staging word, and
  // its connection into the neighbour's sender channel 2.
  bool dateline_vcs;
  uint32_t vc1_receiver_buffer_base;
  uint32_t vc1_receiver_slots;
  uint32_t vc1_ack_mailbox;
  uint32_t vc1_ack_staging;
  uint32_t vc1_downstream_flow_control_sem;
  uint32_t vc1_downstream_teardown_sem;
  uint32_t vc1_downstream_buffer_index_sem;
  uint32_t slot_size_bytes;
  uint32_t max_payload_bytes;
  uint32_t sync_offset_in_slot;
  uint32_t control_begin;  // [control_begin, control_end) is zeroed by the router at start,
  uint32_t control_end;    // except the two mailboxes
  uint32_t end;            // one past the last buffer byte
};

constexpr uint32_t kFabricControlFieldBytes = 16;

// With dateline VCs the VC1 control fields follow the others and the VC1 buffers (sender
// channel 2, then the VC1 receiver) follow the VC0 ones, so a layout without them is the same,
// byte for byte, as before they existed. The control fields are at the same addresses on every
// router of a dateline fabric (only the buffers differ with the routers' slot counts).
constexpr FabricRouterL1Layout make_fabric_router_layout(uint32_t l1_base, uint32_t max_payload_bytes,
                                                         const FabricRouterSlotCounts& slots, bool dateline_vcs) {
  FabricRouterL1Layout l{};
  uint32_t next = api::round_up_u32(l1_base, kFabricControlFieldBytes);
  auto field = [&next]() {
    const uint32_t a = next;
    next += kFabricControlFieldBytes;
    return a;
  };
  l.control_begin = next;
  l.status = field();
  l.handshake_mailbox = field();
  l.termination_signal = field();
  l.local_mailbox = field();
  l.ack_mailbox = field();
  l.ack_staging = field();
  l.handshake_staging = field();
  for (uint32_t c = 0; c < fabric_router::kNumSenderChannels; ++c) {
    l.sender[c].connection_live = field();
    l.sender[c].worker_location_info = field();
    l.sender[c].packets_written = field();
    l.sender[c].packets_freed = field();
  }
  l.downstream_flow_control_sem = field();
  l.downstream_teardown_sem = field();
  l.downstream_buffer_index_sem = field();
  l.dateline_vcs = dateline_vcs;
  if (dateline_vcs) {
    FabricSenderChannelLayout& vc1 = l.sender[fabric_router::kVc1ForwardingChannel];
    vc1.connection_live = field();
    vc1.worker_location_info = field();
    vc1.packets_written = field();
    vc1.packets_freed = field();
    l.vc1_ack_mailbox = field();
    l.vc1_ack_staging = field();
    l.vc1_downstream_flow_control_sem = field();
    l.vc1_downstream_teardown_sem = field();
    l.vc1_downstream_buffer_index_sem = field();
  }
  l.control_end = next;
  l.slot_size_bytes = api::fabric_slot_size_bytes(max_payload_bytes);
  l.max_payload_bytes = max_payload_bytes;
  l.sync_offset_in_slot = api::fabric_slot_sync_offset(max_payload_bytes);
  next = api::round_up_u32(next, api::kFabricBufferAlignment);
  for (uint32_t c = 0; c < fabric_router::kNumSenderChannels; ++c) {
    l.sender[c].buffer_base = next;
    l.sender[c].num_slots = slots.sender[c];
    next += slots.sender[c] * l.slot_size_bytes;
  }
  l.receiver_buffer_base = next;
  l.receiver_slots = slots.receiver[0];
  next += slots.receiver[0] * l.slot_size_bytes;
  if (dateline_vcs) {
    FabricSenderChannelLayout& vc1 = l.sender[fabric_router::kVc1ForwardingChannel];
    vc1.buffer_base = next;
    vc1.num_slots = slots.sender[fabric_router::kVc1ForwardingChannel];
    next += vc1.num_slots * l.slot_size_bytes;
    l.vc1_receiver_buffer_base = next;
    l.vc1_receiver_slots = slots.receiver[1];
    next += slots.receiver[1] * l.slot_size_bytes;
  }
  l.end = next;
  return l;
}

constexpr FabricRouterL1Layout make_fabric_router_layout(uint32_t l1_base, uint32_t max_payload_bytes,
                                                         uint32_t sender0_slots, uint32_t sender1_slots,
                                                         uint32_t receiver_slots) {
  return make_fabric_router_layout(l1_base, max_payload_bytes,
                                   FabricRouterSlotCounts{{sender0_slots, sender1_slots, 0}, {receiver_slots, 0}},
                                   false);
}

constexpr FabricRouterL1Layout make_fabric_router_layout(const FabricRouterConfig& c) {
  return make_fabric_router_layout(c.l1_base, c.max_payload_bytes, own_slot_counts(c), c.dateline_vcs);
}

// The connection block a worker (or the neighbour router) uses for `channel` of the router at
// NoC0 (edm_x, edm_y). Worker semaphores: ids for a Tensix worker's runtime args, addresses
// when a router builds it for itself.
constexpr api::FabricConnectionConfig fabric_connection_for_channel(const FabricRouterL1Layout& l, uint32_t channel,
                                                                    uint32_t edm_noc_x, uint32_t edm_noc_y,
                                                                    uint32_t worker_flow_control_sem,
                                                                    uint32_t worker_teardown_sem,
                                                                    uint32_t worker_buffer_index_sem) {
  const FabricSenderChannelLayout& ch = l.sender[channel];
  return api::FabricConnectionConfig{edm_noc_x,
                                     edm_noc_y,
                                     ch.buffer_base,
                                     ch.num_slots,
                                     l.slot_size_bytes,
                                     l.max_payload_bytes,
                                     ch.connection_live,
                                     ch.worker_location_info,
                                     ch.packets_written,
                                     ch.packets_freed,
                                     worker_flow_control_sem,
                                     worker_teardown_sem,
                                     worker_buffer_index_sem};
}

// =============================================================================================
// Legacy per-op EDM (legacy_edm.cpp; REFERENCE §5). Launched with each op on both ends of a
// link. Channels are numbered senders first [0, N), then receivers [N, N + M). This EDM's
// sender channel i pairs with the peer's receiver channel i, so the peer runs with N and M
// swapped and the same base, buffer count and buffer size.
//
// CT:  [0] 1 = handshake master (the side with the lowest sender channel id, REFERENCE §5)
//      [1] L1 base of the EDM's region (16 B aligned)
//      [2] number of sender channels N   [3] number of receiver channels M
//      [4] buffers per channel           [5] buffer size in bytes (a multiple of 16)
//      [6] termination mode: 0 = MESSAGE_COUNT_REACHED, 1 = WORKER_INITIATED
//      [7] context-switch interval (idle passes between run_routing() calls)
// RT:  [0] termination semaphore id on this ERISC (WORKER_INITIATED: each channel's worker
//          increments it once, after its last message; at N + M the EDM drains and exits)
//      [1 + c * kChannelArgWords ...] channel c:
//          +0, +1 worker NoC0 x, y
//          +2 worker semaphore id (on the Tensix worker; the EDM increments it)
//          +3 EDM channel semaphore id (on this ERISC; the worker increments it)
//          +4 number of messages (MESSAGE_COUNT_REACHED; ignored otherwise)
// =============================================================================================
namespace legacy_edm {
constexpr uint32_t kCtIsHandshakeMaster = 0;
constexpr uint32_t kCtL1Base = 1;
constexpr uint32_t kCtNumSenderChannels = 2;
constexpr uint32_t kCtNumReceiverChannels = 3;
constexpr uint32_t kCtNumBuffersPerChannel = 4;
constexpr uint32_t kCtBufferSizeBytes = 5;
constexpr uint32_t kCtTerminationMode = 6;
constexpr uint32_t kCtSwitchInterval = 7;
constexpr uint32_t kNumCompileTimeArgs = 8;

constexpr uint32_t kTerminationMessageCountReached = 0;
constexpr uint32_t kTerminationWorkerInitiated = 1;

constexpr uint32_t kRtTerminationSemaphoreId = 0;
constexpr uint32_t kRtFirstChannel = 1;
constexpr uint32_t kChannelWorkerNocX = 0;
constexpr uint32_t kChannelWorkerNocY = 1;
constexpr uint32_t kChannelWorkerSemaphoreId = 2;
constexpr uint32_t kChannelEdmSemaphoreId = 3;
constexpr uint32_t kChannelNumMessages = 4;
constexpr uint32_t kChannelArgWords = 5;
constexpr uint32_t channel_block(uint32_t channel) { return kRtFirstChannel + channel * kChannelArgWords; }

// Channels per EDM: one per worker; REFERENCE §5 benchmarked up to 30 per direction.
constexpr uint32_t kMaxChannels = 32;
constexpr uint32_t kMaxBuffersPerChannel = 16;
}  // namespace legacy_edm

struct LegacyEdmConfig {
  bool is_handshake_master;
  uint32_t l1_base;
  uint32_t num_sender_channels;
  uint32_t num_receiver_channels;
  uint32_t num_buffers_per_channel;
  uint32_t buffer_size_bytes;
  uint32_t termination_mode;
  uint32_t switch_interval;
};

template <typename CtArg>
constexpr LegacyEdmConfig read_legacy_edm_config(CtArg&& ct) {
  namespace e = legacy_edm;
  return LegacyEdmConfig{ct(e::kCtIsHandshakeMaster) != 0, ct(e::kCtL1Base),           ct(e::kCtNumSenderChannels),
                         ct(e::kCtNumReceiverChannels),    ct(e::kCtNumBuffersPerChannel), ct(e::kCtBufferSizeBytes),
                         ct(e::kCtTerminationMode),        ct(e::kCtSwitchInterval)};
}

constexpr void write_legacy_edm_config(const LegacyEdmConfig& c, uint32_t* ct) {
  namespace e = legacy_edm;
  ct[e::kCtIsHandshakeMaster] = c.is_handshake_master ? 1 : 0;
  ct[e::kCtL1Base] = c.l1_base;
  ct[e::kCtNumSenderChannels] = c.num_sender_channels;
  ct[e::kCtNumReceiverChannels] = c.num_receiver_channels;
  ct[e::kCtNumBuffersPerChannel] = c.num_buffers_per_channel;
  ct[e::kCtBufferSizeBytes] = c.buffer_size_bytes;
  ct[e::kCtTerminationMode] = c.termination_mode;
  ct[e::kCtSwitchInterval] = c.switch_interval;
}

// The EDM's L1 region: status and handshake words, then per channel an ack mailbox (written
// by the peer) and an ack staging word (our sends' source), then the buffers. A buffer is
// [payload (buffer size) | sync word], padded to 32 B.
struct LegacyEdmL1Layout {
  uint32_t status;
  uint32_t handshake_mailbox;
  uint32_t handshake_staging;
  uint32_t channel_control_base;  // channel c: ack mailbox at + c*32, ack staging at + c*32 + 16
  uint32_t buffers_base;
  uint32_t buffer_stride_bytes;
  uint32_t buffer_size_bytes;
  uint32_t num_buffers_per_channel;
  uint32_t num_channels;
  uint32_t end;

  constexpr uint32_t ack_mailbox(uint32_t channel) const { return channel_control_base + channel * 32; }
  constexpr uint32_t ack_staging(uint32_t channel) const { return channel_control_base + channel * 32 + 16; }
  constexpr uint32_t buffer(uint32_t channel, uint32_t index) const {
    return buffers_base + (channel * num_buffers_per_channel + index) * buffer_stride_bytes;
  }
  constexpr uint32_t sync(uint32_t channel, uint32_t index) const { return buffer(channel, index) + buffer_size_bytes; }
};

constexpr LegacyEdmL1Layout make_legacy_edm_layout(uint32_t l1_base, uint32_t num_channels,
                                                   uint32_t num_buffers_per_channel, uint32_t buffer_size_bytes) {
  LegacyEdmL1Layout l{};
  uint32_t next = api::round_up_u32(l1_base, 16);
  l.status = next;
  l.handshake_mailbox = next + 16;
  l.handshake_staging = next + 32;
  l.channel_control_base = next + 48;
  next = l.channel_control_base + num_channels * 32;
  l.buffers_base = api::round_up_u32(next, api::kFabricBufferAlignment);
  l.buffer_size_bytes = buffer_size_bytes;
  l.buffer_stride_bytes = api::round_up_u32(buffer_size_bytes + api::kEthChannelSyncBytes, api::kFabricBufferAlignment);
  l.num_buffers_per_channel = num_buffers_per_channel;
  l.num_channels = num_channels;
  l.end = l.buffers_base + num_channels * num_buffers_per_channel * l.buffer_stride_bytes;
  return l;
}

constexpr LegacyEdmL1Layout make_legacy_edm_layout(const LegacyEdmConfig& c) {
  return make_legacy_edm_layout(c.l1_base, c.num_sender_channels + c.num_receiver_channels,
                                c.num_buffers_per_channel, c.buffer_size_bytes);
}

// The peer's channel that pairs with our channel `channel` (the peer has N and M swapped).
constexpr uint32_t legacy_edm_peer_channel(const LegacyEdmConfig& c, uint32_t channel) {
  return channel < c.num_sender_channels ? c.num_receiver_channels + channel : channel - c.num_sender_channels;
}

// =============================================================================================
// Reduce (reduce.cpp): out = in0 + in1, page by page, in blocks of CB pages.
//
// CT:  [0] in0 CB id  [1] in1 CB id  [2] out CB id
//      [3] data format, tt-metal DataFormat values: Float32 = 0, Float16_b (bf16) = 5,
//          Bfp8_b = 6 (whole 1088 B tiles, summed in fp32: reduce/bfp8_math.hpp)
// RT:  [0] number of blocks  [1] pages per block (the producers' packet size in pages:
//      the interpreter pushes whole packets)
// The page size is the out CB's page size; the input CBs' pages must be at least as large.
// =============================================================================================
namespace reduce {
constexpr uint32_t kCtIn0CbId = 0;
constexpr uint32_t kCtIn1CbId = 1;
constexpr uint32_t kCtOutCbId = 2;
constexpr uint32_t kCtDataFormat = 3;
constexpr uint32_t kNumCompileTimeArgs = 4;

constexpr uint32_t kRtNumBlocks = 0;
constexpr uint32_t kRtPagesPerBlock = 1;
constexpr uint32_t kNumRuntimeArgs = 2;
// Optional third input: the last kRtIn2Blocks blocks compute out = (in0 + in1) + in2, rounding
// after each addition (the two-sided line reduce_scatter's owner step). Absent: 2 inputs only.
constexpr uint32_t kRtIn2CbId = 2;
constexpr uint32_t kRtIn2Blocks = 3;
constexpr uint32_t kNumRuntimeArgsWithIn2 = 4;
// Optional passes (at least 1; absent: 1). With P > 1 the sums stay in L1: pass 1 computes
// out[b] = in0[b] + in1 for each of the num_blocks blocks, and each later pass adds the next in1
// block in place, out[b] = out[b] + in1, rounding after each addition; the out CB holds all
// num_blocks blocks (reserved at once) and each block is pushed when the last pass has added to
// it. So in1 supplies P x num_blocks blocks, in0 num_blocks, and no running sum goes back through
// memory (the one-shot ring reduce_scatter's local fold). Not with a third input.
constexpr uint32_t kRtPasses = 4;
constexpr uint32_t kNumRuntimeArgsWithPasses = 5;

constexpr uint32_t kDataFormatFloat32 = 0;
constexpr uint32_t kDataFormatFloat16B = 5;
constexpr uint32_t kDataFormatBfp8B = 6;
}  // namespace reduce

// =============================================================================================
// Fabric mux (fabric_mux.cpp; REFERENCE §6.3): a Tensix kernel that lets several workers share
// one router's worker channel (sender channel 0), which takes one connection at a time. Each
// client sees a sender channel of its own, with the router's protocol (fabric_connection.hpp),
// so a worker connects to the mux exactly as to a router; the mux copies each packet from the
// client's slot into the router's slot and frees the client's slot once the copy has left.
//
// CT:  [0] number of clients (1 .. kMaxClients)  [1] slots per client  [2] max payload bytes
//      [3] CB id of the slot buffer  [4] its L1 address (the host places it; the kernel checks)
// RT:  [0 .. kFabricConnectionArgWords) the connection block to the router (semaphore ids)
// Per-program semaphores on the mux core: the router connection's three (any ids the block
// names), and four per client from kFirstClientSemaphoreId: connection_live,
// worker_location_info, packets_written, packets_freed. They are semaphores, not CB memory,
// because the host zeroes them before launch: a client may open before the mux has started.
// Slots: client c's slot i at slots base + (c * slots per client + i) * slot size, a router
// slot's layout (fabric_slot_size_bytes).
// The mux exits once every client has opened and closed and every packet has been copied;
// then it closes its router connection.
// =============================================================================================
namespace fabric_mux {
constexpr uint32_t kCtNumClients = 0;
constexpr uint32_t kCtSlotsPerClient = 1;
constexpr uint32_t kCtMaxPayloadBytes = 2;
constexpr uint32_t kCtSlotsCbId = 3;
constexpr uint32_t kCtSlotsBase = 4;
constexpr uint32_t kNumCompileTimeArgs = 5;

constexpr uint32_t kRtRouterConnection = 0;

constexpr uint32_t kMaxClients = 6;
constexpr uint32_t kFirstClientSemaphoreId = 8;
constexpr uint32_t kSemaphoresPerClient = 4;
constexpr uint32_t kClientConnectionLive = 0;
constexpr uint32_t kClientWorkerLocationInfo = 1;
constexpr uint32_t kClientPacketsWritten = 2;
constexpr uint32_t kClientPacketsFreed = 3;
constexpr uint32_t client_semaphore_id(uint32_t client, uint32_t field) {
  return kFirstClientSemaphoreId + client * kSemaphoresPerClient + field;
}
constexpr uint32_t client_slots_base(uint32_t slots_base, uint32_t client, uint32_t slots_per_client,
                                     uint32_t max_payload_bytes) {
  return slots_base + client * slots_per_client * api::fabric_slot_size_bytes(max_payload_bytes);
}
}  // namespace fabric_mux

}  // namespace cclmesh::kernels
