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
// then runs one group of each class of identical groups and gives the others' chips its kernel
// profile and link counters (SimMeshDeviceOptions::mirrored_groups). docs/sim_device.md,
// "Identical groups simulated once", has the argument and what was compared to check it.
//
// Only timing-only runs without faults or traces use it (tools/cclmesh decides): with data each
// chip's bytes differ, a fault's place or random stream is one group's, and a trace shows every
// chip.

#include <deque>
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
  // Chip groups[g][r] mirrors groups[sources[g]][r] when sources[g] != g; a group that is its own
  // source is simulated. Empty sources: every group mirrors group 0. Throws
  // std::invalid_argument for fewer than 2 groups, an empty group, a chip twice, a source out of
  // range or itself a mirror, or a group of another size than its source.
  explicit MirroredGroups(std::vector<std::vector<runtime::ChipId>> groups, std::vector<std::size_t> sources = {});

  const std::vector<std::vector<runtime::ChipId>>& groups() const { return groups_; }
  const std::vector<std::size_t>& sources() const { return sources_; }
  // The groups that mirror another (not simulated).
  std::size_t mirrored_count() const { return count_mirrored(sources_); }
  // The groups of `sources` (MirroredGroups' form) that mirror another.
  static std::size_t count_mirrored(std::span<const std::size_t> sources);
  // The simulated chip that `chip` mirrors; nullopt for a chip that is simulated.
  std::optional<runtime::ChipId> counterpart(runtime::ChipId chip) const;
  bool mirrored(runtime::ChipId chip) const { return counterpart(chip).has_value(); }
  // The chips that mirror a simulated one, in group order (empty for a mirror or a chip outside
  // every group).
  std::vector<runtime::ChipId> mirrors_of(runtime::ChipId simulated) const;
  // Both chips in one group.
  bool same_group(runtime::ChipId a, runtime::ChipId b) const;
  // The simulated chips, group by group, "0-1-2-3, 8-9-10-11" (for reports).
  std::string simulated_chips() const;

  // Why the topology and the fabric do not make each group identical to its source and the
  // groups independent, or nullopt when they do.
  std::optional<std::string> why_systems_differ(const topo::Topology& topology, const runtime::FabricPlan& fabric) const;
  // Why the workloads do not run each group's source's programs on it, or reach out of a group
  // from an ethernet core, or nullopt when they do not.
  std::optional<std::string> why_workloads_differ(const topo::Topology& topology,
                                                  std::span<const runtime::MeshWorkload> workloads) const;

  // The sources that simulate the fewest groups: each group, in order, mirrors the first earlier
  // simulated group it is identical to (system and workloads), else is simulated. Every group
  // its own source when the workloads reach out of a group or run on a chip outside every group.
  static std::vector<std::size_t> fewest_sources(const std::vector<std::vector<runtime::ChipId>>& groups,
                                                 const topo::Topology& topology, const runtime::FabricPlan& fabric,
                                                 std::span<const runtime::MeshWorkload> workloads);

  // The simulated chips' kernel profile with each entry of a simulated chip followed by its
  // mirrors' copies.
  std::vector<runtime::KernelProfile> mirrored_profile(const std::deque<runtime::KernelProfile>& simulated) const;
  // mirrored_profile(simulated).size(), without building it.
  std::size_t mirrored_profile_size(const std::deque<runtime::KernelProfile>& simulated) const;

  struct Place {
    std::size_t group = 0;
    std::size_t rank = 0;
  };
  std::optional<Place> place_of(runtime::ChipId chip) const;

 private:
  std::vector<std::vector<runtime::ChipId>> groups_;
  std::vector<std::size_t> sources_;
  std::map<runtime::ChipId, Place> places_;
};

}  // namespace cclmesh::sim::device
