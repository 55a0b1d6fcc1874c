#pragma once
// Worker <-> fabric router connection (REFERENCE §6.3), the worker side: tt-metal's
// WorkerToFabricEdmSender. A worker owns one sender channel 0 of one router at a time; a
// router's receiver uses the same class to forward into the opposite-direction router's sender
// channel 1 on its own chip.
//
// Protocol (every word below is a 32-bit L1 word in its own 16 B field):
//
//   On the router, per sender channel (addresses from the router's L1 layout, kernel_args.hpp):
//     connection_live       0 unused, 1 open (the worker writes it), 2 close request (the
//                           worker writes it); the router writes 0 back as it acknowledges a
//                           close, so the next connection on the channel starts from unused.
//                           Three values, not open/closed, so that a close is never mistaken
//                           for "never opened": a worker that opens and closes between two
//                           passes of the router leaves 2, and the router still acknowledges.
//                           Any other value is a protocol violation (connection_event()).
//                           tt-metal's public fabric EDM source uses the same three values
//                           (its close_connection_request_value is 2; read in tt_metal/fabric,
//                           not checked against a specific commit)
//     worker_location_info  {worker flow-control sem address, worker teardown sem address,
//                            worker NoC0 x | y << 16, 0}: written by the worker before it opens
//     packets_written       the worker's NoC atomic +1 after each packet it wrote into a slot.
//                           A counter over the channel's whole life, never reset: the next
//                           worker continues from it, so slots and credits stay in step across
//                           connections
//     packets_freed         the router's count of slots it has freed (router-local writes);
//                           read by a worker when it opens
//   On the worker (per-program semaphores of a Tensix worker, or L1 words of a router):
//     flow_control_sem      the router writes its packets_freed count here (NoC inline write)
//                           when the connection opens and whenever it frees slots
//     teardown_sem          the router writes 1 here once it has seen the close request
//     buffer_index_sem      landing word for the open-time read of packets_written
//
//   open:   read packets_freed -> flow_control_sem and packets_written -> buffer_index_sem,
//           write worker_location_info, teardown_sem = 0; (open_finish) wait for the reads,
//           write barrier, connection_live = 1, write barrier.
//   send:   wait until packets_sent - flow_control_sem < num_slots (a free slot); NoC-write
//           header + payload into slot (packets_sent mod num_slots); NoC atomic +1 on
//           packets_written. The increment travels on the same NoC to the same core as the
//           writes and is issued after them, so it lands after them (the NoC orders
//           transactions between one source and one destination on one NoC; the simulator
//           must keep that order).
//   close:  write and atomic barriers (every packet and increment has landed), then
//           connection_live = 2 on the same NoC as the data (REFERENCE §6.3: the close
//           handshake on another NoC overtook data, issue #49764); (close_finish) wait for
//           teardown_sem == 1, then a write barrier.
//   router: connection_live 1 on a channel it has not connected: read worker_location_info,
//           send packets_freed to flow_control_sem. 2: read worker_location_info if it has not
//           connected (the worker opened and closed since the last pass; the location was
//           written before the open), write connection_live = 0, then teardown_sem = 1.
//
// Counters are uint32 and compared by difference, so they may wrap; the blocking slot wait
// uses noc_semaphore_wait_min and is exact until a channel has carried 2^32 packets.
//
// Device-clean: <cstdint> plus kernels/api only; no heap, no exceptions.

#include <cstdint>

#include "kernels/api/dataflow_api.hpp"
#include "kernels/api/fabric_packet_header.hpp"
#include "kernels/api/noc_address.hpp"

namespace cclmesh::api {

// Ethernet moves 16 B words; the sync word after each slot's payload is one of them.
constexpr uint32_t kEthWordBytes = 16;
constexpr uint32_t kEthChannelSyncBytes = 16;
// Router buffers are 32 B aligned (REFERENCE §6.2).
constexpr uint32_t kFabricBufferAlignment = 32;

constexpr uint32_t round_up_u32(uint32_t value, uint32_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

// A slot is [packet header | payload capacity | sync word], padded to the buffer alignment.
constexpr uint32_t fabric_slot_payload_capacity(uint32_t max_payload_bytes) {
  return round_up_u32(max_payload_bytes, kEthWordBytes);
}
constexpr uint32_t fabric_slot_sync_offset(uint32_t max_payload_bytes) {
  return kPacketHeaderSizeBytes + fabric_slot_payload_capacity(max_payload_bytes);
}
constexpr uint32_t fabric_slot_size_bytes(uint32_t max_payload_bytes) {
  return round_up_u32(fabric_slot_sync_offset(max_payload_bytes) + kEthChannelSyncBytes, kFabricBufferAlignment);
}

// The connection_live word's values.
constexpr uint32_t kConnectionUnused = 0;
constexpr uint32_t kConnectionOpen = 1;
constexpr uint32_t kConnectionCloseRequest = 2;
// The teardown_sem value of a close acknowledgement.
constexpr uint32_t kConnectionTeardownAck = 1;

// What a router (or mux) pass must do about one sender channel, from its connection_live word
// and whether the router holds the channel's connection. One table for every kernel that
// serves connections, so they cannot disagree on it.
enum class ConnectionEvent : uint8_t {
  NONE,                // nothing new: unused, or open and already connected
  OPEN,                // connect: read the location, send the worker its credits
  CLOSE,               // acknowledge the close of the connection held
  OPEN_AND_CLOSE,      // the worker opened and closed since the last pass: read its location
                       // (written before the open) and acknowledge the close
  PROTOCOL_VIOLATION,  // a value other than unused, open or close request
};

constexpr ConnectionEvent connection_event(uint32_t live, bool connected) {
  switch (live) {
    case kConnectionUnused:
      // Held and unused cannot happen (only the router writes 0, as it drops the connection);
      // it changes nothing the router could act on either way.
      return ConnectionEvent::NONE;
    case kConnectionOpen:
      return connected ? ConnectionEvent::NONE : ConnectionEvent::OPEN;
    case kConnectionCloseRequest:
      return connected ? ConnectionEvent::CLOSE : ConnectionEvent::OPEN_AND_CLOSE;
    default:
      return ConnectionEvent::PROTOCOL_VIOLATION;
  }
}

// The fault detail (kernel_fault's word_offset) of a WORKER_PROTOCOL_VIOLATION: the channel in
// the low 8 bits, and for a bad connection_live word its value above them (saturated at
// kProtocolViolationValueMax; never 0, as 0 is a valid value), 0 there for a worker that wrote
// more packets than the channel has credits.
constexpr uint32_t kProtocolViolationChannelBits = 8;
constexpr uint32_t kProtocolViolationValueMax = (1u << (32 - kProtocolViolationChannelBits)) - 1;
constexpr uint32_t protocol_violation_overrun_detail(uint32_t channel) { return channel & 0xFF; }
constexpr uint32_t protocol_violation_live_detail(uint32_t channel, uint32_t live) {
  const uint32_t value = live > kProtocolViolationValueMax ? kProtocolViolationValueMax : live;
  return (value << kProtocolViolationChannelBits) | (channel & 0xFF);
}
constexpr uint32_t protocol_violation_channel(uint32_t detail) { return detail & 0xFF; }
constexpr uint32_t protocol_violation_live_value(uint32_t detail) { return detail >> kProtocolViolationChannelBits; }

// Byte offsets inside worker_location_info.
constexpr uint32_t kLocationInfoFlowControlSemOffset = 0;
constexpr uint32_t kLocationInfoTeardownSemOffset = 4;
constexpr uint32_t kLocationInfoWorkerXyOffset = 8;
constexpr uint32_t pack_worker_xy(uint32_t noc0_x, uint32_t noc0_y) { return (noc0_x & 0xFFFF) | (noc0_y << 16); }
constexpr uint32_t worker_xy_x(uint32_t xy) { return xy & 0xFFFF; }
constexpr uint32_t worker_xy_y(uint32_t xy) { return xy >> 16; }

// ---------------------------------------------------------------------------------------------
// The connection's argument block in a worker's runtime args (kFabricConnectionArgWords words).
// Worker semaphores are per-program semaphore ids (resolved with get_semaphore); a router
// forwarding into its neighbour builds the same struct with L1 addresses instead.
// ---------------------------------------------------------------------------------------------
namespace fabric_connection_arg {
constexpr uint32_t kEdmNocX = 0;  // router core, NoC0
constexpr uint32_t kEdmNocY = 1;
constexpr uint32_t kBufferBaseAddress = 2;  // slot 0 of the sender channel
constexpr uint32_t kNumSlots = 3;
constexpr uint32_t kSlotSizeBytes = 4;
constexpr uint32_t kMaxPayloadBytes = 5;
constexpr uint32_t kConnectionLiveAddress = 6;
constexpr uint32_t kWorkerLocationInfoAddress = 7;
constexpr uint32_t kPacketsWrittenAddress = 8;
constexpr uint32_t kPacketsFreedAddress = 9;
constexpr uint32_t kWorkerFlowControlSemaphore = 10;  // id in runtime args
constexpr uint32_t kWorkerTeardownSemaphore = 11;     // id in runtime args
constexpr uint32_t kWorkerBufferIndexSemaphore = 12;  // id in runtime args
constexpr uint32_t kNumWords = 13;
}  // namespace fabric_connection_arg
constexpr uint32_t kFabricConnectionArgWords = fabric_connection_arg::kNumWords;

struct FabricConnectionConfig {
  uint32_t edm_noc_x;
  uint32_t edm_noc_y;
  uint32_t buffer_base_address;
  uint32_t num_slots;
  uint32_t slot_size_bytes;
  uint32_t max_payload_bytes;
  uint32_t connection_live_address;
  uint32_t worker_location_info_address;
  uint32_t packets_written_address;
  uint32_t packets_freed_address;
  // On the connecting core: semaphore ids in the arg block, L1 addresses once resolved.
  uint32_t worker_flow_control_sem;
  uint32_t worker_teardown_sem;
  uint32_t worker_buffer_index_sem;
};

constexpr FabricConnectionConfig read_fabric_connection_config(const uint32_t* words) {
  namespace a = fabric_connection_arg;
  return FabricConnectionConfig{words[a::kEdmNocX],
                                words[a::kEdmNocY],
                                words[a::kBufferBaseAddress],
                                words[a::kNumSlots],
                                words[a::kSlotSizeBytes],
                                words[a::kMaxPayloadBytes],
                                words[a::kConnectionLiveAddress],
                                words[a::kWorkerLocationInfoAddress],
                                words[a::kPacketsWrittenAddress],
                                words[a::kPacketsFreedAddress],
                                words[a::kWorkerFlowControlSemaphore],
                                words[a::kWorkerTeardownSemaphore],
                                words[a::kWorkerBufferIndexSemaphore]};
}

constexpr void write_fabric_connection_config(const FabricConnectionConfig& c, uint32_t* words) {
  namespace a = fabric_connection_arg;
  words[a::kEdmNocX] = c.edm_noc_x;
  words[a::kEdmNocY] = c.edm_noc_y;
  words[a::kBufferBaseAddress] = c.buffer_base_address;
  words[a::kNumSlots] = c.num_slots;
  words[a::kSlotSizeBytes] = c.slot_size_bytes;
  words[a::kMaxPayloadBytes] = c.max_payload_bytes;
  words[a::kConnectionLiveAddress] = c.connection_live_address;
  words[a::kWorkerLocationInfoAddress] = c.worker_location_info_address;
  words[a::kPacketsWrittenAddress] = c.packets_written_address;
  words[a::kPacketsFreedAddress] = c.packets_freed_address;
  words[a::kWorkerFlowControlSemaphore] = c.worker_flow_control_sem;
  words[a::kWorkerTeardownSemaphore] = c.worker_teardown_sem;
  words[a::kWorkerBufferIndexSemaphore] = c.worker_buffer_index_sem;
}

// A connection the kernel can use: at least one slot, a slot that holds the header, the
// payload capacity and the sync word, and a payload size that fits the header's u16 field.
constexpr bool fabric_connection_config_is_valid(const FabricConnectionConfig& c) {
  return c.num_slots > 0 && c.max_payload_bytes <= 0xFFFF &&
         c.slot_size_bytes >= fabric_slot_size_bytes(c.max_payload_bytes) &&
         c.slot_size_bytes % kFabricBufferAlignment == 0;
}

// ---------------------------------------------------------------------------------------------
// The slot and credit bookkeeping of a sender channel, as the writer sees it: pure arithmetic,
// so it is unit-tested without a device.
// ---------------------------------------------------------------------------------------------
struct FabricSenderSlots {
  uint32_t buffer_base_address;
  uint32_t num_slots;
  uint32_t slot_size_bytes;
  uint32_t packets_sent;  // this channel's packets_written as of the last packet we wrote

  constexpr uint32_t slot_index() const { return packets_sent % num_slots; }
  constexpr uint32_t slot_address() const { return buffer_base_address + slot_index() * slot_size_bytes; }
  constexpr uint32_t slots_in_use(uint32_t packets_freed) const { return packets_sent - packets_freed; }
  constexpr bool has_free_slot(uint32_t packets_freed) const { return slots_in_use(packets_freed) < num_slots; }
  constexpr uint32_t free_slots(uint32_t packets_freed) const {
    const uint32_t used = slots_in_use(packets_freed);
    return used >= num_slots ? 0 : num_slots - used;
  }
  // packets_freed >= this value means a slot is free (valid while no slot is free).
  constexpr uint32_t free_slot_wait_target() const { return packets_sent - num_slots + 1; }
};

inline volatile uint32_t* l1_word_ptr(uint32_t l1_address) {
  return reinterpret_cast<volatile uint32_t*>(static_cast<uintptr_t>(l1_address));
}

// Where a connected worker's semaphores are, as the router (or mux) reaches them on `noc`.
struct WorkerLocation {
  uint64_t flow_control_noc_addr;
  uint64_t teardown_noc_addr;
};

// Reads the worker_location_info field at `info_address` on this core. Valid once the router
// has seen connection_live at 1 or 2: the worker writes the field before it opens, on the NoC
// it then writes connection_live on.
inline WorkerLocation read_worker_location(uint32_t info_address, uint8_t noc) {
  uint32_t info[4] = {0, 0, 0, 0};
  l1_read_bytes(info_address, info, sizeof(info));
  const uint32_t xy = info[kLocationInfoWorkerXyOffset / 4];
  const uint32_t x = worker_xy_x(xy);
  const uint32_t y = worker_xy_y(xy);
  return WorkerLocation{get_noc_addr(x, y, info[kLocationInfoFlowControlSemOffset / 4], noc),
                        get_noc_addr(x, y, info[kLocationInfoTeardownSemOffset / 4], noc)};
}

class WorkerToFabricEdmSender {
 public:
  WorkerToFabricEdmSender() = default;

  // `config` with worker semaphores as L1 addresses.
  WorkerToFabricEdmSender(const FabricConnectionConfig& config, uint8_t noc)
      : config_(config), slots_{config.buffer_base_address, config.num_slots, config.slot_size_bytes, 0}, noc_(noc),
        valid_(true) {}

  // Reads the argument block at runtime arg `arg_idx` (advanced past it) and resolves the
  // worker semaphore ids on this core.
  static WorkerToFabricEdmSender build_from_args(uint32_t& arg_idx, uint8_t noc) {
    FabricConnectionConfig c = read_fabric_connection_config(get_arg_ptr(static_cast<int>(arg_idx)));
    arg_idx += kFabricConnectionArgWords;
    c.worker_flow_control_sem = get_semaphore(c.worker_flow_control_sem);
    c.worker_teardown_sem = get_semaphore(c.worker_teardown_sem);
    c.worker_buffer_index_sem = get_semaphore(c.worker_buffer_index_sem);
    return WorkerToFabricEdmSender(c, noc);
  }

  bool is_valid() const { return valid_; }
  const FabricConnectionConfig& config() const { return config_; }
  const FabricSenderSlots& slots() const { return slots_; }
  uint32_t max_payload_bytes() const { return config_.max_payload_bytes; }

  void open_start() {
    noc_async_read(edm_addr(config_.packets_freed_address), config_.worker_flow_control_sem, sizeof(uint32_t), noc_);
    noc_async_read(edm_addr(config_.packets_written_address), config_.worker_buffer_index_sem, sizeof(uint32_t),
                   noc_);
    l1_write_u32(config_.worker_teardown_sem, 0);
    const uint32_t info = config_.worker_location_info_address;
    noc_inline_dw_write(edm_addr(info + kLocationInfoFlowControlSemOffset), config_.worker_flow_control_sem, noc_);
    noc_inline_dw_write(edm_addr(info + kLocationInfoTeardownSemOffset), config_.worker_teardown_sem, noc_);
    noc_inline_dw_write(edm_addr(info + kLocationInfoWorkerXyOffset), pack_worker_xy(my_x(0), my_y(0)), noc_);
  }

  void open_finish() {
    noc_async_read_barrier(noc_);
    slots_.packets_sent = l1_read_u32(config_.worker_buffer_index_sem);
    noc_async_write_barrier(noc_);
    noc_inline_dw_write(edm_addr(config_.connection_live_address), kConnectionOpen, noc_);
    noc_async_write_barrier(noc_);
  }

  void open() {
    open_start();
    open_finish();
  }

  // Non-blocking: a slot is free for the next packet.
  bool edm_has_space_for_packet() const { return slots_.has_free_slot(l1_read_u32(config_.worker_flow_control_sem)); }

  // Blocks (parks) until a slot is free.
  void wait_for_empty_write_slot() const {
    if (!edm_has_space_for_packet()) {
      noc_semaphore_wait_min(l1_word_ptr(config_.worker_flow_control_sem), slots_.free_slot_wait_target());
    }
  }

  // Writes `size_bytes` from local L1 into the payload area of the current slot. Call
  // before the header write that commits the packet.
  void send_payload_without_header_non_blocking_from_address(uint32_t src_l1_address, uint32_t size_bytes) const {
    if (size_bytes > 0) {
      noc_async_write(src_l1_address, edm_addr(slots_.slot_address() + kPacketHeaderSizeBytes), size_bytes, noc_);
    }
  }

  // Writes [src, src + size) at the start of the current slot (a header, or header + payload
  // laid out contiguously) and commits the packet.
  void send_payload_non_blocking_from_address(uint32_t src_l1_address, uint32_t size_bytes) {
    noc_async_write(src_l1_address, edm_addr(slots_.slot_address()), size_bytes, noc_);
    commit_packet();
  }

  // The same with the write tagged with transaction id `trid` (tt-metal's EDM-to-EDM sender
  // has this form): a forwarding router's receiver tells when this packet's source slot may be
  // reused from the id alone. One NoC packet: header + payload fit one (REFERENCE 1.1, 6.2).
  void send_payload_non_blocking_from_address_with_trid(uint32_t src_l1_address, uint32_t size_bytes, uint32_t trid) {
    noc_async_write_one_packet_with_trid(src_l1_address, edm_addr(slots_.slot_address()), size_bytes, trid, noc_);
    commit_packet();
  }

  // The same, then waits until the writes have left this core (the sources may be reused).
  void send_payload_flush_blocking_from_address(uint32_t src_l1_address, uint32_t size_bytes) {
    send_payload_non_blocking_from_address(src_l1_address, size_bytes);
    noc_async_writes_flushed(noc_);
  }

  // Header from one L1 buffer, payload from another: one packet.
  void send_packet_header_and_payload_non_blocking(uint32_t header_l1_address, uint32_t payload_l1_address,
                                                   uint32_t payload_bytes) {
    send_payload_without_header_non_blocking_from_address(payload_l1_address, payload_bytes);
    send_payload_non_blocking_from_address(header_l1_address, kPacketHeaderSizeBytes);
  }

  void close_start() {
    noc_async_write_barrier(noc_);
    noc_async_atomic_barrier(noc_);
    noc_inline_dw_write(edm_addr(config_.connection_live_address), kConnectionCloseRequest, noc_);
  }

  void close_finish() {
    noc_semaphore_wait(l1_word_ptr(config_.worker_teardown_sem), kConnectionTeardownAck);
    noc_async_write_barrier(noc_);
  }

  void close() {
    close_start();
    close_finish();
  }

 private:
  uint64_t edm_addr(uint32_t l1_address) const {
    return get_noc_addr(config_.edm_noc_x, config_.edm_noc_y, l1_address, noc_);
  }
  void commit_packet() {
    noc_semaphore_inc(edm_addr(config_.packets_written_address), 1, noc_);
    slots_.packets_sent += 1;
  }

  FabricConnectionConfig config_{};
  FabricSenderSlots slots_{0, 1, 0, 0};
  uint8_t noc_ = 0;
  bool valid_ = false;
};

}  // namespace cclmesh::api
