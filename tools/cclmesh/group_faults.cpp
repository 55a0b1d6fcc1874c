#include "tools/cclmesh/group_faults.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>

#include "runtime/device/mesh_device.hpp"
#include "runtime/fabric/fabric_plan.hpp"
#include "sim/device/fault_plan.hpp"
#include "tools/cclmesh/sim_device_options.hpp"
#include "topologies/embedding.hpp"
#include "topologies/errors.hpp"
#include "topologies/faults.hpp"

namespace cclmesh::cli::detail {

using runtime::ChipId;

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

// The links down from the start, as chip pairs (what the device's FabricOptions::down_edges holds).
std::vector<std::pair<ChipId, ChipId>> down_from_start(const RunOptions& options) {
  std::vector<std::pair<ChipId, ChipId>> down;
  for (const sim::device::LinkDownFault& fault : options.faults.plan.link_down) {
    if (fault.at == sim::SimTime::zero()) down.emplace_back(fault.a, fault.b);
  }
  return down;
}

bool same_edge(const sim::device::LinkDownFault& fault, const std::pair<ChipId, ChipId>& edge) {
  return (fault.a == edge.first && fault.b == edge.second) || (fault.a == edge.second && fault.b == edge.first);
}

// The specs of the faults that take `edges` down, for a refusal's or a note's words.
std::string specs_of(const RunOptions& options, const std::vector<std::pair<ChipId, ChipId>>& edges) {
  std::vector<std::string> specs;
  for (const sim::device::LinkDownFault& fault : options.faults.plan.link_down) {
    if (fault.at != sim::SimTime::zero()) continue;
    if (std::any_of(edges.begin(), edges.end(), [&](const auto& e) { return same_edge(fault, e); })) {
      specs.push_back(fault.spec);
    }
  }
  return fmt::format("{}", fmt::join(specs, ", "));
}

std::string edges_string(const std::vector<std::pair<ChipId, ChipId>>& edges) {
  std::vector<std::string> names;
  for (const auto& [a, b] : edges) names.push_back(fmt::format("{}-{}", a, b));
  return fmt::format("{}", fmt::join(names, ", "));
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
    // A row or column runs as the line around one down link (legacy_groups.hpp, as the fabric
    // lays it: runtime::group_run); the down links that cut one are the fault.
    const std::vector<std::pair<ChipId, ChipId>> down = down_from_start(options);
    for (const auto& coordinates : topo::axis_groups(topology, *options.cluster_axis)) {
      const std::vector<ChipId> group(coordinates.begin(), coordinates.end());
      if (group.size() < 2) continue;
      const runtime::GroupRun run = runtime::group_run(topology, group, ring, down);
      if (run.runs()) continue;
      throw runtime::DeviceError(
          runtime::DeviceError::Kind::Fault,
          fmt::format("fault {} at 0 s: axis {} group {} (a {}) is cut by the down link(s) {}, and {}",
                      specs_of(options, run.cut_by), *options.cluster_axis, fmt::join(group, "-"),
                      run.ring ? "ring" : "line", edges_string(run.cut_by),
                      run.ring ? "legacy mode runs a ring as a line around one down link, not two"
                               : "a line with a down hop has no path through its chips (legacy mode runs a ring, "
                                 "a torus row or column, as a line around one)"));
    }
  }
}

void lay_legacy_group_around_down_links(RunOptions& options, const topo::Topology& topology) {
  if (!legacy_mode(options) || !options.chips.empty() || options.cluster_axis) return;
  if (down_from_start(options).empty()) return;
  const bool ring = options.topology == "ring";
  // A system with no line (or ring) through every chip, as one with a chip that has no links, is
  // bad input that the op's preparation refuses naming --system: not this function's to report.
  std::optional<topo::Embedding> found;
  try {
    found = ring ? topo::find_system_ring(topology) : topo::find_system_line(topology);
  } catch (const topo::EmbeddingError&) {
    return;
  }
  const topo::Embedding& own = *found;
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
    return;
  } catch (const topo::EmbeddingError& e) {
    std::string why_not_a_line;
    if (ring) {
      // No other ring: the system's own runs as the line around the down link, as the fabric's
      // does (fabric_reembed.hpp): ranks in the ring's order, the op's builders lay it
      // (legacy_groups.hpp) from the device's down_edges.
      const runtime::GroupRun opened = runtime::group_run(topology, group, true, down_from_start(options));
      if (opened.runs()) {
        options.legacy_group = group;
        options.legacy_opened_at = opened.opened_at;
        return;
      }
      why_not_a_line = fmt::format("; the ring runs as a line around one down link, not {} ({})",
                                   opened.cut_by.size(), edges_string(opened.cut_by));
    }
    throw runtime::DeviceError(
        runtime::DeviceError::Kind::Fault,
        fmt::format("fault {} at 0 s: legacy mode's {} {} crosses the down link(s) and no other {} through all {} "
                    "chips avoids them: {}{}; legacy mode runs its EDMs over the links of its {}",
                    fmt::join(crossed, ", "), ring ? "ring" : "line", own.to_string(), ring ? "ring" : "line",
                    topology.chip_count(), e.what(), why_not_a_line, ring ? "ring" : "line"));
  }
}

std::vector<std::string> with_legacy_group_note(const RunOptions& options, std::vector<std::string> effects) {
  if (options.legacy_group.empty()) return effects;
  const bool ring = options.topology == "ring";
  const std::string laid = fmt::format("{} {}{}", ring ? "ring" : "line", fmt::join(options.legacy_group, "-"),
                                       ring ? fmt::format("-{}", options.legacy_group.front()) : "");
  if (options.legacy_opened_at) {
    const auto [last, first] = *options.legacy_opened_at;
    const std::vector<std::pair<ChipId, ChipId>> link{{last, first}};
    // The line starts at the chip after the link (runtime::group_run): `first`.
    const auto& ring_chips = options.legacy_group;
    const auto start = static_cast<std::size_t>(std::find(ring_chips.begin(), ring_chips.end(), first) - ring_chips.begin());
    std::vector<std::uint32_t> line;
    for (std::size_t k = 0; k < ring_chips.size(); ++k) line.push_back(ring_chips[(start + k) % ring_chips.size()]);
    effects.insert(effects.begin(),
                   fmt::format("legacy mode ran its ring as the line {} around link {}-{}, down from the start ({}): "
                               "no other ring through all {} chips avoids it; ranks in the ring's order ({})",
                               fmt::join(line, "-"), last, first, specs_of(options, link),
                               options.legacy_group.size(), laid));
    return effects;
  }
  effects.insert(effects.begin(),
                 fmt::format("legacy mode ran its {} as {}: the system's own crosses a link down from the start",
                             ring ? "ring" : "line", laid.substr(laid.find(' ') + 1)));
  return effects;
}

}  // namespace cclmesh::cli::detail
