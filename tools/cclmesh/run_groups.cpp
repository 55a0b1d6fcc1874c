#include "tools/cclmesh/run_groups.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "runtime/ccl/common/ccl_common.hpp"
#include "runtime/ccl/common/legacy_edm_plan.hpp"
#include "runtime/ccl/common/legacy_groups.hpp"
#include "runtime/ccl/common/legacy_links.hpp"
#include "runtime/fabric/fabric_plan.hpp"
#include "tools/cclmesh/cli_error.hpp"
#include "tools/cclmesh/sim_device_options.hpp"

namespace cclmesh::cli::detail {

void require_legacy_links(const RunOptions& options, const topo::Topology& topology,
                          const std::vector<std::vector<ChipId>>& groups, ccl::CclTopology shape,
                          const ccl::DownEdges& down_edges) {
  for (const auto& group : groups) {
    // The hops the EDMs chain: a ring opened by a down link is the line around it, without that hop.
    const ccl::LegacyGroup laid = ccl::legacy_group(topology, group, shape, down_edges, "--links");
    const std::uint32_t usable = ccl::legacy_usable_links(topology, laid.chips, laid.shape);
    if (options.links <= usable) continue;
    const auto [a, b] = ccl::legacy_narrowest_hop(topology, laid.chips, laid.shape);
    const std::string opened =
        laid.opened_at ? fmt::format(", run as the line {} around the down link {}-{}", fmt::join(laid.chips, ","),
                                     laid.opened_at->first, laid.opened_at->second)
                       : "";
    const std::uint32_t physical =
        topology.links_between(static_cast<topo::ChipId>(a), static_cast<topo::ChipId>(b));
    const bool tunnel = ccl::dispatch_tunnel_hops(topology).contains({std::min(a, b), std::max(a, b)});
    if (usable == 0) {
      // No --links value runs it (bug bash, session 28: TG's whole-system ring, whose gateway
      // hops keep their one link for the tunnel, said "--links: 1 link(s) asked ... allows 1 to 0").
      throw UsageError(fmt::format("--mode: legacy mode's EDMs have no link on {}'s {} {}{}: hop {}-{} has {} physical "
                                   "link(s){} (REFERENCE 6.9); expected groups whose every hop keeps a link: "
                                   "--cluster-axis, or --chips whose hops avoid {}-{}",
                                   options.system, options.topology, fmt::join(group, ","), opened, a, b, physical,
                                   tunnel ? ", carrying fast dispatch's tunnel" : "", a, b));
    }
    throw UsageError(fmt::format("--links: {} link(s) asked in legacy mode; {}'s {} {}{} allows 1 to {} (hop {}-{} has "
                                 "{} physical link(s){}; REFERENCE 6.9)",
                                 options.links, options.system, options.topology, fmt::join(group, ","), opened, usable,
                                 a, b, physical, tunnel ? ", one of them carrying fast dispatch's tunnel" : ""));
  }
}

ccl::GroupSelection group_selection(const RunOptions& options) {
  ccl::GroupSelection selection;
  selection.cluster_axis = options.cluster_axis;
  if (legacy_mode(options) && !options.chips.empty()) {
    selection.chips = {std::vector<ChipId>(options.chips.begin(), options.chips.end())};
  } else if (legacy_mode(options) && !options.legacy_group.empty()) {
    selection.chips = {std::vector<ChipId>(options.legacy_group.begin(), options.legacy_group.end())};
  }
  return selection;
}

std::vector<std::vector<ChipId>> run_groups(const RunOptions& options, runtime::MeshDevice& device,
                                            const ccl::GroupSelection& selection) {
  try {
    if (legacy_mode(options)) {
      return ccl::resolve_legacy_groups(selection, device.topology(),
                                        options.topology == "ring" ? ccl::CclTopology::Ring : ccl::CclTopology::Line);
    }
    return ccl::resolve_groups(selection, device.topology(),
                               runtime::FabricPlan(device.topology(), device.fabric()));
  } catch (const ccl::CclParamsError& e) {
    if (!selection.cluster_axis) throw;
    throw UsageError(fmt::format("--cluster-axis: {} on {}: {}", *selection.cluster_axis, options.system, e.what()));
  }
}

}  // namespace cclmesh::cli::detail
