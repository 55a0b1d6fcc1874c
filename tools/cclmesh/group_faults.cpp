#include "tools/cclmesh/group_faults.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <utility>

#include "runtime/device/mesh_device.hpp"
#include "sim/device/fault_plan.hpp"
#include "tools/cclmesh/sim_device_options.hpp"
#include "topologies/embedding.hpp"
#include "topologies/errors.hpp"
#include "topologies/faults.hpp"

namespace cclmesh::cli::detail {

namespace {

// The hop of `group` (a ring closing back to its first chip) that `fault` takes down, if any.
std::optional<std::pair<std::uint32_t, std::uint32_t>> hop_down(const sim::device::LinkDownFault& fault,
                                                                const std::vector<std::uint32_t>& group, bool ring) {
  const std::size_t hops = ring ? group.size() : group.size() - 1;
  for (std::size_t i = 0; i < hops; ++i) {
    const std::uint32_t a = group[i];
    const std::uint32_t b = group[(i + 1) % group.size()];
    if ((fault.a == a && fault.b == b) || (fault.a == b && fault.b == a)) return std::pair{a, b};
  }
  return std::nullopt;
}

// A group laid as given whose hop is down from the start: reported as the fault it is, as the
// device reports one under a per-axis line, instead of a hang at start-up. `what` names the
// group, `instead` what would run.
void reject_group_across_down_links(const RunOptions& options, const std::vector<std::uint32_t>& group, bool ring,
                                    const std::string& what, const std::string& instead) {
  for (const sim::device::LinkDownFault& fault : options.faults.plan.link_down) {
    if (fault.at != sim::SimTime::zero()) continue;
    if (const auto hop = hop_down(fault, group, ring)) {
      throw runtime::DeviceError(runtime::DeviceError::Kind::Fault,
                                 fmt::format("fault {} at 0 s: hop {}-{} of {} (a {}) is down, and {}", fault.spec,
                                             hop->first, hop->second, what, ring ? "ring" : "line", instead));
    }
  }
}

}  // namespace

void reject_fixed_groups_across_down_links(const RunOptions& options, const topo::Topology& topology) {
  const bool ring = options.topology == "ring";
  if (!options.chips.empty()) {
    reject_group_across_down_links(options, options.chips, ring, fmt::format("--chips {}", fmt::join(options.chips, ",")),
                                   "a --chips order runs as given: only the whole-system fabric is re-embedded "
                                   "around down links; give chips whose hops avoid it");
  }
  if (legacy_mode(options) && options.cluster_axis) {
    for (const auto& coordinates : topo::axis_groups(topology, *options.cluster_axis)) {
      const std::vector<std::uint32_t> group(coordinates.begin(), coordinates.end());
      reject_group_across_down_links(
          options, group, ring, fmt::format("axis {} group {}", *options.cluster_axis, fmt::join(group, "-")),
          "legacy mode runs each row or column over its own links, not around a down link: run in fabric mode "
          "(a torus ring then runs as a line around it), or with --topology line where the down link closes the "
          "ring");
    }
  }
}

void lay_legacy_group_around_down_links(RunOptions& options, const topo::Topology& topology) {
  if (!legacy_mode(options) || !options.chips.empty() || options.cluster_axis) return;
  const bool ring = options.topology == "ring";
  const topo::Embedding own = ring ? topo::find_system_ring(topology) : topo::find_system_line(topology);
  const std::vector<std::uint32_t> group(own.chips.begin(), own.chips.end());
  topo::Topology usable = topology;
  std::vector<std::string> crossed;
  for (const sim::device::LinkDownFault& fault : options.faults.plan.link_down) {
    if (fault.at != sim::SimTime::zero()) continue;
    usable = topo::without_edge(usable, static_cast<topo::ChipId>(fault.a), static_cast<topo::ChipId>(fault.b));
    if (hop_down(fault, group, ring)) crossed.push_back(fault.spec);
  }
  if (crossed.empty()) return;
  try {
    const topo::Embedding around = ring ? topo::find_system_ring(usable) : topo::find_system_line(usable);
    options.legacy_group.assign(around.chips.begin(), around.chips.end());
  } catch (const topo::EmbeddingError& e) {
    throw runtime::DeviceError(
        runtime::DeviceError::Kind::Fault,
        fmt::format("fault {} at 0 s: legacy mode's {} {} crosses the down link(s) and no other {} through all {} "
                    "chips avoids them: {}; legacy mode runs its EDMs over the links of its {}, with no fabric to "
                    "run it around a down link: run in fabric mode (a ring then runs as a line around one)",
                    fmt::join(crossed, ", "), ring ? "ring" : "line", own.to_string(), ring ? "ring" : "line",
                    topology.chip_count(), e.what(), ring ? "ring" : "line"));
  }
}

std::vector<std::string> with_legacy_group_note(const RunOptions& options, std::vector<std::string> effects) {
  if (options.legacy_group.empty()) return effects;
  const bool ring = options.topology == "ring";
  effects.insert(effects.begin(),
                 fmt::format("legacy mode ran its {} as {}{}: the system's own crosses a link down from the start",
                             ring ? "ring" : "line", fmt::join(options.legacy_group, "-"),
                             ring ? fmt::format("-{}", options.legacy_group.front()) : ""));
  return effects;
}

}  // namespace cclmesh::cli::detail
