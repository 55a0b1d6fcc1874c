#include "tools/cclmesh/mirror_choice.hpp"

#include <stdexcept>

#include "runtime/fabric/fabric_plan.hpp"
#include "sim/device/mirrored_groups.hpp"
#include "topologies/embedding.hpp"
#include "topologies/errors.hpp"

namespace cclmesh::cli::detail {

std::vector<std::vector<runtime::ChipId>> groups_to_mirror(const RunOptions& options, const topo::Topology& topology,
                                                           const runtime::FabricOptions& fabric,
                                                           std::span<const runtime::MeshWorkload> workloads,
                                                           bool traced, bool noc_statistics) {
  if (options.simulate_every_group || !options.no_data || !options.cluster_axis || !options.chips.empty() ||
      !options.faults.plan.empty() || traced || noc_statistics) {
    return {};
  }
  std::vector<std::vector<runtime::ChipId>> groups;
  try {
    for (const std::vector<topo::ChipId>& group : topo::axis_groups(topology, *options.cluster_axis)) {
      groups.emplace_back(group.begin(), group.end());
    }
    if (groups.size() < 2) return {};
    const sim::device::MirroredGroups mirrored(groups);
    // The plan the device will lay (no fault re-embeds it: faults are excluded above).
    if (mirrored.why_systems_differ(topology, runtime::FabricPlan(topology, fabric))) return {};
    if (mirrored.why_workloads_differ(topology, workloads)) return {};
  } catch (const topo::InputError&) {
    return {};  // the run reports it, naming the option
  } catch (const std::invalid_argument&) {
    return {};  // a fabric the device will refuse, or groups of different sizes: every chip simulated
  }
  return groups;
}

}  // namespace cclmesh::cli::detail
