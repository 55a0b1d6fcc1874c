#include "runtime/ccl/common/legacy_links.hpp"

#include <algorithm>
#include <deque>
#include <limits>
#include <optional>
#include <map>

namespace cclmesh::runtime::ccl {
namespace {

std::pair<ChipId, ChipId> ordered(ChipId a, ChipId b) { return a < b ? std::pair{a, b} : std::pair{b, a}; }

// The group's hops in rank order (a ring's closing hop last).
std::vector<std::pair<ChipId, ChipId>> group_hops(const std::vector<ChipId>& group, CclTopology shape) {
  std::vector<std::pair<ChipId, ChipId>> hops;
  for (std::size_t r = 0; r + 1 < group.size(); ++r) hops.emplace_back(group[r], group[r + 1]);
  if (shape == CclTopology::Ring && group.size() > 2) hops.emplace_back(group.back(), group.front());
  return hops;
}

}  // namespace

std::set<std::pair<ChipId, ChipId>> dispatch_tunnel_hops(const topo::Topology& topology) {
  // parent[c]: the chip c's tunnel arrives from; MMIO chips are roots.
  std::map<ChipId, std::optional<ChipId>> parent;
  std::deque<ChipId> frontier;
  std::vector<topo::ChipId> ids = topology.chip_ids();
  std::sort(ids.begin(), ids.end());
  for (const topo::ChipId id : ids) {
    if (!topology.chip(id).mmio()) continue;
    parent[static_cast<ChipId>(id)] = std::nullopt;
    frontier.push_back(static_cast<ChipId>(id));
  }
  std::set<std::pair<ChipId, ChipId>> hops;
  while (!frontier.empty()) {
    const ChipId chip = frontier.front();
    frontier.pop_front();
    for (const topo::ChipId next : topology.neighbours(static_cast<topo::ChipId>(chip))) {
      const auto n = static_cast<ChipId>(next);
      if (parent.contains(n)) continue;
      parent[n] = chip;
      hops.insert(ordered(chip, n));
      frontier.push_back(n);
    }
  }
  return hops;
}

namespace {

// The hop's links, less the one a dispatch tunnel (one of `tunnels`) takes.
std::uint32_t hop_links(const topo::Topology& topology, const std::set<std::pair<ChipId, ChipId>>& tunnels, ChipId a,
                        ChipId b) {
  const auto links = static_cast<std::uint32_t>(
      topology.links_between(static_cast<topo::ChipId>(a), static_cast<topo::ChipId>(b)));
  return tunnels.contains(ordered(a, b)) && links > 0 ? links - 1 : links;
}

}  // namespace

std::uint32_t legacy_hop_links(const topo::Topology& topology, ChipId a, ChipId b) {
  return hop_links(topology, dispatch_tunnel_hops(topology), a, b);
}

std::uint32_t legacy_usable_links(const topo::Topology& topology, const std::vector<ChipId>& group, CclTopology shape) {
  const auto hops = group_hops(group, shape);
  if (hops.empty()) return 0;
  const auto tunnels = dispatch_tunnel_hops(topology);
  std::uint32_t usable = std::numeric_limits<std::uint32_t>::max();
  for (const auto& [a, b] : hops) usable = std::min(usable, hop_links(topology, tunnels, a, b));
  return usable;
}

std::pair<ChipId, ChipId> legacy_narrowest_hop(const topo::Topology& topology, const std::vector<ChipId>& group,
                                               CclTopology shape) {
  const auto hops = group_hops(group, shape);
  const auto tunnels = dispatch_tunnel_hops(topology);
  const auto narrower = [&](const auto& x, const auto& y) {
    return hop_links(topology, tunnels, x.first, x.second) < hop_links(topology, tunnels, y.first, y.second);
  };
  // The first hop with the fewest links, as the refusal names it.
  return hops.empty() ? std::pair<ChipId, ChipId>{0, 0} : *std::min_element(hops.begin(), hops.end(), narrower);
}

}  // namespace cclmesh::runtime::ccl
