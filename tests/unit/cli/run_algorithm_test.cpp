// Every run says which algorithm its op ran and why, from the op builder's own choice: where
// `auto` switches by size or topology (all_gather relay / multicast, reduce_scatter one-shot /
// chain, all_to_all's rounds, broadcast both-ways / split), --json's "algorithm" and "algorithm_reason" show it, so a sweep's
// step in its curve can be read off its points. The --report page says it too.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "tools/cclmesh/html_report.hpp"
#include "tools/cclmesh/op_runner.hpp"
#include "tools/cclmesh/result_table.hpp"
#include "topologies/system_loader.hpp"

namespace cclmesh::cli {
namespace {

using ::testing::HasSubstr;

// --no-data: the choice does not depend on the data, and the runs stay quick.
RunResult run(const char* system, CollectiveOp op, std::uint64_t size, const char* topology) {
  RunOptions options;
  options.system = system;
  options.op = op;
  options.size_bytes = size;
  options.topology = topology;
  options.no_data = true;
  return run_collective(options);
}

constexpr std::uint64_t kKiB = 1024;
constexpr std::uint64_t kMiB = 1024 * kKiB;

TEST(RunAlgorithm, AllGatherRelaysOnTheT3kRingAndMulticastsOnALine) {
  const RunResult ring = run("t3k", CollectiveOp::AllGather, 1 * kMiB, "ring");
  EXPECT_EQ(result_json(ring)["algorithm"], "relay");
  EXPECT_EQ(result_json(ring)["algorithm_reason"], "auto: a fabric ring relays");
  const RunResult line = run("t3k", CollectiveOp::AllGather, 1 * kMiB, "line");
  EXPECT_EQ(result_json(line)["algorithm"], "multicast");
  EXPECT_EQ(result_json(line)["algorithm_reason"], "auto: a line multicasts");
  // Not a fallback: the table gets no note under it.
  EXPECT_EQ(algorithm_note(ring), "");
}

TEST(RunAlgorithm, ReduceScatterRunsTheOneShotUpTo512KiBPerChipAndTheChainPast) {
  const RunResult small = run("t3k", CollectiveOp::ReduceScatter, 256 * kKiB, "ring");
  EXPECT_EQ(result_json(small)["algorithm"], "one-shot");
  EXPECT_EQ(result_json(small)["algorithm_reason"], "auto: 262144 B per chip are within the one-shot's 524288 B");
  const RunResult large = run("t3k", CollectiveOp::ReduceScatter, 16 * kMiB, "ring");
  EXPECT_EQ(result_json(large)["algorithm"], "chain");
  EXPECT_EQ(result_json(large)["algorithm_reason"], "auto: 16777216 B per chip are past the one-shot's 524288 B");
  // A line runs the line algorithm asked: two_sided by default.
  EXPECT_EQ(run("t3k", CollectiveOp::ReduceScatter, 256 * kKiB, "line").algorithm, "two_sided");
}

TEST(RunAlgorithm, AllToAllInterleavesOnAShortLineOnly) {
  // T3K's 4-chip rows along axis 1 are lines of 4; the whole 8-ring sends one destination at a time.
  RunOptions rows;
  rows.system = "t3k";
  rows.op = CollectiveOp::AllToAll;
  rows.size_bytes = 64 * kKiB;
  rows.topology = "line";
  rows.cluster_axis = 1;
  rows.no_data = true;
  const RunResult line = run_collective(rows);
  EXPECT_EQ(line.algorithm, "interleaved");
  EXPECT_EQ(line.algorithm_reason, "auto: a line of 4 chips, at most 4, interleaves its destinations over 256 rounds");
  const RunResult ring = run("t3k", CollectiveOp::AllToAll, 64 * kKiB, "ring");
  EXPECT_EQ(ring.algorithm, "sequential");
  EXPECT_EQ(ring.algorithm_reason, "auto: a ring sends one destination after another");
}

// broadcast on a fabric ring: both ways below links x (n-1) x 6 KiB, split from there (ring:8,
// 1 link: 42 KiB); on a line (T3K's rows) the root multicasts to both ends.
TEST(RunAlgorithm, BroadcastSplitsTheRingFromItsThreshold) {
  const RunResult small = run("ring:8", CollectiveOp::Broadcast, 4 * kKiB, "ring");
  EXPECT_EQ(small.algorithm, "both-ways");
  EXPECT_EQ(small.algorithm_reason, "auto: 4096 B are below the split's 43008 B (1 link(s) x 7 hops x 6144 B)");
  const RunResult large = run("ring:8", CollectiveOp::Broadcast, 1 * kMiB, "ring");
  EXPECT_EQ(result_json(large)["algorithm"], "split");
  EXPECT_EQ(result_json(large)["algorithm_reason"],
            "auto: 1048576 B reach the split's 43008 B (1 link(s) x 7 hops x 6144 B)");
  const RunResult line = run("ring:8", CollectiveOp::Broadcast, 1 * kMiB, "line");
  EXPECT_EQ(line.algorithm, "both-ways");
  EXPECT_EQ(line.algorithm_reason, "the groups run as a line: the root multicasts to both of its ends");
}

TEST(RunAlgorithm, OpsThatDoNotChooseRecordNone) {
  const nlohmann::json j = result_json(run("t3k", CollectiveOp::Reduce, 64 * kKiB, "ring"));
  EXPECT_FALSE(j.contains("algorithm"));
  EXPECT_FALSE(j.contains("algorithm_reason"));
}

TEST(RunAlgorithm, TheReportPageSaysWhatRan) {
  const RunResult r = run("t3k", CollectiveOp::ReduceScatter, 16 * kMiB, "ring");
  const std::string page = html_report(r, topo::load_system("t3k"));
  EXPECT_THAT(page, HasSubstr("algorithm chain: auto: 16777216 B per chip are past the one-shot's 524288 B"));
}

}  // namespace
}  // namespace cclmesh::cli
