// The collectives against the calibration, row by row (issue #6): every row of a calibration CSV
// (default <shared>/calibration/wh_asymptotes.csv, REFERENCE §14) run on the model as `cclmesh
// run --system S --topology T --op OP --size SIZE --links L --fabric-payload 6144 --no-data`
// does, with the simulated busbw's error against the row's. docs/performance.md's first table
// is this program's output.
//
//   build/tools/bench/bench_collective_calibration                       every row, 256 MiB at most
//   build/tools/bench/bench_collective_calibration MY.csv --ops all_gather --max-size 1MiB
//   build/tools/bench/bench_collective_calibration --csv out.csv --json out.json
//
// Exit codes as cclmesh's: 0, 2 bad input (the CSV, an option), 3 a simulated hang or fault.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "runtime/device/mesh_device.hpp"
#include "tools/bench/calibration_csv.hpp"
#include "tools/bench/calibration_report.hpp"
#include "tools/bench/calibration_runs.hpp"
#include "tools/cclmesh/cli_error.hpp"
#include "tools/cclmesh/output_file.hpp"
#include "tools/cclmesh/size_parse.hpp"
#include "topologies/data_paths.hpp"

namespace {

using namespace cclmesh;

struct Options {
  std::string calibration_path;
  std::string ops;
  std::string max_size = "256MiB";
  std::string csv_path;
  std::string json_path;
  std::string hardware = "modelled";  // run's --hardware: ideal shows what the links alone allow
};

bool selected(const bench::CalibrationRow& row, const std::optional<std::vector<cli::CollectiveOp>>& ops) {
  return !ops || std::find(ops->begin(), ops->end(), row.op) != ops->end();
}

int compare(const Options& options) {
  const std::string file =
      options.calibration_path.empty()
          ? (topo::shared_dir() / "calibration" / "wh_asymptotes.csv").lexically_normal().string()
          : options.calibration_path;
  const std::uint64_t max_size = cli::parse_size_bytes(options.max_size, "--max-size");
  std::optional<std::vector<cli::CollectiveOp>> ops;
  if (!options.ops.empty()) ops = cli::parse_collective_op_list(options.ops, "--ops");
  cli::require_distinct_outputs({{options.csv_path, "--csv"}, {options.json_path, "--json"}});
  if (!options.csv_path.empty()) cli::check_output_path(options.csv_path, "--csv");
  if (!options.json_path.empty()) cli::check_output_path(options.json_path, "--json");

  std::vector<bench::RowPlan> planned;
  std::vector<bench::RowPlan> skipped;
  for (const bench::CalibrationRow& row : bench::read_calibration_csv(file)) {
    if (!selected(row, ops)) continue;
    bench::RowPlan plan = bench::plan_row(row, max_size);
    if (plan.run) plan.run->hardware = options.hardware;
    (plan.run ? planned : skipped).push_back(std::move(plan));
  }
  if (planned.empty() && skipped.empty()) {
    throw cli::UsageError(fmt::format("--ops: '{}' selects no row of {}", options.ops, file));
  }

  fmt::print("# cclmesh collectives against the calibration {}\n"
             "# each row: cclmesh run --system S --topology T --op OP --size min(calibration size, --max-size {})\n"
             "#   --links L --fabric-payload {} --no-data{} (WH, bf16 TILE, the row's memory); S T: 2 line = n300 line,\n"
             "#   4 line = mesh:1x4 line, 8 ring/line = t3k ring/line. error = simulated busbw / calibration busbw - 1\n",
             file, bench::format_size(max_size), bench::kCalibrationFabricPayloadBytes,
             options.hardware == "ideal" ? " --hardware ideal" : "");
  for (const bench::RowPlan& plan : skipped) fmt::print("{}", bench::skipped_line(plan, file));
  fmt::print("{}", bench::table_header());
  std::fflush(stdout);
  std::vector<bench::RowComparison> comparisons;
  for (const bench::RowPlan& plan : planned) {
    comparisons.push_back(bench::run_row(plan, file));
    fmt::print("{}", bench::table_row(comparisons.back()));
    std::fflush(stdout);  // a row takes seconds: show each as it is done
  }
  const bench::ErrorSummary summary = bench::summarise_errors(comparisons);
  fmt::print("{}", bench::summary_lines(summary));
  if (!options.csv_path.empty()) cli::write_output(options.csv_path, bench::comparisons_csv(comparisons), "--csv");
  if (!options.json_path.empty()) {
    const nlohmann::json json = bench::comparisons_json(file, max_size, comparisons, skipped, summary);
    cli::write_output(options.json_path, json.dump(2) + "\n", "--json");
  }
  return cli::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"cclmesh collectives against the calibration, one row per calibration row",
               "bench_collective_calibration"};
  Options options;
  app.add_option("calibration", options.calibration_path,
                 "calibration CSV (default: <shared>/calibration/wh_asymptotes.csv)");
  app.add_option("--ops", options.ops, "only these ops' rows, comma-separated (e.g. all_gather,all_reduce)");
  app.add_option("--max-size", options.max_size, "largest size run (e.g. 1MiB); a row's own size when smaller")
      ->capture_default_str();
  app.add_option("--csv", options.csv_path, "also write the rows as CSV to this file ('-': stdout)");
  app.add_option("--json", options.json_path, "also write the rows, skipped rows and errors as JSON to this file");
  app.add_option("--hardware", options.hardware,
                 "modelled (the calibrated chip model) or ideal (cclmesh run --hardware ideal: what the links and "
                 "the algorithms alone allow, to tell a row's error apart from the chip's)")
      ->check(CLI::IsMember({"modelled", "ideal"}))
      ->capture_default_str();
  if (const auto problem = topo::data_dir_variable_problem()) {
    std::fprintf(stderr, "bench_collective_calibration: error: %s\n", problem->c_str());
    return cli::kExitBadInput;
  }
  try {
    app.parse(argc, argv);
    return compare(options);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? cli::kExitOk : cli::kExitBadInput;
  } catch (const cli::UsageError& e) {
    std::fprintf(stderr, "bench_collective_calibration: error: %s\n", e.what());
    return cli::kExitBadInput;
  } catch (const runtime::DeviceError& e) {
    std::fprintf(stderr, "bench_collective_calibration: the simulated run stopped: %s\n", e.what());
    return cli::kExitHangOrFault;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_collective_calibration: internal error: %s\n", e.what());
    return cli::kExitInternalError;
  }
}
