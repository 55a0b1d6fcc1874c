#include "runtime/ccl/common/legacy_groups.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "runtime/ccl/common/ccl_common.hpp"
#include "runtime/ccl/common/legacy_edm_plan.hpp"
#include "runtime/fabric/fabric_plan.hpp"

namespace cclmesh::runtime::ccl {

std::vector<ChipId> LegacyGroup::chips_by_rank() const {
  std::vector<ChipId> by_rank(chips.size());
  for (std::uint32_t p = 0; p < chips.size(); ++p) by_rank.at(ranks.at(p)) = chips[p];
  return by_rank;
}

LegacyGroup legacy_group(const topo::Topology& topology, const std::vector<ChipId>& rank_order, CclTopology shape,
                         const DownEdges& down_edges, const std::string& op) {
  LegacyGroup group;
  group.shape = shape;
  group.chips = rank_order;
  for (std::uint32_t rank = 0; rank < rank_order.size(); ++rank) group.ranks.push_back(rank);
  if (down_edges.empty()) return group;
  const GroupRun run = group_run(topology, rank_order, shape == CclTopology::Ring, down_edges);
  if (!run.runs()) {
    std::string cut;
    for (const auto& [a, b] : run.cut_by) cut += fmt::format("{}{}-{}", cut.empty() ? "" : ", ", a, b);
    throw CclParamsError(fmt::format(
        "{}: legacy {} {} is cut by the down link(s) {}: {}", op, to_string(shape), fmt::join(rank_order, "-"), cut,
        run.cut_by.size() > 1 && shape == CclTopology::Ring
            ? "a ring runs as a line around one down link, not two"
            : "a line with a down hop has no path through its chips (a ring runs as a line around one)"));
  }
  if (!run.opened_at) return group;  // no down hop on its path (a ring without its closing link stays one)
  group.shape = CclTopology::Line;
  group.opened_at = run.opened_at;
  group.chips = run.chips;
  for (std::uint32_t p = 0; p < run.chips.size(); ++p) {
    const auto at = std::find(rank_order.begin(), rank_order.end(), run.chips[p]);
    group.ranks[p] = static_cast<std::uint32_t>(at - rank_order.begin());
  }
  return group;
}

std::vector<LegacyGroup> legacy_groups(const GroupSelection& selection, const topo::Topology& topology,
                                       CclTopology shape, const DownEdges& down_edges, const std::string& op) {
  std::vector<LegacyGroup> groups;
  for (const std::vector<ChipId>& g : resolve_legacy_groups(selection, topology, shape)) {
    groups.push_back(legacy_group(topology, g, shape, down_edges, op));
  }
  return groups;
}

}  // namespace cclmesh::runtime::ccl
