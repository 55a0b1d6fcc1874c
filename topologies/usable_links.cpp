#include "topologies/usable_links.hpp"

#include <algorithm>
#include <limits>

namespace cclmesh::topo {

std::int32_t dispatch_reserved_links(const Topology& topology) {
  const auto chips = topology.chips();
  return std::any_of(chips.begin(), chips.end(), [](const Chip& chip) { return !chip.mmio(); }) ? 1
                                                                                                : 0;
}

std::int32_t usable_links(const Topology& topology, const Embedding& embedding) {
  if (embedding.hops.empty()) return 0;
  const auto reserved = dispatch_reserved_links(topology);
  std::int32_t usable = std::numeric_limits<std::int32_t>::max();
  for (const Hop& hop : embedding.hops) {
    const auto links = static_cast<std::int32_t>(topology.links_between(hop.from, hop.to));
    usable = std::min(usable, std::max(0, links - reserved));
  }
  return usable;
}

}  // namespace cclmesh::topo
