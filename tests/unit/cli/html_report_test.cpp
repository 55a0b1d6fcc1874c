// The --report page of a run with a link taken down by --fault: the down edge is drawn as down,
// not as the idle grey of an edge the op did not need, and the page names the faults, as the
// table's "# faults" line does. Built from a result by hand: no simulation needed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "tools/cclmesh/html_report.hpp"
#include "topologies/system_loader.hpp"

namespace cclmesh::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// T3K's line re-embedded around 0-2 (README): edges 0-2 (down) and 0-1 (not on the line) both
// carried nothing, edge 0-4 carried the op.
RunResult t3k_line_result(std::vector<std::string> faults) {
  RunResult r;
  r.op = "all_gather";
  r.system = "t3k";
  r.n_chips = 8;
  r.topology = "line";
  r.mode = "fabric";
  r.time_us = 23.98;
  r.line_rate_GBps = 12.5;
  r.links_used = {{0, 6, 2, 6, 0, 0, 0.0}, {2, 6, 0, 6, 0, 0, 0.0}, {0, 14, 1, 14, 0, 0, 0.0},
                  {1, 14, 0, 14, 0, 0, 0.0}, {0, 8, 4, 0, 35360, 3'640'000, 0.152}};
  r.faults = std::move(faults);
  if (!r.faults.empty()) r.fabric_order = "0-4-5-1-3-2-6-7";
  return r;
}

TEST(HtmlReport, ALinkDownIsDrawnDownNotIdleAndTheFaultsAreNamed) {
  const topo::Topology t3k = topo::load_system("t3k");
  const std::string page = html_report(t3k_line_result({"link-down:0-2"}), t3k);
  EXPECT_THAT(page, HasSubstr("faults: link-down:0-2; fabric chips in order: 0-4-5-1-3-2-6-7"));
  // Both lanes of 0-2, and no other, in the down colour, each saying so on hover.
  EXPECT_EQ(count(page, "stroke=\"#000000\""), 2u);
  EXPECT_EQ(count(page, "<title>link-down:0-2: every link down from the start"), 2u);
  EXPECT_THAT(page, HasSubstr(">down</text>"));  // the legend's swatch
  // 0-1 was idle, and stays drawn as idle.
  EXPECT_THAT(page, HasSubstr("<title>chip 0 to chip 1: busiest link 0.0%, 0 of 1 link used"));
}

TEST(HtmlReport, WithoutFaultsNothingIsDrawnDown) {
  const topo::Topology t3k = topo::load_system("t3k");
  const std::string page = html_report(t3k_line_result({}), t3k);
  EXPECT_THAT(page, Not(HasSubstr("faults:")));
  EXPECT_THAT(page, Not(HasSubstr("#000000")));
  EXPECT_THAT(page, Not(HasSubstr(">down<")));
}

TEST(HtmlReport, AFaultThatTakesNoLinkDownIsNamedButDrawsNothingDown) {
  const topo::Topology t3k = topo::load_system("t3k");
  const std::string page = html_report(t3k_line_result({"link-slow:0-2:0.5"}), t3k);
  EXPECT_THAT(page, HasSubstr("faults: link-slow:0-2:0.5"));
  EXPECT_THAT(page, Not(HasSubstr("#000000")));
}

// On ideal hardware the page says so and holds the run against its alpha-beta time, as the
// table's note does (session 32's review: the page said "ideal hardware" only).
TEST(HtmlReport, AnIdealHardwareRunIsHeldAgainstItsAlphaBetaTime) {
  const topo::Topology t3k = topo::load_system("t3k");
  RunResult r = t3k_line_result({});
  r.hardware = "ideal";
  r.alpha_beta = AlphaBetaTime{4.2, 18.35};
  const std::string page = html_report(r, t3k);
  EXPECT_THAT(page, HasSubstr(", ideal hardware, "));
  EXPECT_THAT(page, HasSubstr("alpha-beta (REFERENCE 10, a pipelined line): 22.55 us = 4.20 us latency + 18.35 us "
                              "on the links; this run on ideal hardware took 1.063x that"));
  EXPECT_THAT(html_report(t3k_line_result({}), t3k), Not(HasSubstr("alpha-beta")));
}

// The page of a run that did not complete names the exit code the run ends with: 3 for a hang or
// fault, 4 for a served device that failed mid-run (session 31: it said 3 for both).
TEST(HtmlReport, AnIncompleteRunsPageNamesItsExitCode) {
  const std::string hang = html_incomplete_report("cclmesh run: all_gather on t3k", "hang: ...", 3);
  EXPECT_THAT(hang, HasSubstr("did not complete (exit code 3)"));
  const std::string failed = html_incomplete_report("cclmesh run: all_gather on t3k", "the served device failed: ...", 4);
  EXPECT_THAT(failed, HasSubstr("did not complete (exit code 4)"));
  EXPECT_THAT(failed, Not(HasSubstr("exit code 3")));
}

}  // namespace
}  // namespace cclmesh::cli
