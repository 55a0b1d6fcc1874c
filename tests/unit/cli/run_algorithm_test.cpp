// Every run says which algorithm its op ran and why, from the op builder's own choice: where
// `auto` switches by size or topology (all_gather relay / multicast, reduce_scatter one-shot /
// chain, all_to_all's rounds, broadcast both-ways / split), --json's "algorithm" and "algorithm_reason" show it, so a sweep's
// step in its curve can be read off its points. all_reduce's reduce_scatter + all_gather records
// each half's too ("halves"), and its composite what its all_gather ran. A ring run as a line
// around a down link records what the line ran.
// The --report page says it too.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "tools/cclmesh/all_reduce_halves.hpp"
#include "tools/cclmesh/fault_spec.hpp"
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
  EXPECT_EQ(result_json(ring)["algorithm_reason"],
            "auto: a fabric ring relays; full-tensor, auto: each chip's input (131072 B) is at most twice the "
            "ERISC's unreserved L1 (153600 B)");
  const RunResult line = run("t3k", CollectiveOp::AllGather, 1 * kMiB, "line");
  EXPECT_EQ(result_json(line)["algorithm"], "multicast");
  EXPECT_EQ(result_json(line)["algorithm_reason"], "auto: a line multicasts");
  // Not a fallback: the table gets no note under it.
  EXPECT_EQ(algorithm_note(ring), "");
}

// REFERENCE 7.3's rule (split-tensor when each chip's input is over twice the ERISC's unreserved
// L1) and --ag-bidirectional-mode's override (session 45: the library had it, the CLI did not).
// Each mode moves the data its own way: the results are checked with data, and the modes' times
// differ.
RunOptions t3k_ring_all_gather(std::uint64_t size, const char* bidirectional_mode) {
  RunOptions options;
  options.system = "t3k";
  options.op = CollectiveOp::AllGather;
  options.size_bytes = size;
  options.topology = "ring";
  options.ag_bidirectional_mode = bidirectional_mode;
  return options;
}

TEST(RunAlgorithm, AllGatherRingSaysWhichBidirectionalModeRanAndTakesTheOverride) {
  const RunResult big = run("t3k", CollectiveOp::AllGather, 8 * kMiB, "ring");
  EXPECT_EQ(result_json(big)["algorithm_reason"],
            "auto: a fabric ring relays; split-tensor, auto: each chip's input (1048576 B) is over twice the "
            "ERISC's unreserved L1 (153600 B)");
  RunOptions asked = t3k_ring_all_gather(8 * kMiB, "full-tensor");
  asked.no_data = true;
  const RunResult full = run_collective(asked);
  EXPECT_EQ(result_json(full)["algorithm_reason"], "auto: a fabric ring relays; full-tensor, asked for");
  EXPECT_EQ(result_json(full)["settings"]["ag_bidirectional_mode"], "full-tensor");
  EXPECT_FALSE(result_json(big)["settings"].contains("ag_bidirectional_mode"));
  EXPECT_NE(full.time_us, big.time_us);
  // With data, both ways round a fabric ring: relay and multicast, each mode asked.
  for (const char* mode : {"split-tensor", "full-tensor"}) {
    for (const char* algorithm : {"relay", "multicast"}) {
      SCOPED_TRACE(std::string(mode) + " " + algorithm);
      RunOptions data = t3k_ring_all_gather(512 * kKiB, mode);
      data.ag_ring_algorithm = algorithm;
      const RunResult r = run_collective(data);
      EXPECT_EQ(r.verified, std::optional<bool>(true));
      EXPECT_EQ(r.wrong_elements, 0U);
      EXPECT_EQ(result_json(r)["algorithm_reason"], std::string("asked for; ") + mode + ", asked for");
    }
  }
}

TEST(RunAlgorithm, ReduceScatterRunsTheOneShotUpTo512KiBPerChipAndTheHalfWayPast) {
  const RunResult small = run("t3k", CollectiveOp::ReduceScatter, 256 * kKiB, "ring");
  EXPECT_EQ(result_json(small)["algorithm"], "one-shot");
  EXPECT_EQ(result_json(small)["algorithm_reason"], "auto: 262144 B per chip are within the one-shot's 524288 B");
  const RunResult large = run("t3k", CollectiveOp::ReduceScatter, 16 * kMiB, "ring");
  EXPECT_EQ(result_json(large)["algorithm"], "half-way");
  EXPECT_EQ(result_json(large)["algorithm_reason"],
            "auto: 16777216 B per chip are past the one-shot's 524288 B, so the half-way ring");
  // A line runs the line algorithm asked: two_sided by default.
  EXPECT_EQ(run("t3k", CollectiveOp::ReduceScatter, 256 * kKiB, "line").algorithm, "two_sided");
}

TEST(RunAlgorithm, AllToAllInterleavesOnLinesAndRings) {
  // T3K's 4-chip rows along axis 1 are lines of 4, the whole T3K an 8-ring: both interleave by
  // default since session 29's acks-first routers (the ring sent one destination at a time).
  RunOptions rows;
  rows.system = "t3k";
  rows.op = CollectiveOp::AllToAll;
  rows.size_bytes = 64 * kKiB;
  rows.topology = "line";
  rows.cluster_axis = 1;
  rows.no_data = true;
  const RunResult line = run_collective(rows);
  EXPECT_EQ(line.algorithm, "interleaved");
  EXPECT_EQ(line.algorithm_reason, "auto: a line of 4 chips interleaves its destinations over 256 rounds; senders auto: "
                                   "per-direction, 65536 B per chip are below the 1048576 B from which one sender per "
                                   "destination gains more than its fabric mux costs");
  const RunResult ring = run("t3k", CollectiveOp::AllToAll, 64 * kKiB, "ring");
  EXPECT_EQ(ring.algorithm, "interleaved");
  EXPECT_EQ(ring.algorithm_reason, "auto: a ring interleaves its destinations over 256 rounds; senders auto: "
                                   "per-direction, 65536 B per chip are below the 1048576 B from which one sender per "
                                   "destination gains more than its fabric mux costs");
}

// --a2a-senders: what was asked is recorded with the rounds, and in the settings only when asked
// (per-direction: the layout before session 36; a 2-chip line's one destination each way is the
// same either way).
TEST(RunAlgorithm, AllToAllRecordsTheSendersAsked) {
  RunOptions ring;
  ring.system = "t3k";
  ring.op = CollectiveOp::AllToAll;
  ring.size_bytes = 64 * kKiB;
  ring.no_data = true;
  ring.a2a_senders = "per-direction";
  nlohmann::json j = result_json(run_collective(ring));
  EXPECT_EQ(j["algorithm_reason"], "auto: a ring interleaves its destinations over 256 rounds; senders asked for: "
                                   "per-direction, one up and one down sender per link");
  EXPECT_EQ(j["settings"]["a2a_senders"], "per-direction");
  RunOptions n300 = ring;
  n300.system = "n300";
  n300.topology = "line";
  n300.a2a_senders = "auto";
  j = result_json(run_collective(n300));
  EXPECT_EQ(j["algorithm_reason"], "auto: a line of 2 chips interleaves its destinations over 256 rounds; senders "
                                   "auto: per-direction, 65536 B per chip are below the 1048576 B from which one "
                                   "sender per destination gains more than its fabric mux costs");
  EXPECT_FALSE(j["settings"].contains("a2a_senders"));
  // From 1 MiB a chip on, auto runs one sender per destination: on the T3K's 8-line capped at a
  // mux's 6 clients.
  RunOptions line = ring;
  line.topology = "line";
  line.size_bytes = 1024 * kKiB;
  line.a2a_senders = "auto";
  EXPECT_EQ(run_collective(line).algorithm_reason,
            "auto: a line of 8 chips interleaves its destinations over 256 rounds; senders auto: per-destination, "
            "capped at 6 senders per link and direction (of 7: a fabric mux takes at most 6 clients), some with "
            "several destinations");
  ring.size_bytes = 1024 * kKiB;
  ring.a2a_senders = "auto";
  EXPECT_EQ(run_collective(ring).algorithm_reason,
            "auto: a ring interleaves its destinations over 256 rounds; senders auto: per-destination, 8 senders a "
            "chip per link, each direction's sharing the router through a fabric mux (REFERENCE 7.6, 6.3)");
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

// all_reduce's reduce_scatter + all_gather: "algorithm" stays rs-ag, and "halves" says what each
// half ran, from the halves' own choice functions: the reduce_scatter half's ring algorithm by the
// whole tensor (T3K 256 KiB the one-shot, 1 MiB the half-way ring), the all_gather half's relay.
TEST(RunAlgorithm, AllReduceRecordsWhatEachHalfRanOnARing) {
  const nlohmann::json small = result_json(run("t3k", CollectiveOp::AllReduce, 256 * kKiB, "ring"));
  EXPECT_EQ(small["algorithm"], "rs-ag");
  EXPECT_EQ(small["halves"],
            nlohmann::json::parse(R"json({"reduce_scatter": {"algorithm": "one-shot",
                                      "reason": "auto: 262144 B per chip are within the one-shot's 524288 B"},
                                      "all_gather": {"algorithm": "relay", "reason": "auto: a fabric ring relays"}})json"));
  const nlohmann::json large = result_json(run("t3k", CollectiveOp::AllReduce, 1 * kMiB, "ring"));
  EXPECT_EQ(large["algorithm"], "rs-ag");
  EXPECT_EQ(large["halves"]["reduce_scatter"]["algorithm"], "half-way");
  EXPECT_EQ(large["halves"]["reduce_scatter"]["reason"],
            "auto: 1048576 B per chip are past the one-shot's 524288 B, so the half-way ring");
  EXPECT_EQ(large["halves"]["all_gather"]["algorithm"], "relay");
  // Not fallbacks: nothing under the table.
  EXPECT_EQ(algorithm_note(run("t3k", CollectiveOp::AllReduce, 1 * kMiB, "ring")), "");
}

TEST(RunAlgorithm, AllReduceOnALineRecordsTheLineAlgorithmAndTheMulticast) {
  const nlohmann::json line = result_json(run("t3k", CollectiveOp::AllReduce, 256 * kKiB, "line"));
  EXPECT_EQ(line["algorithm"], "rs-ag");
  EXPECT_EQ(line["halves"]["reduce_scatter"]["algorithm"], "two_sided");
  EXPECT_EQ(line["halves"]["reduce_scatter"]["reason"], "a line runs --rs-line-algorithm's (two_sided by default)");
  EXPECT_EQ(line["halves"]["all_gather"]["algorithm"], "multicast");
  EXPECT_EQ(line["halves"]["all_gather"]["reason"], "auto: a line multicasts");
  RunOptions wrap;
  wrap.system = "t3k";
  wrap.op = CollectiveOp::AllReduce;
  wrap.size_bytes = 256 * kKiB;
  wrap.topology = "line";
  wrap.rs_line_algorithm = "wrap";
  wrap.no_data = true;
  EXPECT_EQ(result_json(run_collective(wrap))["halves"]["reduce_scatter"]["algorithm"], "wrap");
}

TEST(RunAlgorithm, AllReduceRecordsTheAllGatherHalfAsked) {
  RunOptions options;
  options.system = "t3k";
  options.op = CollectiveOp::AllReduce;
  options.size_bytes = 256 * kKiB;
  options.topology = "ring";
  options.ag_ring_algorithm = "multicast";
  options.rs_ring_algorithm = "chain";
  options.no_data = true;
  const nlohmann::json j = result_json(run_collective(options));
  EXPECT_EQ(j["halves"]["all_gather"]["algorithm"], "multicast");
  EXPECT_EQ(j["halves"]["all_gather"]["reason"], "asked for");
  EXPECT_EQ(j["halves"]["reduce_scatter"]["algorithm"], "chain");
  EXPECT_EQ(j["halves"]["reduce_scatter"]["reason"], "asked for");
}

// The composite's all_gather chooses too (relay or multicast), and "halves" records it alone: the
// composite has no reduce_scatter half, its other step is a local sum. The T3K ring's 489 pages
// fall back to it (Auto) and relay; asked for with --ag-ring-algorithm multicast, it multicasts.
TEST(RunAlgorithm, AllReduceCompositeRecordsWhatItsAllGatherRan) {
  const nlohmann::json fallback = result_json(run("t3k", CollectiveOp::AllReduce, 1001472, "ring"));
  EXPECT_EQ(fallback["algorithm"], "composite");
  EXPECT_EQ(fallback["halves"],
            nlohmann::json::parse(R"json({"all_gather": {"algorithm": "relay", "reason": "auto: a fabric ring relays"}})json"));
  RunOptions asked;
  asked.system = "t3k";
  asked.op = CollectiveOp::AllReduce;
  asked.size_bytes = 256 * kKiB;
  asked.topology = "ring";
  asked.all_reduce_algo = "composite";
  asked.ag_ring_algorithm = "multicast";
  asked.no_data = true;
  const nlohmann::json j = result_json(run_collective(asked));
  EXPECT_EQ(j["algorithm"], "composite");
  EXPECT_EQ(j["halves"],
            nlohmann::json::parse(R"json({"all_gather": {"algorithm": "multicast", "reason": "asked for"}})json"));
  asked.topology = "line";
  asked.ag_ring_algorithm = "auto";
  const nlohmann::json line = result_json(run_collective(asked));
  EXPECT_EQ(line["halves"],
            nlohmann::json::parse(R"json({"all_gather": {"algorithm": "multicast", "reason": "auto: a line multicasts"}})json"));
}

// "halves" reads back as it was written, with the reduce_scatter half (rs-ag) and without it (the
// composite), the lines' records included.
TEST(RunAlgorithm, AllReduceHalvesJsonReadsBackWithAndWithoutTheReduceScatterHalf) {
  const AllReduceHalves both{AlgorithmRecord{"one-shot", "auto: 262144 B per chip are within the one-shot's 524288 B",
                                             "two_sided", "ran as a line around a down link: ..."},
                             AlgorithmRecord{"relay", "auto: a fabric ring relays", "", ""}};
  const nlohmann::json both_json = halves_json(both);
  EXPECT_TRUE(both_json.contains("reduce_scatter"));
  const AllReduceHalves both_back = halves_from_json(both_json);
  ASSERT_TRUE(both_back.reduce_scatter.has_value());
  EXPECT_EQ(both_back.reduce_scatter->algorithm, "one-shot");
  EXPECT_EQ(both_back.reduce_scatter->lines_algorithm, "two_sided");
  EXPECT_EQ(both_back.reduce_scatter->lines_reason, "ran as a line around a down link: ...");
  EXPECT_EQ(both_back.all_gather.algorithm, "relay");
  EXPECT_EQ(halves_json(both_back), both_json);

  const AllReduceHalves gather_only{std::nullopt, AlgorithmRecord{"multicast", "asked for", "", ""}};
  const nlohmann::json gather_json = halves_json(gather_only);
  EXPECT_EQ(gather_json, nlohmann::json::parse(R"json({"all_gather": {"algorithm": "multicast", "reason": "asked for"}})json"));
  const AllReduceHalves gather_back = halves_from_json(gather_json);
  EXPECT_FALSE(gather_back.reduce_scatter.has_value());
  EXPECT_EQ(gather_back.all_gather.algorithm, "multicast");
  EXPECT_EQ(gather_back.all_gather.reason, "asked for");
}

// The one-shot has no halves, and legacy mode's halves and composite gather run their EDM
// algorithms, which choose nothing (as its own all_gather and reduce_scatter record none).
TEST(RunAlgorithm, AllReduceWithoutHalvesThatChooseRecordsNone) {
  const nlohmann::json one_shot = result_json(run("t3k", CollectiveOp::AllReduce, 16 * kKiB, "ring"));
  EXPECT_EQ(one_shot["algorithm"], "one-shot");
  EXPECT_FALSE(one_shot.contains("halves"));
  RunOptions legacy_composite;
  legacy_composite.system = "t3k";
  legacy_composite.op = CollectiveOp::AllReduce;
  legacy_composite.size_bytes = 16 * kKiB;
  legacy_composite.topology = "ring";
  legacy_composite.mode = "legacy";
  legacy_composite.all_reduce_algo = "composite";
  legacy_composite.no_data = true;
  const nlohmann::json composite = result_json(run_collective(legacy_composite));
  EXPECT_EQ(composite["algorithm"], "composite");
  EXPECT_FALSE(composite.contains("halves"));
  RunOptions legacy;
  legacy.system = "t3k";
  legacy.op = CollectiveOp::AllReduce;
  legacy.size_bytes = 1 * kMiB;
  legacy.topology = "ring";
  legacy.mode = "legacy";
  legacy.no_data = true;
  const nlohmann::json j = result_json(run_collective(legacy));
  EXPECT_EQ(j["algorithm"], "rs-ag");
  EXPECT_FALSE(j.contains("halves"));
}

// A ring opened into a line around a down link runs its halves as a line does, and says so: the
// whole T3K ring (every group a line), or one torus row beside the other rows' rings (the rings'
// halves, and the lines' under "lines").
TEST(RunAlgorithm, AllReduceHalvesOfARingRunAsALineAreTheLines) {
  RunOptions whole;
  whole.system = "t3k";
  whole.op = CollectiveOp::AllReduce;
  whole.size_bytes = 256 * kKiB;
  whole.topology = "ring";
  whole.no_data = true;
  add_fault_spec(whole.faults, "link-down:0-2");
  const RunResult opened = run_collective(whole);
  ASSERT_EQ(opened.rings_as_lines.size(), 1u);
  const nlohmann::json j = result_json(opened);
  EXPECT_EQ(j["halves"]["reduce_scatter"]["algorithm"], "two_sided");
  EXPECT_EQ(j["halves"]["reduce_scatter"]["reason"],
            "ran as a line around a down link: a line runs --rs-line-algorithm's (two_sided by default)");
  EXPECT_FALSE(j["halves"]["reduce_scatter"].contains("lines"));
  EXPECT_EQ(j["halves"]["all_gather"]["algorithm"], "multicast");
  EXPECT_EQ(j["halves"]["all_gather"]["reason"], "ran as a line around a down link: auto: a line multicasts");

  RunOptions rows;
  rows.system = "torus:4x4";
  rows.op = CollectiveOp::AllReduce;
  rows.size_bytes = 256 * kKiB;
  rows.topology = "ring";
  rows.cluster_axis = 1;
  rows.no_data = true;
  add_fault_spec(rows.faults, "link-down:3-0");
  const nlohmann::json mixed = result_json(run_collective(rows));
  EXPECT_EQ(mixed["halves"],
            nlohmann::json::parse(R"json({
              "reduce_scatter": {"algorithm": "one-shot",
                                 "reason": "auto: 262144 B per chip are within the one-shot's 524288 B",
                                 "lines": {"algorithm": "two_sided", "reason": "ran as a line around a down link: a line runs --rs-line-algorithm's (two_sided by default)"}},
              "all_gather": {"algorithm": "relay", "reason": "auto: a fabric ring relays",
                             "lines": {"algorithm": "multicast", "reason": "ran as a line around a down link: auto: a line multicasts"}}})json"));
}

// A standalone reduce_scatter or all_gather on a ring opened into a line records what the line
// ran, as all_reduce's halves do: the whole T3K ring opened by link-down:0-2 ran the line's
// two_sided and multicast (not the ring's one-shot and relay); where only one torus row opened,
// the rows' rings' choice, and the line's under "algorithm_lines".
RunOptions opened_ring(const char* system, CollectiveOp op, const char* fault) {
  RunOptions options;
  options.system = system;
  options.op = op;
  options.size_bytes = 256 * kKiB;
  options.topology = "ring";
  options.no_data = true;
  add_fault_spec(options.faults, fault);
  return options;
}

TEST(RunAlgorithm, ReduceScatterAndAllGatherOfARingRunAsALineAreTheLines) {
  const RunResult rs = run_collective(opened_ring("t3k", CollectiveOp::ReduceScatter, "link-down:0-2"));
  ASSERT_EQ(rs.rings_as_lines.size(), 1u);
  nlohmann::json j = result_json(rs);
  EXPECT_EQ(j["algorithm"], "two_sided");
  EXPECT_EQ(j["algorithm_reason"],
            "ran as a line around a down link: a line runs --rs-line-algorithm's (two_sided by default)");
  EXPECT_FALSE(j.contains("algorithm_lines"));
  const RunResult ag = run_collective(opened_ring("t3k", CollectiveOp::AllGather, "link-down:0-2"));
  ASSERT_EQ(ag.rings_as_lines.size(), 1u);
  j = result_json(ag);
  EXPECT_EQ(j["algorithm"], "multicast");
  EXPECT_EQ(j["algorithm_reason"], "ran as a line around a down link: auto: a line multicasts");
  EXPECT_FALSE(j.contains("algorithm_lines"));

  RunOptions rs_rows = opened_ring("torus:4x4", CollectiveOp::ReduceScatter, "link-down:3-0");
  rs_rows.cluster_axis = 1;
  const RunResult rs_mixed = run_collective(rs_rows);
  ASSERT_EQ(rs_mixed.rings_as_lines.size(), 1u);
  j = result_json(rs_mixed);
  EXPECT_EQ(j["algorithm"], "one-shot");
  EXPECT_EQ(j["algorithm_reason"], "auto: 262144 B per chip are within the one-shot's 524288 B");
  EXPECT_EQ(j["algorithm_lines"],
            nlohmann::json::parse(R"json({"algorithm": "two_sided", "reason": "ran as a line around a down link: a line runs --rs-line-algorithm's (two_sided by default)"})json"));
  RunOptions ag_rows = opened_ring("torus:4x4", CollectiveOp::AllGather, "link-down:3-0");
  ag_rows.cluster_axis = 1;
  const RunResult ag_mixed = run_collective(ag_rows);
  j = result_json(ag_mixed);
  EXPECT_EQ(j["algorithm"], "relay");
  EXPECT_EQ(j["algorithm_reason"],
            "auto: a fabric ring relays; full-tensor, auto: each chip's input (65536 B) is at most twice the ERISC's "
            "unreserved L1 (153600 B)");
  EXPECT_EQ(j["algorithm_lines"],
            nlohmann::json::parse(R"json({"algorithm": "multicast", "reason": "ran as a line around a down link: auto: a line multicasts"})json"));
  // The report page says both.
  const std::string page = html_report(ag_mixed, topo::load_system("torus:4x4"));
  EXPECT_THAT(page, HasSubstr("algorithm relay: auto: a fabric ring relays"));
  EXPECT_THAT(page, HasSubstr("on the rings run as lines, algorithm multicast: ran as a line around a down link: "
                              "auto: a line multicasts"));
  // A ring that stayed whole has no lines to record.
  EXPECT_FALSE(result_json(run("t3k", CollectiveOp::AllGather, 256 * kKiB, "ring")).contains("algorithm_lines"));
}

// all_to_all's rounds follow the shape too: an opened line of 4 records its own reason beside the
// rings' (the rounds the builder's resolve() takes; since session 29 both interleave).
TEST(RunAlgorithm, AllToAllOfARingRunAsALineRecordsTheLinesRounds) {
  RunOptions rows = opened_ring("torus:4x4", CollectiveOp::AllToAll, "link-down:3-0");
  rows.cluster_axis = 1;
  const RunResult mixed = run_collective(rows);
  ASSERT_EQ(mixed.rings_as_lines.size(), 1u);
  nlohmann::json j = result_json(mixed);
  EXPECT_EQ(j["algorithm"], "interleaved");
  EXPECT_EQ(j["algorithm_reason"], "auto: a ring interleaves its destinations over 256 rounds; senders auto: "
                                   "per-direction, 262144 B per chip are below the 1048576 B from which one sender per "
                                   "destination gains more than its fabric mux costs");
  EXPECT_EQ(j["algorithm_lines"],
            nlohmann::json::parse(R"json({"algorithm": "interleaved", "reason": "ran as a line around a down link: auto: a line of 4 chips interleaves its destinations over 256 rounds; senders auto: per-direction, 262144 B per chip are below the 1048576 B from which one sender per destination gains more than its fabric mux costs"})json"));
  j = result_json(run_collective(opened_ring("t3k", CollectiveOp::AllToAll, "link-down:0-2")));
  EXPECT_EQ(j["algorithm"], "interleaved");
  EXPECT_EQ(j["algorithm_reason"],
            "ran as a line around a down link: auto: a line of 8 chips interleaves its destinations over 256 rounds; "
            "senders auto: per-direction, 262144 B per chip are below the 1048576 B from which one sender per "
            "destination gains more than its fabric mux costs");
  EXPECT_FALSE(j.contains("algorithm_lines"));
}

TEST(RunAlgorithm, OpsThatDoNotChooseRecordNone) {
  const nlohmann::json j = result_json(run("t3k", CollectiveOp::Reduce, 64 * kKiB, "ring"));
  EXPECT_FALSE(j.contains("algorithm"));
  EXPECT_FALSE(j.contains("algorithm_reason"));
}

TEST(RunAlgorithm, TheReportPageSaysWhatRan) {
  const RunResult r = run("t3k", CollectiveOp::ReduceScatter, 16 * kMiB, "ring");
  const std::string page = html_report(r, topo::load_system("t3k"));
  EXPECT_THAT(page, HasSubstr("algorithm half-way: auto: 16777216 B per chip are past the one-shot's 524288 B, so "
                              "the half-way ring"));
  const RunResult all_reduce = run("t3k", CollectiveOp::AllReduce, 1 * kMiB, "ring");
  const std::string halves = html_report(all_reduce, topo::load_system("t3k"));
  EXPECT_THAT(halves, HasSubstr("algorithm rs-ag: "));
  EXPECT_THAT(halves, HasSubstr("reduce_scatter half half-way: auto: 1048576 B per chip are past the one-shot's "
                                "524288 B, so the half-way ring"));
  EXPECT_THAT(halves, HasSubstr("all_gather half relay: auto: a fabric ring relays"));
  // The composite: its all_gather alone.
  const RunResult composite = run("t3k", CollectiveOp::AllReduce, 1001472, "ring");
  const std::string gather = html_report(composite, topo::load_system("t3k"));
  EXPECT_THAT(gather, HasSubstr("algorithm composite: "));
  EXPECT_THAT(gather, HasSubstr("all_gather half relay: auto: a fabric ring relays"));
  EXPECT_THAT(gather, ::testing::Not(HasSubstr("reduce_scatter half")));
}

}  // namespace
}  // namespace cclmesh::cli
