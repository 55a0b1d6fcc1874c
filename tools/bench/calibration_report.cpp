#include "tools/bench/calibration_report.hpp"

#include <fmt/format.h>

namespace cclmesh::bench {
namespace {

constexpr const char* kTableFormat = "{:<15} {:>5} {:<8} {:<10} {:>12} {:>7} {:>7} {:>6} {:>9} {:>9} {:>8}\n";

std::string signed_percent(double fraction) { return fmt::format("{:+.1f}%", fraction * 100.0); }

}  // namespace

std::string format_size(std::uint64_t bytes) {
  constexpr std::uint64_t KiB = 1ull << 10;
  constexpr std::uint64_t MiB = 1ull << 20;
  constexpr std::uint64_t GiB = 1ull << 30;
  if (bytes >= GiB && bytes % GiB == 0) return fmt::format("{} GiB", bytes / GiB);
  if (bytes >= MiB && bytes % MiB == 0) return fmt::format("{} MiB", bytes / MiB);
  if (bytes >= KiB && bytes % KiB == 0) return fmt::format("{} KiB", bytes / KiB);
  return fmt::format("{} B", bytes);
}

std::string table_header() {
  return fmt::format(kTableFormat, "# op", "chips", "topology", "size run", "time_us", "busbw", "linkbw", "%line",
                     "cal_busbw", "cal_size", "error");
}

std::string table_row(const RowComparison& c) {
  const cli::BandwidthFigures& bw = c.result.bandwidth;
  return fmt::format(kTableFormat, cli::to_string(c.row.op), c.row.n_devices, c.row.topology,
                     format_size(c.result.size_bytes), fmt::format("{:.2f}", c.result.time_us),
                     fmt::format("{:.2f}", bw.busbw_GBps), fmt::format("{:.2f}", bw.linkbw_GBps),
                     fmt::format("{:.1f}", bw.pct_line_rate), fmt::format("{:.2f}", c.row.busbw_GBps),
                     format_size(c.row.size_bytes), signed_percent(c.error));
}

std::string skipped_line(const RowPlan& plan, const std::string& file_name) {
  return fmt::format("# skipped: {}:{} {}, {} chips, {}: {}\n", file_name, plan.row.line, cli::to_string(plan.row.op),
                     plan.row.n_devices, plan.row.topology, plan.skip_reason);
}

std::string summary_lines(const ErrorSummary& summary) {
  const auto rows = [](std::size_t n) { return fmt::format("{} row{}", n, n == 1 ? "" : "s"); };
  return fmt::format("# mean absolute error: {:.2f}% over {}; {:.2f}% over the {} with more than 2 chips\n",
                     summary.mean_abs_error * 100.0, rows(summary.rows), summary.mean_abs_error_over_2_chips * 100.0,
                     rows(summary.rows_over_2_chips));
}

std::string comparisons_csv(const std::vector<RowComparison>& comparisons) {
  std::string csv =
      "line,op,n_devices,topology,num_links,system,size_bytes,time_us,busbw_GBps,linkbw_GBps,pct_line_rate,"
      "calibration_size_bytes,calibration_time_us,calibration_busbw_GBps,error_pct\n";
  for (const RowComparison& c : comparisons) {
    const cli::BandwidthFigures& bw = c.result.bandwidth;
    csv += fmt::format("{},{},{},{},{},{},{},{:.2f},{:.4f},{:.4f},{:.2f},{},{:.2f},{:.2f},{:.3f}\n", c.row.line,
                       cli::to_string(c.row.op), c.row.n_devices, c.row.topology, c.row.num_links, c.system.system,
                       c.result.size_bytes, c.result.time_us, bw.busbw_GBps, bw.linkbw_GBps, bw.pct_line_rate,
                       c.row.size_bytes, c.row.time_us, c.row.busbw_GBps, c.error * 100.0);
  }
  return csv;
}

nlohmann::json comparisons_json(const std::string& file_name, std::uint64_t max_size_bytes,
                                const std::vector<RowComparison>& comparisons, const std::vector<RowPlan>& skipped,
                                const ErrorSummary& summary) {
  nlohmann::json rows = nlohmann::json::array();
  for (const RowComparison& c : comparisons) {
    const cli::BandwidthFigures& bw = c.result.bandwidth;
    rows.push_back({{"line", c.row.line},
                    {"op", cli::to_string(c.row.op)},
                    {"n_devices", c.row.n_devices},
                    {"topology", c.row.topology},
                    {"num_links", c.row.num_links},
                    {"system", c.system.system},
                    {"fabric_topology", c.system.topology},
                    {"size_bytes", c.result.size_bytes},
                    {"time_us", c.result.time_us},
                    {"busbw_GBps", bw.busbw_GBps},
                    {"linkbw_GBps", bw.linkbw_GBps},
                    {"pct_line_rate", bw.pct_line_rate},
                    {"calibration", {{"size_bytes", c.row.size_bytes}, {"time_us", c.row.time_us}, {"busbw_GBps", c.row.busbw_GBps}}},
                    {"error", c.error}});
  }
  nlohmann::json skipped_rows = nlohmann::json::array();
  for (const RowPlan& plan : skipped) {
    skipped_rows.push_back({{"line", plan.row.line},
                            {"op", cli::to_string(plan.row.op)},
                            {"n_devices", plan.row.n_devices},
                            {"topology", plan.row.topology},
                            {"reason", plan.skip_reason}});
  }
  return {{"calibration_file", file_name},
          {"max_size_bytes", max_size_bytes},
          {"fabric_payload_bytes", kCalibrationFabricPayloadBytes},
          {"rows", rows},
          {"skipped", skipped_rows},
          {"mean_abs_error", summary.mean_abs_error},
          {"rows_compared", summary.rows},
          {"mean_abs_error_over_2_chips", summary.mean_abs_error_over_2_chips},
          {"rows_over_2_chips", summary.rows_over_2_chips}};
}

}  // namespace cclmesh::bench
