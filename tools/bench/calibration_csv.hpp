#pragma once
// The calibration's measurements as a user's own file holds them: a CSV with a header row
// (../shared/calibration/wh_asymptotes.csv's columns, REFERENCE §14), one measured collective a
// row. Only the columns the comparison needs are read; the others (algbw, run_set, source ...)
// may be there or not. Quoted fields may hold commas (the calibration's source does); a backslash
// escapes the character after it (Boost's escaped_list_separator), and a record is one line.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <istream>
#include <string>
#include <vector>

#include "tools/cclmesh/nccl_metrics.hpp"

namespace cclmesh::bench {

// One measured collective.
struct CalibrationRow {
  std::size_t line = 0;  // in its file, from 1 (the header is line 1)
  cli::CollectiveOp op = cli::CollectiveOp::AllGather;
  std::uint32_t n_devices = 0;
  std::string topology;  // "line" | "ring"
  std::uint32_t num_links = 0;
  std::uint64_t size_bytes = 0;  // nccl-tests S
  double time_us = 0.0;
  double busbw_GBps = 0.0;
  std::string memory;  // "dram" | "l1", as the run's --memory takes it
};

// The columns a calibration file must have, in the order the message of a missing one lists them.
const std::vector<std::string>& required_calibration_columns();

// Throws cli::UsageError "<file>:<line>: <field>: ..." naming the value and what was expected for
// a missing column, a field that is not a number, an op or topology the model has no run for, a
// row with more or fewer fields than the header, and a malformed quoted field; an empty file or
// one with a header only is an error too (nothing to compare).
std::vector<CalibrationRow> parse_calibration_csv(std::istream& in, const std::string& file_name);

// The file at `path`; cli::UsageError when it cannot be opened.
std::vector<CalibrationRow> read_calibration_csv(const std::filesystem::path& path);

}  // namespace cclmesh::bench
