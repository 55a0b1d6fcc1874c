// A `sweep -j` point's outcome goes from its child process to the parent as text
// (encode_sweep_point / decode_sweep_point): every field must come back as it was, or the parent
// would print another table, CSV, JSON or plot than -j 1 does.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "tools/cclmesh/result_table.hpp"
#include "tools/cclmesh/sweep_plot.hpp"
#include "tools/cclmesh/sweep_point.hpp"

namespace cclmesh::cli {
namespace {

ShardRequest shard(const char* layout, std::uint32_t first, const char* orientation) {
  ShardRequest s;
  s.layout = layout;
  s.grid = {{first, first + 1, first + 2, first + 3}, {first + 4, first + 5, first + 6, first + 7}};
  s.orientation = orientation;
  s.shape = std::array<std::uint32_t, 2>{first + 32, first + 64};
  return s;
}

// Every field set, none to its default, no two numbers alike.
RunResult every_field_set() {
  RunResult r;
  r.op = "reduce_scatter";
  r.system = "galaxy";
  r.n_chips = 32;
  r.topology = "line";
  r.fabric_topology = "ring";
  r.links = 3;
  r.directions = 2;
  r.mode = "legacy";
  r.dtype = "bfp8";
  r.redop = "sum";
  r.size_bytes = 123456789012ull;
  r.count = 98765432101ull;
  r.shape = {2, 3, 64, 8192};
  r.dim = 2;
  r.tensor_asked = true;
  r.algorithm = "composite";
  r.algorithm_reason = "the 489 pages do not divide by the 8 chips";
  r.algorithm_lines = "multicast";
  r.algorithm_lines_reason = "ran as a line around a down link: auto: a line multicasts";
  r.algorithm_fallback = true;
  r.algorithm_lines_fallback = true;
  r.algorithm_halves = AllReduceHalves{AlgorithmRecord{"one-shot", "auto: 262144 B per chip are within the one-shot's 524288 B",
                                                       "two_sided", "ran as a line around a down link: ..."},
                                       {"relay", "auto: a fabric ring relays", "multicast", "auto: a line multicasts"}};
  r.layout = "row_major";
  r.memory = "l1";
  r.memory_layout = "width_sharded";
  r.shard = shard("width", 1, "col");
  r.output_memory_layout = "block_sharded";
  r.output_shard_request = shard("block", 10, "row");
  r.input_shard = {32, 96};
  r.output_shard = {64, 160};
  r.time_us = 830.2100000000001;  // a double whose shortest decimal text is long
  r.dispatch_us = 3.5;
  r.launch_us = 0.1 + 0.2;
  r.bandwidth.algbw_GBps = std::numeric_limits<double>::infinity();
  r.bandwidth.busbw_GBps = 17.68;
  r.bandwidth.linkbw_GBps = 8.84;
  r.bandwidth.pct_line_rate = 70.7;
  r.line_rate_GBps = 12.5;
  r.verified = false;
  r.wrong_elements = 4097;
  r.mismatch = "chip 3, buffer 'output 2', page 7, byte 12: 0x3f80 != 0x4000";
  r.checksums = {{0, "output", 0xdeadbeef, 0x12345678}, {7, "output 7", 0xcafef00d, 0xcafef00d}};
  r.faults = {"link-slow:4-0:0.5", "skew:40us:7"};
  r.fault_effects = {"corrupt:0-2: flipped bit 3 of byte 100 of packet 12"};
  r.rings_as_lines = {"axis 1 ring 0-1-2-3-0 ran as line 0-1-2-3: link 3-0 is down (link-down:3-0); one of the op's "
                      "groups, which ran as that line"};
  r.fabric_order = "0-1-3-2 | 4-5-7-6";
  r.fabric = "axis 0 fabric";
  r.chips = {0, 1, 9, 8};
  r.cluster_axis = 1;
  r.sim_events = 1234567;
  r.trace_hash = 0xfedcba9876543210ull;
  r.wall_s = 1.75;
  r.simulate_wall_s = 1.25;
  r.op_preparations = 5;
  r.op_builds = 3;
  r.links_used = {{0, 8, 1, 9, 1048576, 83886080000, 0.71}, {1, 9, 0, 8, -1, 2, 1.0000000000000002}};
  r.links_measured = false;  // not the default
  r.link_whatif = topo::LinkSpread{20, 3, 6250000000, 25000000000, 500000, 2000000, 12500000000, 700000};
  RunOptions ran;
  ran.root = 2;
  ran.no_data = true;
  ran.fabric_payload_bytes = 2048;
  ran.erisc_unreserved_bytes = 106 * 1024;
  r.settings = settings_json(ran);
  return r;
}

void expect_same_shard(const std::optional<ShardRequest>& a, const std::optional<ShardRequest>& b) {
  ASSERT_EQ(a.has_value(), b.has_value());
  if (!a) return;
  EXPECT_EQ(a->layout, b->layout);
  EXPECT_EQ(a->grid, b->grid);
  EXPECT_EQ(a->orientation, b->orientation);
  EXPECT_EQ(a->shape, b->shape);
}

void expect_same_bits(double a, double b) { EXPECT_EQ(std::bit_cast<std::uint64_t>(a), std::bit_cast<std::uint64_t>(b)); }

void expect_same_result(const RunResult& a, const RunResult& b) {
  EXPECT_EQ(a.op, b.op);
  EXPECT_EQ(a.system, b.system);
  EXPECT_EQ(a.n_chips, b.n_chips);
  EXPECT_EQ(a.topology, b.topology);
  EXPECT_EQ(a.fabric_topology, b.fabric_topology);
  EXPECT_EQ(a.links, b.links);
  EXPECT_EQ(a.directions, b.directions);
  EXPECT_EQ(a.mode, b.mode);
  EXPECT_EQ(a.dtype, b.dtype);
  EXPECT_EQ(a.redop, b.redop);
  EXPECT_EQ(a.size_bytes, b.size_bytes);
  EXPECT_EQ(a.count, b.count);
  EXPECT_EQ(a.shape, b.shape);
  EXPECT_EQ(a.dim, b.dim);
  EXPECT_EQ(a.tensor_asked, b.tensor_asked);
  EXPECT_EQ(a.algorithm, b.algorithm);
  EXPECT_EQ(a.algorithm_reason, b.algorithm_reason);
  EXPECT_EQ(a.algorithm_lines, b.algorithm_lines);
  EXPECT_EQ(a.algorithm_lines_reason, b.algorithm_lines_reason);
  EXPECT_EQ(a.algorithm_fallback, b.algorithm_fallback);
  EXPECT_EQ(a.algorithm_lines_fallback, b.algorithm_lines_fallback);
  ASSERT_EQ(a.algorithm_halves.has_value(), b.algorithm_halves.has_value());
  if (a.algorithm_halves) {
    const auto expect_same_record = [](const AlgorithmRecord& x, const AlgorithmRecord& y) {
      EXPECT_EQ(x.algorithm, y.algorithm);
      EXPECT_EQ(x.reason, y.reason);
      EXPECT_EQ(x.lines_algorithm, y.lines_algorithm);
      EXPECT_EQ(x.lines_reason, y.lines_reason);
    };
    ASSERT_EQ(a.algorithm_halves->reduce_scatter.has_value(), b.algorithm_halves->reduce_scatter.has_value());
    if (a.algorithm_halves->reduce_scatter) {
      expect_same_record(*a.algorithm_halves->reduce_scatter, *b.algorithm_halves->reduce_scatter);
    }
    expect_same_record(a.algorithm_halves->all_gather, b.algorithm_halves->all_gather);
  }
  EXPECT_EQ(a.layout, b.layout);
  EXPECT_EQ(a.memory, b.memory);
  EXPECT_EQ(a.memory_layout, b.memory_layout);
  expect_same_shard(a.shard, b.shard);
  EXPECT_EQ(a.output_memory_layout, b.output_memory_layout);
  expect_same_shard(a.output_shard_request, b.output_shard_request);
  EXPECT_EQ(a.input_shard, b.input_shard);
  EXPECT_EQ(a.output_shard, b.output_shard);
  expect_same_bits(a.time_us, b.time_us);
  expect_same_bits(a.dispatch_us, b.dispatch_us);
  expect_same_bits(a.launch_us, b.launch_us);
  expect_same_bits(a.bandwidth.algbw_GBps, b.bandwidth.algbw_GBps);
  expect_same_bits(a.bandwidth.busbw_GBps, b.bandwidth.busbw_GBps);
  expect_same_bits(a.bandwidth.linkbw_GBps, b.bandwidth.linkbw_GBps);
  expect_same_bits(a.bandwidth.pct_line_rate, b.bandwidth.pct_line_rate);
  expect_same_bits(a.line_rate_GBps, b.line_rate_GBps);
  EXPECT_EQ(a.verified, b.verified);
  EXPECT_EQ(a.wrong_elements, b.wrong_elements);
  EXPECT_EQ(a.mismatch, b.mismatch);
  ASSERT_EQ(a.checksums.size(), b.checksums.size());
  for (std::size_t i = 0; i < a.checksums.size(); ++i) {
    EXPECT_EQ(a.checksums[i].chip, b.checksums[i].chip);
    EXPECT_EQ(a.checksums[i].buffer, b.checksums[i].buffer);
    EXPECT_EQ(a.checksums[i].crc32, b.checksums[i].crc32);
    EXPECT_EQ(a.checksums[i].expected_crc32, b.checksums[i].expected_crc32);
  }
  EXPECT_EQ(a.faults, b.faults);
  EXPECT_EQ(a.fault_effects, b.fault_effects);
  EXPECT_EQ(a.rings_as_lines, b.rings_as_lines);
  EXPECT_EQ(a.fabric_order, b.fabric_order);
  EXPECT_EQ(a.fabric, b.fabric);
  EXPECT_EQ(a.chips, b.chips);
  EXPECT_EQ(a.cluster_axis, b.cluster_axis);
  EXPECT_EQ(a.sim_events, b.sim_events);
  EXPECT_EQ(a.trace_hash, b.trace_hash);
  expect_same_bits(a.wall_s, b.wall_s);
  expect_same_bits(a.simulate_wall_s, b.simulate_wall_s);
  EXPECT_EQ(a.op_preparations, b.op_preparations);
  EXPECT_EQ(a.op_builds, b.op_builds);
  ASSERT_EQ(a.links_used.size(), b.links_used.size());
  for (std::size_t i = 0; i < a.links_used.size(); ++i) {
    EXPECT_EQ(a.links_used[i].chip, b.links_used[i].chip);
    EXPECT_EQ(a.links_used[i].channel, b.links_used[i].channel);
    EXPECT_EQ(a.links_used[i].peer_chip, b.links_used[i].peer_chip);
    EXPECT_EQ(a.links_used[i].peer_channel, b.links_used[i].peer_channel);
    EXPECT_EQ(a.links_used[i].payload_bytes, b.links_used[i].payload_bytes);
    EXPECT_EQ(a.links_used[i].busy_ps, b.links_used[i].busy_ps);
    expect_same_bits(a.links_used[i].utilisation, b.links_used[i].utilisation);
  }
  EXPECT_EQ(a.links_measured, b.links_measured);
  ASSERT_EQ(a.link_whatif.has_value(), b.link_whatif.has_value());
  if (a.link_whatif) {
    EXPECT_EQ(a.link_whatif->links, b.link_whatif->links);
    EXPECT_EQ(a.link_whatif->links_off_default, b.link_whatif->links_off_default);
    EXPECT_EQ(a.link_whatif->min_rate_bytes_per_s, b.link_whatif->min_rate_bytes_per_s);
    EXPECT_EQ(a.link_whatif->max_rate_bytes_per_s, b.link_whatif->max_rate_bytes_per_s);
    EXPECT_EQ(a.link_whatif->min_latency_ps, b.link_whatif->min_latency_ps);
    EXPECT_EQ(a.link_whatif->max_latency_ps, b.link_whatif->max_latency_ps);
    EXPECT_EQ(a.link_whatif->default_rate_bytes_per_s, b.link_whatif->default_rate_bytes_per_s);
    EXPECT_EQ(a.link_whatif->default_latency_ps, b.link_whatif->default_latency_ps);
  }
  EXPECT_EQ(a.settings, b.settings);
}

TEST(SweepPoint, ACompletedPointComesBackFieldForField) {
  SweepPointOutcome sent;
  sent.result = every_field_set();
  const SweepPointOutcome got = decode_sweep_point(encode_sweep_point(sent));
  EXPECT_EQ(got.kind, SweepPointOutcome::Kind::Completed);
  EXPECT_EQ(got.message, "");
  expect_same_result(sent.result, got.result);
}

TEST(SweepPoint, AllUnsetOptionalsComeBackUnset) {
  SweepPointOutcome sent;
  sent.result.op = "all_gather";
  const SweepPointOutcome got = decode_sweep_point(encode_sweep_point(sent));
  EXPECT_FALSE(got.result.dim.has_value());
  EXPECT_FALSE(got.result.shard.has_value());
  EXPECT_FALSE(got.result.output_shard_request.has_value());
  EXPECT_FALSE(got.result.verified.has_value());
  EXPECT_FALSE(got.result.link_whatif.has_value());
  EXPECT_FALSE(got.result.algorithm_halves.has_value());
  expect_same_result(sent.result, got.result);
}

// all_reduce's composite records its all_gather alone: the reduce_scatter half comes back unset.
TEST(SweepPoint, TheCompositesGatherComesBackWithoutAReduceScatterHalf) {
  SweepPointOutcome sent;
  sent.result = every_field_set();
  sent.result.algorithm_halves->reduce_scatter.reset();
  const SweepPointOutcome got = decode_sweep_point(encode_sweep_point(sent));
  ASSERT_TRUE(got.result.algorithm_halves.has_value());
  EXPECT_FALSE(got.result.algorithm_halves->reduce_scatter.has_value());
  EXPECT_EQ(got.result.algorithm_halves->all_gather.algorithm, "relay");
  expect_same_result(sent.result, got.result);
}

TEST(SweepPoint, TheDecodedPointPrintsTheSameTableCsvJsonAndPlot) {
  SweepPointOutcome sent;
  sent.result = every_field_set();
  sent.result.bandwidth.algbw_GBps = 20.21;  // JSON has no infinity: keep result_json comparable
  const RunResult got = decode_sweep_point(encode_sweep_point(sent)).result;
  EXPECT_EQ(table_title(got), table_title(sent.result));
  EXPECT_EQ(table_row(got), table_row(sent.result));
  EXPECT_EQ(fault_note(got), fault_note(sent.result));
  EXPECT_EQ(csv_row(got), csv_row(sent.result));
  EXPECT_EQ(result_json(got).dump(2), result_json(sent.result).dump(2));
  EXPECT_EQ(sweep_plot_svg({got}, "t"), sweep_plot_svg({sent.result}, "t"));
}

TEST(SweepPoint, EachKindAndItsMessageComeBack) {
  for (const auto kind : {SweepPointOutcome::Kind::Skipped, SweepPointOutcome::Kind::DidNotComplete,
                          SweepPointOutcome::Kind::InternalError, SweepPointOutcome::Kind::Crashed,
                          SweepPointOutcome::Kind::OutOfHostMemory}) {
    SweepPointOutcome sent;
    sent.kind = kind;
    sent.message = "line one\nline two: \"quoted\" \\ tab\t";
    const SweepPointOutcome got = decode_sweep_point(encode_sweep_point(sent));
    EXPECT_EQ(got.kind, kind);
    EXPECT_EQ(got.message, sent.message);
  }
}

TEST(SweepPoint, HowFarAnIncompletePointGotComesBack) {
  SweepPointOutcome sent;
  sent.kind = SweepPointOutcome::Kind::DidNotComplete;
  sent.message = "timeout";
  EXPECT_FALSE(decode_sweep_point(encode_sweep_point(sent)).groups_mirrored.has_value());
  sent.groups_mirrored = 3;
  EXPECT_EQ(decode_sweep_point(encode_sweep_point(sent)).groups_mirrored, std::optional<std::size_t>(3));
}

TEST(SweepPoint, TextItDidNotWriteIsRefused) {
  EXPECT_ANY_THROW(decode_sweep_point(""));
  EXPECT_ANY_THROW(decode_sweep_point("{\"kind\": 0, \"mess"));  // cut short
  EXPECT_ANY_THROW(decode_sweep_point("{\"kind\": 9, \"message\": \"\"}"));
  EXPECT_ANY_THROW(decode_sweep_point("{\"kind\": 0, \"message\": \"\"}"));  // completed, no result
}

TEST(SweepPoint, RunsAPointAndCatchesWhatASweepReports) {
  RunOptions options;
  options.system = "t3k";
  options.op = CollectiveOp::AllGather;
  options.no_data = true;
  options.size_bytes = 8 * 1024;  // below one page per chip on 8 chips: refused
  const SweepPointOutcome skipped = run_sweep_point(options);
  EXPECT_EQ(skipped.kind, SweepPointOutcome::Kind::Skipped);
  EXPECT_NE(skipped.message, "");

  options.size_bytes = 256 * 1024;
  const SweepPointOutcome completed = run_sweep_point(options);
  ASSERT_EQ(completed.kind, SweepPointOutcome::Kind::Completed) << completed.message;
  EXPECT_EQ(completed.result.size_bytes, 256u * 1024u);
  EXPECT_GT(completed.result.time_us, 0.0);

  options.max_sim_time = sim::SimTime::from_us(1);  // stops the op: a simulated hang report
  const SweepPointOutcome stopped = run_sweep_point(options);
  EXPECT_EQ(stopped.kind, SweepPointOutcome::Kind::DidNotComplete);
  EXPECT_NE(stopped.message, "");
}

}  // namespace
}  // namespace cclmesh::cli
