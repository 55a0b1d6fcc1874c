#pragma once
// The fabric router's decisions and bookkeeping as pure functions (REFERENCE §6.4-6.7), so
// they are unit-tested with plain inputs: the sync word and the credit word that cross the
// link, what a receiver does with a packet, the sender's flow-control rule (including bubble
// flow control), and when a gracefully terminating router is drained.
//
// Credits across the link (cclmesh's form of §6.4's two-level acks): the receiver keeps four
// cumulative counters, first-level acks and completions per source sender channel, and sends
// all four as one 16 B FabricAckWord into the sender's ack mailbox whenever one changed. A
// sender frees its slots on first-level acks (or on completions when first-level acks are
// off) and counts the peer receiver's free slots as slots minus (sent - completions).
// Cumulative counters make a late or coalesced ack harmless: only the newest value matters.
//
// Device-clean: <cstdint> and kernels/ headers only.

#include <cstdint>

#include "kernels/api/fabric_connection.hpp"
#include "kernels/api/fabric_packet_header.hpp"
#include "kernels/api/kernel_fault.hpp"
#include "kernels/kernel_args.hpp"

namespace cclmesh::kernels {

// The 16 B word after each slot's payload (tt-metal eth_channel_sync_t). bytes_sent != 0
// marks the slot full; the receiver clears it when the slot is free again.
struct EthChannelSync {
  uint32_t bytes_sent;  // header + payload
  uint32_t receiver_ack;
  uint32_t src_ch_id;  // the sender channel the packet left from
  uint32_t sequence;   // the sender's count of packets sent over the link, for traces
};
static_assert(sizeof(EthChannelSync) == api::kEthChannelSyncBytes, "the sync word is one ethernet word");

struct FabricAckWord {
  uint32_t first_level[fabric_router::kNumSenderChannels];
  uint32_t completions[fabric_router::kNumSenderChannels];
};
static_assert(sizeof(FabricAckWord) == 16, "the ack word is one ethernet word");

constexpr uint32_t completions_total(const FabricAckWord& a) { return a.completions[0] + a.completions[1]; }

// Slots a sender channel has freed, as the peer's acks say.
constexpr uint32_t freed_by_acks(const FabricAckWord& a, uint32_t channel, bool first_level_acks) {
  return first_level_acks ? a.first_level[channel] : a.completions[channel];
}

// The peer receiver's free slots: slots minus packets sent and not yet completed.
constexpr uint32_t remote_receiver_free_slots(uint32_t receiver_slots, uint32_t sent_total, uint32_t completed_total) {
  const uint32_t in_use = sent_total - completed_total;
  return in_use >= receiver_slots ? 0 : receiver_slots - in_use;
}

// Bubble flow control (REFERENCE §6.7): the injection channel (0) needs 2 free downstream
// slots, forwarding (1) needs 1. Without it every channel needs 1.
constexpr uint32_t min_free_slots_to_send(uint32_t channel, bool bubble_flow_control) {
  return (bubble_flow_control && channel == fabric_router::kWorkerChannel) ? 2 : 1;
}

constexpr bool sender_may_send(uint32_t channel, bool bubble_flow_control, uint32_t remote_free_slots) {
  return remote_free_slots >= min_free_slots_to_send(channel, bubble_flow_control);
}

// Dateline VCs (REFERENCE 6.1 mid-2025 row, 6.7; kernel_args.hpp CT [14..28]). Each receiver
// VC has its own ack word; its two counters pairs are indexed by the sending channel's place
// among the channels that feed that VC: channels 0 and 1 on VC0 (and on VC1 across the
// dateline), channel 2 alone on VC1 otherwise. A receiver never sees channel 2 mixed with 0 or 1.
constexpr uint32_t ack_index_of_channel(uint32_t channel) {
  return channel == fabric_router::kVc1ForwardingChannel ? 0 : channel;
}

// The peer receiver VC a sender channel sends into: channel 2 forwards on VC1; channels 0 and 1
// send on VC0, except on the dateline link, where crossing it is the switch to VC1.
constexpr uint32_t sender_target_vc(uint32_t channel, bool sends_into_vc1) {
  return (channel == fabric_router::kVc1ForwardingChannel || sends_into_vc1) ? 1 : 0;
}

// The downstream sender channel a receiver VC forwards into: VC0 into channel 1, VC1 into 2.
constexpr uint32_t forwarding_channel_of_vc(uint32_t vc) {
  return vc == 0 ? fabric_router::kForwardingChannel : fabric_router::kVc1ForwardingChannel;
}

// Bytes of a packet on the link before its sync word: header + payload in 16 B words.
constexpr uint32_t packet_send_bytes(uint32_t payload_bytes) {
  return api::round_up_u32(api::kPacketHeaderSizeBytes + payload_bytes, api::kEthWordBytes);
}
// A packet whose payload fills the slot goes out with its sync word in one send.
constexpr bool packet_fills_slot(uint32_t payload_bytes, uint32_t max_payload_bytes) {
  return api::fabric_slot_payload_capacity(payload_bytes) == api::fabric_slot_payload_capacity(max_payload_bytes);
}

// What a receiver does with a packet whose routing byte is `routing` on arrival.
struct ReceiverDecision {
  bool deliver_locally;
  bool forward;
  uint8_t next_routing;  // the routing byte the next chip receives
};

constexpr ReceiverDecision decide_receiver_action(uint8_t routing) {
  const bool forward = api::packet_must_be_forwarded(routing);
  return ReceiverDecision{api::packet_must_be_consumed_locally(routing), forward,
                          forward ? api::routing_after_hop(routing) : routing};
}

// NoC commands the 1D router carries.
constexpr bool router_supports_noc_send_type(uint8_t type) {
  switch (static_cast<api::NocSendType>(type)) {
    case api::NocSendType::NOC_UNICAST_WRITE:
    case api::NocSendType::NOC_UNICAST_INLINE_WRITE:
    case api::NocSendType::NOC_MULTICAST_WRITE:
    case api::NocSendType::NOC_UNICAST_ATOMIC_INC:
    case api::NocSendType::NOC_FUSED_UNICAST_WRITE_ATOMIC_INC:
    case api::NocSendType::NOC_UNICAST_SCATTER_WRITE:
      return true;
    case api::NocSendType::NOC_MULTICAST_ATOMIC_INC:
      return false;
  }
  return false;
}

constexpr bool send_type_has_payload(uint8_t type) {
  const auto t = static_cast<api::NocSendType>(type);
  return t == api::NocSendType::NOC_UNICAST_WRITE || t == api::NocSendType::NOC_MULTICAST_WRITE ||
         t == api::NocSendType::NOC_FUSED_UNICAST_WRITE_ATOMIC_INC || t == api::NocSendType::NOC_UNICAST_SCATTER_WRITE;
}

// A scatter write names 2 .. 4 chunks, each but the last of a stated size, the last non-empty.
constexpr bool scatter_fields_are_valid(const api::NocUnicastScatterCommandHeader& s, uint32_t payload_bytes) {
  if (s.chunk_count < 2 || s.chunk_count > api::kNocScatterWriteMaxChunks) {
    return false;
  }
  uint32_t leading = 0;
  for (uint32_t i = 0; i + 1 < s.chunk_count; ++i) {
    if (s.chunk_size[i] == 0) {
      return false;
    }
    leading += s.chunk_size[i];
  }
  return leading < payload_bytes;
}

// Checks a packet found in a receiver slot. Returns 0 or a fault code.
constexpr uint32_t check_received_packet(const api::PacketHeader& h, const EthChannelSync& sync,
                                         uint32_t max_payload_bytes, bool has_downstream,
                                         uint32_t num_sender_channels = fabric_router::kNumSenderChannels) {
  const uint32_t bad = api::fault_code(api::KernelFaultCode::BAD_PACKET_HEADER);
  if (sync.src_ch_id >= num_sender_channels) {
    return bad;
  }
  if (h.payload_size_bytes > max_payload_bytes ||
      sync.bytes_sent != api::kPacketHeaderSizeBytes + h.payload_size_bytes) {
    return bad;
  }
  if (h.noc_send_type >= api::kNumNocSendTypes) {
    return bad;
  }
  if (!router_supports_noc_send_type(h.noc_send_type)) {
    return api::fault_code(api::KernelFaultCode::UNSUPPORTED_NOC_SEND_TYPE);
  }
  if (!send_type_has_payload(h.noc_send_type) && h.payload_size_bytes != 0) {
    return bad;
  }
  if (h.noc_send_type == static_cast<uint8_t>(api::NocSendType::NOC_MULTICAST_WRITE) &&
      (h.command_fields.mcast_write.mcast_rect_size_x == 0 || h.command_fields.mcast_write.mcast_rect_size_y == 0)) {
    return bad;
  }
  if (h.noc_send_type == static_cast<uint8_t>(api::NocSendType::NOC_UNICAST_SCATTER_WRITE) &&
      !scatter_fields_are_valid(h.command_fields.unicast_scatter_write, h.payload_size_bytes)) {
    return bad;
  }
  if (!api::routing_is_valid(h.routing_fields)) {
    return bad;
  }
  if (api::packet_must_be_forwarded(h.routing_fields) && !has_downstream) {
    return api::fault_code(api::KernelFaultCode::ROUTE_PAST_END);
  }
  return 0;
}

// Checks a packet a sender channel is about to send (its header was written by a worker or
// the upstream router). Returns 0 or a fault code.
constexpr uint32_t check_outgoing_packet(const api::PacketHeader& h, uint32_t max_payload_bytes) {
  if (h.payload_size_bytes > max_payload_bytes) {
    return api::fault_code(api::KernelFaultCode::BAD_PACKET_HEADER);
  }
  return 0;
}

// One sender channel, router side.
struct RouterSenderState {
  uint32_t sent;   // packets sent over the link from this channel
  uint32_t freed;  // slots freed (credits given back)
  bool connected;
};

// Packets a worker has written that the router has not sent yet; and the overrun check: the
// worker may never have more packets outstanding than the channel has slots.
constexpr uint32_t packets_waiting(uint32_t packets_written, const RouterSenderState& s) {
  return packets_written - s.sent;
}
constexpr bool worker_overran_channel(uint32_t packets_written, const RouterSenderState& s, uint32_t num_slots) {
  return packets_written - s.freed > num_slots;
}

// Graceful termination may end the router once nothing is left in flight that it owns.
struct RouterDrainView {
  uint32_t packets_written[fabric_router::kNumSenderChannels];
  RouterSenderState sender[fabric_router::kNumSenderChannels];
  uint32_t remote_sent_total;
  uint32_t remote_completed_total;
  bool receiver_idle;        // no packet being handled
  bool receiver_slot_empty;  // and none waiting in the next slot
  bool acks_pending;         // an ack word still to be sent
};

constexpr bool router_drained(const RouterDrainView& v) {
  for (uint32_t c = 0; c < fabric_router::kNumSenderChannels; ++c) {
    if (v.packets_written[c] != v.sender[c].sent || v.sender[c].sent != v.sender[c].freed) {
      return false;
    }
  }
  return v.remote_sent_total == v.remote_completed_total && v.receiver_idle && v.receiver_slot_empty &&
         !v.acks_pending;
}

// The value the same-chip neighbour writes into our local mailbox once it is initialised.
constexpr uint32_t kLocalNeighbourReady = static_cast<uint32_t>(api::EdmStatus::LOCAL_HANDSHAKE_COMPLETE);

}  // namespace cclmesh::kernels
