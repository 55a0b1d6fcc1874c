// `cclmesh run` with faults, end to end through run_collective (issue 8): faults that must not
// change the result complete verified with matching per-chip checksums; faults that lose data
// stop with a DeviceError naming the fault; nothing is ever reported verified with a wrong
// output.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <vector>

#include "runtime/device/mesh_device.hpp"
#include "tests/source_tree.hpp"
#include "tools/cclmesh/cli_error.hpp"
#include "tools/cclmesh/fault_spec.hpp"
#include "tools/cclmesh/nccl_metrics.hpp"
#include "tools/cclmesh/op_runner.hpp"
#include "tools/cclmesh/result_table.hpp"
#include "topologies/data_paths.hpp"

namespace cclmesh::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

RunOptions all_gather(std::initializer_list<const char*> faults, const char* topology = "ring") {
  RunOptions options;
  options.system = "t3k";
  options.op = CollectiveOp::AllGather;
  options.size_bytes = 256 * 1024;
  options.topology = topology;
  for (const char* spec : faults) add_fault_spec(options.faults, spec);
  return options;
}

void expect_verified_with_matching_checksums(const RunResult& r) {
  ASSERT_TRUE(r.verified.has_value());
  EXPECT_TRUE(*r.verified) << r.mismatch;
  ASSERT_EQ(r.checksums.size(), 8u);
  for (const OutputChecksum& c : r.checksums) {
    EXPECT_EQ(c.crc32, c.expected_crc32) << "chip " << c.chip;
    EXPECT_EQ(c.buffer, "output");
  }
}

TEST(FaultRun, NoFaultChecksumsEveryChipsOutput) {
  const RunResult r = run_collective(all_gather({}));
  expect_verified_with_matching_checksums(r);
  EXPECT_NE(r.checksums[0].crc32, 0u);
  EXPECT_TRUE(r.faults.empty());
}

TEST(FaultRun, SkewAndSlowLinksCompleteVerifiedButLater) {
  const RunResult plain = run_collective(all_gather({}));
  const RunResult skewed = run_collective(all_gather({"skew:40us:7"}));
  const RunResult slow = run_collective(all_gather({"link-slow:4-0:0.25"}));
  expect_verified_with_matching_checksums(skewed);
  expect_verified_with_matching_checksums(slow);
  EXPECT_GT(skewed.time_us, plain.time_us);
  EXPECT_GT(slow.time_us, plain.time_us);
  EXPECT_EQ(skewed.faults, std::vector<std::string>{"skew:40us:7"});
  // Seeded: the same run again gives the same simulated time and events.
  const RunResult again = run_collective(all_gather({"skew:40us:7"}));
  EXPECT_EQ(again.time_us, skewed.time_us);
  EXPECT_EQ(again.sim_events, skewed.sim_events);
}

TEST(FaultRun, LineIsReembeddedAroundALinkDownFromTheStart) {
  const RunResult plain = run_collective(all_gather({}, "line"));
  const RunResult r = run_collective(all_gather({"link-down:0-2"}, "line"));
  expect_verified_with_matching_checksums(r);
  EXPECT_NE(r.fabric_order, plain.fabric_order);
  EXPECT_EQ(r.fabric_order.find("0-2"), std::string::npos) << r.fabric_order;
  EXPECT_EQ(r.fabric_order.find("2-0"), std::string::npos) << r.fabric_order;
}

RunOptions torus_groups(CollectiveOp op, int axis, std::initializer_list<const char*> faults) {
  RunOptions options;
  options.system = "torus:4x4";
  options.op = op;
  options.size_bytes = 64 * 1024;
  options.cluster_axis = axis;
  for (const char* spec : faults) add_fault_spec(options.faults, spec);
  return options;
}

RunOptions torus_rows(CollectiveOp op, std::initializer_list<const char*> faults) {
  return torus_groups(op, 1, faults);
}

// A link down on a torus row or column (session 20; any link of it since session 21): that ring
// runs as the line from the chip after the link round to the chip before it, every other ring
// keeps its ring, all at once. The group's ranks stay in coordinate order whichever link is down
// (the line's positions hold ranks 1, 2, 3, 0 with 0-1 down), so all_gather's, all_to_all's and
// all_broadcast's outputs are the unfaulted run's byte for byte and reduce_scatter's, all_reduce's
// and reduce's (the roots') are the host reference's, built from the coordinate-order groups
// (their bfloat16 sums run in the line's order, not the ring's, so the rounding differs from the
// unfaulted run). Ranks in the line's order (session 20's first cut) put row 0's all_gather output
// at [in1, in2, in3, in0] and reduce_scatter's slice 0 on chip 1: the checksums catch both. The
// run says which ring ran as a line and why.
TEST(FaultRun, ALinkDownOnATorusRingRunsThatGroupAsALine) {
  struct Case {
    int axis;
    const char* fault;
    const char* line;  // in the fabric order
    const char* note;
  };
  const std::vector<Case> cases{
      {1, "link-down:3-0", "0-1-2-3 | 4-5-6-7 | ", "axis 1 ring 0-1-2-3-0 ran as line 0-1-2-3: link 3-0 is down "
                                                    "(link-down:3-0); one of the op's groups"},
      {1, "link-down:0-1", "1-2-3-0 | 4-5-6-7 | ", "axis 1 ring 0-1-2-3-0 ran as line 1-2-3-0: link 0-1 is down "
                                                    "(link-down:0-1); one of the op's groups"},
      {1, "link-down:2-1", "2-3-0-1 | 4-5-6-7 | ", "axis 1 ring 0-1-2-3-0 ran as line 2-3-0-1: link 1-2 is down "
                                                    "(link-down:2-1); one of the op's groups"},
      {0, "link-down:0-4", "| 4-8-12-0 |", "axis 0 ring 0-4-8-12-0 ran as line 4-8-12-0: link 0-4 is down "
                                             "(link-down:0-4); one of the op's groups"},
      {0, "link-down:8-4", "| 8-12-0-4 |", "axis 0 ring 0-4-8-12-0 ran as line 8-12-0-4: link 4-8 is down "
                                             "(link-down:8-4); one of the op's groups"}};
  for (const CollectiveOp op : {CollectiveOp::AllGather, CollectiveOp::ReduceScatter, CollectiveOp::AllReduce,
                                CollectiveOp::Reduce, CollectiveOp::AllToAll, CollectiveOp::AllBroadcast}) {
    // One output per chip; reduce's roots only (4 groups); all_broadcast's 4 per chip.
    const std::size_t outputs = op == CollectiveOp::Reduce ? 4 : op == CollectiveOp::AllBroadcast ? 64 : 16;
    const bool same_bytes =
        op == CollectiveOp::AllGather || op == CollectiveOp::AllToAll || op == CollectiveOp::AllBroadcast;
    const RunResult unfaulted[2] = {run_collective(torus_groups(op, 0, {})), run_collective(torus_groups(op, 1, {}))};
    for (const Case& c : cases) {
      SCOPED_TRACE(fmt::format("op {} axis {} {}", static_cast<int>(op), c.axis, c.fault));
      const RunResult r = run_collective(torus_groups(op, c.axis, {c.fault}));
      const RunResult& expected = unfaulted[c.axis];
      ASSERT_TRUE(r.verified.has_value());
      EXPECT_TRUE(*r.verified) << r.mismatch;
      EXPECT_EQ(r.wrong_elements, 0u);
      ASSERT_EQ(r.checksums.size(), outputs);
      ASSERT_EQ(expected.checksums.size(), outputs);
      for (std::size_t i = 0; i < r.checksums.size(); ++i) {
        const OutputChecksum& checksum = r.checksums[i];
        EXPECT_EQ(checksum.crc32, checksum.expected_crc32) << "chip " << checksum.chip;
        EXPECT_EQ(checksum.chip, expected.checksums[i].chip);
        if (same_bytes) {
          EXPECT_EQ(checksum.crc32, expected.checksums[i].crc32)
              << "chip " << checksum.chip << ": not the unfaulted run's bytes";
        }
      }
      EXPECT_THAT(r.fabric_order, HasSubstr(c.line));
      ASSERT_EQ(r.rings_as_lines.size(), 1u);
      EXPECT_THAT(r.rings_as_lines[0], HasSubstr(c.note));
    }
  }
}

// --topology line on a torus: a row's line 0-1-2-3 with 1-2 down runs 2-3-0-1 over its closing
// link, ranks in coordinate order (the unfaulted line's output), and the note calls it a line.
TEST(FaultRun, ATorusLineWithADownLinkRunsOverItsClosingLink) {
  RunOptions line = torus_rows(CollectiveOp::AllGather, {});
  line.topology = "line";
  RunOptions faulted = line;
  add_fault_spec(faulted.faults, "link-down:1-2");
  const RunResult unfaulted = run_collective(line);
  const RunResult r = run_collective(faulted);
  ASSERT_TRUE(r.verified.has_value());
  EXPECT_TRUE(*r.verified) << r.mismatch;
  ASSERT_EQ(r.checksums.size(), unfaulted.checksums.size());
  for (std::size_t i = 0; i < r.checksums.size(); ++i) {
    EXPECT_EQ(r.checksums[i].crc32, unfaulted.checksums[i].crc32) << "chip " << r.checksums[i].chip;
  }
  ASSERT_EQ(r.rings_as_lines.size(), 1u);
  EXPECT_THAT(r.rings_as_lines[0], HasSubstr("axis 1 line 0-1-2-3 ran as line 2-3-0-1 over its closing link 3-0: "
                                             "link 1-2 is down (link-down:1-2); one of the op's groups"));
  EXPECT_THAT(r.rings_as_lines[0], Not(HasSubstr("ring")));
}

// broadcast takes one shape for all its groups from the fabric, whatever --topology says: both
// ways round when every group is a whole fabric ring, else a line multicast to both ends of each
// group, which reaches every chip of an intact ring too. So a row whose ring runs as a line
// needs no refusal, whichever row it is: every row multicasts as a line, as fast as the faulted
// row alone would. (Until session 21 it chose by the root's row: 3-0, on row 0, ran, and 7-4, on
// row 1, was refused as "broadcast does not run ring and line groups together yet".) A ring
// opened mid-ring runs as well: the root multicasts from its position on the line.
TEST(FaultRun, BroadcastRunsEveryGroupAsALineWhenARingRunsAsALine) {
  // 3-0 opens the root's row at its closing link, 7-4 another row's, 0-1 the root's row
  // mid-ring (the root then sits at the line's last position).
  std::vector<double> times_us;
  for (const char* fault : {"link-down:3-0", "link-down:7-4", "link-down:0-1"}) {
    SCOPED_TRACE(fault);
    const RunResult r = run_collective(torus_rows(CollectiveOp::Broadcast, {fault}));
    ASSERT_TRUE(r.verified.has_value());
    EXPECT_TRUE(*r.verified) << r.mismatch;
    EXPECT_EQ(r.topology, "line");
    ASSERT_EQ(r.rings_as_lines.size(), 1u);
    EXPECT_THAT(r.rings_as_lines[0], HasSubstr("one of the op's groups, which ran as that line"));
    times_us.push_back(r.time_us);
  }
  EXPECT_EQ(times_us[0], times_us[1]);
}

// A split round the rings asked for runs as the lines too when a down link opens one (as the
// other ops' ring algorithms do), not refused: the same time as auto's line.
TEST(FaultRun, BroadcastSplitRunsAsALineWhenARingRunsAsALine) {
  const RunResult as_auto = run_collective(torus_rows(CollectiveOp::Broadcast, {"link-down:7-4"}));
  RunOptions options = torus_rows(CollectiveOp::Broadcast, {"link-down:7-4"});
  options.bcast_ring_algorithm = "split";
  const RunResult split = run_collective(options);
  ASSERT_TRUE(split.verified.has_value());
  EXPECT_TRUE(*split.verified) << split.mismatch;
  EXPECT_EQ(split.topology, "line");
  EXPECT_EQ(split.time_us, as_auto.time_us);
  // Unfaulted, the same rings split round.
  RunOptions unfaulted_options = torus_rows(CollectiveOp::Broadcast, {});
  unfaulted_options.bcast_ring_algorithm = "split";
  const RunResult unfaulted = run_collective(unfaulted_options);
  EXPECT_EQ(unfaulted.topology, "ring");
  EXPECT_LT(unfaulted.time_us, split.time_us);
}

// Legacy mode along an axis (session 25): a row (a torus ring) with one link down from the start
// runs as the line around it, as the fabric runs it, beside the other rows' rings: ranks in
// coordinate order, every op verified against the host reference, a note per opened row. Before,
// a row with any down hop was refused up front as the fault (exit 3: "legacy mode runs each row
// or column over its own links"); two down links on a row still are, naming both. A line whose
// closing link is down runs as the line it is.
TEST(FaultRun, LegacyRowWithADownLinkRunsAsALineBesideTheOtherRowsRings) {
  for (const CollectiveOp op : {CollectiveOp::AllGather, CollectiveOp::ReduceScatter, CollectiveOp::AllReduce}) {
    for (const char* fault : {"link-down:1-2", "link-down:3-0"}) {
      SCOPED_TRACE(fmt::format("{} {}", to_string(op), fault));
      RunOptions options = torus_rows(op, {fault});
      options.mode = "legacy";
      const RunResult r = run_collective(options);
      ASSERT_TRUE(r.verified.has_value());
      EXPECT_TRUE(*r.verified) << r.mismatch;
      EXPECT_EQ(r.topology, "line");
      ASSERT_EQ(r.rings_as_lines.size(), 1u);
      const bool mid = std::string(fault) == "link-down:1-2";
      EXPECT_EQ(r.rings_as_lines.front(),
                fmt::format("axis 1 ring 0-1-2-3-0 ran as line {}: link {} is down ({}); one of the op's groups, "
                            "which ran as that line (legacy mode: its EDMs chain the line)",
                            mid ? "2-3-0-1" : "0-1-2-3", mid ? "1-2" : "3-0", fault));
    }
  }
  RunOptions two = torus_rows(CollectiveOp::AllGather, {"link-down:1-2", "link-down:3-0"});
  two.mode = "legacy";
  try {
    run_collective(two);
    ADD_FAILURE() << "expected a legacy row with two down links to be refused";
  } catch (const runtime::DeviceError& e) {
    EXPECT_EQ(e.kind(), runtime::DeviceError::Kind::Fault);
    EXPECT_THAT(e.what(), HasSubstr("fault link-down:1-2, link-down:3-0 at 0 s: axis 1 group 0-1-2-3 (a ring) is cut "
                                    "by the down link(s) 1-2, 3-0, and legacy mode runs a ring as a line around one "
                                    "down link, not two"));
  }
  RunOptions closing = torus_rows(CollectiveOp::AllGather, {"link-down:3-0"});
  closing.mode = "legacy";
  closing.topology = "line";
  const RunResult r = run_collective(closing);
  ASSERT_TRUE(r.verified.has_value());
  EXPECT_TRUE(*r.verified) << r.mismatch;
  EXPECT_TRUE(r.rings_as_lines.empty());
}

// Legacy all_reduce's Auto chooses per shape (session 25): 16 bf16 tiles weigh 16 x 2304 = 36864 B,
// past a 4-ring's composite threshold (30 KiB) and within a 4-line's (48 KiB), so rows 1-3 run
// reduce_scatter + all_gather and row 0, opened around its down link, the composite, in one op,
// verified; --json records both, the line's reason saying it is one. Before, the rings' threshold
// decided for row 0 too. Asked for one algorithm, every row runs it.
TEST(FaultRun, LegacyAllReduceOnTorusRowsChoosesPerShape) {
  for (const char* fault : {"link-down:1-2", "link-down:3-0"}) {
    SCOPED_TRACE(fault);
    RunOptions options = torus_rows(CollectiveOp::AllReduce, {fault});
    options.mode = "legacy";
    options.size_bytes = 32 * 1024;
    const RunResult r = run_collective(options);
    ASSERT_TRUE(r.verified.has_value());
    EXPECT_TRUE(*r.verified) << r.mismatch;
    EXPECT_EQ(r.algorithm, "rs-ag");
    EXPECT_EQ(r.algorithm_reason, "legacy mode: its weighted 36864 B are past the composite's threshold of 30720 B here");
    EXPECT_EQ(r.algorithm_lines, "composite");
    EXPECT_EQ(r.algorithm_lines_reason,
              "ran as a line around a down link: legacy mode: its weighted 36864 B are within the composite's "
              "threshold of 49152 B here");
    EXPECT_FALSE(r.algorithm_fallback);
    for (const char* asked : {"rs-ag", "composite"}) {
      SCOPED_TRACE(asked);
      RunOptions forced = options;
      forced.all_reduce_algo = asked;
      const RunResult f = run_collective(forced);
      ASSERT_TRUE(f.verified.has_value());
      EXPECT_TRUE(*f.verified) << f.mismatch;
      EXPECT_EQ(f.algorithm, asked);
      EXPECT_EQ(f.algorithm_reason, "asked for");
      EXPECT_EQ(f.algorithm_lines, asked);
      EXPECT_EQ(f.algorithm_lines_reason, "ran as a line around a down link: asked for");
    }
  }
  RunOptions unfaulted = torus_rows(CollectiveOp::AllReduce, {});
  unfaulted.mode = "legacy";
  unfaulted.size_bytes = 32 * 1024;
  const RunResult r = run_collective(unfaulted);
  EXPECT_EQ(r.algorithm, "rs-ag");
  EXPECT_TRUE(r.algorithm_lines.empty());
}

// The note under the table says every part's fallback (session 26): 22 bf16 tiles weigh 50688 B,
// past both a 4-ring's (30 KiB) and a 4-line's (48 KiB) composite threshold, and 22 pages do not
// split into 4 slices, so rows 1-3 and row 0, opened around its down link, each fall back to the
// composite, each for its own reason (a ring's slice runs as two halves, a line's whole). Before,
// the note named the rings' only. 14 tiles (32256 B) are past the rings' threshold only: the line
// ran the composite by its threshold, no fallback, so only the rings' note.
TEST(FaultRun, LegacyAllReduceOnTorusRowsNotesEachPartsFallback) {
  const std::string rings =
      "# all_reduce ran composite (--all-reduce-algo auto): legacy mode: the 22 pages do not split into 4 slices "
      "of at least 2 pages each, which reduce_scatter + all_gather needs\n";
  const std::string line =
      "# all_reduce ran composite (--all-reduce-algo auto): ran as a line around a down link: legacy mode: the 22 "
      "pages do not split into 4 slices of at least 1 page each, which reduce_scatter + all_gather needs\n";
  RunOptions options = torus_rows(CollectiveOp::AllReduce, {"link-down:1-2"});
  options.mode = "legacy";
  options.size_bytes = 22 * 2048;
  const RunResult both = run_collective(options);
  ASSERT_TRUE(both.verified.has_value());
  EXPECT_TRUE(*both.verified) << both.mismatch;
  EXPECT_TRUE(both.algorithm_fallback);
  EXPECT_TRUE(both.algorithm_lines_fallback);
  EXPECT_EQ(algorithm_note(both), rings + line);

  options.size_bytes = 14 * 2048;
  const RunResult rings_only = run_collective(options);
  EXPECT_TRUE(rings_only.algorithm_fallback);
  EXPECT_FALSE(rings_only.algorithm_lines_fallback);
  EXPECT_EQ(rings_only.algorithm_lines, "composite");
  EXPECT_EQ(algorithm_note(rings_only),
            "# all_reduce ran composite (--all-reduce-algo auto): legacy mode: the 14 pages do not split into 4 "
            "slices of at least 2 pages each, which reduce_scatter + all_gather needs\n");
}

// Legacy --links counts the hops the EDMs chain (session 25): ring4_narrow_hop's ring 0-1-2-3-0
// has 2 links on every hop but 0-1, which has 1. With 0-1 down the ring runs as the line
// 1-2-3-0, whose hops all have 2: --links 2 runs, verified. Before, the check counted the down
// hop and refused it ("allows 1 to 1 (hop 0-1 has 1 physical link(s)"). Unfaulted it still does.
TEST(FaultRun, LegacyLinksCountAnOpenedRingsLineNotItsDownHop) {
  RunOptions options;
  options.system = (testing::source_dir() / "tests/data/topologies/ring4_narrow_hop.yaml").string();
  options.op = CollectiveOp::AllReduce;
  options.mode = "legacy";
  options.topology = "ring";
  options.links = 2;
  options.size_bytes = 32 * 1024;
  RunOptions faulted = options;
  add_fault_spec(faulted.faults, "link-down:0-1");
  const RunResult r = run_collective(faulted);
  ASSERT_TRUE(r.verified.has_value());
  EXPECT_TRUE(*r.verified) << r.mismatch;
  EXPECT_EQ(r.links, 2u);
  try {
    run_collective(options);
    ADD_FAILURE() << "expected --links 2 on the ring with its 1-link hop to be refused";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("allows 1 to 1 (hop 0-1 has 1 physical link(s)"));
  }
}

// A system with no line through every chip (tt-umd's two unconnected N300s), or no ring for
// --topology ring, is bad input in legacy mode as in fabric mode: refused naming --system (exit 2), with or without a link down
// from the start. Before (session 32 bug bash), legacy mode looked for the system's line to lay
// its EDMs around down links before anything refused the system, and its EmbeddingError ended
// the run as an internal error (exit 4).
TEST(FaultRun, LegacyModeOnASystemWithNoLineThroughEveryChipIsBadInput) {
  for (const bool with_fault : {false, true}) {
    RunOptions options;
    options.system =
        (topo::shared_dir() / "ecosystem" / "cluster_descriptors" / "wormhole_2xN300_unconnected.yaml").string();
    options.op = CollectiveOp::AllGather;
    options.mode = "legacy";
    options.size_bytes = 32 * 1024;
    if (with_fault) add_fault_spec(options.faults, "link-down:0-1");
    try {
      run_collective(options);
      ADD_FAILURE() << "expected a system of two unconnected pairs to be refused (fault: " << with_fault << ")";
    } catch (const UsageError& e) {
      // Named --system alone since session 38, with the groups and a --chips that runs one.
      EXPECT_THAT(e.what(), HasSubstr("--system: topology 'wormhole_2xN300_unconnected': "
                                      "no line through chips 0,1,2,3: the chips are not connected"));
      EXPECT_THAT(e.what(), HasSubstr("run on one of them with --chips, e.g. --chips 0,1"));
    }
  }
  // The same for --topology ring on a system with no ring (a 1x3 mesh's row does not close).
  RunOptions ring;
  ring.system = "mesh:1x3";
  ring.op = CollectiveOp::AllReduce;
  ring.mode = "legacy";
  ring.topology = "ring";
  ring.size_bytes = 32 * 1024;
  try {
    run_collective(ring);
    ADD_FAILURE() << "expected --topology ring on mesh:1x3 to be refused";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("--system/--topology/--cluster-axis: topology 'mesh:1x3/4@wh': no ring through "
                                    "chips 0,1,2: chips 0,1,2 form a line with no link closing 2->0"));
  }
}

// Legacy mode on the whole system launches its EDMs along the system's ring: with a link down
// from the start on it, the op runs on another ring through every chip where one avoids the link
// (a 4x4 mesh has several), verified, its notes naming the ring it ran; where none does (ring:8,
// the T3K's one ring) the ring runs as the line around the link (session 25), ranks in the ring's
// order, verified, the note saying so. Before, that was refused up front as the fault (exit 3,
// naming fabric mode), and before session 22 both hung. Two down links on that ring still are
// the fault, naming both.
TEST(FaultRun, LegacyWholeSystemRingRunsOnAnotherRingOrAsTheLineAroundADownLink) {
  RunOptions options = all_gather({"link-down:6-5"});
  options.system = "mesh:4x4";
  options.mode = "legacy";
  const RunResult r = run_collective(options);
  ASSERT_TRUE(r.verified.has_value());
  EXPECT_TRUE(*r.verified) << r.mismatch;
  ASSERT_FALSE(r.fault_effects.empty());
  EXPECT_EQ(r.fault_effects.front(), "legacy mode ran its ring as 0-1-2-3-7-6-10-11-15-14-13-12-8-9-5-4-0: the "
                                     "system's own crosses a link down from the start");
  EXPECT_EQ(r.topology, "ring");

  for (const CollectiveOp op : {CollectiveOp::AllGather, CollectiveOp::ReduceScatter, CollectiveOp::AllReduce}) {
    SCOPED_TRACE(to_string(op));
    RunOptions t3k = all_gather({"link-down:0-2"});
    t3k.op = op;
    t3k.mode = "legacy";
    const RunResult opened = run_collective(t3k);
    expect_verified_with_matching_checksums(opened);
    EXPECT_EQ(opened.topology, "line");
    ASSERT_FALSE(opened.fault_effects.empty());
    EXPECT_EQ(opened.fault_effects.front(),
              "legacy mode ran its ring as the line 2-6-7-3-1-5-4-0 around link 0-2, down from the start "
              "(link-down:0-2): no other ring through all 8 chips avoids it; ranks in the ring's order (ring "
              "4-0-2-6-7-3-1-5-4)");
  }

  RunOptions closed = all_gather({"link-down:0-1"});
  closed.system = "ring:8";
  closed.mode = "legacy";
  const RunResult ring8 = run_collective(closed);
  ASSERT_TRUE(ring8.verified.has_value());
  EXPECT_TRUE(*ring8.verified) << ring8.mismatch;

  RunOptions two = all_gather({"link-down:0-2", "link-down:7-3"});
  two.mode = "legacy";
  try {
    run_collective(two);
    ADD_FAILURE() << "expected a legacy T3K ring across two down links to be refused";
  } catch (const runtime::DeviceError& e) {
    EXPECT_EQ(e.kind(), runtime::DeviceError::Kind::Fault);
    EXPECT_THAT(e.what(), HasSubstr("fault link-down:0-2, link-down:7-3 at 0 s: legacy mode's ring "
                                    "4-0-2-6-7-3-1-5-4 crosses the down link(s) and no other ring through all 8 chips "
                                    "avoids them"));
    EXPECT_THAT(e.what(), HasSubstr("the ring runs as a line around one down link, not 2 (0-2, 7-3)"));
  }
}

// all_reduce at 256 KiB per chip splits its reduce_scatter's workers by the line's and the
// rings' needs: its barrier semaphore must sit on every core either part runs on (session 20's
// first cut took the rings' only: "barrier_semaphore ... is not on worker core").
TEST(FaultRun, AllReduceWithARingRunAsALineHasItsSemaphoreOnEveryWorker) {
  RunOptions options = torus_rows(CollectiveOp::AllReduce, {"link-down:3-0"});
  options.size_bytes = 256 * 1024;
  const RunResult r = run_collective(options);
  ASSERT_TRUE(r.verified.has_value());
  EXPECT_TRUE(*r.verified) << r.mismatch;
  EXPECT_EQ(r.rings_as_lines.size(), 1u);
}

// reduce runs a ring opened by a down link at any position, asked as a ring (beside the intact
// rows' rings) or as a line: its chain runs along the line to the position holding the root's
// rank, so the sum lands on the root's chip, as the host reference summed in the line's order
// says. Until session 21 it placed by position and refused both as the fault (exit 3: "reduce
// does not run ring and line groups together yet", "... does not place its data by rank on such
// a line yet"). Roots 0 and 2: with 0-1 down (the line 1-2-3-0) root 0 sits at the line's end
// (an up chain, no wrap), root 2 mid-line (the chain wraps).
TEST(FaultRun, ReduceRunsARingOpenedAtAnyDownLink) {
  for (const char* fault : {"link-down:3-0", "link-down:0-1", "link-down:2-1"}) {
    for (const char* topology : {"ring", "line"}) {
      for (const std::uint32_t root : {0u, 2u}) {
        SCOPED_TRACE(fmt::format("{} --topology {} --root {}", fault, topology, root));
        RunOptions options = torus_rows(CollectiveOp::Reduce, {fault});
        options.topology = topology;
        options.root = root;
        const RunResult r = run_collective(options);
        ASSERT_TRUE(r.verified.has_value());
        EXPECT_TRUE(*r.verified) << r.mismatch;
        EXPECT_EQ(r.wrong_elements, 0u);
        ASSERT_EQ(r.checksums.size(), 4u);
        for (const OutputChecksum& checksum : r.checksums) {
          EXPECT_EQ(checksum.chip % 4, root) << "the root of row " << checksum.chip / 4;
          EXPECT_EQ(checksum.crc32, checksum.expected_crc32) << "chip " << checksum.chip;
        }
      }
    }
  }
}

// A row's ring opened at any link runs reduce_scatter's two-sided line by fabric position; only
// the data is the rank's (chain slice s is the input slice of the rank at position s). So when
// every rank's slice starts on the same DRAM bank (48 pages of 2 KiB, 4 x 12 banks, at 384 KiB)
// each position's reads hit the same banks whichever link is down, and the line from mid-ring
// takes the line from the closing link's time to the picosecond. With 32-page slices (256 KiB)
// the slices start on banks 0, 8, 4 and 0 and the times differ by up to 6 us
// (docs/performance.md "reduce_scatter on a line from mid-ring"), which is why the size is 384 KiB.
TEST(FaultRun, AReduceScatterLineFromMidRingTakesTheClosingLinksTimeWhenEverySliceStartsOnOneBank) {
  std::vector<double> times_us;
  for (const char* fault : {"link-down:3-0", "link-down:0-1", "link-down:1-2", "link-down:2-3"}) {
    SCOPED_TRACE(fault);
    RunOptions options = torus_rows(CollectiveOp::ReduceScatter, {fault});
    options.size_bytes = 384 * 1024;
    const RunResult r = run_collective(options);
    ASSERT_TRUE(r.verified.has_value());
    EXPECT_TRUE(*r.verified) << r.mismatch;
    ASSERT_EQ(r.rings_as_lines.size(), 1u);
    times_us.push_back(r.time_us);
  }
  for (std::size_t i = 1; i < times_us.size(); ++i) EXPECT_EQ(times_us[i], times_us[0]) << "fault case " << i;
}

// A link down on a torus row does not stop an op along the columns (before session 20 it did:
// the per-axis fabric spans every row and column): the row runs as a line the op does not use,
// and the columns take the time they take without the fault.
TEST(FaultRun, ALinkDownOffTheOpsAxisLeavesItsGroupsAlone) {
  RunOptions along_columns;
  along_columns.system = "torus:4x4";
  along_columns.op = CollectiveOp::AllGather;
  along_columns.size_bytes = 64 * 1024;
  along_columns.no_data = true;
  along_columns.cluster_axis = 0;
  RunOptions faulted = along_columns;
  add_fault_spec(faulted.faults, "link-down:0-1");  // on row 0's ring, not on any column's
  const RunResult r = run_collective(faulted);
  EXPECT_EQ(r.time_us, run_collective(along_columns).time_us);
  ASSERT_EQ(r.rings_as_lines.size(), 1u);
  // In coordinate order, as the op's own groups would be named.
  EXPECT_THAT(r.rings_as_lines[0], HasSubstr("axis 1 ring 0-1-2-3-0 ran as line 1-2-3-0: link 0-1 is down"));
  EXPECT_THAT(r.rings_as_lines[0], HasSubstr("not one of the op's groups"));
}

// What a row cannot run around: a link down on a mesh row (a line has no other path), or two on
// one torus row. The fault, the group and what runs instead are named (exit 3, a fault).
TEST(FaultRun, ARowCutByDownLinksIsAFaultNamingTheGroup) {
  RunOptions mesh = torus_rows(CollectiveOp::AllGather, {"link-down:1-2"});
  mesh.system = "mesh:4x4";
  mesh.topology = "line";
  mesh.no_data = true;
  RunOptions two = torus_rows(CollectiveOp::AllGather, {"link-down:0-1", "link-down:2-3"});
  two.no_data = true;
  const std::vector<std::pair<RunOptions, std::vector<std::string>>> cases{
      {mesh, {"fault link-down:1-2 at 0 s", "axis 1 line 0-1-2-3 is cut", "a line with a down link has no path"}},
      {two, {"fault link-down:0-1, link-down:2-3 at 0 s", "axis 1 ring 0-1-2-3-0 is cut", "not two"}}};
  for (const auto& [options, needles] : cases) {
    try {
      run_collective(options);
      ADD_FAILURE() << "expected a fault naming " << needles[1];
    } catch (const runtime::DeviceError& e) {
      EXPECT_EQ(e.kind(), runtime::DeviceError::Kind::Fault);
      for (const std::string& needle : needles) EXPECT_THAT(e.what(), HasSubstr(needle));
      EXPECT_THAT(e.what(), HasSubstr("run --chips"));
      EXPECT_THAT(e.what(), HasSubstr("run without --cluster-axis"));
    }
  }
}

RunOptions whole_ring(CollectiveOp op, std::initializer_list<const char*> faults) {
  RunOptions options;
  options.system = "ring:8";
  options.op = op;
  options.size_bytes = 64 * 1024;
  for (const char* spec : faults) add_fault_spec(options.faults, spec);
  return options;
}

// A whole-system ring no other ring avoids a down link by (ring:8; session 22, until then refused
// as the fault with "a line avoids them ...: run --topology line") runs as the line from the chip
// after the link round to the chip before it, as a torus row does, whether the ring was asked or
// chosen by --topology auto, for every op. Ranks stay in the ring's order, so the outputs whose
// bytes do not depend on the order of a sum are the unfaulted ring's, byte for byte, and the
// reductions' are the host reference's (summed in the line's order). The run says which ring ran
// as which line and why.
TEST(FaultRun, AWholeSystemRingWithNoOtherRingRunsAsALineAroundADownLink) {
  struct Case {
    const char* fault;
    const char* line;
    const char* note;
  };
  const std::vector<Case> cases{
      {"link-down:0-1", "1-2-3-4-5-6-7-0",
       "ring 0-1-2-3-4-5-6-7-0 ran as line 1-2-3-4-5-6-7-0: link 0-1 is down (link-down:0-1); the op's group, which "
       "ran as that line (no other ring through all 8 chips avoids the link)"},
      {"link-down:5-4", "5-6-7-0-1-2-3-4",
       "ring 0-1-2-3-4-5-6-7-0 ran as line 5-6-7-0-1-2-3-4: link 4-5 is down (link-down:5-4); the op's group"}};
  for (const CollectiveOp op : {CollectiveOp::AllGather, CollectiveOp::ReduceScatter, CollectiveOp::AllReduce,
                                CollectiveOp::Reduce, CollectiveOp::Broadcast, CollectiveOp::AllToAll,
                                CollectiveOp::AllBroadcast, CollectiveOp::SendRecv}) {
    const bool same_bytes = op != CollectiveOp::ReduceScatter && op != CollectiveOp::AllReduce &&
                            op != CollectiveOp::Reduce;
    const RunResult unfaulted = run_collective(whole_ring(op, {}));
    EXPECT_EQ(unfaulted.topology, op == CollectiveOp::SendRecv ? "line" : "ring");  // send_recv's pair is a line
    for (const Case& c : cases) {
      for (const char* topology : {"auto", "ring"}) {
        SCOPED_TRACE(fmt::format("op {} {} --topology {}", static_cast<int>(op), c.fault, topology));
        RunOptions options = whole_ring(op, {c.fault});
        options.topology = topology;
        const RunResult r = run_collective(options);
        ASSERT_TRUE(r.verified.has_value());
        EXPECT_TRUE(*r.verified) << r.mismatch;
        EXPECT_EQ(r.wrong_elements, 0u);
        EXPECT_EQ(r.topology, "line");
        ASSERT_FALSE(r.checksums.empty());
        ASSERT_EQ(r.checksums.size(), unfaulted.checksums.size());
        for (std::size_t i = 0; i < r.checksums.size(); ++i) {
          const OutputChecksum& checksum = r.checksums[i];
          EXPECT_EQ(checksum.crc32, checksum.expected_crc32) << "chip " << checksum.chip;
          EXPECT_EQ(checksum.chip, unfaulted.checksums[i].chip);
          if (same_bytes) {
            EXPECT_EQ(checksum.crc32, unfaulted.checksums[i].crc32)
                << "chip " << checksum.chip << ": not the unfaulted run's bytes";
          }
        }
        EXPECT_EQ(r.fabric_order, c.line);
        ASSERT_EQ(r.rings_as_lines.size(), 1u);
        EXPECT_THAT(r.rings_as_lines[0], HasSubstr(c.note));
      }
    }
  }
}

// The T3K has another ring round a down 0-1 and runs it (as before session 22); round 0-2 it has
// none and runs its ring as a line from chip 2.
TEST(FaultRun, AT3kRingTakesAnotherRingWhereItHasOneElseRunsAsALine) {
  const RunResult rerouted = run_collective(all_gather({"link-down:0-1"}));
  expect_verified_with_matching_checksums(rerouted);
  EXPECT_EQ(rerouted.topology, "ring");
  EXPECT_TRUE(rerouted.rings_as_lines.empty());
  const RunResult opened = run_collective(all_gather({"link-down:0-2"}));
  expect_verified_with_matching_checksums(opened);
  EXPECT_EQ(opened.topology, "line");
  EXPECT_EQ(opened.fabric_order, "2-6-7-3-1-5-4-0");
  ASSERT_EQ(opened.rings_as_lines.size(), 1u);
  EXPECT_THAT(opened.rings_as_lines[0], HasSubstr("ring 4-0-2-6-7-3-1-5-4 ran as line 2-6-7-3-1-5-4-0: link 0-2 is "
                                                  "down (link-down:0-2)"));
}

// Two links down split ring:8 in two: no ring, no line through all 8 chips; refused as the fault
// (exit 3), naming both links, the ring and why it cannot run as a line around them.
TEST(FaultRun, AWholeSystemRingCutByTwoDownLinksIsAFaultNamingThem) {
  try {
    run_collective(whole_ring(CollectiveOp::AllGather, {"link-down:0-1", "link-down:4-5"}));
    ADD_FAILURE() << "expected ring:8 with two links down to be refused";
  } catch (const runtime::DeviceError& e) {
    EXPECT_EQ(e.kind(), runtime::DeviceError::Kind::Fault);
    EXPECT_THAT(e.what(), HasSubstr("fault link-down:0-1, link-down:4-5 at 0 s: the ring fabric 0-1-2-3-4-5-6-7-0 "
                                    "crosses the down link(s) and no other ring through all 8 chips avoids them"));
    EXPECT_THAT(e.what(), HasSubstr("the ring runs as a line around one down link, not 2 (0-1, 4-5)"));
    EXPECT_THAT(e.what(), Not(HasSubstr("a line avoids them")));
  }
}

TEST(FaultRun, DroppedFramesStopWithADiagnosisNamingTheLoss) {
  try {
    const RunResult r = run_collective(all_gather({"drop:0.05:3"}));
    ADD_FAILURE() << "completed; verified=" << (r.verified && *r.verified);
  } catch (const runtime::DeviceError& e) {
    EXPECT_THAT(e.what(), HasSubstr("drop:0.05:3")) << e.what();
    EXPECT_THAT(e.what(), HasSubstr("injected frame loss")) << e.what();
  }
}

// A lost frame need not hang the op (docs/faults.md, drop): a lost ack is made good by the next
// one, which carries the same running counts, and a packet that does not fill its slot goes out
// as two sends, the payload, then the sync word that announces it. Lose the payload alone and the
// receiver reads what the slot held before: an earlier packet's header, valid, so the op
// completes with pages never written and their semaphores counted (here 4 frames lost, two of
// them such packets: 8192 elements wrong). The run must say frames were lost, not leave a
// MISMATCH with no cause beside it (session 29 review: until then only the `# faults:` line
// listed the spec; seed 9 is the one fault_run's hang test used before the acks-first routers).
TEST(FaultRun, LostFramesInAnOpThatCompletedAreNamedBesideItsResult) {
  RunOptions options = all_gather({"drop:0.0005:9"});
  options.size_bytes = 1024 * 1024;
  const RunResult r = run_collective(options);
  ASSERT_TRUE(r.verified.has_value());
  EXPECT_FALSE(*r.verified);
  EXPECT_GT(r.wrong_elements, 0u);
  ASSERT_EQ(r.fault_effects.size(), 1u);
  EXPECT_THAT(r.fault_effects[0], ::testing::StartsWith("drop:0.0005:9: 4 frame(s) lost, and the op completed: "))
      << r.fault_effects[0];
  EXPECT_THAT(r.fault_effects[0], HasSubstr("read from what its receiver slot held before")) << r.fault_effects[0];
  // A run that lost nothing has no such line.
  const RunResult clean = run_collective(all_gather({"drop:0.0000001:1"}));
  EXPECT_TRUE(clean.fault_effects.empty());
}

// Duplicated frames may or may not hurt; whatever happens is reported honestly: a device error,
// or a result whose verdict agrees with the checksums and whose mismatch names chip, buffer,
// page and byte.
TEST(FaultRun, DuplicatedFramesNeverGiveAWrongResultReportedAsVerified) {
  for (const char* spec : {"dup:0.2:1", "dup:1"}) {
    try {
      const RunResult r = run_collective(all_gather({spec}));
      ASSERT_TRUE(r.verified.has_value());
      bool all_match = true;
      for (const OutputChecksum& c : r.checksums) all_match = all_match && c.crc32 == c.expected_crc32;
      EXPECT_EQ(*r.verified, all_match) << spec;
      EXPECT_EQ(*r.verified, r.wrong_elements == 0) << spec;
      if (!*r.verified) {
        EXPECT_THAT(r.mismatch, ::testing::MatchesRegex("chip [0-9]+ buffer 'output' page [0-9]+ byte [0-9]+: .*"));
      }
    } catch (const runtime::DeviceError& e) {
      EXPECT_THAT(e.what(), HasSubstr(spec)) << e.what();
    }
  }
}

// A link that goes down while the builders' all-gather runs: every waiting kernel's chain ends
// at the down link, not at the kernel's own reset of its semaphore after the wait (a command
// that cannot release it) mistaken for a cycle.
TEST(FaultRun, ALinkDownMidRunIsWhereEveryChainEnds) {
  try {
    const RunResult r = run_collective(all_gather({"link-down:0-2@12us"}));
    ADD_FAILURE() << "completed; verified=" << (r.verified && *r.verified);
  } catch (const runtime::DeviceError& e) {
    const std::string text = e.what();
    EXPECT_THAT(text, HasSubstr("link-down:0-2@12us: every link between chips 0 and 2 down at 12.000 us")) << text;
    EXPECT_THAT(text, HasSubstr("which is down (see the injected faults)")) << text;
    EXPECT_THAT(text, Not(HasSubstr("cycle"))) << text;
    EXPECT_THAT(text, Not(HasSubstr("would be written by"))) << text;
  }
}

// The hang report of a run that `fault` stops, or "" (and a failure) when it completes.
std::string hang_report_of(RunOptions options) {
  try {
    const RunResult r = run_collective(options);
    ADD_FAILURE() << "completed; verified=" << (r.verified && *r.verified);
  } catch (const runtime::DeviceError& e) {
    return e.what();
  }
  return "";
}

// The same link going down under the ring relay with 2 workers per link and direction: they
// share each router's worker channel through a fabric mux (REFERENCE 6.3). The chains follow a
// worker's connection through the mux to the router and its link, and a writer's route from the
// router its mux feeds, so they end at the down link as with 1 worker per link, not at the
// mux's core ("no fabric router runs at that core"), at an increment that seemed missing
// because the writer's route was not found, or at a reader parked on two streams.
TEST(FaultRun, ALinkDownMidRunIsWhereChainsThroughAFabricMuxEnd) {
  RunOptions options = all_gather({"link-down:0-2@12us"});
  options.size_bytes = 1024 * 1024;
  options.workers_per_link = 2;
  const std::string text = hang_report_of(options);
  EXPECT_THAT(text, HasSubstr("<- fabric mux chip 0 core (1,4) (2 client(s), 8 slots each)")) << text;
  EXPECT_THAT(text, HasSubstr("it copies them into router chip 0 ch 6 sender channel 0\n"
                              "    <- router chip 0 ch 6 sender channel 0 (from workers): 8 of 8 slots in use"))
      << text;
  EXPECT_THAT(text, HasSubstr("the link chip 0 ch 6 <-> chip 2 ch 6, which is down")) << text;
  EXPECT_THAT(text, HasSubstr("the link chip 2 ch 6 <-> chip 0 ch 6, which is down")) << text;
  // A reader parked with two streams left follows the CB it fills to the writer on its core.
  EXPECT_THAT(text, HasSubstr("its stream 1 waits for room in CB 1 (6 pushed, 0 popped, 6 of 6 pages filled), which "
                              "chip 0 core (1,3) [tensix (0,0) dm0] ccl_interpreter pops"))
      << text;
  // The worker's own wait names its peer as what the core is (the connection's arguments do not
  // say): the mux, not a router.
  EXPECT_THAT(text, HasSubstr("sender channel (8 slots, fabric mux at NoC0 (1,4))")) << text;
  EXPECT_THAT(text, Not(HasSubstr("router at NoC0 (1,4)"))) << text;
  EXPECT_THAT(text, Not(HasSubstr("no fabric router"))) << text;
  EXPECT_THAT(text, Not(HasSubstr("the increment is missing"))) << text;
  EXPECT_THAT(text, Not(HasSubstr("each of its streams waits for another"))) << text;
}

// A fabric mux's own chain (session 20): it starts at the mux's slots and clients, not at its
// kernel's wait (which said "each of its streams waits for another", an interpreter's words).
// The reduce_scatter with 2 workers per link, link 0-2 down at 306 us (near its end, so few
// kernels are parked and the muxes' chains are printed): a mux of chip 0 holds no packet, and its
// chain goes on to the client that has not closed its connection, where a chain above went,
// instead of ending at "it waits for its clients"; chip 2's mux toward the down link holds one.
// (Until session 29, link 0-2 at 395 us; until session 37, link 7-3 at 397 us, chips 6 and 3;
// until session 38, link 4-0 at 336 us, both muxes on chip 0: the reduced CB of two chunks ends
// this op at 308.95 us instead of 343.59, and of the ring's links from 270 to 306 us only 0-2 at
// 306, 7-3 and 3-1 at 298 still show both.) The chain, Auto's choice until session 33, pinned:
// the times above are its.
TEST(FaultRun, AnIdleFabricMuxsChainGoesOnToTheClientThatHasNotClosed) {
  RunOptions options = all_gather({"link-down:0-2@306us"});
  options.op = CollectiveOp::ReduceScatter;
  options.rs_ring_algorithm = "chain";
  options.size_bytes = 4 * 1024 * 1024;
  options.workers_per_link = 2;
  options.no_data = true;
  const std::string text = hang_report_of(options);
  EXPECT_THAT(text, HasSubstr("    -- fabric mux chip 0 core (7,3) (2 client(s), 8 slots each): 0 slot(s) in use (0, 0); it "
                              "holds no packet: it waits for its clients to send or to close; client 1 (chip 0 core "
                              "(4,3) [tensix (3,0) dm0] ccl_interpreter) has not closed\n"
                              "    <- chip 0 core (4,3) [tensix (3,0) dm0] ccl_interpreter (followed in a chain above)\n"))
      << text;
  EXPECT_THAT(text, HasSubstr("    -- fabric mux chip 2 core (7,3) (2 client(s), 8 slots each): 1 slot(s) in use (0, 1); it "
                              "copies them into router chip 2 ch 6 sender channel 0\n"))
      << text;
  EXPECT_THAT(text, Not(HasSubstr("each of its streams waits for another"))) << text;
  EXPECT_THAT(text, Not(HasSubstr("it waits for its clients\n"))) << text;
}

// The report's first line under its headline names the fault that took effect and how many of
// the parked worker kernels, on how many chips, wait on it, with 1 or 2 workers per link (the
// latter through fabric muxes, which are not counted: 2 workers per link park twice as many).
TEST(FaultRun, AHangReportLeadsWithTheFaultThatTookEffect) {
  for (const std::uint32_t workers : {1u, 2u}) {
    RunOptions options = all_gather({"link-down:0-2@12us"});
    options.size_bytes = 1024 * 1024;
    options.workers_per_link = workers;
    const std::string text = hang_report_of(options);
    const std::size_t first_end = text.find('\n');
    ASSERT_NE(first_end, std::string::npos) << text;
    EXPECT_THAT(text.substr(0, first_end), HasSubstr("hang at ")) << text;
    const std::string second = text.substr(first_end + 1, text.find('\n', first_end + 1) - first_end - 1);
    const std::uint32_t parked = 18 * workers;
    EXPECT_EQ(second, fmt::format("injected faults in effect: link 0-2 went down at 12.000 us (--fault "
                                  "link-down:0-2@12us): {} of the {} parked worker kernels (on 8 of the 8 chips with "
                                  "parked ones) wait on it (their wait-for chains end there)",
                                  parked, parked))
        << workers << " worker(s) per link:\n"
        << text;
  }
}

// The first `count` lines of a report (fewer when it has fewer).
std::vector<std::string> first_lines(const std::string& text, std::size_t count) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; lines.size() < count && std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Legacy mode (per-op EDMs, no fabric) with link 0-4 going down mid-run: the workers wait on
// semaphores no command stream writes, which the EDM increments once data or credits come over
// the link, or the core's other worker (the relay semaphore). Each worker's chain goes on to the
// EDM's channel and ends at the down link, so the first line counts them (it said "none of the
// 26 parked worker kernels (on 7 chips) waits on it": every chain ended at "the increment is
// missing", and the 10 parked EDMs were counted as workers). An EDM channel that waits for its
// worker (it announced a free buffer the worker has not taken) goes on to that worker.
TEST(FaultRun, ALegacyModeLinkDownMidRunIsWhereTheWorkersChainsEndThroughTheEdms) {
  RunOptions options = all_gather({"link-down:0-4@10us"});
  options.size_bytes = 1024 * 1024;
  options.mode = "legacy";
  const std::string text = hang_report_of(options);
  const std::vector<std::string> lines = first_lines(text, 2);
  ASSERT_EQ(lines.size(), 2u) << text;
  EXPECT_EQ(lines[1], "injected faults in effect: link 0-4 went down at 10.000 us (--fault link-down:0-4@10us): 14 of the "
                      "14 parked worker kernels (on 7 of the 7 chips with parked ones) wait on it (their wait-for chains "
                      "end there)")
      << text;
  EXPECT_THAT(text, HasSubstr("legacy_all_gather_sender is blocked in noc_semaphore_wait(semaphore id 1 at 0x20010 == 1, "
                              "now 0); legacy EDM chip 0 ch 8 writes it: +1 when its sender channel 0 has a free buffer for "
                              "the worker\n"
                              "    <- legacy EDM chip 0 ch 8 sender channel 0 (worker chip 0 core (2,3) [tensix (1,0) dm0] "
                              "legacy_all_gather_sender): 2 buffers, 2 of 12 messages filled by its worker, 0 acknowledged "
                              "by the peer, 0 completed; every buffer waits for the peer's level-1 ack across the link chip 0 "
                              "ch 8 <-> chip 4 ch 0, which is down"))
      << text;
  EXPECT_THAT(text, HasSubstr("chip 0 core (1,3) [tensix (0,0) dm1] legacy_all_gather_receiver writes it: +1 for each "
                              "message it has written to the output (the relay semaphore its core's sender waits on)\n"))
      << text;
  EXPECT_THAT(text, HasSubstr("    <- legacy EDM chip 5 ch 0 sender channel 0 (worker chip 5 core (2,3) [tensix (1,0) dm0] "
                              "legacy_all_gather_sender): 2 buffers, 9 of 12 messages filled by its worker, 9 acknowledged "
                              "by the peer, 9 completed; it has announced a free buffer its worker has not taken\n"
                              "    <- chip 5 core (2,3) [tensix (1,0) dm0] legacy_all_gather_sender is blocked in "))
      << text;
  EXPECT_THAT(text, Not(HasSubstr("the increment is missing"))) << text;
  EXPECT_THAT(text, Not(HasSubstr("each of its streams waits for another"))) << text;
}

// Legacy mode with link 0-4 going down at 40 us, near the end of a 256 KiB all_gather: every
// worker has finished, and only chip 4's EDM is parked, waiting for its last acks across the
// link. With no worker parked the first line counts the EDM (it named the fault without a count:
// there was no worker to count).
TEST(FaultRun, WhenOnlyLegacyEdmsAreParkedTheFirstLineCountsThem) {
  RunOptions options = all_gather({"link-down:0-4@40us"});
  options.size_bytes = 256 * 1024;
  options.mode = "legacy";
  const std::string text = hang_report_of(options);
  const std::vector<std::string> lines = first_lines(text, 2);
  ASSERT_EQ(lines.size(), 2u) << text;
  EXPECT_EQ(lines[1], "injected faults in effect: link 0-4 went down at 40.000 us (--fault link-down:0-4@40us): no worker "
                      "kernel is parked, but 1 of the 1 parked legacy EDM (on 1 of the 1 chip with parked ones) waits on "
                      "it (its wait-for chain ends there)")
      << text;
  EXPECT_THAT(text, HasSubstr("    <- legacy EDM chip 4 ch 0 sender channel 0 (worker chip 4 core (1,3) [tensix (0,0) dm0] "
                              "legacy_all_gather_sender): 2 buffers, 4 of 4 messages filled by its worker, 3 acknowledged by "
                              "the peer, 3 completed; its last messages wait for the peer's acks across the link chip 4 ch 0 "
                              "<-> chip 0 ch 8, which is down"))
      << text;
}

// A legacy reduce_scatter's chains go ~4 steps per chip round the 8-ring (worker, EDM sender
// channel, the peer's receiver channel, its worker ...), past the 16 steps a chain prints: they
// are followed on (up to kMaxFollowedSteps) and counted where they end, the down link. Before,
// a chain stopped at 16 steps was counted nowhere: "21 of the 48 parked worker kernels (on 5 of
// the 8 chips ...)".
TEST(FaultRun, ALegacyReduceScatterCountsTheChainsLongerThanTheyPrint) {
  RunOptions options = all_gather({"link-down:0-4@20us"});
  options.op = CollectiveOp::ReduceScatter;
  options.size_bytes = 1024 * 1024;
  options.mode = "legacy";
  const std::string text = hang_report_of(options);
  const std::vector<std::string> lines = first_lines(text, 2);
  ASSERT_EQ(lines.size(), 2u) << text;
  EXPECT_EQ(lines[1], "injected faults in effect: link 0-4 went down at 20.000 us (--fault link-down:0-4@20us): 48 of the "
                      "48 parked worker kernels (on 8 of the 8 chips with parked ones) wait on it (their wait-for chains "
                      "end there)")
      << text;
  EXPECT_THAT(text, HasSubstr(" more step(s) not shown)\n")) << text;
  EXPECT_THAT(text, Not(HasSubstr("(stopped after"))) << text;
}

// Frames lost, then a link taken down at 5 ms, long after the run hung: the engine runs on to the
// link-down once every kernel has parked, so the link is down when the report is written, but no
// kernel saw it. The report's first lines keep the loss, which the chains end at, apart from the
// link-down, after the last progress (the last time any kernel ran), which dropped nothing.
// (Seed 9 until session 29: with the acks-first routers the frames go out in another order and
// its losses are two acks, made good by later ones, and two data packets whose separate sync
// words arrived: the op completes with wrong output, exit 1, not a hang
// (LostFramesInAnOpThatCompletedAreNamedBesideItsResult); 7 is the first seed from 1 that hangs.)
TEST(FaultRun, ALinkDownAfterTheLastProgressIsReportedApart) {
  RunOptions options = all_gather({"drop:0.0005:7", "link-down:0-1@5ms"});
  options.size_bytes = 1024 * 1024;
  const std::string text = hang_report_of(options);
  const std::vector<std::string> lines = first_lines(text, 3);
  ASSERT_EQ(lines.size(), 3u) << text;
  EXPECT_EQ(lines[0], "hang at 5.000 ms: the enqueued workloads cannot complete; no event is left to wake the kernels "
                      "below")
      << text;
  EXPECT_EQ(lines[1], "injected faults in effect: 3 frame(s) lost (--fault drop:0.0005:7): 8 of the 8 parked worker "
                      "kernels (on 3 of the 3 chips with parked ones) wait on a link that lost frames (their wait-for "
                      "chains end there)")
      << text;
  EXPECT_EQ(lines[2], "injected faults after the last progress (the last time any kernel ran, at 62.986 us): link 0-1 "
                      "went down at 5.000 ms (--fault link-down:0-1@5ms) and dropped nothing: not why the run hung")
      << text;
}

// A link-down after the last progress that still dropped a packet: during the fabric's start-up
// on an n300, the router has sent its packet and parked (the last progress, 4.066 us) when the
// link goes down at 4.100 us, before the packet starts on the wire, so it is dropped. The report
// puts the fault after the last progress and says it can be why the run hung.
TEST(FaultRun, ALinkDownAfterTheLastProgressThatDroppedAPacketCanBeWhy) {
  RunOptions options = all_gather({"link-down:0-1@4100ns"}, "auto");
  options.system = "n300";
  options.op = CollectiveOp::SendRecv;
  options.size_bytes = 2048;
  const std::string text = hang_report_of(options);
  const std::vector<std::string> lines = first_lines(text, 2);
  ASSERT_EQ(lines.size(), 2u) << text;
  EXPECT_EQ(lines[1], "injected faults after the last progress (the last time any kernel ran, at 4.066 us): link 0-1 "
                      "went down at 4.100 us (--fault link-down:0-1@4100ns) and dropped 1 packet already on its way, "
                      "which can be why the run hung")
      << text;
}

// A corrupted packet is caught by the output check: the run completes, is not verified, the
// checksums of the chips it reached differ, the first mismatch names chip, buffer, page and
// byte, and the fault says which bit of which packet it flipped. Seeded: the same every time.
TEST(FaultRun, ACorruptedPacketIsAMismatchNamingChipBufferPageAndByte) {
  for (const char* topology : {"ring", "line"}) {
    const RunResult r = run_collective(all_gather({"corrupt:0-2:5"}, topology));
    ASSERT_TRUE(r.verified.has_value()) << topology;
    EXPECT_FALSE(*r.verified) << topology;
    EXPECT_GT(r.wrong_elements, 0u) << topology;
    EXPECT_THAT(r.mismatch, ::testing::MatchesRegex("chip [0-9]+ buffer 'output' page [0-9]+ byte [0-9]+: "
                                                    "expected 0x[0-9a-f]+, got 0x[0-9a-f]+"))
        << topology;
    std::size_t differing = 0;
    for (const OutputChecksum& c : r.checksums) differing += c.crc32 != c.expected_crc32 ? 1 : 0;
    EXPECT_GT(differing, 0u) << topology;
    ASSERT_EQ(r.fault_effects.size(), 1u) << topology;
    EXPECT_THAT(r.fault_effects[0], ::testing::StartsWith("corrupt:0-2:5: flipped bit ")) << topology;
    const RunResult again = run_collective(all_gather({"corrupt:0-2:5"}, topology));
    EXPECT_EQ(again.mismatch, r.mismatch) << topology;
    EXPECT_EQ(again.fault_effects, r.fault_effects) << topology;
  }
}

// A corruption armed after the op has finished flips nothing, and the run says so.
TEST(FaultRun, ACorruptionThatMeetsNoPacketChangesNothing) {
  const RunResult r = run_collective(all_gather({"corrupt:0-2@1ms"}));
  expect_verified_with_matching_checksums(r);
  ASSERT_EQ(r.fault_effects.size(), 1u);
  EXPECT_THAT(r.fault_effects[0], HasSubstr("no packet of at least 81 B with data started on the link(s) from 1.000 ms"));
}

TEST(FaultRun, CorruptionNeedsData) {
  RunOptions options = all_gather({"corrupt:0-2"});
  options.no_data = true;
  try {
    run_collective(options);
    ADD_FAILURE() << "a --no-data run accepted a corrupt fault";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("--fault: 'corrupt:0-2' flips a bit of payload data")) << e.what();
  }
}

// The report of a T3K all_gather of `bytes` stopped by a --max-sim-time of `limit_us`.
std::string t3k_all_gather_stopped_at(std::uint64_t bytes, sim::SimTime limit, bool no_data) {
  RunOptions options;
  options.system = "t3k";
  options.op = CollectiveOp::AllGather;
  options.size_bytes = bytes;
  options.no_data = no_data;
  options.max_sim_time = limit;
  try {
    run_collective(options);
  } catch (const runtime::DeviceError& e) {
    return e.what();
  }
  ADD_FAILURE() << "a " << bytes << " B all_gather completed within " << limit.ps() << " ps";
  return "";
}

// A run stopped by --max-sim-time is a snapshot of a busy mesh, not a hang: a chain that ends at
// a receiver holding nothing said "the packets or acks between the two ends were lost" (session
// 28's bug bash) when the packets were only on their way. It now counts the packets its peer
// sent that had not landed.
TEST(FaultRun, ATimeoutsChainsSayPacketsWereOnTheirWayNotLost) {
  const std::string report = t3k_all_gather_stopped_at(1024 * 1024, sim::SimTime::from_us(30), true);
  EXPECT_THAT(report, HasSubstr("timeout: simulated time passed the limit of 30.000 us"));
  EXPECT_THAT(report, HasSubstr("had not landed when the run stopped"));
  EXPECT_THAT(report, Not(HasSubstr("were lost")));
}

// Session 28's output bug bash: a sweep with --max-sim-time 40us stopped its 512 KiB all_gather
// just after a fabric mux's last client closed and before the mux's round that ends it. The
// wait-for chain took that for a hang's impossible state and failed an internal check (exit 4,
// and the sweep wrote none of its files); kernels between steps were "blocked in " nothing. A
// time limit's snapshot now says the mux was about to end and that such a kernel was running.
// Since session 29's acks-first routers the 512 KiB op has no such moment (none in 20 ns steps
// from 30 to 41 us); the 1 MiB one has, from 61.36 to 61.90 us.
TEST(FaultRun, ATimeoutJustAfterAMuxsLastCloseIsReportedNotAnInternalError) {
  const std::string report = t3k_all_gather_stopped_at(1024 * 1024, sim::SimTime::from_ns(61'600), false);
  EXPECT_THAT(report, HasSubstr("timeout: simulated time passed the limit of 61.600 us"));
  EXPECT_THAT(report, HasSubstr("the time limit stopped the run before the mux saw the last close and ended"));
  EXPECT_THAT(report, Not(HasSubstr("blocked in  ")));
}

}  // namespace
}  // namespace cclmesh::cli
