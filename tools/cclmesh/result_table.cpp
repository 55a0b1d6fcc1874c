#include "tools/cclmesh/result_table.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <cstddef>
#include <optional>
#include <string>

#include "runtime/device/l1_map.hpp"
#include "tools/cclmesh/all_reduce_halves.hpp"
#include "tools/cclmesh/link_whatif.hpp"
#include "tools/cclmesh/nccl_metrics.hpp"

namespace cclmesh::cli {

nlohmann::json incomplete_run_json(const RunOptions& options, const std::string& report,
                                   std::optional<std::size_t> groups_mirrored) {
  nlohmann::json j{{"op", to_string(options.op)}, {"system", options.system}};
  if (options.shape) {
    j["shape"] = *options.shape;
  } else {
    j["size_bytes"] = options.size_bytes;
  }
  j["requested_topology"] = options.topology;
  j["links"] = options.links;
  j["mode"] = options.mode;
  j["settings"] = settings_json(options);
  j["faults"] = options.faults.specs;
  if (groups_mirrored) j["groups_mirrored"] = *groups_mirrored;
  j["outcome"] = "did not complete";
  j["error"] = report;
  return j;
}

nlohmann::json result_json(const RunResult& r) {
  nlohmann::json j;
  j["op"] = r.op;
  j["system"] = r.system;
  j["n_chips"] = r.n_chips;
  j["topology"] = r.topology;
  if (!r.fabric_topology.empty()) j["fabric_topology"] = r.fabric_topology;
  j["links"] = r.links;
  j["mode"] = r.mode;
  if (!r.fabric.empty()) j["fabric"] = r.fabric;
  if (!r.chips.empty()) j["chips"] = r.chips;
  j["dtype"] = r.dtype;
  j["size_bytes"] = r.size_bytes;
  j["count"] = r.count;
  j["shape"] = r.shape;
  j["layout"] = r.layout;
  j["dim"] = r.dim ? nlohmann::json(*r.dim) : nlohmann::json(nullptr);
  if (!r.algorithm.empty()) {
    j["algorithm"] = r.algorithm;
    j["algorithm_reason"] = r.algorithm_reason;
  }
  if (!r.algorithm_lines.empty()) {
    j["algorithm_lines"] = {{"algorithm", r.algorithm_lines}, {"reason", r.algorithm_lines_reason}};
  }
  if (r.algorithm_halves) j["halves"] = halves_json(*r.algorithm_halves);
  j["memory"] = memory_json(r);
  j["time_us"] = r.time_us;
  j["dispatch_us"] = r.dispatch_us;
  j["launch_us"] = r.launch_us;
  j["algbw_GBps"] = r.bandwidth.algbw_GBps;
  j["busbw_GBps"] = r.bandwidth.busbw_GBps;
  j["linkbw_GBps"] = r.bandwidth.linkbw_GBps;
  j["pct_line_rate"] = r.bandwidth.pct_line_rate;
  j["line_rate_GBps"] = r.line_rate_GBps;
  if (r.hardware == "ideal") {
    j["alpha_beta_us"] = r.alpha_beta ? nlohmann::json(r.alpha_beta->total_us()) : nlohmann::json(nullptr);
  }
  j["verified"] = r.verified ? nlohmann::json(*r.verified) : nlohmann::json(nullptr);
  // Nothing checked (--no-data): no count of wrong elements either, as the table's N/A.
  j["wrong_elements"] = r.verified ? nlohmann::json(r.wrong_elements) : nlohmann::json(nullptr);
  if (!r.mismatch.empty()) j["first_mismatch"] = r.mismatch;
  if (!r.checksums.empty()) {
    nlohmann::json sums = nlohmann::json::array();
    for (const OutputChecksum& c : r.checksums) {
      sums.push_back({{"chip", c.chip},
                      {"buffer", c.buffer},
                      {"crc32", fmt::format("{:08x}", c.crc32)},
                      {"expected_crc32", fmt::format("{:08x}", c.expected_crc32)},
                      {"match", c.crc32 == c.expected_crc32}});
    }
    j["checksums"] = sums;
  }
  if (r.link_whatif) j["link_whatif"] = link_whatif_json(*r.link_whatif);
  if (!r.settings.is_null()) j["settings"] = r.settings;
  if (!r.faults.empty()) {
    j["faults"] = r.faults;
    j["fabric_order"] = r.fabric_order;
    if (!r.rings_as_lines.empty()) j["rings_as_lines"] = r.rings_as_lines;
    if (!r.fault_effects.empty()) j["fault_effects"] = r.fault_effects;
  }
  // null: the device counts no events (served hardware).
  j["sim_events"] = r.sim_events ? nlohmann::json(*r.sim_events) : nlohmann::json(nullptr);
  j["groups_mirrored"] = r.groups_mirrored;
  j["wall_s"] = r.wall_s;
  return j;
}

nlohmann::json settings_json(const RunOptions& o) {
  const auto or_null = [](const auto& value) { return value ? nlohmann::json(*value) : nlohmann::json(nullptr); };
  nlohmann::json settings = {{"cluster_axis", or_null(o.cluster_axis)},
          {"root", o.root.value_or(0)},
          {"no_data", o.no_data},
          {"simulate_every_group", o.simulate_every_group},
          {"hardware", o.hardware},
          {"seed", o.seed},
          {"fabric_payload_bytes", o.fabric_payload_bytes},
          {"fabric_rx_in_flight", or_null(o.fabric_rx_in_flight)},
          {"erisc_unreserved_bytes", o.erisc_unreserved_bytes.value_or(runtime::kEriscUnreservedDefaultBytes)},
          {"workers_per_link", or_null(o.workers_per_link)},
          {"chunks_per_sync", or_null(o.chunks_per_sync)},
          {"rounds", or_null(o.rounds)},
          {"all_reduce_algo", o.all_reduce_algo},
          {"ag_ring_algorithm", o.ag_ring_algorithm},
          {"rs_line_algorithm", o.rs_line_algorithm},
          {"rs_ring_algorithm", o.rs_ring_algorithm},
          {"bcast_ring_algorithm", o.bcast_ring_algorithm}};
  // Only when not the default, so the rows of every bubble-flow-control run stay as they were.
  if (o.ring_flow_control != runtime::RingFlowControl::Bubble) {
    settings["ring_flow_control"] = runtime::to_string(o.ring_flow_control);
  }
  if (!o.first_level_acks.value_or(true)) settings["first_level_acks"] = false;
  // Only when asked, so every other run's settings stay as they were (the choice and its reason
  // are in algorithm_reason).
  if (o.a2a_senders != "auto") settings["a2a_senders"] = o.a2a_senders;
  if (o.ag_bidirectional_mode != "auto") settings["ag_bidirectional_mode"] = o.ag_bidirectional_mode;
  return settings;
}

std::string topology_text(const RunResult& r) {
  if (r.fabric_topology.empty() || r.fabric_topology == r.topology) return r.topology;
  return fmt::format("{} on a {} fabric", r.topology, r.fabric_topology);
}

std::string table_title(const RunResult& r) {
  return fmt::format(
      "# cclmesh: {} on {} ({} chips, {}, {} link{}, {} mode{}{}{}); time = simulated device kernel time, GB = 1e9 "
      "B\n{}",
      r.op, r.system, r.n_chips, topology_text(r), r.links, r.links == 1 ? "" : "s", r.mode,
      r.fabric.empty() ? "" : ", " + r.fabric, r.link_whatif ? ", " + link_whatif_text(*r.link_whatif) : "",
      r.hardware == "ideal" ? ", ideal hardware" : "", tensor_note(r));
}

namespace {

std::string orientation_text(const ShardRequest& s) { return s.orientation == "row" ? "row-major" : "col-major"; }

// One buffer's memory layout: "interleaved", or "width_sharded on 8x4 (row-major), shard 32x32".
std::string buffer_memory_text(const std::string& layout, const std::optional<ShardRequest>& shard,
                               const std::array<std::uint32_t, 2>& shard_elements) {
  if (!shard) return layout;
  return fmt::format("{} on {} ({}), shard {}x{}", layout, shard->grid_text(), orientation_text(*shard),
                     shard_elements[0], shard_elements[1]);
}

bool same_shard_grid(const std::optional<ShardRequest>& a, const std::optional<ShardRequest>& b) {
  if (!a || !b) return !a && !b;
  return a->layout == b->layout && a->grid == b->grid && a->orientation == b->orientation;
}

nlohmann::json buffer_memory_json(const std::string& layout, const std::optional<ShardRequest>& shard,
                                  const std::array<std::uint32_t, 2>& shard_elements) {
  nlohmann::json j{{"layout", layout}};
  if (!shard) return j;
  nlohmann::json cores = nlohmann::json::array();
  for (const CoreRangeRequest& c : shard->grid) cores.push_back({{c.x0, c.y0}, {c.x1, c.y1}});
  j["cores"] = cores;
  j["orientation"] = shard->orientation == "row" ? "row_major" : "col_major";
  j["shard"] = shard_elements;
  return j;
}

}  // namespace

nlohmann::json memory_json(const RunResult& r) {
  nlohmann::json memory{{"type", r.memory}, {"layout", r.memory_layout}};
  if (r.shard) {
    if (const auto rectangle = r.shard->origin_rectangle()) memory["grid"] = *rectangle;
    memory["orientation"] = r.shard->orientation == "row" ? "row_major" : "col_major";
    memory["input_shard"] = r.input_shard;
  }
  if (r.output_shard_request) memory["output_shard"] = r.output_shard;
  memory["input"] = buffer_memory_json(r.memory_layout, r.shard, r.input_shard);
  memory["output"] = buffer_memory_json(r.output_memory_layout, r.output_shard_request, r.output_shard);
  return memory;
}

std::string tensor_note(const RunResult& r) {
  if (!r.tensor_asked) return "";
  std::string note = fmt::format("# tensor [{}] {}{}, {} ", fmt::join(r.shape, ","), r.layout,
                                 r.dim ? fmt::format(", dim {}", *r.dim) : "", r.memory);
  if (same_shard_grid(r.shard, r.output_shard_request)) {
    note += r.memory_layout;
    if (r.shard) {
      note += fmt::format(" on {} ({}), shard {}x{} in, {}x{} out", r.shard->grid_text(), orientation_text(*r.shard),
                          r.input_shard[0], r.input_shard[1], r.output_shard[0], r.output_shard[1]);
    }
  } else {
    // The input and output on different layouts or grids (a reshard, REFERENCE 8 rows 23, 32).
    note += fmt::format("in {}; out {}", buffer_memory_text(r.memory_layout, r.shard, r.input_shard),
                        buffer_memory_text(r.output_memory_layout, r.output_shard_request, r.output_shard));
  }
  return note + "\n";
}

namespace {

constexpr std::array<std::size_t, kTableColumns> kColumnWidths = {12, 13, 9, 6, 11, 8, 8, 7, 8, 6, 9, 7};

std::string aligned(char lead, const std::array<std::string, kTableColumns>& cells) {
  std::string text(1, lead);
  for (std::size_t i = 0; i < kTableColumns; ++i) {
    if (i > 0) text += ' ';
    text += fmt::format("{:>{}}", cells[i], kColumnWidths[i]);
  }
  return text + "\n";
}

}  // namespace

const std::array<std::string, kTableColumns>& table_column_names() {
  static const std::array<std::string, kTableColumns> names = {"size",  "count", "type",   "redop",  "time", "algbw",
                                                               "busbw", "#wrong", "linkbw", "%line", "dispatch", "launch"};
  return names;
}

const std::array<std::string, kTableColumns>& table_column_units() {
  static const std::array<std::string, kTableColumns> units = {"(B)",    "(elements)", "",       "", "(us)", "(GB/s)",
                                                               "(GB/s)", "",           "(GB/s)", "", "(us)", "(us)"};
  return units;
}

// The type column in nccl-tests' names (its ncclDataType names: bfloat16, float); bfp8_b has
// none, so it keeps --dtype's. --json and --csv keep --dtype's value.
namespace {
std::string nccl_type_name(const std::string& dtype) {
  if (dtype == "bf16") return "bfloat16";
  if (dtype == "fp32") return "float";
  return dtype;
}
}  // namespace

std::array<std::string, kTableColumns> table_cells(const RunResult& r) {
  return {fmt::format("{}", r.size_bytes),
          fmt::format("{}", r.count),
          nccl_type_name(r.dtype),
          r.redop,
          fmt::format("{:.2f}", r.time_us),
          fmt::format("{:.2f}", r.bandwidth.algbw_GBps),
          fmt::format("{:.2f}", r.bandwidth.busbw_GBps),
          r.verified ? fmt::format("{}", r.wrong_elements) : "N/A",
          fmt::format("{:.2f}", r.bandwidth.linkbw_GBps),
          fmt::format("{:.1f}", r.bandwidth.pct_line_rate),
          fmt::format("{:.2f}", r.dispatch_us),
          fmt::format("{:.2f}", r.launch_us)};
}

std::string table_header() { return aligned('#', table_column_names()) + aligned('#', table_column_units()); }

std::string table_row(const RunResult& r) {
  std::string text = aligned(' ', table_cells(r));
  if (!r.mismatch.empty()) text += fmt::format("# MISMATCH: {}\n", r.mismatch);
  return text;
}

std::string alpha_beta_text(const RunResult& r) {
  if (!r.alpha_beta || r.time_us <= 0.0) return "";
  return fmt::format(
      "alpha-beta (REFERENCE 10, {}): {:.2f} us = {:.2f} us latency + {:.2f} us on the links; this run on ideal "
      "hardware took {:.3f}x that",
      r.topology == "ring" ? "a ring, halves each way" : "a pipelined line", r.alpha_beta->total_us(),
      r.alpha_beta->latency_us, r.alpha_beta->bandwidth_us, r.time_us / r.alpha_beta->total_us());
}

std::string algorithm_note(const RunResult& r) {
  // all_reduce's Auto chose it (the option may force another); all_gather's fallback no option
  // chooses.
  const std::string chosen_by = r.op == "all_reduce" ? " (--all-reduce-algo auto)" : "";
  std::string note;
  if (const std::string alpha_beta = alpha_beta_text(r); !alpha_beta.empty()) note += "# " + alpha_beta + "\n";
  if (r.algorithm_fallback) note += fmt::format("# {} ran {}{}: {}\n", r.op, r.algorithm, chosen_by, r.algorithm_reason);
  // Legacy all_reduce chooses per shape: the rings opened into lines fall back on their own
  // (their reason says they ran as lines), whether the rings did or not.
  if (r.algorithm_lines_fallback) {
    note += fmt::format("# {} ran {}{}: {}\n", r.op, r.algorithm_lines, chosen_by, r.algorithm_lines_reason);
  }
  return note;
}

std::string fault_specs_line(const RunResult& r) {
  std::string specs;
  for (const std::string& spec : r.faults) specs += (specs.empty() ? "" : ", ") + spec;
  // Legacy mode has no persistent fabric, so no order to show.
  if (r.fabric_order.empty()) return fmt::format("# faults: {}\n", specs);
  return fmt::format("# faults: {}; fabric chips in order: {}\n", specs, r.fabric_order);
}

std::string fault_effect_lines(const RunResult& r) {
  std::string effects;
  for (const std::string& ring : r.rings_as_lines) effects += fmt::format("# {}\n", ring);
  for (const std::string& effect : r.fault_effects) effects += fmt::format("# {}\n", effect);
  return effects;
}

std::string fault_note(const RunResult& r) { return fault_specs_line(r) + fault_effect_lines(r); }

CsvColumns csv_columns(const std::vector<RunResult>& rows) {
  CsvColumns columns;
  for (const RunResult& row : rows) {
    columns.link_whatif = columns.link_whatif || row.link_whatif.has_value();
    columns.cluster_axis = columns.cluster_axis || row.cluster_axis.has_value();
    columns.chips = columns.chips || !row.chips.empty();
    columns.faults = columns.faults || !row.faults.empty();
    columns.hardware = columns.hardware || row.hardware != "modelled";
  }
  return columns;
}

std::string csv_header(const CsvColumns& columns) {
  std::string header =
      "op,system,n_chips,topology,links,mode,dtype,size_bytes,count,time_us,algbw_GBps,busbw_GBps,linkbw_GBps,"
      "pct_line_rate,dispatch_us,launch_us,verified,wrong_elements,sim_events";
  if (columns.link_whatif) {
    header += ",links_off_arch_default,system_links,link_rate_min_GBps,link_rate_max_GBps,link_latency_min_ns,"
              "link_latency_max_ns,arch_rate_GBps,arch_latency_ns";
  }
  if (columns.cluster_axis) header += ",cluster_axis";
  if (columns.chips) header += ",chips";
  if (columns.faults) header += ",faults";
  if (columns.hardware) header += ",hardware,alpha_beta_us";
  return header + "\n";
}

namespace {

// A cell as RFC 4180 has it: quoted (its quotes doubled) when it holds a comma, a quote or a line
// break, so a fault spec or a system file's path can never shift the columns after it.
std::string csv_cell(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

}  // namespace

std::string csv_row(const RunResult& r, const CsvColumns& columns) {
  // Every text cell through csv_cell: the system is what --system named, a file path that may hold a comma.
  std::string row = fmt::format("{},{},{},{},{},{},{},{},{},{:.3f},{:.4f},{:.4f},{:.4f},{:.2f},{:.3f},{:.3f},{},{},{}",
                                csv_cell(r.op), csv_cell(r.system), r.n_chips, csv_cell(r.topology), r.links,
                                csv_cell(r.mode), csv_cell(r.dtype), r.size_bytes, r.count, r.time_us,
                                r.bandwidth.algbw_GBps, r.bandwidth.busbw_GBps, r.bandwidth.linkbw_GBps,
                                r.bandwidth.pct_line_rate, r.dispatch_us, r.launch_us,
                                r.verified ? (*r.verified ? "true" : "false") : "",
                                r.verified ? fmt::to_string(r.wrong_elements) : std::string(),
                                r.sim_events ? fmt::to_string(*r.sim_events) : std::string());
  if (columns.link_whatif) {
    // A row at the arch's defaults in a what-if's CSV (not produced by one sweep, whose rows share
    // their links) leaves the cells empty rather than guess its links.
    if (!r.link_whatif) {
      row += ",,,,,,,,";
    } else {
      const topo::LinkSpread& s = *r.link_whatif;
      const auto GBps = [](std::int64_t rate) { return static_cast<double>(rate) / 1e9; };
      const auto ns = [](std::int64_t ps) { return static_cast<double>(ps) / 1e3; };
      row += fmt::format(",{},{},{},{},{},{},{},{}", s.links_off_default, s.links, GBps(s.min_rate_bytes_per_s),
                         GBps(s.max_rate_bytes_per_s), ns(s.min_latency_ps), ns(s.max_latency_ps),
                         GBps(s.default_rate_bytes_per_s), ns(s.default_latency_ps));
    }
  }
  if (columns.cluster_axis) row += "," + (r.cluster_axis ? fmt::to_string(*r.cluster_axis) : std::string());
  if (columns.chips) row += fmt::format(",{}", fmt::join(r.chips, "-"));
  if (columns.faults) row += "," + csv_cell(fmt::format("{}", fmt::join(r.faults, ";")));
  if (columns.hardware) {
    row += fmt::format(",{},{}", csv_cell(r.hardware),
                       r.alpha_beta ? fmt::format("{:.3f}", r.alpha_beta->total_us()) : "");
  }
  return row + "\n";
}

}  // namespace cclmesh::cli
