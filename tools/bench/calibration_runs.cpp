#include "tools/bench/calibration_runs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "sim/engine/check.hpp"
#include "tools/cclmesh/cli_error.hpp"
#include "tools/cclmesh/op_runner.hpp"

namespace cclmesh::bench {

std::optional<ModelSystem> model_system_for(std::uint32_t n_devices, const std::string& topology) {
  // The calibration's systems (REFERENCE §14: an N300 pair, four chips of a line, the T3K).
  if (n_devices == 2 && topology == "line") return ModelSystem{"n300", "line"};
  if (n_devices == 4 && topology == "line") return ModelSystem{"mesh:1x4", "line"};
  if (n_devices == 8) return ModelSystem{"t3k", topology};
  return std::nullopt;
}

RowPlan plan_row(const CalibrationRow& row, std::uint64_t max_size_bytes) {
  RowPlan plan{.row = row, .run = std::nullopt, .skip_reason = {}};
  const std::optional<ModelSystem> system = model_system_for(row.n_devices, row.topology);
  if (!system) {
    plan.skip_reason = fmt::format("no system of the model stands for {} chips on a {} (it runs 2 line: n300, "
                                   "4 line: mesh:1x4, 8 ring or line: t3k)",
                                   row.n_devices, row.topology);
    return plan;
  }
  cli::RunOptions options;
  options.system = system->system;
  options.topology = system->topology;
  options.op = row.op;
  options.size_bytes = std::min(row.size_bytes, max_size_bytes);
  options.links = row.num_links;
  options.dtype = "bf16";
  options.layout = "tile";
  options.memory = row.memory;
  options.fabric_payload_bytes = kCalibrationFabricPayloadBytes;
  options.no_data = true;
  plan.run = options;
  return plan;
}

RowComparison run_row(const RowPlan& plan, const std::string& file_name) {
  CCLMESH_CHECK(plan.run.has_value(),
                fmt::format("{}:{}: run_row on a skipped row ({})", file_name, plan.row.line, plan.skip_reason));
  RowComparison comparison;
  comparison.row = plan.row;
  comparison.system = ModelSystem{plan.run->system, plan.run->topology};
  try {
    comparison.result = cli::run_collective(*plan.run);
  } catch (const cli::UsageError& e) {
    throw cli::UsageError(fmt::format("{}:{}: the model cannot run this row: {}", file_name, plan.row.line, e.what()));
  }
  comparison.error = comparison.result.bandwidth.busbw_GBps / plan.row.busbw_GBps - 1.0;
  return comparison;
}

ErrorSummary summarise_errors(const std::vector<RowComparison>& comparisons) {
  ErrorSummary summary;
  double sum = 0.0;
  double sum_over_2 = 0.0;
  for (const RowComparison& c : comparisons) {
    sum += std::abs(c.error);
    ++summary.rows;
    if (c.row.n_devices > 2) {
      sum_over_2 += std::abs(c.error);
      ++summary.rows_over_2_chips;
    }
  }
  if (summary.rows > 0) summary.mean_abs_error = sum / static_cast<double>(summary.rows);
  if (summary.rows_over_2_chips > 0) {
    summary.mean_abs_error_over_2_chips = sum_over_2 / static_cast<double>(summary.rows_over_2_chips);
  }
  return summary;
}

}  // namespace cclmesh::bench
