#pragma once
// A full-duplex ethernet link between two ethernet cores (REFERENCE 1.1, 1.5): one wire per
// direction at the line rate, each a server that carries a packet's bytes plus its header and
// per-frame overhead, then a one-way latency. Faults for what-if runs: a link can be taken down
// (packets sent into it are dropped and recorded in the FaultLog), have its rate scaled, lose
// or duplicate frames, or flip a bit of one packet (PacketCorruption).

#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include "sim/engine/time.hpp"
#include "sim/model/packet_resource.hpp"

namespace cclmesh::sim {

class EthCore;
class PacketCorruption;

// Seeded frame loss and duplication on a link (what-if runs, `--fault drop:P` / `dup:P`).
// A probability is kept as an integer threshold out of 2^32, so the decision is integer
// arithmetic on the generator's output and the same seed gives the same frames on every host.
struct FrameFaultRates {
  std::uint64_t drop_per_2p32 = 0;  // 2^32 = every frame
  std::uint64_t dup_per_2p32 = 0;
  std::uint64_t seed = 0;
};

// What happens to one ethernet packet (all of its frames) on the wire.
enum class FrameFate : std::uint8_t { Delivered, Dropped, Duplicated };

class EthWire {
 public:
  EthWire(Bandwidth rate, SimTime latency) : nominal_rate_(rate), rate_(rate), latency_(latency) {}

  Bandwidth rate() const { return rate_; }
  Bandwidth nominal_rate() const { return nominal_rate_; }
  SimTime latency() const { return latency_; }
  bool up() const { return up_; }
  PacketResource& server() { return server_; }
  const PacketResource& server() const { return server_; }
  std::int64_t dropped_packets() const { return dropped_packets_; }

 private:
  friend class EthLink;
  friend class EthCore;
  Bandwidth nominal_rate_;
  Bandwidth rate_;
  SimTime latency_;
  bool up_ = true;
  PacketResource server_;
  std::int64_t dropped_packets_ = 0;
};

class EthLink {
 public:
  EthLink(EthCore& a, EthCore& b, Bandwidth rate, SimTime latency);
  EthLink(const EthLink&) = delete;
  EthLink& operator=(const EthLink&) = delete;

  EthCore& a() const { return a_; }
  EthCore& b() const { return b_; }
  EthWire& wire_from(const EthCore& sender);
  const EthWire& wire_from(const EthCore& sender) const;
  SimTime latency() const { return a_to_b_.latency(); }

  // --- fault hooks ------------------------------------------------------------------------
  // A link that is down drops every packet that would start on it from now on.
  void set_up(bool up);
  bool up() const { return a_to_b_.up(); }
  // Runs both directions at nominal * numerator / denominator (e.g. 1/2 for a degraded link).
  void scale_rate(std::int64_t numerator, std::int64_t denominator);
  // Every frame sent on either wire from now on is lost / duplicated with the given rates.
  void set_frame_faults(const FrameFaultRates& rates);
  // The fate of a packet of `frames` frames: lost if any frame is, else duplicated if any frame
  // is. Draws are made in the order packets start on the wire, which the event order fixes.
  FrameFate draw_fate(std::int64_t frames);
  std::int64_t frames_dropped() const { return frames_dropped_; }
  std::int64_t frames_duplicated() const { return frames_duplicated_; }
  // Packets starting on either wire are offered to `corruption` (owned by the caller, outliving
  // the link), in the order the corruptions were attached.
  void add_corruption(PacketCorruption& corruption) { corruptions_.push_back(&corruption); }
  const std::vector<PacketCorruption*>& corruptions() const { return corruptions_; }

 private:
  EthCore& a_;
  EthCore& b_;
  EthWire a_to_b_;
  EthWire b_to_a_;
  std::optional<FrameFaultRates> frame_faults_;
  std::mt19937_64 frame_random_;
  std::int64_t frames_dropped_ = 0;
  std::int64_t frames_duplicated_ = 0;
  std::vector<PacketCorruption*> corruptions_;
};

}  // namespace cclmesh::sim
