// `cclmesh sweep --system S --op OP[,OP...] [--topology auto|ring|line] -b MIN -e MAX -f FACTOR
//   [--csv FILE] [--json FILE] [--plot FILE.svg]`: the nccl-tests table over a range of sizes.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/device/mesh_device.hpp"
#include "tools/cclmesh/cli_error.hpp"
#include "tools/cclmesh/commands.hpp"
#include "tools/cclmesh/link_whatif.hpp"
#include "tools/cclmesh/op_runner.hpp"
#include "tools/cclmesh/output_file.hpp"
#include "tools/cclmesh/result_table.hpp"
#include "tools/cclmesh/run_option_flags.hpp"
#include "tools/cclmesh/size_parse.hpp"
#include "tools/cclmesh/sweep_plot.hpp"
#include "tools/cclmesh/tensor_flags.hpp"

namespace cclmesh::cli {

namespace {

struct SweepOptions {
  RunOptions base;
  std::string ops = "all_gather";
  std::string min_size = "1K";
  std::string max_size = "1M";
  std::uint64_t factor = 2;
  std::string csv_path;
  std::string json_path;
  std::string plot_path;
  TensorFlags tensor;
};

std::vector<CollectiveOp> parse_ops(const std::string& list) {
  std::vector<CollectiveOp> ops;
  std::stringstream stream(list);
  std::string name;
  while (std::getline(stream, name, ',')) ops.push_back(parse_collective_op(name, "--op"));
  if (ops.empty()) throw UsageError("--op: empty list; expected e.g. all_gather,reduce_scatter");
  return ops;
}

// A progress bar on stderr, only when stderr is a terminal (never in logs or CI output).
class Progress {
 public:
  explicit Progress(std::size_t total) : total_(total), enabled_(::isatty(STDERR_FILENO) == 1) {}
  void step(const std::string& what) {
    ++done_;
    if (!enabled_) return;
    const std::size_t width = 30;
    const std::size_t filled = total_ == 0 ? width : done_ * width / total_;
    std::fprintf(stderr, "\r[%s%s] %zu/%zu %-40s", std::string(filled, '#').c_str(),
                 std::string(width - filled, '.').c_str(), done_, total_, what.c_str());
    if (done_ == total_) std::fprintf(stderr, "\r%80s\r", "");
    std::fflush(stderr);
  }

 private:
  std::size_t total_;
  std::size_t done_ = 0;
  bool enabled_;
};

int sweep(SweepOptions& o) {
  if (!o.tensor.shape.empty()) {
    throw UsageError(fmt::format("--shape: '{}' fixes one tensor, and a sweep runs the sizes -b..-e; run one shape "
                                 "with `cclmesh run --shape`",
                                 o.tensor.shape));
  }
  apply_tensor_flags(o.tensor, o.base);
  const std::vector<CollectiveOp> ops = parse_ops(o.ops);
  const std::uint64_t min_bytes = parse_size_bytes(o.min_size, "-b");
  const std::uint64_t max_bytes = parse_size_bytes(o.max_size, "-e");
  if (max_bytes < min_bytes) {
    throw UsageError(fmt::format("-e: the largest size {} B is below the smallest {} B (-b)", max_bytes, min_bytes));
  }
  if (o.factor < 2) throw UsageError(fmt::format("-f: factor {} must be at least 2", o.factor));
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t size = min_bytes; size <= max_bytes; size *= o.factor) {
    sizes.push_back(size);
    if (size > max_bytes / o.factor) break;
  }

  Progress progress(ops.size() * sizes.size());
  std::vector<RunResult> rows;
  int exit_code = kExitOk;
  // A size one op cannot run (below one page per chip, past a builder's limit) is skipped with
  // a comment line, as the rest of the table is still worth having; a sweep in which nothing
  // can run is bad input.
  std::optional<UsageError> last_skip;
  for (CollectiveOp op : ops) {
    bool header_printed = false;
    for (std::uint64_t size : sizes) {
      RunOptions options = o.base;
      options.op = op;
      options.size_bytes = size;
      RunResult result;
      try {
        result = run_collective(options);
      } catch (const UsageError& e) {
        progress.step(fmt::format("{} {} B", to_string(op), size));
        std::cout << fmt::format("# {} at {} B skipped: {}\n", to_string(op), size, e.what()) << std::flush;
        last_skip = e;
        continue;
      } catch (const runtime::DeviceError& e) {
        std::fprintf(stderr, "cclmesh: %s at %llu B did not complete:\n%s\n", to_string(op).c_str(),
                     static_cast<unsigned long long>(size), e.what());
        return kExitHangOrFault;
      }
      progress.step(fmt::format("{} {} B", to_string(op), size));
      if (!header_printed) {
        std::cout << table_title(result) << table_header();
        header_printed = true;
      }
      std::cout << table_row(result) << std::flush;
      if (result.verified.has_value() && !*result.verified) exit_code = kExitDataMismatch;
      rows.push_back(std::move(result));
    }
  }
  if (rows.empty() && last_skip) throw *last_skip;
  if (!o.csv_path.empty()) {
    std::string csv = csv_header();
    for (const RunResult& row : rows) csv += csv_row(row);
    write_output(o.csv_path, csv, "--csv");
  }
  if (!o.json_path.empty()) {
    nlohmann::json all = nlohmann::json::array();
    for (const RunResult& row : rows) all.push_back(result_json(row));
    write_output(o.json_path, all.dump(2), "--json");
  }
  if (!o.plot_path.empty()) {
    // The shape the rows ran as (each series names its own), not --topology's.
    std::string shape = rows.empty() ? o.base.topology : topology_text(rows.front());
    for (const RunResult& row : rows) {
      if (topology_text(row) != shape) shape = "ring and line";
    }
    const bool what_if = !rows.empty() && rows.front().link_whatif;
    const std::string title = fmt::format("busbw on {} ({}, {} link{}, simulated{})", o.base.system, shape,
                                          o.base.links, o.base.links == 1 ? "" : "s",
                                          what_if ? ", " + link_whatif_text(*rows.front().link_whatif) : "");
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
  command->add_option("-b,--minbytes", o->min_size, "smallest size (nccl-tests -b)")->capture_default_str();
  command->add_option("-e,--maxbytes", o->max_size, "largest size (nccl-tests -e)")->capture_default_str();
  command->add_option("-f,--stepfactor", o->factor, "multiply the size by F each step (nccl-tests -f)")->capture_default_str();
  add_collective_options(*command, b);
  add_memory_options(*command, o->tensor);
  command->add_option("--shape", o->tensor.shape, "not for sweep (it runs sizes -b..-e): use `cclmesh run --shape`");
  command->add_option("--csv", o->csv_path, "write the rows as CSV to FILE (- for stdout)");
  command->add_option("--json", o->json_path, "write the rows as a JSON array to FILE (- for stdout)");
  command->add_option("--plot", o->plot_path, "write an SVG plot of busbw against size to FILE");
  command->callback([o, &outcome] { outcome.exit_code = sweep(*o); });
}

}  // namespace cclmesh::cli
