#pragma once
// The run's groups against links down from the start: a group laid as given across one is
// reported as the fault (exit 3) instead of hanging; legacy mode's whole-system ring or line is
// laid around one where another avoids it, and the run's notes say so.

#include <string>
#include <vector>

#include "tools/cclmesh/run_options.hpp"
#include "topologies/topology.hpp"

namespace cclmesh::cli::detail {

// --chips runs its order as given: the device re-embeds only the whole-system fabric around a
// link down from the start (SimMeshDevice::reembed_around_down_links), so a --chips hop that is
// down is the fault (exit 3). Legacy mode along an axis runs each row or column over its own
// links, a ring with one down link as the line around it (runtime/ccl/common/legacy_groups.hpp,
// session 25); a row or column the down links cut (two on a ring, one on a line that does not
// close round it) is the fault, named with its links, before anything runs (session 21 review:
// it hung, its report's headline saying no worker waited on the link).
void reject_fixed_groups_across_down_links(const RunOptions& options, const topo::Topology& topology);

// Legacy mode on the whole system launches its EDMs along the system's ring (or line) as the
// embedding search finds it; with a link down from the start on it, the op would hang (each EDM
// waits for its peer across the link). As the fabric is re-embedded (sim/device/fabric_reembed.hpp)
// it first runs on another ring (or line) through every chip over the links left:
// options.legacy_group is that one. A ring no other ring avoids the link by runs as the line
// around it (session 25): options.legacy_group is the system's own ring, legacy_opened_at the
// link, and the op's builders lay the line from the device's down_edges (legacy_groups.hpp).
// The run's notes say which. Else (two links down on the ring, a line with no other) the run is
// refused as the fault (exit 3), naming the links.
void lay_legacy_group_around_down_links(RunOptions& options, const topo::Topology& topology);

// A run's fault effects, the note of a legacy group laid around a down link first.
std::vector<std::string> with_legacy_group_note(const RunOptions& options, std::vector<std::string> effects);

}  // namespace cclmesh::cli::detail
