#pragma once
// One seeded bit flip in one ethernet packet's payload (what-if and CI runs,
// `--fault corrupt:A-B[@T][:SEED]`): the way to see a wrong result caught end to end, by the
// output check and not by a protocol check or a hang.
//
// Which packet: the first one that starts on any wire the fault is attached to (every link
// between chips A and B, both directions) at or after `from`, and that is longer than
// kCorruptibleMinBytes. Shorter sends are credits, acks, status and sync words or header-only
// packets. Which bit: a seeded draw of a byte in [kSkipFrontBytes, bytes - kSkipBackBytes) and
// of a bit in it. The skipped front covers a fabric packet header (48 B) and the skipped back
// the sync word that a fabric slot or a legacy EDM buffer ends with (16 B), so the flip lands
// in the payload in both data-mover formats. It is one-shot: a fault corrupts one packet.
// Timing-only runs carry no bytes, so there is nothing to flip.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "sim/engine/time.hpp"

namespace cclmesh::sim {

// What was flipped, for the run's report.
struct CorruptedPacket {
  SimTime when;
  std::string place;     // the sending core, "chip 0 eth channel 8 core (9,6)"
  std::string peer;      // the receiving core
  std::uint64_t destination_address = 0;
  std::uint32_t packet_bytes = 0;
  std::uint32_t byte = 0;  // offset in the packet
  std::uint32_t bit = 0;   // 0 = least significant
  std::uint8_t before = 0;
  std::uint8_t after = 0;
};

class PacketCorruption {
 public:
  static constexpr std::uint32_t kSkipFrontBytes = 64;
  static constexpr std::uint32_t kSkipBackBytes = 16;
  static constexpr std::uint32_t kCorruptibleMinBytes = kSkipFrontBytes + kSkipBackBytes + 1;

  PacketCorruption(SimTime from, std::uint64_t seed, std::string spec)
      : from_(from), seed_(seed), spec_(std::move(spec)) {}

  // Called as a packet starts on an attached wire with the bytes it carries (empty when the
  // run stores no data). Flips one bit and returns what it did when this is the packet to
  // corrupt; otherwise leaves `data` alone and returns nullopt.
  std::optional<CorruptedPacket> maybe_corrupt(SimTime now, std::span<std::uint8_t> data,
                                               std::uint64_t destination_address, const std::string& place,
                                               const std::string& peer);

  const std::string& spec() const { return spec_; }
  SimTime from() const { return from_; }
  const std::optional<CorruptedPacket>& corrupted() const { return corrupted_; }
  // "flipped bit 3 of byte 1234 (0x5a -> 0x52) of a 4160 B packet from chip 0 ... to chip 2 ...
  // (L1 0x...) at 12.3 us", or what it is still waiting for.
  std::string describe() const;

 private:
  SimTime from_;
  std::uint64_t seed_;
  std::string spec_;
  std::optional<CorruptedPacket> corrupted_;
};

}  // namespace cclmesh::sim
