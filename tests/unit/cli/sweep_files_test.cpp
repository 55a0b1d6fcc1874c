// `cclmesh sweep`'s output files when a point does not complete (Review, session 10, left): the
// sweep ends with exit 3, and --csv, --json and --plot hold the rows that completed, --json also
// the point that did not ("outcome": "did not complete", as run's --json), so an older sweep's
// files are never left in place for a script to read as this one's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tools/cclmesh/cli_error.hpp"
#include "tests/unit/cli/cli_test_util.hpp"
#include "tools/cclmesh/commands.hpp"
#include "tools/cclmesh/result_table.hpp"

namespace cclmesh::cli {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using nlohmann::json;

using testing_util::read_file;
using testing_util::run_cli;
using testing_util::TempDirTest;

class SweepFiles : public TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    csv_ = dir_ / "rows.csv";
    json_ = dir_ / "rows.json";
    plot_ = dir_ / "busbw.svg";
    // An older sweep's files, which a stopped sweep must not leave in place.
    std::ofstream(csv_) << "op,size_bytes,time_us\nall_gather,65536,12.5\n";
    std::ofstream(json_) << R"([{"op":"all_gather","size_bytes":65536,"time_us":12.5}])";
    std::ofstream(plot_) << "<svg>an older sweep's plot</svg>";
  }
  int sweep(std::vector<std::string> args) {
    for (const std::string& a : {std::string("--csv"), csv_.string(), std::string("--json"), json_.string(),
                                 std::string("--plot"), plot_.string()}) {
      args.push_back(a);
    }
    args.insert(args.begin(), "sweep");
    return run_cli(args);
  }

  fs::path csv_;
  fs::path json_;
  fs::path plot_;
};

TEST_F(SweepFiles, AStoppedSweepWritesTheRowsThatCompletedAndThePointThatDidNot) {
  // 64 KiB and 256 KiB complete within 40 us on the T3K, 1 MiB does not.
  const int code = sweep({"--system", "t3k", "--op", "all_gather", "-b", "64K", "-e", "1M", "-f", "4", "--no-data",
                          "--max-sim-time", "40us"});
  EXPECT_EQ(code, kExitHangOrFault);

  const std::string csv = read_file(csv_);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 3) << csv;  // the header and two rows
  EXPECT_THAT(csv, HasSubstr("all_gather,t3k,8,ring"));
  EXPECT_THAT(csv, Not(HasSubstr("12.5")));

  const json rows = json::parse(read_file(json_));
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].at("outcome"), "completed");
  EXPECT_EQ(rows[0].at("size_bytes"), 65536);
  EXPECT_EQ(rows[1].at("outcome"), "completed");
  EXPECT_EQ(rows[1].at("size_bytes"), 262144);
  const json& stopped = rows[2];
  EXPECT_EQ(stopped.at("outcome"), "did not complete");
  EXPECT_EQ(stopped.at("op"), "all_gather");
  EXPECT_EQ(stopped.at("system"), "t3k");
  EXPECT_EQ(stopped.at("size_bytes"), 1048576);
  EXPECT_FALSE(stopped.contains("time_us"));
  EXPECT_THAT(stopped.at("error").get<std::string>(), HasSubstr("simulated time passed the limit of 40.000 us"));

  const std::string plot = read_file(plot_);
  EXPECT_THAT(plot, Not(HasSubstr("an older sweep's plot")));
  EXPECT_THAT(plot, HasSubstr("all_gather at 1048576 B did not complete"));
  EXPECT_THAT(plot, HasSubstr("<polyline"));
}

TEST_F(SweepFiles, ASweepStoppedAtItsFirstPointWritesNoRows) {
  const int code = sweep({"--system", "n300", "--op", "all_gather", "-b", "64K", "-e", "128K", "--no-data",
                          "--max-sim-time", "1ns"});
  EXPECT_EQ(code, kExitHangOrFault);
  EXPECT_EQ(read_file(csv_), "op,system,n_chips,topology,links,mode,dtype,size_bytes,count,time_us,algbw_GBps,busbw_GBps,"
                        "linkbw_GBps,pct_line_rate,dispatch_us,launch_us,verified,wrong_elements,sim_events\n");
  const json rows = json::parse(read_file(json_));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].at("outcome"), "did not complete");
  EXPECT_EQ(rows[0].at("size_bytes"), 65536);
  const std::string plot = read_file(plot_);
  EXPECT_THAT(plot, HasSubstr("all_gather at 65536 B did not complete"));
  EXPECT_THAT(plot, Not(HasSubstr("<polyline")));
  EXPECT_THAT(plot, Not(HasSubstr("an older sweep's plot")));
}

// A timing-only sweep checks nothing (session 18): its rows said `verified` unknown but
// `wrong_elements` 0, which a script testing `wrong_elements == 0` read as checked and correct,
// where the table prints N/A. Both now say unknown; a checked run keeps its count.
TEST_F(SweepFiles, ATimingOnlySweepClaimsNoCountOfWrongElements) {
  ASSERT_EQ(sweep({"--system", "n300", "--op", "all_gather", "-b", "64K", "-e", "64K", "--no-data"}), kExitOk);
  const std::string csv = read_file(csv_);
  const std::string row = csv.substr(csv.find('\n') + 1);
  // ...,launch_us,verified,wrong_elements,sim_events: both cells empty, the event count kept.
  EXPECT_THAT(row, ::testing::MatchesRegex(".*,[0-9.]+,,,[0-9]+\n")) << row;
  const json no_data = json::parse(read_file(json_));
  ASSERT_EQ(no_data.size(), 1u);
  EXPECT_TRUE(no_data[0].at("verified").is_null());
  EXPECT_TRUE(no_data[0].at("wrong_elements").is_null());
  EXPECT_EQ(no_data[0].at("settings").at("no_data"), true);  // and says it ran timing-only

  ASSERT_EQ(sweep({"--system", "n300", "--op", "all_gather", "-b", "64K", "-e", "64K"}), kExitOk);
  const std::string checked_csv = read_file(csv_);
  EXPECT_THAT(checked_csv.substr(checked_csv.find('\n') + 1), ::testing::MatchesRegex(".*,true,0,[0-9]+\n"));
  const json checked = json::parse(read_file(json_));
  EXPECT_EQ(checked[0].at("verified"), true);
  EXPECT_EQ(checked[0].at("wrong_elements"), 0);
  EXPECT_EQ(checked[0].at("settings").at("no_data"), false);
}

// A link what-if's CSV says so (issue #6, session 11): the table title, --json, --report and --plot
// were marked but the CSV was the default's. Its columns follow the default's, which keep their
// places, so a script reading the default CSV reads a what-if's too; they appear only in a
// what-if's CSV, so the default CSV is the bytes it was.
TEST_F(SweepFiles, AWhatIfSweepsCsvNamesItsLinksAfterTheDefaultColumns) {
  const std::string default_header =
      "op,system,n_chips,topology,links,mode,dtype,size_bytes,count,time_us,algbw_GBps,busbw_GBps,linkbw_GBps,"
      "pct_line_rate,dispatch_us,launch_us,verified,wrong_elements,sim_events";
  ASSERT_EQ(sweep({"--system", "n300", "--op", "all_gather", "-b", "64K", "-e", "128K", "--no-data"}), kExitOk);
  const std::string plain = read_file(csv_);
  EXPECT_EQ(plain.substr(0, plain.find('\n')), default_header);

  ASSERT_EQ(sweep({"--system", "n300", "--op", "all_gather", "-b", "64K", "-e", "128K", "--no-data", "--link-rate",
                   "25GB/s", "--link-latency", "2us"}),
            kExitOk);
  const std::string csv = read_file(csv_);
  std::vector<std::string> lines;
  std::stringstream stream(csv);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 3u) << csv;
  EXPECT_EQ(lines[0], default_header +
                          ",links_off_arch_default,system_links,link_rate_min_GBps,link_rate_max_GBps,"
                          "link_latency_min_ns,link_latency_max_ns,arch_rate_GBps,arch_latency_ns");
  // N300's two ethernet links, both at 25 GB/s and 2 us against the arch's 12.5 GB/s and 600 ns.
  for (std::size_t i = 1; i < lines.size(); ++i) {
    EXPECT_THAT(lines[i], ::testing::StartsWith("all_gather,n300,2,line,1,fabric,bf16,"));
    EXPECT_THAT(lines[i], ::testing::EndsWith(",2,2,25,25,2000,2000,12.5,600")) << lines[i];
  }
  // The default columns keep their places: a what-if row's first 19 cells are read as the default's.
  EXPECT_EQ(std::count(lines[1].begin(), lines[1].end(), ','), std::count(lines[0].begin(), lines[0].end(), ','));
  // -j 2's rows come back from forked points through sweep_point's JSON: the same CSV.
  ASSERT_EQ(sweep({"--system", "n300", "--op", "all_gather", "-b", "64K", "-e", "128K", "--no-data", "--link-rate",
                   "25GB/s", "--link-latency", "2us", "-j", "2"}),
            kExitOk);
  EXPECT_EQ(read_file(csv_), csv);
}

// A per-axis or --chips sweep's rows say what they ran on in their own columns after the default
// ones (the chips as run, in order), with -j 2 as with -j 1; a sweep without either keeps the
// default CSV (above).
TEST_F(SweepFiles, APerAxisOrChipsSweepsCsvNamesWhatEachRowRanOn) {
  const auto lines_of = [](const std::string& csv) {
    std::vector<std::string> lines;
    std::stringstream stream(csv);
    for (std::string line; std::getline(stream, line);) lines.push_back(line);
    return lines;
  };
  ASSERT_EQ(sweep({"--system", "t3k", "--op", "all_gather", "-b", "64K", "-e", "128K", "--no-data", "--cluster-axis",
                   "1"}),
            kExitOk);
  const std::string per_axis = read_file(csv_);
  std::vector<std::string> lines = lines_of(per_axis);
  ASSERT_EQ(lines.size(), 3u) << per_axis;
  EXPECT_THAT(lines[0], ::testing::EndsWith(",sim_events,cluster_axis"));
  for (std::size_t i = 1; i < lines.size(); ++i) {
    EXPECT_THAT(lines[i], ::testing::StartsWith("all_gather,t3k,4,line,"));  // a 4-chip column of the 2x4
    EXPECT_THAT(lines[i], ::testing::EndsWith(",1")) << lines[i];
    EXPECT_EQ(std::count(lines[i].begin(), lines[i].end(), ','), std::count(lines[0].begin(), lines[0].end(), ','));
  }
  ASSERT_EQ(sweep({"--system", "t3k", "--op", "all_gather", "-b", "64K", "-e", "128K", "--no-data", "--cluster-axis",
                   "1", "-j", "2"}),
            kExitOk);
  EXPECT_EQ(read_file(csv_), per_axis);

  ASSERT_EQ(sweep({"--system", "t3k", "--op", "all_gather", "-b", "64K", "-e", "64K", "--no-data", "--chips",
                   "0,4,5,1"}),
            kExitOk);
  const std::string on_chips = read_file(csv_);
  lines = lines_of(on_chips);
  ASSERT_EQ(lines.size(), 2u) << on_chips;
  EXPECT_THAT(lines[0], ::testing::EndsWith(",sim_events,chips"));
  EXPECT_THAT(lines[1], ::testing::StartsWith("all_gather,t3k,4,ring,"));
  EXPECT_THAT(lines[1], ::testing::EndsWith(",0-4-5-1"));
  ASSERT_EQ(sweep({"--system", "t3k", "--op", "all_gather", "-b", "64K", "-e", "64K", "--no-data", "--chips",
                   "0,4,5,1", "-j", "2"}),
            kExitOk);
  EXPECT_EQ(read_file(csv_), on_chips);
}

// The faults a row ran under (a served device's, the only way a sweep runs faulted) in a column
// after the others; a row without faults beside it leaves the cell empty, and a spec that held a
// comma would be quoted rather than shift a column.
TEST(SweepCsv, FaultedRowsNameTheirFaultsInTheLastColumn) {
  RunResult faulted;
  faulted.op = "all_gather";
  faulted.cluster_axis = 0;
  faulted.faults = {"link-down:0-1@2us", "drop:0.01:7"};
  RunResult clean;
  clean.op = "all_gather";
  const CsvColumns columns = csv_columns({faulted, clean});
  EXPECT_FALSE(columns.link_whatif);
  EXPECT_TRUE(columns.cluster_axis);
  EXPECT_FALSE(columns.chips);
  EXPECT_TRUE(columns.faults);
  EXPECT_THAT(csv_header(columns), ::testing::EndsWith(",sim_events,cluster_axis,faults\n"));
  EXPECT_THAT(csv_row(faulted, columns), ::testing::EndsWith(",0,link-down:0-1@2us;drop:0.01:7\n"));
  EXPECT_THAT(csv_row(clean, columns), ::testing::EndsWith(",,\n"));
  faulted.faults = {"a,\"b\""};
  EXPECT_THAT(csv_row(faulted, columns), ::testing::EndsWith(",0,\"a,\"\"b\"\"\"\n"));
  // No column a sweep does not use: the default CSV, as csv_header() writes it.
  EXPECT_EQ(csv_header(csv_columns({clean})), csv_header());
  EXPECT_EQ(csv_row(clean, csv_columns({clean})), csv_row(clean));
}

// The system column holds what --system named: a YAML file's path may hold a comma or a quote,
// which are quoted as the faults column's are rather than shift every column after it (session
// 39's bug bash: `sweep --system c,omma.yaml --csv` wrote 20 cells under a 19-column header).
TEST(SweepCsv, ASystemPathWithACommaIsQuotedNotSplit) {
  RunResult row;
  row.op = "all_gather";
  row.system = "runs/c,\"x\".yaml";
  row.topology = "ring";
  EXPECT_THAT(csv_row(row), ::testing::StartsWith("all_gather,\"runs/c,\"\"x\"\".yaml\",0,ring,"));
  row.system = "t3k";
  EXPECT_THAT(csv_row(row), ::testing::StartsWith("all_gather,t3k,0,ring,"));
}

// A plot of ideal-hardware rows says so in its title, as the table's title does (session 32).
TEST_F(SweepFiles, AnIdealHardwareSweepsPlotSaysSo) {
  ASSERT_EQ(sweep({"--system", "n300", "--op", "all_gather", "-b", "64K", "-e", "128K", "--no-data"}), kExitOk);
  EXPECT_THAT(read_file(plot_), HasSubstr("busbw on n300 (line, 1 link, simulated)"));
  ASSERT_EQ(sweep({"--system", "n300", "--op", "all_gather", "-b", "64K", "-e", "128K", "--no-data", "--hardware",
                   "ideal"}),
            kExitOk);
  EXPECT_THAT(read_file(plot_), HasSubstr("busbw on n300 (line, 1 link, simulated on ideal hardware)"));
}

// Ideal hardware (--hardware ideal, session 32) in two columns after the others: which hardware
// and REFERENCE 10's alpha-beta time (empty for an op without a row), so a CSV of ideal rows is
// never mistaken for the modelled chip's; a modelled sweep's CSV keeps its columns.
TEST(SweepCsv, IdealHardwareRowsSayItAndTheirAlphaBetaTime) {
  RunResult ideal;
  ideal.op = "all_gather";
  ideal.hardware = "ideal";
  ideal.alpha_beta = AlphaBetaTime{.latency_us = 4.2, .bandwidth_us = 36.7};
  RunResult no_row = ideal;
  no_row.op = "broadcast";
  no_row.alpha_beta.reset();
  const CsvColumns columns = csv_columns({ideal, no_row});
  EXPECT_TRUE(columns.hardware);
  EXPECT_THAT(csv_header(columns), ::testing::EndsWith(",sim_events,hardware,alpha_beta_us\n"));
  EXPECT_THAT(csv_row(ideal, columns), ::testing::EndsWith(",ideal,40.900\n"));
  EXPECT_THAT(csv_row(no_row, columns), ::testing::EndsWith(",ideal,\n"));
  RunResult modelled;
  modelled.op = "all_gather";
  EXPECT_FALSE(csv_columns({modelled}).hardware);
  EXPECT_EQ(csv_header(csv_columns({modelled})), csv_header());
}

// --max-wall in a sweep is per point, as run's is per run and the sweep's --max-sim-time per point
// (session 11): a point past it stops the sweep with its report, exit 3, and the files hold the
// rows before it, with -j N as with -j 1. A limit of 1 ns is past before any point's first poll.
TEST_F(SweepFiles, MaxWallStopsTheSweepAtAPointWithItsReportAndFiles) {
  for (const char* jobs : {"1", "2"}) {
    SCOPED_TRACE(std::string("-j ") + jobs);
    const int code = sweep({"--system", "n300", "--op", "all_gather", "-b", "64K", "-e", "128K", "--no-data",
                            "--max-wall", "1e-9", "-j", jobs});
    EXPECT_EQ(code, kExitHangOrFault);
    const std::string csv = read_file(csv_);
    EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1) << csv;  // the header alone
    const json rows = json::parse(read_file(json_));
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].at("outcome"), "did not complete");
    EXPECT_EQ(rows[0].at("size_bytes"), 65536);
    EXPECT_THAT(rows[0].at("error").get<std::string>(), HasSubstr("the wall-time limit of"));
    EXPECT_THAT(read_file(plot_), HasSubstr("all_gather at 65536 B did not complete"));
  }
}

// The stopped point's entry says how it was simulated, as a completed row does (session 28), with
// -j N (through sweep_point's JSON) as with -j 1: the Galaxy's 4 rows, 3 mirroring row 0.
TEST_F(SweepFiles, TheStoppedPointSaysHowManyGroupsWereMirrored) {
  for (const char* jobs : {"1", "2"}) {
    SCOPED_TRACE(std::string("-j ") + jobs);
    const int code = sweep({"--system", "galaxy", "--cluster-axis", "1", "--op", "all_gather", "-b", "1M", "-e", "1M",
                            "--no-data", "--max-sim-time", "20us", "-j", jobs});
    EXPECT_EQ(code, kExitHangOrFault);
    const json rows = json::parse(read_file(json_));
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].at("outcome"), "did not complete");
    EXPECT_EQ(rows[0].at("groups_mirrored"), 3);
  }
}

TEST_F(SweepFiles, MaxWallThatIsNotAPositiveNumberIsAUsageError) {
  EXPECT_THROW(sweep({"--system", "n300", "--op", "all_gather", "--max-wall", "0"}), UsageError);
  EXPECT_EQ(read_file(csv_), "op,size_bytes,time_us\nall_gather,65536,12.5\n");  // nothing ran, nothing written
}

}  // namespace
}  // namespace cclmesh::cli
