#include "tools/cclmesh/mirror_choice.hpp"

#include <stdexcept>

#include "runtime/fabric/fabric_plan.hpp"
#include "sim/device/mirrored_groups.hpp"
#include "topologies/embedding.hpp"
#include "topologies/errors.hpp"

namespace cclmesh::cli::detail {

std::size_t GroupMirroring::mirrored_count() const { return sim::device::MirroredGroups::count_mirrored(sources); }

GroupMirroring groups_to_mirror(const RunOptions& options, const topo::Topology& topology,
                                const runtime::FabricOptions& fabric, std::span<const runtime::MeshWorkload> workloads,
                                bool traced, bool noc_statistics) {
  if (options.simulate_every_group || !options.no_data || !options.cluster_axis || !options.chips.empty() ||
      !options.faults.plan.empty() || traced || noc_statistics) {
    return {};
  }
  GroupMirroring mirroring;
  try {
    for (const std::vector<topo::ChipId>& group : topo::axis_groups(topology, *options.cluster_axis)) {
      mirroring.groups.emplace_back(group.begin(), group.end());
    }
    if (mirroring.groups.size() < 2) return {};
    // The plan the device will lay (no fault re-embeds it: faults are excluded above).
    mirroring.sources = sim::device::MirroredGroups::fewest_sources(mirroring.groups, topology,
                                                                    runtime::FabricPlan(topology, fabric), workloads);
  } catch (const topo::InputError&) {
    return {};  // the run reports it, naming the option
  } catch (const std::invalid_argument&) {
    return {};  // a fabric the device will refuse: the device's build says why
  }
  if (mirroring.mirrored_count() == 0) return {};
  return mirroring;
}

}  // namespace cclmesh::cli::detail
