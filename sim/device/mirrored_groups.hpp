#pragma once
// Identical groups simulated once.
//
// A collective along a mesh axis runs one independent group per row or column. When the groups
// are the same sub-system rank for rank (chips of one kind, the same links on the same channels
// at the same rate and latency, the same fabric routers) running the same programs, and nothing
// in a group can reach another (every router and every ethernet kernel sits on a link inside its
// group, and no router between groups carries anything), then the groups' simulations are one simulation under a renaming of the chips: no event
// of one group reads or writes the state of another, and the engine orders each group's events
// by (time, order of scheduling) whether the others run beside them or not. The simulated device
// then runs the first group only and gives every other group's chips the first group's kernel
// profile and link counters (SimMeshDeviceOptions::mirrored_groups). docs/sim_device.md,
// "Identical groups simulated once", has the argument and what was compared to check it.
//
// Only timing-only runs without faults or traces use it (tools/cclmesh decides): with data each
// chip's bytes differ, a fault's place or random stream is one group's, and a trace shows every
// chip.

#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "runtime/device/mesh_device.hpp"
#include "runtime/device/workload.hpp"
#include "runtime/fabric/fabric_plan.hpp"
#include "topologies/topology.hpp"

namespace cclmesh::sim::device {

class MirroredGroups {
 public:
  // groups[0] is simulated; chip groups[g][r] (g >= 1) mirrors groups[0][r]. Throws
  // std::invalid_argument for fewer than 2 groups, groups of different sizes or a chip twice.
  explicit MirroredGroups(std::vector<std::vector<runtime::ChipId>> groups);

  const std::vector<std::vector<runtime::ChipId>>& groups() const { return groups_; }
  // The simulated chip that `chip` mirrors; nullopt for a chip that is simulated.
  std::optional<runtime::ChipId> counterpart(runtime::ChipId chip) const;
  bool mirrored(runtime::ChipId chip) const { return counterpart(chip).has_value(); }
  // The chips that mirror a simulated one, in group order (empty for a chip outside groups[0]).
  std::vector<runtime::ChipId> mirrors_of(runtime::ChipId simulated) const;
  // Both chips in one group.
  bool same_group(runtime::ChipId a, runtime::ChipId b) const;

  // Why the topology and the fabric do not make the groups identical and independent, or nullopt
  // when they do.
  std::optional<std::string> why_systems_differ(const topo::Topology& topology, const runtime::FabricPlan& fabric) const;
  // Why the workloads do not run the same programs on every group, or reach out of a group from
  // an ethernet core, or nullopt when they do not.
  std::optional<std::string> why_workloads_differ(const topo::Topology& topology,
                                                  std::span<const runtime::MeshWorkload> workloads) const;

  // The simulated chips' kernel profile with each entry of a groups[0] chip followed by its
  // mirrors' copies.
  std::vector<runtime::KernelProfile> mirrored_profile(std::span<const runtime::KernelProfile> simulated) const;

 private:
  struct Place {
    std::size_t group = 0;
    std::size_t rank = 0;
  };
  std::optional<Place> place_of(runtime::ChipId chip) const;

  std::vector<std::vector<runtime::ChipId>> groups_;
  std::map<runtime::ChipId, Place> places_;
};

}  // namespace cclmesh::sim::device
