#pragma once
// The groups an op runs on: selected by the run's options, resolved on the device's fabric (or
// in legacy mode on the system's ring or line), and legacy mode's check of --links on them.

#include <vector>

#include "runtime/ccl/common/collective.hpp"
#include "runtime/ccl/common/legacy_groups.hpp"
#include "runtime/device/mesh_device.hpp"
#include "runtime/device/types.hpp"
#include "tools/cclmesh/run_options.hpp"
#include "topologies/topology.hpp"

namespace cclmesh::cli::detail {

namespace ccl = runtime::ccl;
using runtime::ChipId;

// Legacy mode has no routing planes for the fabric plan to check --links against: a group may use
// what every hop has left after fast dispatch's tunnels (runtime/ccl/common/legacy_links.hpp): the
// hops its EDMs chain, so a ring opened into a line around a link down from the start
// (`down_edges`, legacy_groups.hpp) counts the line's, not the down one.
void require_legacy_links(const RunOptions& options, const topo::Topology& topology,
                          const std::vector<std::vector<ChipId>>& groups, ccl::CclTopology shape,
                          const ccl::DownEdges& down_edges);

// The run's groups as the op's params take them: every row or column (--cluster-axis), the
// fabric's chips (fabric mode: --chips made the fabric), or in legacy mode --chips as one group.
ccl::GroupSelection group_selection(const RunOptions& options);

// The groups of a run: from the device's fabric, or in legacy mode (no fabric) from the
// system's ring or line.
std::vector<std::vector<ChipId>> run_groups(const RunOptions& options, runtime::MeshDevice& device,
                                            const ccl::GroupSelection& selection);

}  // namespace cclmesh::cli::detail
