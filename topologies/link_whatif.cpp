#include "topologies/link_whatif.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "topologies/arch.hpp"
#include "topologies/errors.hpp"

namespace cclmesh::topo {

Topology with_every_link(const Topology& topology, const LinkWhatIf& what_if) {
  if (what_if.rate_bytes_per_s && *what_if.rate_bytes_per_s <= 0) {
    throw InputError(fmt::format("topology '{}': link rate {} B/s; expected a rate > 0", topology.name(),
                                 *what_if.rate_bytes_per_s));
  }
  if (what_if.latency_ps && *what_if.latency_ps < 0) {
    throw InputError(fmt::format("topology '{}': link latency {} ps; expected a latency >= 0", topology.name(),
                                 *what_if.latency_ps));
  }
  if (!what_if.any()) return topology;
  std::vector<EthLink> links(topology.links().begin(), topology.links().end());
  for (EthLink& link : links) {
    link.rate_bytes_per_s = what_if.rate_bytes_per_s.value_or(link.rate_bytes_per_s);
    link.latency_ps = what_if.latency_ps.value_or(link.latency_ps);
  }
  return Topology(topology.name(), {topology.chips().begin(), topology.chips().end()}, std::move(links),
                  topology.mesh_shape());
}

std::optional<LinkSpread> links_off_arch_defaults(const Topology& topology) {
  if (topology.links().empty()) return std::nullopt;
  LinkSpread spread;
  const EthLink& first = topology.links().front();
  spread.min_rate_bytes_per_s = spread.max_rate_bytes_per_s = first.rate_bytes_per_s;
  spread.min_latency_ps = spread.max_latency_ps = first.latency_ps;
  spread.default_rate_bytes_per_s =
      default_link_rate_bytes_per_s(topology.chip(first.a.chip).arch, topology.chip(first.b.chip).arch);
  spread.default_latency_ps =
      default_link_latency_ps(topology.chip(first.a.chip).arch, topology.chip(first.b.chip).arch);
  for (const EthLink& link : topology.links()) {
    const Arch a = topology.chip(link.a.chip).arch;
    const Arch b = topology.chip(link.b.chip).arch;
    ++spread.links;
    if (link.rate_bytes_per_s != default_link_rate_bytes_per_s(a, b) ||
        link.latency_ps != default_link_latency_ps(a, b)) {
      ++spread.links_off_default;
    }
    spread.min_rate_bytes_per_s = std::min(spread.min_rate_bytes_per_s, link.rate_bytes_per_s);
    spread.max_rate_bytes_per_s = std::max(spread.max_rate_bytes_per_s, link.rate_bytes_per_s);
    spread.min_latency_ps = std::min(spread.min_latency_ps, link.latency_ps);
    spread.max_latency_ps = std::max(spread.max_latency_ps, link.latency_ps);
  }
  if (spread.links_off_default == 0) return std::nullopt;
  return spread;
}

}  // namespace cclmesh::topo
