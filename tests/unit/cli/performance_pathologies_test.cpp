// REFERENCE 11.14's performance pathologies, each as two or more `cclmesh run`s (run_collective,
// timing only) that differ in one thing: part-full packets under slot-based credits, one sender
// core feeding both directions, a fabric mux on small shapes, the T3K ring short of ERISC L1.
// Each test asserts the direction of the effect from simulated times and, where the link figures
// show it, the mechanism (what the wire carried and how busy it was), not exact figures: router
// changes may move the times. What the model does not reproduce: docs/faults.md, row 11.14.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <string>

#include "tools/cclmesh/op_runner.hpp"

namespace cclmesh::cli {
namespace {

RunOptions timing_run(const char* system, CollectiveOp op, std::uint64_t size_bytes) {
  RunOptions options;
  options.system = system;
  options.op = op;
  options.size_bytes = size_bytes;
  options.no_data = true;
  return options;
}

// The direction of a link that carried the most payload during the op.
LinkDirectionUse busiest_link(const RunResult& r) {
  EXPECT_FALSE(r.links_used.empty());
  LinkDirectionUse busiest;
  for (const LinkDirectionUse& u : r.links_used) {
    if (u.payload_bytes > busiest.payload_bytes) busiest = u;
  }
  return busiest;
}

// The direction of the link from `chip` to `peer` (one link a hop: the runs here use 1).
LinkDirectionUse link_from(const RunResult& r, std::int32_t chip, std::int32_t peer) {
  for (const LinkDirectionUse& u : r.links_used) {
    if (u.chip == chip && u.peer_chip == peer) return u;
  }
  ADD_FAILURE() << "no link from chip " << chip << " to chip " << peer;
  return {};
}

double wire_ps_per_byte(const LinkDirectionUse& u) {
  return static_cast<double>(u.busy_ps) / static_cast<double>(u.payload_bytes);
}

// Partially filled packets (REFERENCE 11.14, 6.4: credits count slots, not bytes; a part-full
// packet wastes no wire time but cuts the data in flight). A ROW_MAJOR all_gather on the N300
// with 256 rows a chip: rows of 2176 B fill a 4352 B packet two at a time, rows of 2200 B go one
// to a packet (51% full). The part-full run moves 1% more bytes in twice the packets and takes
// far longer: its wire is booked only a little more (the framing of the extra packets), so it
// sits idle longer. Packets of 4400 B hold two such rows again and the same rows run fast: what
// costs is packets, not bytes. In the model the per-packet cost that binds is the sending
// worker's (a read and a fabric write a packet), not the routers' slots (docs/faults.md).
TEST(PerformancePathologies, PartlyFilledPacketsCostAWholePacketEach) {
  const auto rows_of = [](std::uint32_t row_elements, std::uint32_t payload) {
    RunOptions options = timing_run("n300", CollectiveOp::AllGather, 0);
    options.layout = "row_major";
    options.shape = std::array<std::uint32_t, 4>{1, 1, 512, row_elements};
    options.dim = 2;
    options.fabric_payload_bytes = payload;
    return run_collective(options);
  };
  const RunResult full = rows_of(1088, 4352);       // 2176 B rows, two a packet
  const RunResult part_full = rows_of(1100, 4352);  // 2200 B rows, one a packet
  const RunResult refilled = rows_of(1100, 4400);   // 2200 B rows, two a packet again

  EXPECT_GT(part_full.time_us, full.time_us);
  EXPECT_LT(part_full.bandwidth.busbw_GBps, full.bandwidth.busbw_GBps);
  const LinkDirectionUse full_link = busiest_link(full);
  const LinkDirectionUse part_link = busiest_link(part_full);
  // More packets for (about) the same bytes: each one's framing books a little more wire a byte,
  EXPECT_GT(wire_ps_per_byte(part_link), wire_ps_per_byte(full_link));
  // but the op's time grew by more than its wire's: the extra time is off the wire.
  EXPECT_GT(part_full.time_us / full.time_us,
            static_cast<double>(part_link.busy_ps) / static_cast<double>(full_link.busy_ps));
  EXPECT_LT(part_link.utilisation, full_link.utilisation);

  EXPECT_LT(refilled.time_us, part_full.time_us);
  EXPECT_EQ(refilled.size_bytes, part_full.size_bytes);
  EXPECT_GT(refilled.bandwidth.busbw_GBps, part_full.bandwidth.busbw_GBps);
}

// One sender core feeding several directions becomes the bottleneck (#34914). A broadcast from
// chip 0 of an 8-ring, 4 MiB: both-ways runs one root worker per link that writes every packet
// into both directions' routers, so each of the root's two links carries the whole tensor, as a
// line's root link does when its one worker feeds one direction (the same ring's chips run as a
// line, root at its end). Same bytes on the wire, and the same wire time booked, yet both-ways
// takes longer: each direction gets the shared core's packets at a lower rate than a core that
// feeds one direction, the line's or the split's (one worker per direction, half the tensor each).
TEST(PerformancePathologies, OneSenderCoreFeedingBothDirectionsFeedsEachMoreSlowly) {
  const std::uint64_t size = 4ull << 20;
  RunOptions options = timing_run("ring:8", CollectiveOp::Broadcast, size);
  options.bcast_ring_algorithm = "both-ways";
  const RunResult both_ways = run_collective(options);
  options.bcast_ring_algorithm = "split";
  const RunResult split = run_collective(options);
  RunOptions line_options = timing_run("ring:8", CollectiveOp::Broadcast, size);
  line_options.topology = "line";
  const RunResult line = run_collective(line_options);
  ASSERT_EQ(both_ways.algorithm, "both-ways");
  ASSERT_EQ(split.algorithm, "split");
  ASSERT_EQ(line.topology, "line");

  const LinkDirectionUse forward = link_from(both_ways, 0, 1);
  const LinkDirectionUse backward = link_from(both_ways, 0, 7);
  const LinkDirectionUse line_root = link_from(line, 0, 1);
  const LinkDirectionUse split_forward = link_from(split, 0, 1);
  // Each of the shared core's directions carries the whole tensor, as the line's one does.
  for (const LinkDirectionUse& u : {forward, backward}) {
    EXPECT_GE(u.payload_bytes, static_cast<std::int64_t>(size));
    EXPECT_EQ(u.payload_bytes, line_root.payload_bytes);
    EXPECT_EQ(u.busy_ps, line_root.busy_ps);
    EXPECT_LT(u.utilisation, line_root.utilisation);
  }
  EXPECT_LT(split_forward.payload_bytes, forward.payload_bytes);
  // Per direction: the root's payload over the op's time.
  const auto rate = [](const LinkDirectionUse& u, const RunResult& r) {
    return static_cast<double>(u.payload_bytes) / r.time_us;
  };
  EXPECT_GT(both_ways.time_us, line.time_us);
  EXPECT_LT(rate(forward, both_ways), rate(line_root, line));
  EXPECT_LT(rate(forward, both_ways), rate(split_forward, split));
}

// Fabric-mux overhead on small shapes (PR #35142: the mux only when num_workers_per_link > 1).
// The N300's two-sided reduce_scatter and rs-ag all_reduce with 4 workers per link and direction
// (sharing the router through a mux) against 1 (straight to the router): on a small tensor the
// mux's extra turn per packet makes the op slower, and the extra time is not the wire's; on a
// large one the 4 workers' parallel reads and sums outweigh it.
TEST(PerformancePathologies, AFabricMuxCostsSmallShapesAndPaysOffOnLargeOnes) {
  struct Case {
    CollectiveOp op;
    std::uint64_t small_bytes;
    std::uint64_t large_bytes;
  };
  for (const Case& c : {Case{CollectiveOp::ReduceScatter, 16ull << 10, 4ull << 20},
                        Case{CollectiveOp::AllReduce, 64ull << 10, 4ull << 20}}) {
    const auto run_with = [&](std::uint64_t size, std::uint32_t workers) {
      RunOptions options = timing_run("n300", c.op, size);
      options.workers_per_link = workers;
      return run_collective(options);
    };
    const std::string what = c.op == CollectiveOp::ReduceScatter ? "reduce_scatter" : "all_reduce";
    const RunResult small_direct = run_with(c.small_bytes, 1);
    const RunResult small_muxed = run_with(c.small_bytes, 4);
    ASSERT_EQ(small_direct.algorithm, small_muxed.algorithm) << what;
    EXPECT_GT(small_muxed.time_us, small_direct.time_us) << what;
    const LinkDirectionUse direct_link = busiest_link(small_direct);
    const LinkDirectionUse muxed_link = busiest_link(small_muxed);
    EXPECT_GT(small_muxed.time_us - small_direct.time_us,
              static_cast<double>(muxed_link.busy_ps - direct_link.busy_ps) * 1e-6)
        << what;

    const RunResult large_direct = run_with(c.large_bytes, 1);
    const RunResult large_muxed = run_with(c.large_bytes, 4);
    ASSERT_EQ(large_direct.algorithm, large_muxed.algorithm) << what;
    EXPECT_LT(large_muxed.time_us, large_direct.time_us) << what;
  }
}

// The T3K ring short of ERISC buffering (#22636, REFERENCE 6.7), as far as the model goes: at
// 6144 B packets, 106 KiB of ERISC L1 (REFERENCE 1.4's low figure) leaves every router 4 sender
// slots a channel instead of 8, on the ring's fabric and the line's alike. The ring all_gather
// (relay, whose forwarding runs through channel 1) slows down by a far larger share than the
// line's multicast, its wires booked about as long as before: it waits for slots. It stays
// faster than the line, though: the model does not reproduce the ring falling behind
// (docs/faults.md, row 11.14).
TEST(PerformancePathologies, TheT3kRingLosesMoreThanTheLineWhenEriscL1IsShort) {
  const auto run_with = [](const char* topology, std::uint32_t erisc_kib) {
    RunOptions options = timing_run("t3k", CollectiveOp::AllGather, 1ull << 20);
    options.topology = topology;
    options.fabric_payload_bytes = 6144;
    options.erisc_unreserved_bytes = erisc_kib * 1024;
    return run_collective(options);
  };
  const RunResult ring_roomy = run_with("ring", 150);
  const RunResult ring_short = run_with("ring", 106);
  const RunResult line_roomy = run_with("line", 150);
  const RunResult line_short = run_with("line", 106);
  ASSERT_EQ(ring_short.topology, "ring");
  ASSERT_EQ(line_short.topology, "line");

  EXPECT_GT(ring_short.time_us, ring_roomy.time_us);
  // The wire is not what grew: the busiest link books about the same time, the op far more.
  const LinkDirectionUse short_link = busiest_link(ring_short);
  const LinkDirectionUse roomy_link = busiest_link(ring_roomy);
  EXPECT_GT(ring_short.time_us / ring_roomy.time_us,
            static_cast<double>(short_link.busy_ps) / static_cast<double>(roomy_link.busy_ps));
  EXPECT_LT(short_link.utilisation, roomy_link.utilisation);
  EXPECT_GT(ring_short.time_us / ring_roomy.time_us, line_short.time_us / line_roomy.time_us);
}

}  // namespace
}  // namespace cclmesh::cli
