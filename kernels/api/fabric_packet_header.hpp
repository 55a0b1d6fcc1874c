#pragma once
// The 48-byte 1D fabric packet header (tt-metal PacketHeader, REFERENCE §6.5, §6.6), the routing
// byte of the 1D fabric and its per-hop rules. Builders mirror tt-metal's names
// (to_chip_unicast, to_chip_multicast, to_noc_unicast_write, ...), so kernels read the same.
//
// Layout (bytes):
//   0-39  NoC command fields (union; 40 B because the scatter write carries four 64-bit NoC
//         addresses and three 16-bit chunk sizes, and u64 alignment rounds 38 B up to 40 B)
//   40-41 payload_size_bytes (excludes the header)
//   42    noc_send_type
//   43    src_ch_id (the source's EDM sender channel)
//   44    chip_send_type
//   45    routing fields
//   46-47 reserved
// REFERENCE §6.5 gives the 2026 1D header as 48 B without its layout (unconfirmed); the 2024
// header was 32 B with a 16 B union. This is the 32 B header's field order behind a union
// that holds the scatter write (≤ 4 chunks, REFERENCE §6.6). See docs/command_stream.md.
//
// Device-clean: <cstdint>, <cstddef> (offsetof) only.

#include <cstddef>
#include <cstdint>

#include "kernels/api/noc_address.hpp"

namespace cclmesh::api {

enum class NocSendType : uint8_t {
  NOC_UNICAST_WRITE = 0,
  NOC_UNICAST_INLINE_WRITE = 1,
  NOC_MULTICAST_WRITE = 2,
  NOC_UNICAST_ATOMIC_INC = 3,
  NOC_MULTICAST_ATOMIC_INC = 4,  // the 1D router asserts on it (REFERENCE §6.5)
  NOC_FUSED_UNICAST_WRITE_ATOMIC_INC = 5,
  // One payload written to up to kNocScatterWriteMaxChunks NoC addresses, chunk by chunk
  // (tt-metal NOC_UNICAST_SCATTER_WRITE): interleaved pages live in different banks, so this
  // is how one packet carries several of them.
  NOC_UNICAST_SCATTER_WRITE = 6,
};
constexpr uint32_t kNumNocSendTypes = 7;
constexpr uint32_t kNocScatterWriteMaxChunks = 4;

enum class ChipSendType : uint8_t { CHIP_UNICAST = 0, CHIP_MULTICAST = 1 };

// ---------------------------------------------------------------------------------------------
// Routing byte: low nibble = start distance in hops, high nibble = range.
// Each chip that receives the packet applies, with r its routing byte on arrival:
//   deliver here  <=> start == 1
//   forward       <=> r != 0x11 (not the last chip of the route)
//   before forwarding: start > 1 ? start -= 1 : range -= 1
// So a packet with start s and range n is written on hops s .. s+n-1 and forwarded no farther.
// Unicast over d hops is start d, range 1 (0x10 | d); nibbles cap every route at 15 hops.
// ---------------------------------------------------------------------------------------------
constexpr uint8_t kRoutingStartBits = 4;
constexpr uint8_t kRoutingHopDistanceMask = 0x0F;
constexpr uint8_t kRoutingRangeMask = 0xF0;
constexpr uint8_t kLastHopDistanceVal = 1;
constexpr uint8_t kLastChipInMcastVal = 1u << kRoutingStartBits;                // 0x10
constexpr uint8_t kLastMcastVal = kLastChipInMcastVal | kLastHopDistanceVal;    // 0x11
constexpr uint8_t kMaxRoutingHops = 15;

constexpr uint8_t unicast_routing(uint8_t distance_in_hops) {
  return static_cast<uint8_t>(kLastChipInMcastVal | (distance_in_hops & kRoutingHopDistanceMask));
}
constexpr uint8_t multicast_routing(uint8_t start_distance_in_hops, uint8_t range_hops) {
  return static_cast<uint8_t>(((range_hops & 0x0F) << kRoutingStartBits) |
                              (start_distance_in_hops & kRoutingHopDistanceMask));
}
constexpr uint8_t routing_start_distance(uint8_t routing) { return routing & kRoutingHopDistanceMask; }
constexpr uint8_t routing_range(uint8_t routing) {
  return static_cast<uint8_t>((routing & kRoutingRangeMask) >> kRoutingStartBits);
}
// A routing byte a router can act on: both fields >= 1. Anything else never terminates or
// underflows, and the router reports it instead of forwarding it.
constexpr bool routing_is_valid(uint8_t routing) {
  return routing_start_distance(routing) >= 1 && routing_range(routing) >= 1;
}
constexpr bool packet_must_be_consumed_locally(uint8_t routing) {
  return (routing & kRoutingHopDistanceMask) == kLastHopDistanceVal;
}
constexpr bool packet_must_be_forwarded(uint8_t routing) { return routing != kLastMcastVal; }
// The routing byte the next chip receives (tt-metal update_packet_header_for_next_hop).
constexpr uint8_t routing_after_hop(uint8_t routing) {
  const bool decrement_range = (routing & kRoutingHopDistanceMask) == kLastHopDistanceVal;
  return static_cast<uint8_t>(routing - (decrement_range ? kLastChipInMcastVal : 1));
}

// ---------------------------------------------------------------------------------------------
// NoC command fields. NoC addresses are NoC0-based 64-bit addresses (noc_address.hpp).
// ---------------------------------------------------------------------------------------------
struct NocUnicastCommandHeader {
  uint64_t noc_address;
};
struct NocUnicastInlineWriteCommandHeader {
  uint64_t noc_address;
  uint32_t value;
};
// The ~Apr 2025 form: an 8-bit increment (REFERENCE §4.11).
struct NocUnicastAtomicIncCommandHeader {
  uint64_t noc_address;
  uint16_t wrap;
  uint8_t value;
  uint8_t flush;
};
struct NocMulticastCommandHeader {
  uint32_t address;
  uint8_t noc_x_start;
  uint8_t noc_y_start;
  uint8_t mcast_rect_size_x;
  uint8_t mcast_rect_size_y;
};
struct NocUnicastAtomicIncFusedCommandHeader {
  uint64_t noc_address;            // where the payload is written
  uint64_t semaphore_noc_address;  // incremented after the write lands
  uint16_t wrap;
  uint8_t value;
  uint8_t flush;
};

// Chunk i (< chunk_count) is written at noc_address[i]; every chunk but the last has the size
// chunk_size[i], the last takes the rest of the payload. Unused addresses are zero.
struct NocUnicastScatterCommandHeader {
  uint64_t noc_address[kNocScatterWriteMaxChunks];
  uint16_t chunk_size[kNocScatterWriteMaxChunks - 1];
  uint8_t chunk_count;
  uint8_t reserved;
};

static_assert(sizeof(NocUnicastCommandHeader) == 8, "unicast write fields");
static_assert(sizeof(NocUnicastScatterCommandHeader) == 40, "scatter write fields (38 B + u64 padding)");
static_assert(sizeof(NocUnicastInlineWriteCommandHeader) == 16, "inline write fields (12 B + u64 padding)");
static_assert(sizeof(NocUnicastAtomicIncCommandHeader) == 16, "atomic inc fields (12 B + u64 padding)");
static_assert(sizeof(NocMulticastCommandHeader) == 8, "multicast write fields");
static_assert(sizeof(NocUnicastAtomicIncFusedCommandHeader) == 24, "fused write + atomic inc fields");

union NocCommandFields {
  NocUnicastCommandHeader unicast_write;
  NocUnicastInlineWriteCommandHeader unicast_inline_write;
  NocMulticastCommandHeader mcast_write;
  NocUnicastAtomicIncCommandHeader unicast_seminc;
  NocUnicastAtomicIncFusedCommandHeader unicast_seminc_fused;
  NocUnicastScatterCommandHeader unicast_scatter_write;
};
static_assert(sizeof(NocCommandFields) == 40, "NoC command fields are 40 B");

constexpr uint16_t kDefaultAtomicIncWrap = 0xFFFF;

struct PacketHeader {
  NocCommandFields command_fields;
  uint16_t payload_size_bytes;
  uint8_t noc_send_type;  // NocSendType
  uint8_t src_ch_id;
  uint8_t chip_send_type;  // ChipSendType
  uint8_t routing_fields;
  uint8_t reserved[2];

  constexpr NocSendType get_noc_send_type() const { return static_cast<NocSendType>(noc_send_type); }
  constexpr ChipSendType get_chip_send_type() const { return static_cast<ChipSendType>(chip_send_type); }

  PacketHeader& to_chip_unicast(uint8_t distance_in_hops) {
    chip_send_type = static_cast<uint8_t>(ChipSendType::CHIP_UNICAST);
    routing_fields = unicast_routing(distance_in_hops);
    return *this;
  }
  PacketHeader& to_chip_multicast(uint8_t start_distance_in_hops, uint8_t range_hops) {
    chip_send_type = static_cast<uint8_t>(ChipSendType::CHIP_MULTICAST);
    routing_fields = multicast_routing(start_distance_in_hops, range_hops);
    return *this;
  }
  PacketHeader& to_noc_unicast_write(uint64_t noc_address, uint16_t payload_bytes) {
    noc_send_type = static_cast<uint8_t>(NocSendType::NOC_UNICAST_WRITE);
    command_fields.unicast_write = NocUnicastCommandHeader{noc_address};
    payload_size_bytes = payload_bytes;
    return *this;
  }
  PacketHeader& to_noc_unicast_inline_write(uint64_t noc_address, uint32_t value) {
    noc_send_type = static_cast<uint8_t>(NocSendType::NOC_UNICAST_INLINE_WRITE);
    command_fields.unicast_inline_write = NocUnicastInlineWriteCommandHeader{noc_address, value};
    payload_size_bytes = 0;
    return *this;
  }
  PacketHeader& to_noc_multicast_write(const NocMulticastCommandHeader& fields, uint16_t payload_bytes) {
    noc_send_type = static_cast<uint8_t>(NocSendType::NOC_MULTICAST_WRITE);
    command_fields.mcast_write = fields;
    payload_size_bytes = payload_bytes;
    return *this;
  }
  PacketHeader& to_noc_unicast_atomic_inc(uint64_t noc_address, uint8_t value, uint16_t wrap = kDefaultAtomicIncWrap,
                                          bool flush = true) {
    noc_send_type = static_cast<uint8_t>(NocSendType::NOC_UNICAST_ATOMIC_INC);
    command_fields.unicast_seminc = NocUnicastAtomicIncCommandHeader{noc_address, wrap, value, flush ? uint8_t{1} : uint8_t{0}};
    payload_size_bytes = 0;
    return *this;
  }
  PacketHeader& to_noc_fused_unicast_write_atomic_inc(uint64_t noc_address, uint64_t semaphore_noc_address,
                                                      uint8_t value, uint16_t payload_bytes,
                                                      uint16_t wrap = kDefaultAtomicIncWrap, bool flush = true) {
    noc_send_type = static_cast<uint8_t>(NocSendType::NOC_FUSED_UNICAST_WRITE_ATOMIC_INC);
    command_fields.unicast_seminc_fused = NocUnicastAtomicIncFusedCommandHeader{
        noc_address, semaphore_noc_address, wrap, value, flush ? uint8_t{1} : uint8_t{0}};
    payload_size_bytes = payload_bytes;
    return *this;
  }
  // `chunk_count` (2 .. 4) chunks of `chunk_sizes[i]` bytes, packed back to back in the payload.
  PacketHeader& to_noc_unicast_scatter_write(const uint64_t* noc_addresses, const uint16_t* chunk_sizes,
                                             uint8_t chunk_count) {
    noc_send_type = static_cast<uint8_t>(NocSendType::NOC_UNICAST_SCATTER_WRITE);
    NocUnicastScatterCommandHeader fields{};
    uint32_t total = 0;
    for (uint8_t i = 0; i < chunk_count && i < kNocScatterWriteMaxChunks; ++i) {
      fields.noc_address[i] = noc_addresses[i];
      if (i + 1u < kNocScatterWriteMaxChunks) fields.chunk_size[i] = i + 1u < chunk_count ? chunk_sizes[i] : 0;
      total += chunk_sizes[i];
    }
    fields.chunk_count = chunk_count;
    command_fields.unicast_scatter_write = fields;
    payload_size_bytes = static_cast<uint16_t>(total);
    return *this;
  }
};

static_assert(sizeof(PacketHeader) == 48, "the 1D fabric packet header is 48 B");
static_assert(offsetof(PacketHeader, command_fields) == 0, "header layout");
static_assert(offsetof(PacketHeader, payload_size_bytes) == 40, "header layout");
static_assert(offsetof(PacketHeader, noc_send_type) == 42, "header layout");
static_assert(offsetof(PacketHeader, src_ch_id) == 43, "header layout");
static_assert(offsetof(PacketHeader, chip_send_type) == 44, "header layout");
static_assert(offsetof(PacketHeader, routing_fields) == 45, "header layout");
constexpr uint32_t kPacketHeaderSizeBytes = sizeof(PacketHeader);

// A zeroed header: the starting point for the builders (no uninitialised bytes on the wire).
inline PacketHeader make_packet_header() {
  PacketHeader h{};
  h.command_fields.unicast_scatter_write = NocUnicastScatterCommandHeader{};
  return h;
}

// The 1D fabric's EDM start-up handshake and teardown words (REFERENCE §6.4, §6.8).
enum class EdmStatus : uint32_t {
  STARTED = 0xA0B0C0D0,
  REMOTE_HANDSHAKE_COMPLETE = 0xA1B1C1D1,
  LOCAL_HANDSHAKE_COMPLETE = 0xA2B2C2D2,
  READY_FOR_TRAFFIC = 0xA3B3C3D3,
  TERMINATED = 0xA4B4C4D4,
};
enum class TerminationSignal : uint32_t {
  KEEP_RUNNING = 0,
  GRACEFULLY_TERMINATE = 1,
  IMMEDIATELY_TERMINATE = 2,
};

}  // namespace cclmesh::api
