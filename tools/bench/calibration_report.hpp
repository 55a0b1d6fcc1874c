#pragma once
// The calibration comparison as bench_collective_calibration prints and writes it: a text table
// (one row per calibration row, as docs/performance.md's first table), a CSV of the same rows,
// and JSON with the rows, the skipped rows and the mean absolute errors.

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/bench/calibration_runs.hpp"

namespace cclmesh::bench {

// "256 MiB", "4 GiB", "6000 B": powers of two where the size is a whole number of them.
std::string format_size(std::uint64_t bytes);

std::string table_header();
std::string table_row(const RowComparison& comparison);
// "skipped: <file>:<line> <op>, <n> chips, <topology>: <reason>".
std::string skipped_line(const RowPlan& plan, const std::string& file_name);
// The mean absolute errors, over every row and over the rows with more than 2 chips.
std::string summary_lines(const ErrorSummary& summary);

std::string comparisons_csv(const std::vector<RowComparison>& comparisons);
nlohmann::json comparisons_json(const std::string& file_name, std::uint64_t max_size_bytes,
                                const std::vector<RowComparison>& comparisons, const std::vector<RowPlan>& skipped,
                                const ErrorSummary& summary);

}  // namespace cclmesh::bench
