#pragma once
// A calibration row as the model runs it, and the two compared: which system stands for the
// row's chips and topology (2 line: the N300; 4 line: a 1x4 mesh; 8 ring and 8 line: the T3K),
// the run's options (WH, bf16 TILE pages, the row's links and memory, 6144 B fabric packets as
// the calibration's runs used, timing only) and the error of the simulated busbw.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tools/bench/calibration_csv.hpp"
#include "tools/cclmesh/run_options.hpp"

namespace cclmesh::bench {

// The calibration's fabric packets (its source: "6144 B fabric packets", REFERENCE §14).
inline constexpr std::uint32_t kCalibrationFabricPayloadBytes = 6144;
// The model's curves are flat from 16 MiB on (docs/performance.md), so larger sizes cost time
// and say nothing more.
inline constexpr std::uint64_t kDefaultMaxSizeBytes = 256ull << 20;

// The system and fabric topology a row runs on, as `cclmesh run --system --topology` takes them.
struct ModelSystem {
  std::string system;
  std::string topology;
};

// nullopt when no system of the model stands for `n_devices` chips on a `topology`.
std::optional<ModelSystem> model_system_for(std::uint32_t n_devices, const std::string& topology);

// A row as it runs, or why it does not.
struct RowPlan {
  CalibrationRow row;
  std::optional<cli::RunOptions> run;  // unset: skipped
  std::string skip_reason;
};

// The row at min(its size, max_size_bytes).
RowPlan plan_row(const CalibrationRow& row, std::uint64_t max_size_bytes);

// One row run and compared.
struct RowComparison {
  CalibrationRow row;
  ModelSystem system;
  cli::RunResult result;
  double error = 0.0;  // simulated busbw / calibration busbw - 1
};

// Runs a planned row through run_collective, as `cclmesh run` does. Bad input (a size the op
// cannot take, more links than the system has) throws cli::UsageError naming the row's line.
RowComparison run_row(const RowPlan& plan, const std::string& file_name);

// Mean absolute error over every row and over the rows with more than 2 chips (0 rows: 0).
struct ErrorSummary {
  double mean_abs_error = 0.0;
  std::size_t rows = 0;
  double mean_abs_error_over_2_chips = 0.0;
  std::size_t rows_over_2_chips = 0;
};
ErrorSummary summarise_errors(const std::vector<RowComparison>& comparisons);

}  // namespace cclmesh::bench
