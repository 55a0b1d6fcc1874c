#include "sim/model/packet_corruption.hpp"

#include <fmt/format.h>

#include <random>

namespace cclmesh::sim {

std::optional<CorruptedPacket> PacketCorruption::maybe_corrupt(SimTime now, std::span<std::uint8_t> data,
                                                               std::uint64_t destination_address,
                                                               const std::string& place, const std::string& peer) {
  if (corrupted_ || now < from_ || data.size() < kCorruptibleMinBytes) return std::nullopt;
  // mt19937_64's output is fixed by the standard and the draws are integer modulo: the same
  // seed flips the same bit on every host.
  std::mt19937_64 random(seed_);
  const auto span = static_cast<std::uint64_t>(data.size() - kSkipFrontBytes - kSkipBackBytes);
  CorruptedPacket c;
  c.when = now;
  c.place = place;
  c.peer = peer;
  c.destination_address = destination_address;
  c.packet_bytes = static_cast<std::uint32_t>(data.size());
  c.byte = kSkipFrontBytes + static_cast<std::uint32_t>(random() % span);
  c.bit = static_cast<std::uint32_t>(random() % 8);
  c.before = data[c.byte];
  c.after = static_cast<std::uint8_t>(c.before ^ (1u << c.bit));
  data[c.byte] = c.after;
  corrupted_ = c;
  return corrupted_;
}

std::string PacketCorruption::describe() const {
  if (!corrupted_) {
    return fmt::format("no packet of at least {} B with data started on the link(s) {}", kCorruptibleMinBytes,
                       from_ == SimTime::zero() ? "during the run" : "from " + to_string(from_));
  }
  const CorruptedPacket& c = *corrupted_;
  return fmt::format("flipped bit {} of byte {} (0x{:02x} -> 0x{:02x}) of a {} B packet from {} to {} (L1 {:#x}) at {}",
                     c.bit, c.byte, c.before, c.after, c.packet_bytes, c.place, c.peer, c.destination_address,
                     to_string(c.when));
}

}  // namespace cclmesh::sim
