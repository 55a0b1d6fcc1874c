#pragma once
// A full-duplex ethernet link between two ethernet cores (REFERENCE 1.1, 1.5): one wire per
// direction at the line rate, each a server that carries a packet's bytes plus its header and
// per-frame overhead, then a one-way latency. Faults for what-if runs: a link can be taken down
// (packets sent into it are dropped and recorded in the FaultLog) or have its rate scaled.

#include <cstdint>

#include "sim/engine/time.hpp"
#include "sim/model/packet_resource.hpp"

namespace cclmesh::sim {

class EthCore;

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

 private:
  EthCore& a_;
  EthCore& b_;
  EthWire a_to_b_;
  EthWire b_to_a_;
};

}  // namespace cclmesh::sim
