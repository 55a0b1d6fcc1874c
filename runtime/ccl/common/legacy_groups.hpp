#pragma once
// The groups a legacy-EDM op runs (REFERENCE 5: per-op EDMs over each group's own links, no
// fabric), laid around the links down from the start (FabricOptions::down_edges of a device
// without a fabric): for each group its chips in the order its EDMs chain them, the rank each
// holds, and whether it runs as a ring or a line. A ring (a torus row or column, the
// whole-system ring) with one down link on it runs as the line around that link, from the chip
// after it round to the chip before it, exactly as the fabric opens such a ring
// (runtime::group_run, shared): its ranks stay in the ring's order, so the op's data goes where
// it goes without the fault. Pure functions of values and a topology: no device, no engine.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runtime/ccl/common/collective.hpp"
#include "runtime/device/types.hpp"
#include "topologies/topology.hpp"

namespace cclmesh::runtime::ccl {

using DownEdges = std::vector<std::pair<ChipId, ChipId>>;

// One group as a legacy op runs it. Its chips are held by *position*, the order the EDMs chain
// them (position p + 1 is p's up neighbour; a ring's last position wraps to 0), and each
// position's *rank*, the order the caller gave, which goes with the data (FabricGroup's split).
// The two differ only on a ring run as a line around a down link that is not its closing one:
// ranks 0-1-2-3 with 0-1 down run as the line 1-2-3-0, positions 0..3 holding ranks 1, 2, 3, 0.
struct LegacyGroup {
  CclTopology shape = CclTopology::Ring;  // what the group runs as
  std::vector<ChipId> chips;              // by position
  std::vector<std::uint32_t> ranks;       // by position: the rank of chips[p]
  // The down link a ring runs as a line around: (the line's last chip, its first).
  std::optional<std::pair<ChipId, ChipId>> opened_at;

  std::uint32_t size() const { return static_cast<std::uint32_t>(chips.size()); }
  std::uint32_t rank_at(std::uint32_t position) const { return ranks.at(position); }
  // The chips in rank order (the group as the caller gave it).
  std::vector<ChipId> chips_by_rank() const;
};

// A LegacyGroup's chips by position, for add_group_programs / per_rank_workload.
inline const std::vector<ChipId>& chips_of(const LegacyGroup& group) { return group.chips; }

// `rank_order` (chips in rank order) asked to run as `shape`, laid around `down_edges` as
// runtime::group_run lays a fabric's row or column: a group with no down hop runs as given (a
// ring that lacks its closing link too: require_group_shape refuses it); a group that closes
// (3+ chips, a link from its last chip to its first) with one down hop on the path it takes runs
// as the line around it (a ring's hop, or a line's when its closing link is up). Throws
// CclParamsError naming the group and the down links when they cut it: a line with a down hop
// that cannot close round it, or a ring with two.
LegacyGroup legacy_group(const topo::Topology& topology, const std::vector<ChipId>& rank_order, CclTopology shape,
                         const DownEdges& down_edges, const std::string& op);

// Every group of `selection` (resolve_legacy_groups: with neither chips nor cluster_axis, the
// system's own ring or line) as legacy_group lays it.
std::vector<LegacyGroup> legacy_groups(const GroupSelection& selection, const topo::Topology& topology,
                                       CclTopology shape, const DownEdges& down_edges, const std::string& op);

}  // namespace cclmesh::runtime::ccl
