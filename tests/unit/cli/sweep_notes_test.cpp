// A sweep's table carries the notes `run` prints under its row (bug bash, session 31): a point
// whose all_reduce fell back to the composite (up to 10x slower) says why, as `run` says it,
// where the sweep's row was bare and the slow point unexplained.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "tests/unit/cli/cli_test_util.hpp"

namespace cclmesh::cli {
namespace {

using ::testing::HasSubstr;
using testing_util::run_cli_output;

// 257 pages of 2048 B: not a multiple of the 8 chips, and past the one-shot's L1.
const std::string kFallBackBytes = "526336";

TEST(SweepNotes, AFallenBackPointSaysWhyUnderItsRowAsRunDoes) {
  const auto [run_exit, run_out] = run_cli_output(
      {"run", "--system", "t3k", "--op", "all_reduce", "--size", kFallBackBytes, "--no-data"});
  ASSERT_EQ(run_exit, 0);
  const std::size_t note_at = run_out.find("# all_reduce ran composite (--all-reduce-algo auto): ");
  ASSERT_NE(note_at, std::string::npos) << run_out;
  const std::string note = run_out.substr(note_at);
  const auto [sweep_exit, sweep_out] = run_cli_output({"sweep", "--system", "t3k", "--op", "all_reduce", "-b",
                                                       kFallBackBytes, "-e", kFallBackBytes, "--no-data"});
  EXPECT_EQ(sweep_exit, 0);
  EXPECT_EQ(sweep_out, run_out);  // one point: the same title, row and note
  EXPECT_THAT(sweep_out, HasSubstr("\n" + note));
}

}  // namespace
}  // namespace cclmesh::cli
