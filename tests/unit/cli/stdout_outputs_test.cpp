// Outputs given "-" (standard output): stdout then carries that output alone, so a pipe reads
// one document. Bug bash, session 28: `topo --svg - --dot -` printed the SVG, the dot file and
// the text summary one after the other, `topo --svg -` the SVG followed by the summary, and
// `sweep --plot -` the table followed by the SVG (only --json - / --csv - / --save - / --trace -
// were single).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/unit/cli/cli_test_util.hpp"
#include "tools/cclmesh/cli_error.hpp"
#include "tools/cclmesh/commands.hpp"
#include "tools/cclmesh/output_file.hpp"
#include "topologies/export_dot.hpp"
#include "topologies/export_svg.hpp"
#include "topologies/system_loader.hpp"

namespace cclmesh::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using testing_util::run_cli_output;

std::string usage_error_of(const std::vector<std::string>& args) {
  try {
    run_cli_output(args);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no usage error)";
}

TEST(StdoutOutputs, TwoOutputsOnStdoutAreRefusedNamingBoth) {
  EXPECT_EQ(usage_error_of({"topo", "--system", "n300", "--svg", "-", "--dot", "-"}),
            "--dot: '-' (stdout) cannot be used together with --svg -; write one of them to a file");
  EXPECT_EQ(usage_error_of({"topo", "--system", "n300", "--json", "-", "--svg", "-"}),
            "--json: '-' (stdout) cannot be used together with --svg -; write one of them to a file");
  EXPECT_EQ(usage_error_of({"sweep", "--system", "n300", "--op", "all_gather", "-b", "64K", "-e", "64K", "--no-data",
                            "--csv", "-", "--plot", "-"}),
            "--plot: '-' (stdout) cannot be used together with --csv -; write one of them to a file");
  EXPECT_EQ(usage_error_of({"sweep", "--system", "n300", "--op", "all_gather", "-b", "64K", "-e", "64K", "--no-data",
                            "--json", "-", "--plot", "-"}),
            "--plot: '-' (stdout) cannot be used together with --json -; write one of them to a file");
}

TEST(StdoutOutputs, RequireDistinctOutputsRefusesTwoStdouts) {
  EXPECT_NO_THROW(require_distinct_outputs({{"-", "--csv"}, {"", "--json"}, {"p.svg", "--plot"}}));
  EXPECT_THROW(require_distinct_outputs({{"-", "--csv"}, {"a.json", "--json"}, {"-", "--plot"}}), UsageError);
}

TEST(StdoutOutputs, TopoDrawingOnStdoutIsAlone) {
  const topo::Topology n300 = topo::load_system("n300");
  const auto [svg_exit, svg] = run_cli_output({"topo", "--system", "n300", "--svg", "-"});
  EXPECT_EQ(svg_exit, kExitOk);
  EXPECT_EQ(svg, topo::to_svg(n300) + (topo::to_svg(n300).back() == '\n' ? "" : "\n"));
  const auto [dot_exit, dot] = run_cli_output({"topo", "--system", "n300", "--dot", "-"});
  EXPECT_EQ(dot_exit, kExitOk);
  EXPECT_EQ(dot, topo::to_dot(n300) + (topo::to_dot(n300).back() == '\n' ? "" : "\n"));
}

TEST(StdoutOutputs, SweepPlotOnStdoutIsAlone) {
  const auto [exit_code, printed] = run_cli_output(
      {"sweep", "--system", "n300", "--op", "all_gather", "-b", "64K", "-e", "128K", "--no-data", "--plot", "-"});
  EXPECT_EQ(exit_code, kExitOk);
  EXPECT_THAT(printed, StartsWith("<svg"));
  EXPECT_THAT(printed, Not(HasSubstr("# cclmesh: all_gather")));
}

}  // namespace
}  // namespace cclmesh::cli
