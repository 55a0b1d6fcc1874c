// `cclmesh run --system SYSTEM --op OP --size SIZE [...]`: one collective on a simulated mesh,
// printed as one nccl-tests-style row, or as JSON with --json.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "runtime/device/mesh_device.hpp"
#include "tools/cclmesh/cli_error.hpp"
#include "tools/cclmesh/commands.hpp"
#include "tools/cclmesh/op_runner.hpp"
#include "tools/cclmesh/output_file.hpp"
#include "tools/cclmesh/run_options.hpp"
#include "tools/cclmesh/size_parse.hpp"

namespace cclmesh::cli {

namespace {

struct RawRunOptions {
  RunOptions parsed;
  std::string op = "all_gather";
  std::string size = "16MiB";
  std::string max_sim_time;
  std::string json_path;
};

nlohmann::json to_json(const RunResult& r) {
  nlohmann::json j;
  j["op"] = r.op;
  j["system"] = r.system;
  j["n_chips"] = r.n_chips;
  j["topology"] = r.topology;
  j["links"] = r.links;
  j["mode"] = r.mode;
  j["dtype"] = r.dtype;
  j["size_bytes"] = r.size_bytes;
  j["count"] = r.count;
  j["time_us"] = r.time_us;
  j["launch_us"] = r.launch_us;
  j["algbw_GBps"] = r.bandwidth.algbw_GBps;
  j["busbw_GBps"] = r.bandwidth.busbw_GBps;
  j["linkbw_GBps"] = r.bandwidth.linkbw_GBps;
  j["pct_line_rate"] = r.bandwidth.pct_line_rate;
  j["line_rate_GBps"] = r.line_rate_GBps;
  j["verified"] = r.verified ? nlohmann::json(*r.verified) : nlohmann::json(nullptr);
  j["wrong_elements"] = r.wrong_elements;
  if (!r.mismatch.empty()) j["first_mismatch"] = r.mismatch;
  j["sim_events"] = r.sim_events;
  j["wall_s"] = r.wall_s;
  return j;
}

std::string to_row(const RunResult& r) {
  std::string text = fmt::format(
      "# cclmesh run: {} on {} ({} chips, {}, {} link{}, {} mode); time = simulated device kernel time, GB = 1e9 B\n",
      r.op, r.system, r.n_chips, r.topology, r.links, r.links == 1 ? "" : "s", r.mode);
  text += fmt::format("#{:>12} {:>13} {:>9} {:>6} {:>11} {:>8} {:>8} {:>7} {:>8} {:>6} {:>10}\n", "size", "count", "type",
                      "redop", "time", "algbw", "busbw", "#wrong", "linkbw", "%line", "launch");
  text += fmt::format("#{:>12} {:>13} {:>9} {:>6} {:>11} {:>8} {:>8} {:>7} {:>8} {:>6} {:>10}\n", "(B)", "(elements)", "", "",
                      "(us)", "(GB/s)", "(GB/s)", "", "(GB/s)", "", "(us)");
  const std::string wrong = r.verified ? fmt::format("{}", r.wrong_elements) : "N/A";
  text += fmt::format(" {:>12} {:>13} {:>9} {:>6} {:>11.2f} {:>8.2f} {:>8.2f} {:>7} {:>8.2f} {:>6.1f} {:>10.2f}\n", r.size_bytes,
                      r.count, r.dtype == "bf16" ? "bfloat16" : r.dtype, "none", r.time_us, r.bandwidth.algbw_GBps,
                      r.bandwidth.busbw_GBps, wrong, r.bandwidth.linkbw_GBps, r.bandwidth.pct_line_rate, r.launch_us);
  if (!r.mismatch.empty()) text += fmt::format("# MISMATCH: {}\n", r.mismatch);
  return text;
}

int run(RawRunOptions& raw) {
  RunOptions& options = raw.parsed;
  options.op = parse_collective_op(raw.op, "--op");
  options.size_bytes = parse_size_bytes(raw.size, "--size");
  if (!raw.max_sim_time.empty()) options.max_sim_time = parse_sim_time(raw.max_sim_time, "--max-sim-time");
  RunResult result;
  try {
    result = run_collective(options);
  } catch (const runtime::DeviceError& e) {
    std::fprintf(stderr, "cclmesh: the simulated op did not complete:\n%s\n", e.what());
    return kExitHangOrFault;
  }
  if (!raw.json_path.empty()) write_output(raw.json_path, to_json(result).dump(2), "--json");
  if (raw.json_path != "-") std::cout << to_row(result);
  if (result.verified.has_value() && !*result.verified) return kExitDataMismatch;
  return kExitOk;
}

}  // namespace

void register_run_command(CLI::App& app, CommandOutcome& outcome) {
  auto raw = std::make_shared<RawRunOptions>();
  RunOptions& o = raw->parsed;
  CLI::App* command = app.add_subcommand("run", "Run one collective on a simulated mesh and print its nccl-tests row");
  command->add_option("--system", o.system, "built-in name, parametric spec (mesh:RxC, torus:RxC, ring:N ...) or YAML file")
      ->capture_default_str();
  command->add_option("--op", raw->op, "all_gather, reduce_scatter, all_reduce, reduce, broadcast, all_to_all, send_recv")
      ->capture_default_str();
  command->add_option("--size", raw->size, "nccl-tests size: total bytes; suffixes K, M, G, KiB, MiB, GiB")
      ->capture_default_str();
  command->add_option("--topology", o.topology, "ring or line")->check(CLI::IsMember({"ring", "line"}))->capture_default_str();
  command->add_option("--links", o.links, "links per neighbour")->check(CLI::Range(1, 16))->capture_default_str();
  command->add_option("--mode", o.mode, "fabric (persistent routers) or legacy (per-op EDM)")
      ->check(CLI::IsMember({"fabric", "legacy"}))
      ->capture_default_str();
  command->add_option("--dtype", o.dtype, "bf16, fp32 or bfp8")->check(CLI::IsMember({"bf16", "fp32", "bfp8"}))->capture_default_str();
  command->add_option("--layout", o.layout, "tile or row_major")->check(CLI::IsMember({"tile", "row_major"}))->capture_default_str();
  command->add_option("--memory", o.memory, "dram or l1")->check(CLI::IsMember({"dram", "l1"}))->capture_default_str();
  command->add_option("--cluster-axis", o.cluster_axis, "run along one axis of a 2D mesh: 0 or 1")->check(CLI::Range(0, 1));
  command->add_flag("--no-data", o.no_data, "timing only: no payload bytes are stored, nothing is verified");
  command->add_option("--seed", o.seed, "seed of the input data")->capture_default_str();
  command->add_option("--max-sim-time", raw->max_sim_time, "stop with a report when simulated time passes T (e.g. 50ms)");
  command->add_option("--json", raw->json_path, "write the result as JSON to FILE, or - for stdout only");
  command->callback([raw, &outcome] { outcome.exit_code = run(*raw); });
}

}  // namespace cclmesh::cli
