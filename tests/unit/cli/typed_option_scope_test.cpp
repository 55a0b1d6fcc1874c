// An option that applies to some ops, topologies or modes only is refused when typed for another,
// whatever its value. Until session 31 the checks compared values with the defaults, so
// `run --op all_gather --root 3` exited 2 while `--root 0` (the default, typed) ran, and so did
// `--ag-ring-algorithm auto --op reduce` and the other algorithm options at their defaults.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/unit/cli/cli_test_util.hpp"
#include "tools/cclmesh/cli_error.hpp"

namespace cclmesh::cli {
namespace {

using testing_util::run_cli;
using ::testing::HasSubstr;

// The UsageError `cclmesh <args>` ends with (exit 2 from main), or "" when it ran.
std::string refusal(std::vector<std::string> args) {
  try {
    run_cli(std::move(args));
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

std::vector<std::string> run_args(const std::string& op, std::vector<std::string> extra) {
  std::vector<std::string> args{"run", "--system", "t3k", "--op", op, "--size", "64KiB", "--no-data"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

TEST(TypedOptionScope, RootZeroTypedForAnOpWithoutARootIsRefusedAsAnyRootIs) {
  EXPECT_EQ(refusal(run_args("all_gather", {"--root", "0"})),
            "--root: 0 given for all_gather; --root applies to --op reduce");
  EXPECT_EQ(refusal(run_args("all_gather", {"--root", "3"})),
            "--root: 3 given for all_gather; --root applies to --op reduce");
  EXPECT_EQ(refusal(run_args("reduce", {"--root", "0"})), "");
  EXPECT_EQ(refusal(run_args("reduce", {})), "");
}

TEST(TypedOptionScope, SweepRefusesRootZeroForAnOpWithoutARoot) {
  // Every point is skipped for the same reason, so the sweep is bad input (exit 2).
  EXPECT_EQ(refusal({"sweep", "--system", "t3k", "--op", "all_gather", "-b", "64KiB", "-e", "64KiB", "--no-data",
                     "--root", "0"}),
            "--root: 0 given for all_gather; --root applies to --op reduce");
}

TEST(TypedOptionScope, AlgorithmOptionsAtTheirDefaultsTypedForAnotherOpAreRefused) {
  struct Case {
    std::string op;
    std::vector<std::string> option;
    std::string message;
  };
  const std::vector<Case> cases{
      {"all_gather", {"--all-reduce-algo", "auto"}, "--all-reduce-algo: 'auto' given for all_gather; it applies to --op all_reduce"},
      {"reduce", {"--ag-ring-algorithm", "auto"}, "--ag-ring-algorithm: 'auto' asked for reduce; it applies to all_gather and all_reduce"},
      {"all_gather", {"--rs-line-algorithm", "two_sided"}, "--rs-line-algorithm: 'two_sided' given for all_gather"},
      {"reduce_scatter", {"--topology", "line", "--rs-ring-algorithm", "auto"}, "--rs-ring-algorithm: 'auto' given for reduce_scatter on a line"},
      {"all_reduce", {"--all-reduce-algo", "composite", "--rs-ring-algorithm", "auto"}, "--rs-ring-algorithm: 'auto' given with --all-reduce-algo composite"},
      {"all_gather", {"--bcast-ring-algorithm", "auto"}, "--bcast-ring-algorithm: 'auto' given for all_gather on a ring"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op + " " + c.option.front());
    EXPECT_THAT(refusal(run_args(c.op, c.option)), HasSubstr(c.message));
  }
}

TEST(TypedOptionScope, AlgorithmOptionsAtTheirDefaultsRunWhereTheyApply) {
  EXPECT_EQ(refusal(run_args("all_reduce", {"--all-reduce-algo", "auto", "--ag-ring-algorithm", "auto",
                                            "--rs-ring-algorithm", "auto"})),
            "");
  EXPECT_EQ(refusal(run_args("reduce_scatter", {"--topology", "line", "--rs-line-algorithm", "two_sided"})), "");
  EXPECT_EQ(refusal(run_args("broadcast", {"--bcast-ring-algorithm", "auto"})), "");
}

}  // namespace
}  // namespace cclmesh::cli
