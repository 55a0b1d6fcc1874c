// `cclmesh sweep --system S --op OP[,OP...] [--topology auto|ring|line] -b MIN -e MAX -f FACTOR
//   [-j N] [--csv FILE] [--json FILE] [--plot FILE.svg] [--device HOST:PORT]`: the nccl-tests table
// over a range of sizes, its points run one after another, or N at once in forked processes
// (sweep_jobs.hpp); with --device, one after another on a served device, in one session.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "runtime/remote/remote_mesh_device.hpp"
#include "tools/cclmesh/cli_error.hpp"
#include "tools/cclmesh/commands.hpp"
#include "tools/cclmesh/device_option_check.hpp"
#include "tools/cclmesh/link_whatif.hpp"
#include "tools/cclmesh/noc_usage_dump.hpp"
#include "tools/cclmesh/op_runner.hpp"
#include "tools/cclmesh/output_file.hpp"
#include "tools/cclmesh/progress_line.hpp"
#include "tools/cclmesh/result_table.hpp"
#include "tools/cclmesh/run_option_flags.hpp"
#include "tools/cclmesh/size_parse.hpp"
#include "tools/cclmesh/sweep_jobs.hpp"
#include "tools/cclmesh/sweep_plot.hpp"
#include "tools/cclmesh/sweep_refusals.hpp"
#include "tools/cclmesh/tensor_flags.hpp"
#include "topologies/errors.hpp"
#include "topologies/system_loader.hpp"

namespace cclmesh::cli {

namespace {

struct SweepOptions {
  RunOptions base;
  std::string ops = "all_gather";
  std::string min_size = "1K";
  std::string max_size = "1M";
  std::string factor = "2";
  std::string csv_path;
  std::string json_path;
  std::string plot_path;
  TensorFlags tensor;
  std::string jobs = "1";
  std::string max_sim_time;
  std::string max_wall;
};

// --device HOST:PORT: the options a sweep on a served device takes (the ops, the sizes, each
// point's tensor and algorithm choices, the axis, the seed, the outputs); the others are the
// server's or the simulator's (device_option_check.hpp).
const std::set<std::string>& options_beside_device() {
  static const std::set<std::string> kAccepted =
      op_options_beside_device({"--minbytes", "--maxbytes", "--stepfactor", "--jobs", "--csv", "--json", "--plot"});
  return kAccepted;
}

// A progress bar on stderr, only when stderr is a terminal (never in logs or CI output): the
// points done, the last one's name and, for the point running in this process (-j 1), where
// its simulation has got to (progress_line.hpp). It is erased before anything else is printed
// (a row, a diagnostic) and drawn again after it: the rows were printed after the bar on its
// line (session 44).
class Progress {
 public:
  explicit Progress(std::size_t total) : total_(total), enabled_(::isatty(STDERR_FILENO) == 1) {}
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  ~Progress() { clear(); }
  bool enabled() const { return enabled_; }
  void step(const std::string& what) {
    ++done_;
    what_ = what;
    running_.clear();
    draw();
  }
  // The running point's simulation (-j 1).
  void running(const sim::EngineProgress& at) {
    running_ = fmt::format("{}running: {}", what_.empty() ? "" : "; ", progress_text(at));
    draw();
  }
  void draw() {
    if (!enabled_ || done_ == total_) return;
    const std::size_t width = 30;
    const std::size_t filled = total_ == 0 ? width : done_ * width / total_;
    const std::string line = fmt::format("[{}{}] {}/{} {}{}", std::string(filled, '#'), std::string(width - filled, '.'),
                                         done_, total_, what_, running_);
    // stdio, not fmt::print, which throws when stderr is closed (the bar runs inside the engine's loop).
    std::fputs(fmt::format("\r{:<{}}", line, shown_width_).c_str(), stderr);
    shown_width_ = std::max(shown_width_, line.size());
    std::fflush(stderr);
  }
  void clear() {
    if (shown_width_ == 0) return;
    std::fputs(fmt::format("\r{:{}}\r", "", shown_width_).c_str(), stderr);
    std::fflush(stderr);
    shown_width_ = 0;
  }

 private:
  std::size_t total_;
  std::size_t done_ = 0;
  bool enabled_;
  std::string what_;
  std::string running_;
  std::size_t shown_width_ = 0;
};

int sweep(SweepOptions& o) {
  if (!o.tensor.shape.empty()) {
    throw UsageError(fmt::format("--shape: '{}' fixes one tensor, and a sweep runs the sizes -b..-e; run one shape "
                                 "with `cclmesh run --shape`",
                                 o.tensor.shape));
  }
  apply_tensor_flags(o.tensor, o.base);
  if (!o.max_sim_time.empty()) o.base.max_sim_time = parse_sim_time(o.max_sim_time, "--max-sim-time");
  // Per point, as run's is per run: every point's device stops when that point has taken SECONDS
  // (a budget for the whole sweep would stop a point that is not the slow one, at a size set by
  // the host's load and -j).
  if (!o.max_wall.empty()) o.base.max_wall_seconds = parse_wall_seconds(o.max_wall, "--max-wall");
  const std::size_t jobs = parse_jobs(o.jobs, "-j");
  // One served device runs one client session and one op at a time, its state carrying over
  // from op to op: N points at once would wait on each other at the server, and each point's
  // figures would depend on which ran before it. So they run in order, in one session.
  if (!o.base.device.empty() && (jobs != 1 || o.jobs == "0")) {
    throw UsageError(fmt::format("-j: '{}' with --device: a served device runs one op at a time, so a sweep on it "
                                 "runs its points one after another in one session; drop -j (or give -j 1), or run "
                                 "several servers and sweeps",
                                 o.jobs));
  }
  const std::vector<CollectiveOp> ops = parse_collective_op_list(o.ops, "--op");
  const std::uint64_t min_bytes = parse_size_bytes(o.min_size, "-b");
  const std::uint64_t max_bytes = parse_size_bytes(o.max_size, "-e");
  if (max_bytes < min_bytes) {
    throw UsageError(fmt::format("-e: the largest size {} B is below the smallest {} B (-b)", max_bytes, min_bytes));
  }
  // -f 1 is taken where it ends, on one size (-b equal to -e: a factor that does nothing), and
  // refused where it would repeat -b for ever: nccl-tests steps by its increment -i when F is 1,
  // and a sweep here has no increment (bug bash, session 38: `-f 1 -b 64K -e 64K` was refused).
  const std::uint64_t factor =
      parse_whole_number(o.factor, "-f", 1, "factor",
                         "a whole number of at least 2 (nccl-tests -f: each size is the previous one times F), or "
                         "1 with -b equal to -e");
  if (factor == 1 && min_bytes != max_bytes) {
    throw UsageError(fmt::format("-f: a factor of 1 repeats -b's {} B for ever and never reaches -e's {} B; expected "
                                 "at least 2, or -e equal to -b for one size (nccl-tests steps by its increment -i "
                                 "when F is 1, and cclmesh sweep has no increment)",
                                 min_bytes, max_bytes));
  }
  if (o.csv_path == "-" && o.json_path == "-") {
    throw UsageError("--csv: '-' (stdout) cannot be used together with --json -; write one of them to a file");
  }
  // --csv - / --json - / --plot -: stdout carries that data alone (a pipe parses it), so the
  // table is not printed and a skipped size's note goes to stderr.
  const bool data_on_stdout = o.csv_path == "-" || o.json_path == "-" || o.plot_path == "-";
  std::ostream& notes = data_on_stdout ? std::cerr : std::cout;
  require_distinct_outputs({{o.csv_path, "--csv"}, {o.json_path, "--json"}, {o.plot_path, "--plot"}});
  // Before the sweep runs, so a path that can never be written costs no run.
  if (!o.csv_path.empty()) check_output_path(o.csv_path, "--csv");
  if (!o.json_path.empty()) check_output_path(o.json_path, "--json");
  if (!o.plot_path.empty()) {
    require_output_extension(o.plot_path, "--plot", {".svg"}, "SVG");
    check_output_path(o.plot_path, "--plot");
  }
  // Checked once here rather than at every point, each of which would be skipped with the same
  // note (a bad --system is left to the points, which say so as a run does).
  if (o.base.device.empty() && std::getenv("CCLMESH_NOC_STATS") != nullptr) {
    std::optional<topo::Topology> system;
    try {
      system = topo::load_system(o.base.system);
    } catch (const topo::InputError&) {
    }
    if (system) requested_noc_stats_chip(*system);
  }
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t size = min_bytes;; size *= factor) {
    sizes.push_back(size);
    if (factor == 1 || size > max_bytes / factor) break;
  }

  // The points in (op, size) order, the order the table prints them in whatever order they run.
  std::vector<RunOptions> points;
  for (CollectiveOp op : ops) {
    for (std::uint64_t size : sizes) {
      points.push_back(o.base);
      points.back().op = op;
      points.back().size_bytes = size;
    }
  }
  const auto point_name = [&points](std::size_t i) {
    return fmt::format("{} {} B", to_string(points[i].op), points[i].size_bytes);
  };
  Progress progress(points.size());
  std::vector<RunResult> rows;
  int exit_code = kExitOk;
  // A size one op cannot run (below one page per chip, past a builder's limit) is skipped with
  // a comment line, as the rest of the table is still worth having; a sweep in which nothing
  // can run is bad input. The notes wait for a point that is not refused: when none is, the
  // error alone says why (bug bash, session 38: each reason was printed as a note, then again
  // as the error).
  std::vector<RefusedPoint> refusals;  // in point order
  std::string held_skip_notes;
  bool a_point_was_not_refused = false;
  const auto release_skip_notes = [&] {
    a_point_was_not_refused = true;
    notes << held_skip_notes << std::flush;
    held_skip_notes.clear();
  };
  std::optional<std::size_t> header_printed_for;  // the index in --op whose header is out
  // The point the sweep stopped at (a hang, a fault or a crashed process): its --json entry.
  std::optional<nlohmann::json> stopped_point;
  std::string stopped_note;  // the plot title's
  // --device: one session for every point; the points run with the served device's settings.
  const std::unique_ptr<runtime::remote::RemoteMeshDevice> device =
      o.base.device.empty() ? nullptr : connect_device(o.base);
  const auto stopped_json = [&](std::size_t i, const SweepPointOutcome& outcome) {
    return incomplete_run_json(device ? served_run_options(points[i], *device) : points[i], outcome.message,
                               outcome.groups_mirrored);
  };
  // A served device's hardware is the server's (serve --hardware), said as a local sweep's.
  const auto hardware_of = [&](std::size_t i) {
    return device ? std::string(runtime::remote::hardware_name(device->hardware())) : points[i].hardware;
  };
  // -j 1 runs the points here: the bar says where the running one's simulation has got to.
  if (progress.enabled() && jobs <= 1 && !device) {
    for (RunOptions& point : points) point.progress = [&progress](const sim::EngineProgress& at) { progress.running(at); };
  }
  const auto print_point = [&](std::size_t i, SweepPointOutcome outcome) {
    progress.clear();
    struct DrawAfter {
      Progress& bar;
      ~DrawAfter() { bar.draw(); }
    } draw_after{progress};
    const std::string op = to_string(points[i].op);
    const auto size = static_cast<unsigned long long>(points[i].size_bytes);
    if (outcome.kind == SweepPointOutcome::Kind::Skipped) {
      held_skip_notes += fmt::format("# {} at {} B skipped: {}\n", op, size, outcome.message);
      if (a_point_was_not_refused) release_skip_notes();
      refusals.push_back({op, points[i].size_bytes, std::move(outcome.message)});
      return true;
    }
    release_skip_notes();
    switch (outcome.kind) {
      case SweepPointOutcome::Kind::Skipped:
        break;  // above
      case SweepPointOutcome::Kind::DidNotComplete:
        std::fprintf(stderr, "cclmesh: %s at %llu B did not complete%s:\n%s\n", op.c_str(), size,
                     hardware_of(i) == "ideal" ? " on ideal hardware (--hardware ideal)" : "",
                     outcome.message.c_str());
        exit_code = kExitHangOrFault;
        stopped_point = stopped_json(i, outcome);
        stopped_note = fmt::format("; {} at {} B did not complete", op, size);
        return false;
      case SweepPointOutcome::Kind::Crashed:
      case SweepPointOutcome::Kind::OutOfHostMemory:  // the rows so far kept, as at a -j point's OOM kill
        std::fprintf(stderr, "cclmesh: %s at %llu B did not complete: %s\n", op.c_str(), size, outcome.message.c_str());
        exit_code = kExitInternalError;
        stopped_point = stopped_json(i, outcome);
        stopped_note = fmt::format("; {} at {} B did not complete", op, size);
        return false;
      case SweepPointOutcome::Kind::InternalError:
        throw std::runtime_error(outcome.message);  // main's "internal error", as in-process
      case SweepPointOutcome::Kind::Completed:
        break;
    }
    if (!data_on_stdout) {
      // A served device's faults are named under each op's header, and what they did to a point
      // after its row, as `run` prints them after its row (session 31: a sweep printed neither,
      // so its table did not say it ran under faults, which its --csv and --json do).
      const bool faulted = !outcome.result.faults.empty();
      if (header_printed_for != i / sizes.size()) {
        std::cout << table_title(outcome.result) << table_header();
        if (faulted) std::cout << fault_specs_line(outcome.result);
        header_printed_for = i / sizes.size();
      }
      // A point whose algorithm fell back (all_reduce's composite, up to 10x slower) says why
      // under its row, as `run` does (session 31: the sweep's row was bare).
      std::cout << table_row(outcome.result) << algorithm_note(outcome.result);
      if (faulted) std::cout << fault_effect_lines(outcome.result);
      std::cout << std::flush;
    }
    if (outcome.result.verified.has_value() && !*outcome.result.verified) exit_code = kExitDataMismatch;
    rows.push_back(std::move(outcome.result));
    return true;
  };
  if (!device) {
    run_sweep_points(points, jobs, [&](std::size_t i) { progress.step(point_name(i)); }, print_point,
                     [&progress] { progress.clear(); });
  } else {
    for (std::size_t i = 0; i < points.size(); ++i) {
      SweepPointOutcome outcome = run_sweep_point(points[i], device.get());
      progress.step(point_name(i));
      if (!print_point(i, std::move(outcome))) break;
    }
  }
  progress.clear();
  // A stopped sweep still writes its files, the rows that completed and (in --json) the point
  // that did not, so no older sweep's files are left for a script to read as this one's.
  if (!a_point_was_not_refused && !refusals.empty()) {
    throw UsageError(every_point_refused(refusals, sizes));
  }
  if (!o.csv_path.empty()) {
    // A link what-if's rows, a per-axis, --chips or faulted sweep's say so in their own columns,
    // after the default ones (csv_columns()), as the table title and --json do; the default CSV
    // stays as it was.
    const CsvColumns columns = csv_columns(rows);
    std::string csv = csv_header(columns);
    for (const RunResult& row : rows) csv += csv_row(row, columns);
    write_output(o.csv_path, csv, "--csv");
  }
  if (!o.json_path.empty()) {
    nlohmann::json all = nlohmann::json::array();
    for (const RunResult& row : rows) {
      all.push_back(result_json(row));
      all.back()["outcome"] = "completed";  // as run's --json says
    }
    if (stopped_point) all.push_back(*stopped_point);
    write_output(o.json_path, all.dump(2), "--json");
  }
  if (!o.plot_path.empty()) {
    // The shape the rows ran as (each series names its own), not --topology's.
    std::string shape = rows.empty() ? o.base.topology : topology_text(rows.front());
    for (const RunResult& row : rows) {
      if (topology_text(row) != shape) shape = "ring and line";
    }
    const bool what_if = !rows.empty() && rows.front().link_whatif;
    // The rows' system and links: a served device's, with --device (locally, the options').
    const std::string system = rows.empty() ? o.base.system : rows.front().system;
    const std::uint32_t links = rows.empty() ? o.base.links : rows.front().links;
    const bool ideal = !rows.empty() && rows.front().hardware == "ideal";
    const std::string title = fmt::format("busbw on {} ({}, {} link{}, simulated{}{}){}", system, shape, links,
                                          links == 1 ? "" : "s", ideal ? " on ideal hardware" : "",
                                          what_if ? ", " + link_whatif_text(*rows.front().link_whatif) : "",
                                          stopped_note);
    write_output(o.plot_path, sweep_plot_svg(rows, title), "--plot");
  }
  return exit_code;
}

}  // namespace

void register_sweep_command(CLI::App& app, CommandOutcome& outcome) {
  auto o = std::make_shared<SweepOptions>();
  RunOptions& b = o->base;
  CLI::App* command = app.add_subcommand("sweep", "The nccl-tests table of one or more collectives over a range of sizes");
  command->add_option("--op", o->ops, "comma-separated ops out of " + collective_op_names())->capture_default_str();
  command
      ->add_option("-b,--minbytes", o->min_size,
                   "smallest size (nccl-tests -b; K, M, G, KiB, MB, ... are powers of two, as --size's)")
      ->capture_default_str();
  command->add_option("-e,--maxbytes", o->max_size, "largest size (nccl-tests -e)")->capture_default_str();
  command->add_option("-f,--stepfactor", o->factor, "multiply the size by F each step (nccl-tests -f): at least 2, or 1 when -b equals -e")
      ->type_name("UINT")
      ->capture_default_str();
  add_collective_options(*command, b);
  add_memory_options(*command, o->tensor);
  command->add_option("--shape", o->tensor.shape, "not for sweep (it runs sizes -b..-e): use `cclmesh run --shape`");
  command->add_option("--max-sim-time", o->max_sim_time,
                      "stop a point with a report when its simulated time passes T (e.g. 50ms): the sweep ends there, exit 3");
  command->add_option("--max-wall", o->max_wall,
                      "stop a point with a report when it has taken SECONDS of wall time (each point its own): the "
                      "sweep ends there, exit 3");
  command->add_option("-j,--jobs", o->jobs,
                      "run up to N points at once, each in its own process (0: one per core of this host; at most 256, "
                      "and never more than the sweep's points); the output is -j 1's, but N processes hold N points' "
                      "memory at once (with data: N x 1.25x a point's tensors)")
      ->capture_default_str();
  command->add_option("--csv", o->csv_path, "write the rows as CSV to FILE (- for stdout, instead of the table)");
  command->add_option("--json", o->json_path, "write the rows as a JSON array to FILE (- for stdout, instead of the table)");
  command->add_option("--plot", o->plot_path, "write an SVG plot of busbw against size to FILE, or - for stdout");
  CLI::Option* device =
      command->add_option("--device", b.device,
                          "HOST:PORT or [IPv6]:PORT: run the points on a device served by `cclmesh serve` (its system, "
                          "mode and fabric), one after another in one session, instead of simulating here; simulator "
                          "options are refused");
  add_device_wait_option(*command, b, device);
  command->callback([o, command, &outcome] {
    if (!o->base.device.empty()) reject_options_beside_device(*command, options_beside_device());
    outcome.exit_code = sweep(*o);
  });
}

}  // namespace cclmesh::cli
