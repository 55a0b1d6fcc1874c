// `run --trace-limit N` without --trace is refused, as --device-wait without --device is, rather
// than ignored (bug bash, session 28: `run ... --trace-limit 100` ran, exit 0, and wrote no trace,
// so a forgotten --trace went unnoticed).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/unit/cli/cli_test_util.hpp"
#include "tools/cclmesh/cli_error.hpp"

namespace cclmesh::cli {
namespace {

using testing_util::run_cli;
using testing_util::TempDirTest;

using TraceLimit = TempDirTest;

TEST_F(TraceLimit, WithoutTraceIsRefused) {
  try {
    run_cli({"run", "--system", "n300", "--op", "all_gather", "--size", "64K", "--no-data", "--trace-limit", "100"});
    FAIL() << "--trace-limit without --trace was accepted";
  } catch (const CLI::ParseError& e) {
    EXPECT_EQ(std::string(e.what()), "--trace-limit requires --trace");
  }
}

TEST_F(TraceLimit, WithTraceKeepsThatManySpans) {
  const std::filesystem::path trace = dir_ / "t.json";
  EXPECT_EQ(run_cli({"run", "--system", "n300", "--op", "all_gather", "--size", "64K", "--no-data", "--trace",
                     trace.string(), "--trace-limit", "3"}),
            kExitOk);
  EXPECT_THAT(testing_util::read_file(trace), ::testing::HasSubstr("\"max_spans_per_track\":3"));
}

}  // namespace
}  // namespace cclmesh::cli
