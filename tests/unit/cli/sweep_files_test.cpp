// `cclmesh sweep`'s output files when a point does not complete (Review, session 10, left): the
// sweep ends with exit 3, and --csv, --json and --plot hold the rows that completed, --json also
// the point that did not ("outcome": "did not complete", as run's --json), so an older sweep's
// files are never left in place for a script to read as this one's.
#include <CLI/CLI.hpp>
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

}  // namespace
}  // namespace cclmesh::cli
