// `cclmesh run` through run_collective: an op with several output buffers (all_broadcast) has
// every buffer of every chip checked against the host reference, a flipped bit in any of them is
// caught and named by buffer; and the result names the shape the groups ran as (a 2-chip group
// is a line whatever --topology asked), which the bandwidth's directions follow.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "tools/cclmesh/fault_spec.hpp"
#include "tools/cclmesh/op_runner.hpp"
#include "topologies/data_paths.hpp"

namespace cclmesh::cli {
namespace {

using ::testing::HasSubstr;

RunOptions options_for(const char* system, CollectiveOp op, std::uint64_t size, const char* topology) {
  RunOptions options;
  options.system = system;
  options.op = op;
  options.size_bytes = size;
  options.topology = topology;
  return options;
}

TEST(RunOutputs, AllBroadcastChecksEveryBufferOfEveryChip) {
  // T3K ring: 8 chips, 8 buffers each of S / 8 = 16 KiB.
  const RunResult r = run_collective(options_for("t3k", CollectiveOp::AllBroadcast, 128 * 1024, "ring"));
  ASSERT_TRUE(r.verified.has_value());
  EXPECT_TRUE(*r.verified) << r.mismatch;
  EXPECT_EQ(r.size_bytes, 128u * 1024u);
  EXPECT_EQ(r.n_chips, 8u);
  EXPECT_EQ(r.topology, "ring");
  ASSERT_EQ(r.checksums.size(), 64u);
  std::set<std::pair<std::uint32_t, std::string>> seen;
  std::set<std::uint32_t> distinct_crcs;
  for (const OutputChecksum& c : r.checksums) {
    EXPECT_EQ(c.crc32, c.expected_crc32) << "chip " << c.chip << " " << c.buffer;
    seen.insert({c.chip, c.buffer});
    distinct_crcs.insert(c.expected_crc32);
  }
  EXPECT_EQ(seen.size(), 64u);  // every (chip, buffer) once
  EXPECT_EQ(distinct_crcs.size(), 8u);  // buffer i holds rank i's input, the same on every chip
  // busbw: an all_gather's factor (N - 1) / N.
  EXPECT_DOUBLE_EQ(r.bandwidth.busbw_GBps, r.bandwidth.algbw_GBps * 7.0 / 8.0);
}

TEST(RunOutputs, AFlippedBitInAnyBufferIsCaughtAndNamed) {
  RunOptions options = options_for("n300", CollectiveOp::AllBroadcast, 64 * 1024, "line");
  add_fault_spec(options.faults, "corrupt:0-1:5");
  const RunResult r = run_collective(options);
  ASSERT_TRUE(r.verified.has_value());
  EXPECT_FALSE(*r.verified);
  EXPECT_GT(r.wrong_elements, 0u);
  EXPECT_THAT(r.mismatch, HasSubstr("buffer 'output "));
  std::size_t mismatched = 0;
  for (const OutputChecksum& c : r.checksums) mismatched += c.crc32 != c.expected_crc32 ? 1 : 0;
  EXPECT_EQ(mismatched, 1u);  // one packet, one buffer of one chip
}

TEST(RunOutputs, TwoChipGroupsRunAsLinesWhateverTopologyAsked) {
  // N300's per-axis fabric: the 2-chip row is a line (the plan makes 2-chip groups lines).
  for (const CollectiveOp op : {CollectiveOp::Broadcast, CollectiveOp::SendRecv}) {
    RunOptions options = options_for("n300", op, 64 * 1024, "ring");
    options.cluster_axis = 1;
    const RunResult r = run_collective(options);
    EXPECT_EQ(r.topology, "line") << to_string(op);
    EXPECT_EQ(r.fabric_topology, "line") << to_string(op);
    ASSERT_TRUE(r.verified.has_value());
    EXPECT_TRUE(*r.verified) << r.mismatch;
    // One direction: linkbw is the whole busbw on the one link.
    EXPECT_DOUBLE_EQ(r.bandwidth.linkbw_GBps, r.bandwidth.busbw_GBps);
  }
  // send_recv's pair on the T3K's whole-system ring: a line on a ring fabric.
  const RunResult pair = run_collective(options_for("t3k", CollectiveOp::SendRecv, 64 * 1024, "ring"));
  EXPECT_EQ(pair.topology, "line");
  EXPECT_EQ(pair.fabric_topology, "ring");
  // A whole ring runs as one, and legacy mode reports what it was asked (it has no fabric).
  const RunResult ring = run_collective(options_for("t3k", CollectiveOp::Broadcast, 64 * 1024, "ring"));
  EXPECT_EQ(ring.topology, "ring");
  RunOptions legacy = options_for("t3k", CollectiveOp::AllGather, 64 * 1024, "line");
  legacy.mode = "legacy";
  const RunResult legacy_line = run_collective(legacy);
  EXPECT_EQ(legacy_line.topology, "line");
  EXPECT_EQ(legacy_line.fabric_topology, "");
}

// Review (session 10): the tt-umd T3K descriptor a user passes as --system ran only send_recv;
// every other op refused it ("chip 0 is harvested differently from chip 4") because its chips
// harvest different physical rows (masks 544, 513, 640 ...). With noc_translation: true (every
// chip of the file) software addresses translated coordinates, in which chips harvesting the
// same number of rows look the same, so the descriptor's T3K runs every op as the built-in T3K.
TEST(RunOutputs, TheTtUmdT3kDescriptorRunsLikeTheBuiltInT3k) {
  const std::string descriptor = (topo::shared_dir() / "ecosystem" / "cluster_descriptors" / "t3k_cluster_desc.yaml").string();
  for (const CollectiveOp op : {CollectiveOp::AllGather, CollectiveOp::ReduceScatter, CollectiveOp::AllReduce}) {
    const RunResult from_file = run_collective(options_for(descriptor.c_str(), op, 256 * 1024, "auto"));
    const RunResult built_in = run_collective(options_for("t3k", op, 256 * 1024, "auto"));
    ASSERT_TRUE(from_file.verified.has_value()) << to_string(op);
    EXPECT_TRUE(*from_file.verified) << to_string(op) << ": " << from_file.mismatch;
    EXPECT_EQ(from_file.topology, "ring") << to_string(op);
    EXPECT_EQ(from_file.time_us, built_in.time_us) << to_string(op);
    EXPECT_EQ(from_file.sim_events, built_in.sim_events) << to_string(op);
  }
}

// The count column is nccl-tests' (its paramcount): per rank wherever S spans the ranks, so
// that S = count x type x n for all_gather (REFERENCE 9), reduce_scatter (each rank's output),
// all_to_all (what goes to each peer) and all_broadcast (each chip's input); the whole tensor for
// all_reduce, reduce, broadcast and send_recv. Review (session 10): all_gather, reduce_scatter
// and all_broadcast printed the whole tensor's count, n times nccl-tests'.
TEST(RunOutputs, CountIsPerRankWhereTheSizeSpansTheRanks) {
  constexpr std::uint64_t kBytes = 128 * 1024;  // bf16: 65536 elements
  for (const CollectiveOp op : {CollectiveOp::AllGather, CollectiveOp::ReduceScatter, CollectiveOp::AllToAll,
                                CollectiveOp::AllBroadcast}) {
    RunOptions options = options_for("t3k", op, kBytes, "ring");
    options.no_data = true;
    const RunResult r = run_collective(options);
    EXPECT_EQ(r.size_bytes, kBytes) << to_string(op);
    EXPECT_EQ(r.count * 2 * r.n_chips, r.size_bytes) << to_string(op);
  }
  for (const CollectiveOp op : {CollectiveOp::AllReduce, CollectiveOp::Reduce, CollectiveOp::Broadcast,
                                CollectiveOp::SendRecv}) {
    RunOptions options = options_for("t3k", op, kBytes, op == CollectiveOp::AllReduce ? "ring" : "line");
    options.no_data = true;
    const RunResult r = run_collective(options);
    EXPECT_EQ(r.count * 2, r.size_bytes) << to_string(op);
  }
}

}  // namespace
}  // namespace cclmesh::cli
