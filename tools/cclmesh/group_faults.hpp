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
// link down from the start (SimMeshDevice::reembed_around_down_links), and a legacy group is
// never moved: neither a row or column of a legacy run along an axis, which runs over the
// mesh's own links (no fabric to run it as a line around the link; session 21 review: it hung,
// its report's headline saying no worker waited on the link).
void reject_fixed_groups_across_down_links(const RunOptions& options, const topo::Topology& topology);

// Legacy mode on the whole system launches its EDMs along the system's ring (or line) as the
// embedding search finds it; with a link down from the start on it, the op would hang (each EDM
// waits for its peer across the link). A legacy op has no fabric to open a ring around the link,
// but it may run on another ring (or line) through every chip over the links left, as the
// fabric is re-embedded (sim/device/fabric_reembed.hpp): options.legacy_group is that one, and
// the run's notes say so. Without one, the run is refused as the fault (exit 3), naming fabric
// mode, where a ring runs as a line around one down link.
void lay_legacy_group_around_down_links(RunOptions& options, const topo::Topology& topology);

// A run's fault effects, the note of a legacy group laid around a down link first.
std::vector<std::string> with_legacy_group_note(const RunOptions& options, std::vector<std::string> effects);

}  // namespace cclmesh::cli::detail
