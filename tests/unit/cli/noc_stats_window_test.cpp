// The NoC usage diagnostic (CCLMESH_NOC_STATS, its chip refused before the run when it names none
// of the system) and its window (CCLMESH_NOC_STATS_WINDOW, tools/cclmesh/noc_usage_dump.hpp):
// a server sums exactly the part of each packet's service inside the window, the variable's
// value is parsed or refused with one line naming it, and arming it changes no simulated figure
// of a run while printing the window's figures.
#include <CLI/CLI.hpp>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <regex>
#include <string>
#include <vector>

#include "sim/model/packet_resource.hpp"
#include "tools/cclmesh/cli_error.hpp"
#include "tools/cclmesh/commands.hpp"
#include "tools/cclmesh/noc_usage_dump.hpp"
#include "tools/cclmesh/op_runner.hpp"

namespace cclmesh::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using sim::SimTime;

// Restores the variables whatever a test does.
class NocStatsWindow : public ::testing::Test {
 protected:
  void TearDown() override {
    unsetenv("CCLMESH_NOC_STATS");
    unsetenv("CCLMESH_NOC_STATS_WINDOW");
  }
};

SimTime ns(std::int64_t n) { return SimTime::from_ns(n); }

RunOptions all_gather(const char* system, std::uint64_t size_bytes, const char* topology) {
  RunOptions o;
  o.system = system;
  o.op = CollectiveOp::AllGather;
  o.size_bytes = size_bytes;
  o.topology = topology;
  return o;
}

TEST_F(NocStatsWindow, ServerSumsOnlyTheServiceInsideTheWindow) {
  const sim::BusyWindow window{ns(100), ns(200)};
  sim::PacketResource server;
  // [50, 130): 30 ns inside; the server is then free at 130.
  sim::pass_through(server, ns(80), sim::PacketFront::at(ns(50)), 64, window);
  EXPECT_EQ(server.busy_in_window, ns(30));
  // Queued behind the first: served [130, 150), all inside.
  sim::pass_through(server, ns(20), sim::PacketFront::at(ns(120)), 64, window);
  EXPECT_EQ(server.busy_in_window, ns(50));
  // [190, 240): 10 ns inside.
  sim::pass_through(server, ns(50), sim::PacketFront::at(ns(190)), 64, window);
  EXPECT_EQ(server.busy_in_window, ns(60));
  // After the window: nothing more.
  sim::pass_through(server, ns(10), sim::PacketFront::at(ns(300)), 64, window);
  EXPECT_EQ(server.busy_in_window, ns(60));
  // The total is the packets' whole serialisation, window or not.
  EXPECT_EQ(server.busy, ns(160));
}

TEST_F(NocStatsWindow, NoWindowSumsNothing) {
  sim::PacketResource server;
  sim::pass_through(server, ns(80), sim::PacketFront::at(ns(50)), 64, sim::BusyWindow{});
  EXPECT_EQ(server.busy_in_window, SimTime::zero());
  EXPECT_EQ(server.busy, ns(80));
}

TEST_F(NocStatsWindow, ParsesMicroseconds) {
  const sim::BusyWindow w = parse_busy_window("300:700.5");
  EXPECT_EQ(w.begin, SimTime::from_us(300));
  EXPECT_EQ(w.end, SimTime::from_ps(700'500'000));
}

TEST_F(NocStatsWindow, RefusesBadValuesNamingTheVariable) {
  for (const char* bad : {"", "300", "300:", ":700", "700:300", "300:300", "-1:5", "a:b", "1:2:3", "1e300:1e301"}) {
    try {
      parse_busy_window(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const UsageError& e) {
      EXPECT_THAT(e.what(), HasSubstr("CCLMESH_NOC_STATS_WINDOW="));
      EXPECT_THAT(e.what(), HasSubstr("<begin_us>:<end_us>"));
    }
  }
}

// CCLMESH_NOC_STATS that names no chip of the system is refused before the run (session 18):
// it printed one line after simulating the whole op and exited 0.
TEST_F(NocStatsWindow, AChipThatIsNotOfTheSystemIsRefusedBeforeTheRun) {
  const RunOptions o = all_gather("n300", 64 << 10, "line");
  for (const char* bad : {"abc", "2", "-1", "", "0x1", "1 "}) {
    setenv("CCLMESH_NOC_STATS", bad, 1);
    try {
      run_collective(o);
      ADD_FAILURE() << "ran with CCLMESH_NOC_STATS='" << bad << "'";
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()),
                std::string("CCLMESH_NOC_STATS=") + bad + ": not a chip of n300; expected a chip id (0, 1)");
    }
  }
  setenv("CCLMESH_NOC_STATS", "1", 1);
  ::testing::internal::CaptureStderr();
  EXPECT_NO_THROW(run_collective(o));
  EXPECT_THAT(::testing::internal::GetCapturedStderr(), HasSubstr("chip 1 NoC use"));
}

// A sweep checks the variable once, before its points: each point used to be run up to the check
// and skipped with the same note (review, session 18).
TEST_F(NocStatsWindow, ASweepRefusesAChipThatIsNotOfTheSystemBeforeItsPoints) {
  setenv("CCLMESH_NOC_STATS", "7", 1);
  CLI::App app;
  CommandOutcome outcome;
  register_commands(app, outcome);
  std::vector<std::string> args = {"cclmesh", "sweep", "--system", "n300", "-b", "64KiB", "-e", "256KiB"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  ::testing::internal::CaptureStdout();
  std::string error;
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const UsageError& e) {
    error = e.what();
  }
  const std::string printed = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(error, "CCLMESH_NOC_STATS=7: not a chip of n300; expected a chip id (0, 1)");
  // No point was run and skipped: the sweep stopped before its first.
  EXPECT_THAT(printed, Not(HasSubstr("skipped")));
}

TEST_F(NocStatsWindow, ArmedWindowPrintsItsFiguresAndChangesNoResult) {
  RunOptions o = all_gather("t3k", 1 << 20, "ring");
  o.no_data = true;
  const RunResult plain = run_collective(o);

  setenv("CCLMESH_NOC_STATS", "0", 1);
  setenv("CCLMESH_NOC_STATS_WINDOW", "20:40", 1);
  ::testing::internal::CaptureStderr();
  const RunResult windowed = run_collective(o);
  const std::string printed = ::testing::internal::GetCapturedStderr();

  EXPECT_EQ(windowed.time_us, plain.time_us);
  EXPECT_EQ(windowed.sim_events, plain.sim_events);
  EXPECT_EQ(windowed.trace_hash, plain.trace_hash);
  EXPECT_THAT(printed, HasSubstr("chip 0 busy inside the window 20.00..40.00 us (20.00 us)"));
  // Of chip 0's six wires only its two on the 1-link ring (to chips 2 and 4) carry data in the
  // window, each for at most all of it.
  const std::regex wire_line(R"(-> chip (\d+) channel \d+: ERISC [0-9.]+ us \(\d+%\), wire ([0-9.]+) us)");
  std::vector<int> busy_peers;
  int wires = 0;
  for (auto it = std::sregex_iterator(printed.begin(), printed.end(), wire_line); it != std::sregex_iterator(); ++it) {
    const double wire_us = std::stod((*it)[2]);
    EXPECT_LE(wire_us, 20.0);
    if (wire_us > 0) busy_peers.push_back(std::stoi((*it)[1]));
    ++wires;
  }
  EXPECT_EQ(wires, 6);
  EXPECT_THAT(busy_peers, ::testing::UnorderedElementsAre(2, 4));
  // Per kernel of chip 0: its waits inside the window, which add up to at most the time it was
  // alive in it, itself at most the window. The relay's readers wait on read barriers, the
  // routers for L1 activity.
  EXPECT_THAT(printed, HasSubstr("kernels: time blocked inside the window"));
  const std::regex kernel_line(R"(    chip 0 core \(\d+,\d+\) \[[^\]]+\] (\w+) \(([0-9.]+) us alive\): ([^\n]*))");
  const std::regex wait_part(R"(([A-Za-z_ 0-9]+) ([0-9.]+) us \(\d+%\))");
  int kernels = 0;
  bool reader_waits_on_reads = false;
  bool router_waits_for_l1 = false;
  for (auto it = std::sregex_iterator(printed.begin(), printed.end(), kernel_line); it != std::sregex_iterator(); ++it) {
    ++kernels;
    const double alive_us = std::stod((*it)[2]);
    EXPECT_LE(alive_us, 20.0 + 1e-9) << (*it)[0];
    const std::string waits = (*it)[3];
    double blocked_us = 0;
    for (auto w = std::sregex_iterator(waits.begin(), waits.end(), wait_part); w != std::sregex_iterator(); ++w) {
      blocked_us += std::stod((*w)[2]);
      reader_waits_on_reads |= (*it)[1] == "ccl_interpreter" && (*w)[1].str().find("read barrier") != std::string::npos;
      router_waits_for_l1 |= (*it)[1] == "fabric_router" && (*w)[1].str().find("L1 activity") != std::string::npos;
    }
    EXPECT_LE(blocked_us, alive_us + 0.1 + 1e-9) << (*it)[0];  // each figure rounded to 0.1 us
  }
  EXPECT_GE(kernels, 4);
  EXPECT_TRUE(reader_waits_on_reads) << printed;
  EXPECT_TRUE(router_waits_for_l1) << printed;
  // The window was the run's own (its chips'): a later run in this process without the variable
  // measures and prints none.
  unsetenv("CCLMESH_NOC_STATS_WINDOW");
  ::testing::internal::CaptureStderr();
  const RunResult after = run_collective(o);
  const std::string printed_after = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(after.time_us, plain.time_us);
  EXPECT_THAT(printed_after, HasSubstr("chip 0 NoC use"));
  EXPECT_THAT(printed_after, ::testing::Not(HasSubstr("busy inside the window")));
}

}  // namespace
}  // namespace cclmesh::cli
