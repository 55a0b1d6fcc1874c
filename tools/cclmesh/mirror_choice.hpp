#pragma once
// Whether a local run simulates its identical groups once (sim/device/mirrored_groups.hpp): an
// op along --cluster-axis, timing-only (--no-data), without faults, a trace or NoC statistics,
// and not --simulate-every-group, whose system, fabric and workloads make groups along the axis
// identical (each class of identical groups runs one) and independent. The figures are the same either way (tests/unit/cli
// mirrored_groups_test); only the events the engine runs, and the host time, are fewer.

#include <span>
#include <vector>

#include "runtime/device/fabric_options.hpp"
#include "runtime/device/workload.hpp"
#include "tools/cclmesh/run_options.hpp"
#include "topologies/topology.hpp"

namespace cclmesh::cli::detail {

// SimMeshDeviceOptions::mirrored_groups and mirrored_group_sources: the groups along the axis and
// the group each takes its figures from (itself: simulated).
struct GroupMirroring {
  std::vector<std::vector<runtime::ChipId>> groups;  // empty: every chip simulated
  std::vector<std::size_t> sources;
  std::size_t mirrored_count() const;
};

// The fewest groups to simulate, or none mirrored.
GroupMirroring groups_to_mirror(const RunOptions& options, const topo::Topology& topology,
                                const runtime::FabricOptions& fabric, std::span<const runtime::MeshWorkload> workloads,
                                bool traced, bool noc_statistics);

}  // namespace cclmesh::cli::detail
