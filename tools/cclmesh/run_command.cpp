// `cclmesh run --system SYSTEM --op OP --size SIZE [...]`: one collective on a simulated mesh,
// printed as one nccl-tests-style row, or as JSON with --json.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "runtime/device/mesh_device.hpp"
#include "runtime/remote/remote_mesh_device.hpp"
#include "runtime/remote/remote_protocol.hpp"
#include "sim/trace/trace_event_json.hpp"
#include "sim/trace/trace_recorder.hpp"
#include "tools/cclmesh/cli_error.hpp"
#include "tools/cclmesh/html_report.hpp"
#include "tools/cclmesh/link_whatif.hpp"
#include "tools/cclmesh/commands.hpp"
#include "tools/cclmesh/device_option_check.hpp"
#include "tools/cclmesh/exit_without_teardown.hpp"
#include "tools/cclmesh/op_runner.hpp"
#include "tools/cclmesh/output_file.hpp"
#include "tools/cclmesh/progress_line.hpp"
#include "tools/cclmesh/result_table.hpp"
#include "tools/cclmesh/run_option_flags.hpp"
#include "tools/cclmesh/run_options.hpp"
#include "tools/cclmesh/size_parse.hpp"
#include "tools/cclmesh/tensor_flags.hpp"
#include "tools/cclmesh/whole_number_option.hpp"
#include "topologies/link_whatif.hpp"
#include "topologies/system_loader.hpp"

namespace cclmesh::cli {

namespace {

struct RawRunOptions {
  RunOptions parsed;
  std::string op = "all_gather";
  std::string size = "16MiB";
  bool size_given = false;  // --size typed, which --shape excludes
  TensorFlags tensor;
  std::string max_sim_time;
  std::string max_wall;
  std::vector<std::string> faults;
  std::string json_path;
  std::string trace_path;
  std::size_t trace_limit = sim::trace::TraceLimits{}.max_spans_per_track;
  std::string report_path;
  bool progress = false;     // --progress
  bool no_progress = false;  // --no-progress
};

// The trace file's otherData: what was run. The shape the groups ran as is known only from a
// completed run (a 2-chip group asked as a ring runs as a line); a run that did not complete
// records what --topology asked.
sim::trace::TraceInfo trace_info(const RunOptions& options, const std::string& outcome,
                                 const RunResult* result = nullptr) {
  sim::trace::TraceInfo info{{"tool", "cclmesh run"},
                             {"system", options.system},
                             {"op", to_string(options.op)}};
  // A --shape run's size follows from the shape (known from a completed run); --size's is asked.
  if (options.shape) {
    info.emplace_back("shape", fmt::format("{}", fmt::join(*options.shape, ",")));
    if (result != nullptr) info.emplace_back("size_bytes", std::to_string(result->size_bytes));
  } else {
    info.emplace_back("size_bytes", std::to_string(options.size_bytes));
  }
  info.emplace_back("requested_topology", options.topology);
  if (result != nullptr) {
    info.emplace_back("topology", result->topology);
    if (!result->fabric_topology.empty()) info.emplace_back("fabric_topology", result->fabric_topology);
    if (result->link_whatif) info.emplace_back("link_whatif", link_whatif_text(*result->link_whatif));
  }
  info.emplace_back("outcome", outcome);
  return info;
}

// --json of a run that did not complete (a hang or fault, exit 3): what was asked and the report,
// so an older run's result is never left in the file for a script to take as this one's. With
// --device, what the served device ran with (its system, data mode, fabric, faults), as a
// completed run's --json says.
nlohmann::json incomplete_json(const RunOptions& options, const runtime::remote::RemoteMeshDevice* served,
                               const std::string& report, const RunProgress& progress) {
  return incomplete_run_json(served ? served_run_options(options, *served) : options, report, progress.groups_mirrored);
}

void check_output_options(const RawRunOptions& raw) {
  if (raw.trace_path == "-" && raw.json_path == "-") {
    throw UsageError("--trace: '-' (stdout) cannot be used together with --json -; write one of them to a file");
  }
  if (raw.report_path == "-") {
    throw UsageError("--report: '-' is not accepted; give an .html file name");
  }
  if (!raw.trace_path.empty() && raw.trace_limit == 0) {
    throw UsageError("--trace-limit: 0 keeps no span; give a positive number of spans per track");
  }
  // Two outputs into one file would keep only the last one written.
  require_distinct_outputs({{raw.trace_path, "--trace"}, {raw.json_path, "--json"}, {raw.report_path, "--report"}});
  // Before the simulation, so a path that can never be written costs no run.
  if (!raw.trace_path.empty()) check_output_path(raw.trace_path, "--trace");
  if (!raw.json_path.empty()) check_output_path(raw.json_path, "--json");
  if (!raw.report_path.empty()) {
    require_output_extension(raw.report_path, "--report", {".html", ".htm"}, "HTML");
    check_output_path(raw.report_path, "--report");
  }
}

int run(RawRunOptions& raw) {
  RunOptions& options = raw.parsed;
  // A list of ops is sweep's (new-user pass, session 41: "unknown op 'all_gather,reduce_scatter'").
  if (raw.op.find(',') != std::string::npos) {
    throw UsageError(fmt::format("--op: '{}' is a list; `cclmesh run` runs one op, expected one of {} (`cclmesh "
                                 "sweep --op {}` runs several)",
                                 raw.op, collective_op_names(), raw.op));
  }
  options.op = parse_collective_op(raw.op, "--op");
  options.size_bytes = parse_size_bytes(raw.size, "--size");
  if (raw.size_given && !raw.tensor.shape.empty()) {
    throw UsageError(fmt::format("--shape/--size: '{}' and '{}' both name the tensor; give one of them (--shape: its "
                                 "elements, --size: its bytes)",
                                 raw.tensor.shape, raw.size));
  }
  apply_tensor_flags(raw.tensor, options);
  if (!raw.max_sim_time.empty()) options.max_sim_time = parse_sim_time(raw.max_sim_time, "--max-sim-time");
  if (!raw.max_wall.empty()) options.max_wall_seconds = parse_wall_seconds(raw.max_wall, "--max-wall");
  for (const std::string& spec : raw.faults) add_fault_spec(options.faults, spec);
  check_output_options(raw);
  if (raw.progress && raw.no_progress) {
    throw UsageError("--progress/--no-progress: both given; expected one of them (--progress: always report, "
                     "--no-progress: never; neither: report when stderr is a terminal)");
  }
  std::unique_ptr<sim::trace::TraceRecorder> trace;
  if (!raw.trace_path.empty()) {
    sim::trace::TraceLimits limits;
    limits.max_spans_per_track = raw.trace_limit;
    trace = std::make_unique<sim::trace::TraceRecorder>(limits);
  }
  // --device: the session stays open until the report is drawn from the served device's topology.
  const std::unique_ptr<runtime::remote::RemoteMeshDevice> served =
      options.device.empty() ? nullptr : connect_device(options);
  const std::string system = served ? served->topology().name() : options.system;
  RunResult result;
  RunProgress progress;
  if (served) progress.groups_mirrored = 0;  // a served device simulates every chip
  // A served device's simulation is the server's: nothing here to report on.
  std::optional<ProgressLine> progress_line;
  if (!served && progress_wanted(raw.progress, raw.no_progress)) {
    progress_line.emplace(stderr, progress_style());
    options.progress = [&line = *progress_line](const sim::EngineProgress& at) { line.report(at); };
  }
  try {
    result = served ? run_collective_on(options, *served) : run_collective(options, trace.get(), &progress);
    if (progress_line) progress_line->clear();
  } catch (const runtime::DeviceError& e) {
    if (progress_line) progress_line->clear();
    // A hang on ideal hardware is told apart from the modelled chip's: its chips have no
    // throughput limits, so a stall there is the algorithm's or a zero-time coincidence's.
    // A served device's hardware is the server's (serve --hardware ideal), said as a local run's.
    const bool ideal = served ? served->hardware() == runtime::remote::ServedHardware::Ideal : options.hardware == "ideal";
    std::fprintf(stderr, "cclmesh: the simulated op did not complete%s:\n%s\n",
                 ideal ? " on ideal hardware (--hardware ideal)" : "", e.what());
    // The trace up to the hang or fault is what one needs to see why; --json and --report say
    // the op did not complete, rather than keep an older run's result.
    if (trace) {
      sim::trace::TraceInfo info = trace_info(options, "did not complete");
      info.emplace_back("error", e.what());
      write_output(raw.trace_path, to_trace_event_json(*trace, info), "--trace");
    }
    if (!raw.json_path.empty()) write_output(raw.json_path, incomplete_json(options, served.get(), e.what(), progress).dump(2), "--json");
    if (!raw.report_path.empty()) {
      write_output(raw.report_path,
                   html_incomplete_report(fmt::format("cclmesh run: {} on {}", to_string(options.op), system), e.what(),
                                          kExitHangOrFault),
                   "--report");
    }
    return kExitHangOrFault;
  } catch (const runtime::remote::RemoteDeviceError& e) {
    if (progress_line) progress_line->clear();
    // --device: the served device went away or failed mid-run (connecting was checked as input).
    std::fprintf(stderr, "cclmesh: the served device failed: %s\n", e.what());
    if (!raw.json_path.empty()) write_output(raw.json_path, incomplete_json(options, served.get(), e.what(), progress).dump(2), "--json");
    if (!raw.report_path.empty()) {
      write_output(raw.report_path,
                   html_incomplete_report(fmt::format("cclmesh run: {} on {}", to_string(options.op), system),
                                          fmt::format("the served device failed: {}", e.what()), kExitInternalError),
                   "--report");
    }
    return kExitInternalError;
  }
  if (trace) write_output(raw.trace_path, to_trace_event_json(*trace, trace_info(options, "completed", &result)), "--trace");
  if (!raw.report_path.empty()) {
    const topo::Topology drawn = served ? served->topology()
                                        : topo::with_every_link(topo::load_system(options.system), options.link_whatif);
    write_output(raw.report_path, html_report(result, drawn), "--report");
  }
  if (!raw.json_path.empty()) {
    nlohmann::json j = result_json(result);
    j["outcome"] = "completed";
    write_output(raw.json_path, j.dump(2), "--json");
  }
  if (raw.json_path != "-" && raw.trace_path != "-") {
    std::cout << table_title(result) << table_header() << table_row(result) << algorithm_note(result);
    if (!result.faults.empty()) std::cout << fault_note(result);
  }
  if (result.verified.has_value() && !*result.verified) return kExitDataMismatch;
  return kExitOk;
}

// --device HOST:PORT: the options a run on a served device takes (the op, its tensor and
// memory, its algorithm choices, the axis it runs along on a per-axis fabric, the inputs' seed,
// --json, --report: the served device's link figures cross the wire); the others are refused,
// naming why.
const std::set<std::string>& options_beside_device() {
  static const std::set<std::string> kAccepted = op_options_beside_device({"--size", "--json", "--report"});
  return kAccepted;
}

}  // namespace

void register_run_command(CLI::App& app, CommandOutcome& outcome) {
  auto raw = std::make_shared<RawRunOptions>();
  RunOptions& o = raw->parsed;
  CLI::App* command = app.add_subcommand("run", "Run one collective on a simulated mesh (or a served one, --device) and print its nccl-tests row");
  command->add_option("--op", raw->op, collective_op_names())->capture_default_str();
  CLI::Option* size =
      command->add_option("--size", raw->size,
                          "nccl-tests size: total bytes; suffixes K, M, G (KiB, MiB, GiB; KB, MB, GB the same: "
                          "powers of two, as nccl-tests' K, M, G)")
      ->capture_default_str();
  add_shape_option(*command, raw->tensor);
  add_collective_options(*command, o);
  add_memory_options(*command, raw->tensor);
  command->add_option("--max-sim-time", raw->max_sim_time, "stop with a report when simulated time passes T (e.g. 50ms)");
  command->add_option("--max-wall", raw->max_wall, "stop with a report when the run has taken SECONDS of wall time");
  command->add_option("--fault", raw->faults,
                      "inject a fault (repeatable): link-down:A-B[@T], link-slow:A-B:F, skew:MAX[:SEED], drop:P[:SEED], "
                      "dup:P[:SEED], corrupt:A-B[@T][:SEED], no-bubble");
  command->add_option("--json", raw->json_path, "write the result as JSON to FILE, or - for stdout only");
  CLI::Option* trace = command->add_option(
      "--trace", raw->trace_path,
      "write a Chrome / Perfetto trace (JSON) of kernels, commands and ethernet packets to FILE, or - for stdout only");
  add_trace_limit_option(*command, raw->trace_limit, trace);
  command->add_option("--report", raw->report_path,
                      "write a self-contained HTML report (topology coloured by link utilisation, the result table) to FILE");
  CLI::Option* device =
      command->add_option("--device", o.device,
                          "HOST:PORT or [IPv6]:PORT: run on a device served by `cclmesh serve` (its system, mode and "
                          "fabric) instead of simulating here; simulator options are refused");
  add_device_wait_option(*command, o, device);
  command->add_flag("--progress", raw->progress,
                    "report the simulation's progress (simulated time, events) on stderr even when it is not a "
                    "terminal, a line per report (default: on a terminal only, one line rewritten in place)");
  command->add_flag("--no-progress", raw->no_progress, "no progress report, even on a terminal");
  command->add_option("--progress-every", o.progress_every_events,
                      "events between two progress reports")
      ->transform(whole_number_in(1, std::int64_t{1} << 40))
      ->capture_default_str();
  command->callback([raw, size, command, &outcome] {
    if (!raw->parsed.device.empty()) reject_options_beside_device(*command, options_beside_device());
    raw->size_given = size->count() > 0;
    process_exits_after_its_run();
    outcome.exit_code = run(*raw);
  });
}

}  // namespace cclmesh::cli
