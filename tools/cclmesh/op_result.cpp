#include "tools/cclmesh/op_result.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "runtime/ccl/common/legacy_groups.hpp"
#include "sim/device/fault_plan.hpp"
#include "sim/engine/check.hpp"
#include "tools/cclmesh/nccl_metrics.hpp"
#include "tools/cclmesh/run_groups.hpp"
#include "tools/cclmesh/sim_device_options.hpp"
#include "topologies/link_whatif.hpp"

namespace cclmesh::cli::detail {

namespace {

// The shapes an op's groups run as, which can differ from --topology: in fabric mode a group
// runs as a ring only where it is the whole of a fabric ring of 3 or more chips (what
// map_group_onto_fabric lays a ring onto, and where broadcast multicasts both ways); every other
// group is a line, e.g. a 2-chip row or column of the per-axis fabric, whose plan makes it a line
// (REFERENCE 3.2, tt-metal #12770), or send_recv's pair. `fabric` is the shape of the fabric
// lines holding the groups (empty in legacy mode, which has no fabric: its groups are what
// --topology asked, or a line where a ring runs as one around a down link, legacy_groups.hpp).
struct GroupShapes {
  std::string groups;
  std::string fabric;
};

GroupShapes group_shapes(const RunOptions& options, const runtime::FabricPlan& plan,
                         const std::vector<std::vector<ChipId>>& groups, const std::vector<ccl::LegacyGroup>& legacy) {
  if (legacy_mode(options)) {
    const bool rings = std::all_of(legacy.begin(), legacy.end(),
                                   [](const ccl::LegacyGroup& g) { return g.shape == ccl::CclTopology::Ring; });
    return {rings ? options.topology : "line", ""};
  }
  bool groups_are_rings = true;
  bool fabric_is_ring = true;
  for (const std::vector<ChipId>& group : groups) {
    const std::optional<std::uint32_t> index = plan.line_containing(group);
    CCLMESH_CHECK(index.has_value(), "a group the op ran on lies on no fabric line");
    const runtime::FabricLine& line = plan.lines()[*index];
    const bool ring_line = line.mode == runtime::FabricMode::Ring;
    fabric_is_ring = fabric_is_ring && ring_line;
    groups_are_rings = groups_are_rings && ring_line && group.size() >= 3 && group.size() == line.chips.size();
  }
  return {groups_are_rings ? "ring" : "line", fabric_is_ring ? "ring" : "line"};
}

// The fabric's rings (a per-axis fabric's rows and columns, or the whole-system ring) that ran as
// lines around a link down from the start, for the line under the table: which one, in its own
// order (a row or column in coordinate order; a ring in Ring mode, else the line the fabric would
// have run, which the down link is on), the line it ran as, the link and its fault, and whether
// it holds one of the op's groups (a row opened under an op along the columns does not; the
// whole-system ring is the op's group).
std::vector<std::string> rings_run_as_lines(const runtime::FabricPlan& plan, const RunOptions& options) {
  std::vector<std::string> notes;
  for (const runtime::FabricLine& line : plan.lines()) {
    if (!line.opened_at) continue;
    const auto [last, first] = *line.opened_at;
    std::string spec;
    for (const sim::device::LinkDownFault& fault : options.faults.plan.link_down) {
      if ((fault.a == last && fault.b == first) || (fault.a == first && fault.b == last)) spec = fault.spec;
    }
    const std::vector<ChipId>& unopened = line.opened_from;
    CCLMESH_CHECK(unopened.size() == line.chips.size(), "an opened fabric line is not the chips of what it opens");
    const std::string unfaulted =
        plan.mode() == runtime::FabricMode::Ring
            ? fmt::format("ring {}-{}", fmt::join(unopened, "-"), unopened.front())
            : fmt::format("line {}", fmt::join(unopened, "-"));
    const std::string closing = plan.mode() == runtime::FabricMode::Ring
                                    ? ""
                                    : fmt::format(" over its closing link {}-{}", unopened.back(), unopened.front());
    // The whole-system fabric opens its ring only when no other ring avoids the link (T3K
    // without 0-1 runs another ring): say so, as the reason the run is a line.
    const std::string which =
        !line.axis ? fmt::format("the op's group, which ran as that line{}",
                                 plan.mode() == runtime::FabricMode::Ring
                                     ? fmt::format(" (no other ring through all {} chips avoids the link)",
                                                   unopened.size())
                                     : "")
        : line.axis == options.cluster_axis ? "one of the op's groups, which ran as that line"
                                            : "not one of the op's groups, which did not use it";
    notes.push_back(fmt::format("{}{} ran as line {}{}: link {}-{} is down ({}); {}",
                                line.axis ? fmt::format("axis {} ", *line.axis) : "", unfaulted,
                                fmt::join(line.chips, "-"), closing, last, first, spec, which));
  }
  return notes;
}

// Legacy mode along an axis: the rows or columns the op ran as lines around a link down from the
// start (legacy_groups.hpp), worded as rings_run_as_lines words the fabric's. The whole-system
// ring's note is with_legacy_group_note's (group_faults.hpp).
std::vector<std::string> legacy_rings_run_as_lines(const std::vector<ccl::LegacyGroup>& groups,
                                                   const RunOptions& options) {
  std::vector<std::string> notes;
  if (!options.cluster_axis) return notes;
  for (const ccl::LegacyGroup& group : groups) {
    if (!group.opened_at) continue;
    const auto [last, first] = *group.opened_at;
    std::string spec;
    for (const sim::device::LinkDownFault& fault : options.faults.plan.link_down) {
      if ((fault.a == last && fault.b == first) || (fault.a == first && fault.b == last)) spec = fault.spec;
    }
    const std::vector<ChipId> ring = group.chips_by_rank();
    const std::string closing = options.topology == "ring"
                                    ? ""
                                    : fmt::format(" over its closing link {}-{}", ring.back(), ring.front());
    notes.push_back(fmt::format("axis {} {} ran as line {}{}: link {}-{} is down ({}); one of the op's groups, which "
                                "ran as that line (legacy mode: its EDMs chain the line)",
                                *options.cluster_axis,
                                options.topology == "ring" ? fmt::format("ring {}-{}", fmt::join(ring, "-"), ring.front())
                                                           : fmt::format("line {}", fmt::join(ring, "-")),
                                fmt::join(group.chips, "-"), closing, last, first, spec));
  }
  return notes;
}

// The op's groups as legacy mode lays them around the device's down links (empty in fabric mode).
std::vector<ccl::LegacyGroup> legacy_groups_run(const RunOptions& options, runtime::MeshDevice& device) {
  if (!legacy_mode(options)) return {};
  return ccl::legacy_groups(group_selection(options), device.topology(),
                            options.topology == "ring" ? ccl::CclTopology::Ring : ccl::CclTopology::Line,
                            device.fabric().down_edges, to_string(options.op));
}

}  // namespace

OpTimes op_times(const std::vector<runtime::KernelProfile>& op_entries) {
  OpTimes t;
  for (const runtime::KernelProfile& kernel : op_entries) {
    if (kernel.ready_ns) {
      t.longest_setup_ns = std::max(t.longest_setup_ns, static_cast<std::int64_t>(*kernel.ready_ns - kernel.start_ns));
    }
    if (kernel.core_kind != runtime::CoreKind::Tensix) continue;
    t.first_start_ns = std::min<std::int64_t>(t.first_start_ns, static_cast<std::int64_t>(kernel.start_ns));
    t.last_end_ns = std::max<std::int64_t>(t.last_end_ns, static_cast<std::int64_t>(kernel.end_ns));
  }
  return t;
}

void set_links_used(RunResult& result, const std::optional<std::vector<runtime::LinkTraffic>>& before,
                    const std::optional<std::vector<runtime::LinkTraffic>>& after, const OpTimes& times) {
  result.links_used.clear();
  result.links_measured = before.has_value() && after.has_value();
  if (!result.links_measured) return;
  CCLMESH_CHECK(before->size() == after->size(), "link traffic: the device's links changed during the op");
  const double op_ps = static_cast<double>(times.last_end_ns - times.first_start_ns) * 1e3;
  for (std::size_t i = 0; i < after->size(); ++i) {
    const runtime::LinkTraffic& from = (*before)[i];
    const runtime::LinkTraffic& to = (*after)[i];
    CCLMESH_CHECK(from.chip == to.chip && from.channel == to.channel && from.peer_chip == to.peer_chip &&
                      from.peer_channel == to.peer_channel && from.payload_bytes <= to.payload_bytes &&
                      from.busy_ps <= to.busy_ps,
                  "link traffic: the device's readings before and after the op are not of the same links in order");
    LinkDirectionUse u;
    u.chip = static_cast<std::int32_t>(to.chip);
    u.channel = static_cast<std::int32_t>(to.channel);
    u.peer_chip = static_cast<std::int32_t>(to.peer_chip);
    u.peer_channel = static_cast<std::int32_t>(to.peer_channel);
    u.payload_bytes = static_cast<std::int64_t>(to.payload_bytes - from.payload_bytes);
    u.busy_ps = static_cast<std::int64_t>(to.busy_ps - from.busy_ps);
    u.utilisation = op_ps > 0 ? static_cast<double>(u.busy_ps) / op_ps : 0.0;
    result.links_used.push_back(u);
  }
}

RunResult op_result(const RunOptions& options, runtime::MeshDevice& device, const runtime::FabricPlan& plan,
                    const PreparedOp& op, const topo::Topology& topology, const OpTimes& t, double enqueued_us) {
  RunResult result;
  result.op = to_string(options.op);
  result.system = options.system;
  result.n_chips = op.group_size;
  const std::vector<ccl::LegacyGroup> legacy = legacy_groups_run(options, device);
  const GroupShapes shapes = group_shapes(options, plan, op.groups, legacy);
  result.topology = shapes.groups;
  result.fabric_topology = shapes.fabric;
  result.links = options.links;
  // A ring's data moves both ways round it (REFERENCE 9); a line's, each link one way per byte.
  result.directions = result.topology == "ring" ? 2 : 1;
  result.mode = options.mode;
  result.dtype = options.dtype;
  result.redop = (options.op == CollectiveOp::ReduceScatter || options.op == CollectiveOp::AllReduce ||
                  options.op == CollectiveOp::Reduce)
                     ? "sum"
                     : "none";
  result.size_bytes = op.size_bytes;
  result.count = op.count;
  result.shape = op.shape;
  result.dim = op.dim;
  result.algorithm = op.algorithm;
  result.algorithm_reason = op.algorithm_reason;
  result.algorithm_lines = op.algorithm_lines;
  result.algorithm_lines_reason = op.algorithm_lines_reason;
  result.algorithm_fallback = op.algorithm_fallback;
  result.algorithm_lines_fallback = op.algorithm_lines_fallback;
  result.algorithm_halves = op.algorithm_halves;
  result.tensor_asked =
      options.shape || options.dim || options.shard || options.output_memory || options.layout_or_memory_asked;
  result.layout = options.layout;
  result.memory = options.memory;
  if (options.shard) {
    result.memory_layout = options.shard->layout + "_sharded";
    result.shard = options.shard;
    result.input_shard = op.input_shard;
  }
  const std::optional<ShardRequest>& output_request =
      options.output_memory ? options.output_memory->shard : options.shard;
  if (output_request) {
    result.output_memory_layout = output_request->layout + "_sharded";
    result.output_shard_request = output_request;
    result.output_shard = op.output_shard;
  }
  result.time_us = static_cast<double>(t.last_end_ns - t.first_start_ns) / 1e3;
  result.dispatch_us = static_cast<double>(t.first_start_ns) / 1e3 - enqueued_us;
  result.launch_us = static_cast<double>(t.longest_setup_ns) / 1e3;
  result.line_rate_GBps = static_cast<double>(topology.links().front().rate_bytes_per_s) / 1e9;
  result.link_whatif = topo::links_off_arch_defaults(topology);
  result.bandwidth = compute_bandwidth(
      {options.op, op.size_bytes, op.group_size, result.time_us, result.links, result.directions, result.line_rate_GBps});
  result.faults = options.faults.specs;
  for (const runtime::FabricLine& line : plan.lines()) {
    if (!result.fabric_order.empty()) result.fabric_order += " | ";
    for (std::size_t i = 0; i < line.chips.size(); ++i) {
      result.fabric_order += fmt::format("{}{}", i == 0 ? "" : "-", line.chips[i]);
    }
  }
  result.rings_as_lines = legacy_mode(options) ? legacy_rings_run_as_lines(legacy, options)
                                               : rings_run_as_lines(plan, options);
  result.chips = options.chips;
  result.cluster_axis = options.cluster_axis;
  result.hardware = options.hardware;
  if (options.hardware == "ideal") {
    const std::optional<AlphaBetaLinks> links = alpha_beta_links(topology, op.groups);
    if (links) {
      result.alpha_beta = alpha_beta_time({.op = options.op,
                                         .size_bytes = op.size_bytes,
                                         .n_chips = op.group_size,
                                         .ring = result.topology == "ring",
                                         .links = result.links,
                                         .link_GBps = links->link_GBps,
                                         .hop_latency_us = links->hop_latency_us});
    }
  }
  if (!options.chips.empty()) result.fabric = fmt::format("chips {}", fmt::join(options.chips, "-"));
  if (plan.scope() == runtime::FabricScope::Axes) {
    const std::size_t groups = run_groups(options, device, {options.cluster_axis, {}}).size();
    // Legacy mode has no fabric (each op launches its own EDMs): only the groups are named.
    result.fabric = fmt::format("{}{} group{} along cluster_axis {}", legacy_mode(options) ? "" : "per-axis fabric: ",
                                groups, groups == 1 ? "" : "s", *options.cluster_axis);
  }
  // The era what-if is named in the title, where a reader compares two rows' times; only where a
  // ring ran (a ring opened by a down link runs as a line, whose routers have no dateline).
  const bool ran_a_ring = std::any_of(plan.lines().begin(), plan.lines().end(),
                                      [](const runtime::FabricLine& l) { return l.mode == runtime::FabricMode::Ring; });
  if (plan.options().ring_flow_control == runtime::RingFlowControl::Dateline && ran_a_ring) {
    result.fabric += fmt::format("{}dateline-VC ring routers (mid 2025)", result.fabric.empty() ? "" : ", ");
  }
  if (plan.enabled() && !plan.options().first_level_acks) {
    result.fabric += fmt::format("{}first-level acks off (mid 2025)", result.fabric.empty() ? "" : ", ");
  }
  return result;
}

void check_op(const PreparedOp& op, RunResult& result) {
  if (!op.verify) return;
  const Check check = op.verify();
  result.verified = check.wrong_elements == 0;
  result.wrong_elements = check.wrong_elements;
  result.mismatch = check.first_mismatch;
  result.checksums = check.checksums;
}

}  // namespace cclmesh::cli::detail
