// `cclmesh run`'s output files when the op does not complete (Review, session 10): a run that
// hangs or faults (exit 3) must not leave an older run's --json or --report in place, where a
// script or a reader would take it for this run's; both say the op did not complete and why.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

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
using nlohmann::json;

using testing_util::read_file;
using testing_util::run_cli;
using testing_util::TempDirTest;

using RunFiles = TempDirTest;

TEST_F(RunFiles, AHangReplacesAnOlderRunsJsonAndReport) {
  const fs::path json_path = dir_ / "result.json";
  const fs::path report_path = dir_ / "report.html";
  std::ofstream(json_path) << R"({"op":"all_gather","time_us":12.5,"verified":true})";
  std::ofstream(report_path) << "<html>an older run's report</html>";
  // The T3K's only 8-chip ring crosses both down links (it runs as a line around one): the op
  // cannot run (exit 3).
  const int code = run_cli({"run", "--system", "t3k", "--op", "all_gather", "--size", "256KiB", "--fault",
                            "link-down:0-2", "--fault", "link-down:6-7", "--json", json_path.string(), "--report",
                            report_path.string()});
  EXPECT_EQ(code, kExitHangOrFault);
  const json j = json::parse(read_file(json_path));
  EXPECT_EQ(j.at("outcome"), "did not complete");
  EXPECT_EQ(j.at("op"), "all_gather");
  EXPECT_EQ(j.at("system"), "t3k");
  EXPECT_FALSE(j.contains("time_us"));
  EXPECT_THAT(j.at("error").get<std::string>(), HasSubstr("link-down:0-2"));
  EXPECT_EQ(j.at("faults"), json::array({"link-down:0-2", "link-down:6-7"}));
  EXPECT_EQ(j.at("settings").at("seed"), 1);
  const std::string report = read_file(report_path);
  EXPECT_THAT(report, HasSubstr("did not complete"));
  EXPECT_THAT(report, HasSubstr("link-down:0-2"));
  EXPECT_THAT(report, ::testing::Not(HasSubstr("an older run's report")));
}

// A timing-only run along an axis that did not complete says how it was simulated, as a
// completed one does (session 28): the Galaxy's rows are identical, 3 of the 4 took row 0's
// figures and stopped where it did; a fault makes every chip run (0); a run whose op never
// reached a device (the T3K ring cut twice above) says nothing of it.
TEST_F(RunFiles, AnIncompleteRunSaysHowManyGroupsWereMirrored) {
  const fs::path json_path = dir_ / "result.json";
  const std::vector<std::string> axis_run = {"run", "--system", "galaxy", "--op", "all_gather", "--size", "1MiB",
                                             "--cluster-axis", "1", "--no-data", "--max-sim-time", "20us",
                                             "--json", json_path.string()};
  EXPECT_EQ(run_cli(axis_run), kExitHangOrFault);
  const json mirrored = json::parse(read_file(json_path));
  EXPECT_EQ(mirrored.at("outcome"), "did not complete");
  EXPECT_EQ(mirrored.at("groups_mirrored"), 3);
  EXPECT_THAT(mirrored.at("error").get<std::string>(), HasSubstr("3 other groups mirror them"));

  std::vector<std::string> every_group = axis_run;
  every_group.push_back("--simulate-every-group");
  EXPECT_EQ(run_cli(every_group), kExitHangOrFault);
  EXPECT_EQ(json::parse(read_file(json_path)).at("groups_mirrored"), 0);

  EXPECT_EQ(run_cli({"run", "--system", "t3k", "--op", "all_gather", "--size", "256KiB", "--fault", "link-down:0-2",
                     "--fault", "link-down:6-7", "--json", json_path.string()}),
            kExitHangOrFault);
  EXPECT_FALSE(json::parse(read_file(json_path)).contains("groups_mirrored"));
}

TEST_F(RunFiles, ACompletedRunSaysSo) {
  const fs::path json_path = dir_ / "result.json";
  const int code = run_cli({"run", "--system", "n300", "--op", "all_gather", "--size", "64KiB", "--json",
                            json_path.string()});
  EXPECT_EQ(code, kExitOk);
  const json j = json::parse(read_file(json_path));
  EXPECT_EQ(j.at("outcome"), "completed");
  EXPECT_GT(j.at("time_us").get<double>(), 0.0);
}

// A run's --json says which simulator options it ran with (session 19): two n300 runs that
// differed only in --erisc-unreserved-kib (a what-if) and --fabric-payload wrote JSON with the
// same keys and values but the time, so a results table could not tell them apart.
TEST_F(RunFiles, TheJsonRecordsTheSimulatorOptionsTheRunTook) {
  const fs::path json_path = dir_ / "result.json";
  ASSERT_EQ(run_cli({"run", "--system", "n300", "--op", "all_gather", "--size", "64KiB", "--no-data",
                     "--erisc-unreserved-kib", "106", "--fabric-payload", "6144", "--json", json_path.string()}),
            kExitOk);
  const json s = json::parse(read_file(json_path)).at("settings");
  EXPECT_EQ(s.at("erisc_unreserved_bytes"), 106 * 1024);
  EXPECT_EQ(s.at("fabric_payload_bytes"), 6144);
  EXPECT_EQ(s.at("no_data"), true);
  EXPECT_TRUE(s.at("cluster_axis").is_null());
  EXPECT_TRUE(s.at("workers_per_link").is_null());  // the op's default
  EXPECT_EQ(s.at("rs_line_algorithm"), "two_sided");

  ASSERT_EQ(run_cli({"run", "--system", "t3k", "--op", "all_gather", "--size", "64KiB", "--no-data",
                     "--cluster-axis", "0", "--json", json_path.string()}),
            kExitOk);
  const json d = json::parse(read_file(json_path)).at("settings");
  EXPECT_EQ(d.at("erisc_unreserved_bytes"), 150 * 1024);  // the default, written out
  EXPECT_EQ(d.at("fabric_payload_bytes"), 4352);
  EXPECT_EQ(d.at("cluster_axis"), 0);
  EXPECT_EQ(d.at("root"), 0);  // the default, written out

  // --root changes a reduce's result (which chip holds it): recorded too (it was nowhere in the JSON).
  ASSERT_EQ(run_cli({"run", "--system", "t3k", "--op", "reduce", "--size", "64KiB", "--no-data", "--root", "3",
                     "--json", json_path.string()}),
            kExitOk);
  EXPECT_EQ(json::parse(read_file(json_path)).at("settings").at("root"), 3);
}

// A hang's trace says why (otherData.error: the hang report) and shows each injected fault's
// effect where it happened: a global instant event per fault record (here the frame the drop
// fault lost at 4.323 us, which leaves a router handshake waiting).
TEST_F(RunFiles, AHangsTraceCarriesTheReportAndTheFaults) {
  const fs::path trace_path = dir_ / "hang.json";
  const int code = run_cli({"run", "--system", "t3k", "--op", "all_gather", "--size", "256KiB", "--fault",
                            "drop:0.01:3", "--trace", trace_path.string()});
  EXPECT_EQ(code, kExitHangOrFault);
  const json j = json::parse(read_file(trace_path));
  EXPECT_EQ(j.at("otherData").at("outcome"), "did not complete");
  EXPECT_THAT(j.at("otherData").at("error").get<std::string>(), HasSubstr("hang at"));
  std::vector<json> instants;
  for (const json& e : j.at("traceEvents")) {
    if (e.at("ph") == "i") instants.push_back(e);
  }
  ASSERT_EQ(instants.size(), 1u);
  EXPECT_THAT(instants[0].at("name").get<std::string>(), HasSubstr("lost: injected frame loss"));
  EXPECT_EQ(instants[0].at("s"), "g");
  EXPECT_EQ(instants[0].at("ts"), 4.322894);  // the report's "at 4.323 us", to the picosecond
  EXPECT_THAT(instants[0].at("args").at("place").get<std::string>(), HasSubstr("chip 7 eth channel 0"));
}

// An unwritable output path is refused before the simulation runs: here the run would stop at
// --max-sim-time (exit 3) if it were simulated first, and a long run would be lost.
TEST_F(RunFiles, ABadOutputPathIsRefusedBeforeSimulating) {
  for (const char* option : {"--json", "--trace", "--report"}) {
    const std::string path = (dir_ / "no_such_dir" / "out").string();
    try {
      run_cli({"run", "--system", "n300", "--op", "all_gather", "--size", "64KiB", "--max-sim-time", "1ns", option,
               path});
      ADD_FAILURE() << option << ": the bad path was not refused";
    } catch (const UsageError& e) {
      EXPECT_THAT(e.what(), HasSubstr(option));
      EXPECT_THAT(e.what(), HasSubstr(path));
    }
  }
  EXPECT_TRUE(fs::is_empty(dir_));
}

}  // namespace
}  // namespace cclmesh::cli
