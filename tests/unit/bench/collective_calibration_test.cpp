// bench_collective_calibration's parts: the calibration CSV read as a user's own file (quoted
// fields holding commas; each kind of bad input named by file, line and field), a row mapped to
// the model's system and run options, and a row run end to end, whose figures must be those of
// `cclmesh run` with the same options (run_collective), not numbers kept here.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <fmt/format.h>

#include <sstream>
#include <string>
#include <vector>

#include "tests/source_tree.hpp"
#include "tools/bench/calibration_csv.hpp"
#include "tools/bench/calibration_report.hpp"
#include "tools/bench/calibration_runs.hpp"
#include "tools/cclmesh/cli_error.hpp"
#include "tools/cclmesh/op_runner.hpp"

namespace cclmesh::bench {
namespace {

using ::testing::HasSubstr;

constexpr const char* kHeader = "op,n_devices,topology,num_links,size_bytes,time_us,busbw_GBps,memory,source\n";

std::vector<CalibrationRow> parse(const std::string& text) {
  std::istringstream in(text);
  return parse_calibration_csv(in, "mine.csv");
}

// The message of the UsageError parsing `text` throws ("" when it throws none).
std::string parse_error(const std::string& text) {
  try {
    parse(text);
  } catch (const cli::UsageError& e) {
    return e.what();
  }
  return "";
}

std::string fixture() { return (testing::source_dir() / "tests/data/calibration/three_rows.csv").string(); }

TEST(CalibrationCsv, ReadsQuotedFieldsHoldingCommasAndColumnsInAnyOrder) {
  const std::vector<CalibrationRow> rows = read_calibration_csv(fixture());
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].line, 2u);
  EXPECT_EQ(rows[0].op, cli::CollectiveOp::AllGather);
  EXPECT_EQ(rows[0].n_devices, 2u);
  EXPECT_EQ(rows[0].topology, "line");
  EXPECT_EQ(rows[0].num_links, 1u);
  EXPECT_EQ(rows[0].size_bytes, 1048576u);
  EXPECT_DOUBLE_EQ(rows[0].time_us, 100.5);
  EXPECT_DOUBLE_EQ(rows[0].busbw_GBps, 5.22);
  EXPECT_EQ(rows[0].memory, "dram");  // "DRAM", as --memory takes it
  EXPECT_EQ(rows[1].line, 3u);
  EXPECT_EQ(rows[1].op, cli::CollectiveOp::AllReduce);
  EXPECT_DOUBLE_EQ(rows[1].time_us, 200.25);
  EXPECT_EQ(rows[2].topology, "ring");
}

TEST(CalibrationCsv, ReadsTheShippedCalibration) {
  const std::vector<CalibrationRow> rows =
      read_calibration_csv(testing::shared_dir() / "calibration" / "wh_asymptotes.csv");
  ASSERT_EQ(rows.size(), 12u);  // 4 ops x (2 line, 4 line, 8 ring), REFERENCE §14
  for (const CalibrationRow& row : rows) EXPECT_TRUE(model_system_for(row.n_devices, row.topology).has_value());
}

TEST(CalibrationCsv, WindowsLineEndsAndBlankLinesAreRead) {
  const std::vector<CalibrationRow> rows =
      parse("op,n_devices,topology,num_links,size_bytes,time_us,busbw_GBps,memory\r\n\r\n"
            "all_to_all,8,line,1,4096,1.5,2.5,L1\r\n");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].line, 3u);
  EXPECT_EQ(rows[0].memory, "l1");
}

TEST(CalibrationCsv, ANumberThatIsNotOneIsNamedByFileLineAndField) {
  EXPECT_EQ(parse_error(std::string(kHeader) + "all_gather,2,line,1,1048576,100,5,DRAM,x\n" +
                        "all_gather,2,line,1,12x,100,5,DRAM,\"a, b\"\n"),
            "mine.csv:3: size_bytes: '12x' is not a number; expected a whole number of bytes above 0");
  EXPECT_EQ(parse_error(std::string(kHeader) + "all_gather,2,line,1,1048576,100,fast,DRAM,x\n"),
            "mine.csv:2: busbw_GBps: 'fast' is not a number; expected GB/s above 0");
  EXPECT_EQ(parse_error(std::string(kHeader) + "all_gather,-2,line,1,1048576,100,5,DRAM,x\n"),
            "mine.csv:2: n_devices: '-2' is not a number; expected a whole number of chips, 2 or more");
  EXPECT_EQ(parse_error(std::string(kHeader) + "all_gather,2,line,1,1048576,,5,DRAM,x\n"),
            "mine.csv:2: time_us: '' is not a number; expected microseconds above 0");
}

TEST(CalibrationCsv, AMissingColumnIsNamed) {
  EXPECT_EQ(parse_error("op,n_devices,topology,num_links,size_bytes,time_us,memory\n"
                        "all_gather,2,line,1,1048576,100,DRAM\n"),
            "mine.csv:1: busbw_GBps: column missing from the header; expected the columns op, n_devices, topology, "
            "num_links, size_bytes, time_us, busbw_GBps, memory");
}

TEST(CalibrationCsv, AnOpOrTopologyTheModelHasNoRunForIsNamed) {
  EXPECT_THAT(parse_error(std::string(kHeader) + "all_gatherz,2,line,1,1048576,100,5,DRAM,x\n"),
              HasSubstr("mine.csv:2: op: unknown op 'all_gatherz'; expected one of all_gather,"));
  EXPECT_EQ(parse_error(std::string(kHeader) + "all_gather,2,torus,1,1048576,100,5,DRAM,x\n"),
            "mine.csv:2: topology: 'torus' is a topology the model has no run for; expected one of line, ring");
  EXPECT_EQ(parse_error(std::string(kHeader) + "all_gather,2,line,1,1048576,100,5,HBM,x\n"),
            "mine.csv:2: memory: 'HBM' is a memory the model has no run for; expected one of dram, l1");
}

TEST(CalibrationCsv, AnUnquotedCommaOrAnEmptyFileIsNamed) {
  EXPECT_EQ(parse_error(std::string(kHeader) + "all_gather,2,line,1,1048576,100,5,DRAM,a, b\n"),
            "mine.csv:2: 10 fields; expected 9, one for each column of the header (quote a field that holds commas)");
  EXPECT_THAT(parse_error(std::string(kHeader) + "all_gather,2,line,1,1048576,100,5,DRAM,\"a, b\n"),
              HasSubstr("mine.csv:2: malformed CSV record"));
  EXPECT_THAT(parse_error(""), HasSubstr("mine.csv:1: the file is empty"));
  EXPECT_EQ(parse_error(kHeader), "mine.csv: no rows under the header; expected one measured collective a row");
  EXPECT_THROW(read_calibration_csv(testing::source_dir() / "tests/data/calibration/no_such.csv"), cli::UsageError);
}

TEST(CalibrationRowMapping, EachCalibrationSystemHasItsModelSystem) {
  const auto system = [](std::uint32_t n, const char* topology) {
    const std::optional<ModelSystem> s = model_system_for(n, topology);
    return s ? s->system + " " + s->topology : std::string("none");
  };
  EXPECT_EQ(system(2, "line"), "n300 line");
  EXPECT_EQ(system(4, "line"), "mesh:1x4 line");
  EXPECT_EQ(system(8, "ring"), "t3k ring");
  EXPECT_EQ(system(8, "line"), "t3k line");
  EXPECT_EQ(system(4, "ring"), "none");
  EXPECT_EQ(system(2, "ring"), "none");
  EXPECT_EQ(system(32, "line"), "none");
}

TEST(CalibrationRowMapping, ARowRunsAsTheCalibrationDidUpToTheMaximumSize) {
  const std::vector<CalibrationRow> rows = read_calibration_csv(fixture());
  const RowPlan capped = plan_row(rows[1], 1ull << 20);
  ASSERT_TRUE(capped.run.has_value());
  EXPECT_EQ(capped.run->system, "mesh:1x4");
  EXPECT_EQ(capped.run->topology, "line");
  EXPECT_EQ(capped.run->op, cli::CollectiveOp::AllReduce);
  EXPECT_EQ(capped.run->size_bytes, 1ull << 20);  // the row's 2 MiB capped
  EXPECT_EQ(capped.run->links, 1u);
  EXPECT_EQ(capped.run->dtype, "bf16");
  EXPECT_EQ(capped.run->layout, "tile");
  EXPECT_EQ(capped.run->memory, "dram");
  EXPECT_EQ(capped.run->fabric_payload_bytes, 6144u);
  EXPECT_TRUE(capped.run->no_data);
  EXPECT_EQ(plan_row(rows[1], 256ull << 20).run->size_bytes, 2ull << 20);  // smaller than the cap: its own

  const RowPlan skipped = plan_row(rows[2], 1ull << 20);
  EXPECT_FALSE(skipped.run.has_value());
  EXPECT_THAT(skipped.skip_reason, HasSubstr("no system of the model stands for 4 chips on a ring"));
  EXPECT_THAT(skipped_line(skipped, "mine.csv"), HasSubstr("skipped: mine.csv:4 reduce_scatter, 4 chips, ring"));
}

// The row's figures are `cclmesh run --system mesh:1x4 --topology line --op all_reduce --size 1MiB
// --fabric-payload 6144 --no-data`'s.
TEST(CalibrationRowRun, ARowsFiguresAreThoseOfCclmeshRunWithTheSameOptions) {
  const std::vector<CalibrationRow> rows = read_calibration_csv(fixture());
  const RowComparison compared = run_row(plan_row(rows[1], 1ull << 20), "three_rows.csv");

  cli::RunOptions cli_run;
  cli_run.system = "mesh:1x4";
  cli_run.topology = "line";
  cli_run.op = cli::CollectiveOp::AllReduce;
  cli_run.size_bytes = 1ull << 20;
  cli_run.fabric_payload_bytes = 6144;
  cli_run.no_data = true;
  const cli::RunResult expected = cli::run_collective(cli_run);

  EXPECT_EQ(compared.system.system, "mesh:1x4");
  EXPECT_EQ(compared.result.size_bytes, expected.size_bytes);
  EXPECT_EQ(compared.result.time_us, expected.time_us);
  EXPECT_EQ(compared.result.trace_hash, expected.trace_hash);
  EXPECT_EQ(compared.result.bandwidth.busbw_GBps, expected.bandwidth.busbw_GBps);
  EXPECT_DOUBLE_EQ(compared.error, expected.bandwidth.busbw_GBps / 15.71 - 1.0);
  EXPECT_THAT(table_row(compared), HasSubstr(fmt::format("{:.2f}", expected.time_us)));
  EXPECT_THAT(comparisons_csv({compared}), HasSubstr(fmt::format(",mesh:1x4,1048576,{:.2f},", expected.time_us)));
}

TEST(CalibrationRowRun, ARowTheModelCannotRunNamesItsLine) {
  CalibrationRow row = read_calibration_csv(fixture())[0];
  row.num_links = 9;  // the N300 has 2 links between its chips
  try {
    run_row(plan_row(row, 1ull << 20), "mine.csv");
    FAIL() << "9 links ran on an n300";
  } catch (const cli::UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("mine.csv:2: the model cannot run this row: "));
  }
}

TEST(CalibrationErrors, MeanAbsoluteErrorsOverAllRowsAndOverMoreThanTwoChips) {
  const auto compared = [](std::uint32_t n, double error) {
    RowComparison c;
    c.row.n_devices = n;
    c.error = error;
    return c;
  };
  const ErrorSummary summary = summarise_errors({compared(2, 0.6), compared(4, -0.2), compared(8, 0.1)});
  EXPECT_EQ(summary.rows, 3u);
  EXPECT_DOUBLE_EQ(summary.mean_abs_error, 0.3);
  EXPECT_EQ(summary.rows_over_2_chips, 2u);
  EXPECT_DOUBLE_EQ(summary.mean_abs_error_over_2_chips, 0.15);
  EXPECT_EQ(summarise_errors({}).rows, 0u);
  EXPECT_EQ(summary_lines(summary),
            "# mean absolute error: 30.00% over 3 rows; 15.00% over the 2 rows with more than 2 chips\n");
}

TEST(CalibrationReport, SizesInPowersOfTwo) {
  EXPECT_EQ(format_size(256ull << 20), "256 MiB");
  EXPECT_EQ(format_size(4ull << 30), "4 GiB");
  EXPECT_EQ(format_size(6144), "6 KiB");
  EXPECT_EQ(format_size(6000), "6000 B");
}

}  // namespace
}  // namespace cclmesh::bench
