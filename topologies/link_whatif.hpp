#pragma once
// Link what-ifs: every ethernet link of a system at another rate or latency ("what if the links
// were 2x faster?"), and how far a system's links are from their architecture's defaults, so
// that a what-if is never mistaken for the hardware. Faults (faults.hpp) edit one link; these
// edit them all.

#include <cstddef>
#include <cstdint>
#include <optional>

#include "topologies/topology.hpp"

namespace cclmesh::topo {

// Unset fields keep each link's own value.
struct LinkWhatIf {
  std::optional<std::int64_t> rate_bytes_per_s;  // per direction
  std::optional<std::int64_t> latency_ps;        // one way, as EthLink::latency_ps
  bool any() const { return rate_bytes_per_s.has_value() || latency_ps.has_value(); }
};

// The topology with every link at the what-if's rate and latency; chips, channels, mesh shape and
// name kept (the name is the system's; the links say what changed). Throws InputError for a
// rate <= 0 or a negative latency.
Topology with_every_link(const Topology& topology, const LinkWhatIf& what_if);

// The spread of a system's links against their architectures' defaults (arch.hpp).
struct LinkSpread {
  std::size_t links = 0;
  std::size_t links_off_default = 0;  // links whose rate or latency is not their arch's default
  std::int64_t min_rate_bytes_per_s = 0;
  std::int64_t max_rate_bytes_per_s = 0;
  std::int64_t min_latency_ps = 0;
  std::int64_t max_latency_ps = 0;
  // The first link's arch defaults (a simulated mesh has one arch).
  std::int64_t default_rate_bytes_per_s = 0;
  std::int64_t default_latency_ps = 0;
};

// nullopt when every link is at its arch's defaults (or there is no link): the hardware's links.
std::optional<LinkSpread> links_off_arch_defaults(const Topology& topology);

}  // namespace cclmesh::topo
