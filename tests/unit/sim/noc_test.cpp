// The NoC model: routes, and exact times of single transfers on an idle Wormhole chip, worked
// out by hand from sim/model/arch/wormhole_b0.yaml (1 GHz: 1 cycle = 1 ns):
//   request setup 40, NIU->router 5, router hop 9, router->NIU 5 cycles; link 30 B/c;
//   Tensix NIU 28.1 B/c in and out; header flit 32 B; multicast 14 B/c.
// Serialisations (transfer_time rounds up to the ps): 32 B at 28.1 B/c = 1139 ps, at 30 B/c
// = 1067 ps; 96 B at 28.1 = 3417 ps, at 30 = 3200 ps, at 14 = 6858 ps.
#include "sim/model/noc.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "sim/engine/delay.hpp"
#include "sim/engine/fiber.hpp"
#include "sim/model/chip.hpp"
#include "tests/unit/sim/sim_test_util.hpp"

namespace cclmesh::sim {
namespace {
using namespace literals;
using testing::Log;
using testing::pattern;

constexpr CoreCoord kA{1, 1};
constexpr CoreCoord kB{2, 1};

TEST(NocRoute, Noc0GoesEastThenSouthAndWraps) {
  Engine engine;
  Chip chip(engine, 0, testing::wormhole());
  Noc& noc0 = chip.noc(NocId::Noc0);
  EXPECT_EQ(noc0.route({8, 10}, {1, 1}),
            (std::vector<CoreCoord>{{8, 10}, {9, 10}, {0, 10}, {1, 10}, {1, 11}, {1, 0}, {1, 1}}));
  EXPECT_EQ(noc0.hops({8, 10}, {1, 1}), 6);
  EXPECT_EQ(noc0.hops(kA, kB), 1);
  EXPECT_EQ(noc0.hops(kB, kA), 9);  // around the 10-wide torus
}

TEST(NocRoute, Noc1GoesNorthThenWest) {
  Engine engine;
  Chip chip(engine, 0, testing::wormhole());
  Noc& noc1 = chip.noc(NocId::Noc1);
  EXPECT_EQ(noc1.route({2, 2}, {1, 0}), (std::vector<CoreCoord>{{2, 2}, {2, 1}, {2, 0}, {1, 0}}));
  EXPECT_EQ(noc1.hops(kB, kA), 1);
  EXPECT_EQ(noc1.hops(kA, kB), 9);
  // Same-core and round-trip hop counts, which explain tt-npe's read latencies (REFERENCE 1.3).
  EXPECT_EQ(noc1.hops(kA, kA), 0);
  EXPECT_EQ(noc1.hops({1, 1}, {3, 4}) + noc1.hops({3, 4}, {1, 1}), 10 + 12);
}

// Each packet holds exactly the directed links of its route (route()), on both NoCs, also where
// the route wraps around the torus in x, y or both; no other link is touched.
TEST(NocRoute, APacketBooksExactlyTheLinksOfItsRoute) {
  const std::vector<std::pair<CoreCoord, CoreCoord>> pairs = {
      {{1, 1}, {4, 7}}, {{8, 10}, {1, 1}}, {{2, 9}, {1, 2}}, {{4, 3}, {4, 8}}, {{7, 2}, {3, 2}}, {{1, 1}, {1, 1}}};
  for (NocId id : {NocId::Noc0, NocId::Noc1}) {
    for (const auto& [from, to] : pairs) {
      Engine engine;
      Chip chip(engine, 0, testing::wormhole());
      Noc& noc = chip.noc(id);
      engine.spawn_fiber("writer", [&, from = from, to = to] {
        noc.write(from, 0x1000, {to, 0x2000}, 64);
        block_on(noc.write_barrier(from));
      });
      engine.run();
      const std::vector<CoreCoord> route = noc.route(from, to);
      std::vector<std::pair<CoreCoord, int>> expected;  // (router, dim) of every link on the route
      for (std::size_t i = 0; i + 1 < route.size(); ++i) {
        expected.emplace_back(route[i], route[i].y == route[i + 1].y ? 0 : 1);
      }
      int booked = 0;
      for (std::int32_t y = 0; y < chip.grid_y(); ++y) {
        for (std::int32_t x = 0; x < chip.grid_x(); ++x) {
          for (int dim = 0; dim < 2; ++dim) {
            const PacketResource& link = noc.link({x, y}, dim);
            const bool on_route =
                std::find(expected.begin(), expected.end(), std::make_pair(CoreCoord{x, y}, dim)) != expected.end();
            EXPECT_EQ(link.packets, on_route ? 1 : 0)
                << to_string(id) << " " << to_string(from) << "->" << to_string(to) << " link at " << to_string({x, y})
                << " dim " << dim;
            if (on_route) {
              EXPECT_EQ(link.bytes, 32 + 64);
            }
            booked += static_cast<int>(link.packets);
          }
        }
      }
      EXPECT_EQ(booked, noc.hops(from, to));
    }
  }
}

// The busy window is a chip's own: two chips simulated at once, one with a window and one
// without, count busy time inside it only on the first, and run the same.
// A core's NoC ports are made at its first use (a request from or to it, or its L1 handed out
// for a kernel to listen to), both at once; the other cores of the chip hold none.
TEST(NocPorts, MadeOnlyForTheCoresUsed) {
  Engine engine;
  Chip chip(engine, 0, testing::wormhole());
  const CoreCoord untouched{3, 3};
  for (const CoreCoord c : {kA, kB, untouched}) EXPECT_EQ(chip.endpoint(c)->port_if_made(NocId::Noc0), nullptr);
  chip.l1(kA).write_u32(0x100, 7);  // l1() makes kA's ports
  EXPECT_NE(chip.endpoint(kA)->port_if_made(NocId::Noc0), nullptr);
  EXPECT_NE(chip.endpoint(kA)->port_if_made(NocId::Noc1), nullptr);
  const CoreCoord dram = chip.dram_bank(0).endpoint;
  engine.spawn_fiber("kernel", [&] {
    Noc& noc = chip.noc(NocId::Noc1);
    noc.write(kA, 0x100, {dram, 0x40}, 64);
    block_on(noc.write_barrier(kA));
  });
  engine.run();
  EXPECT_NE(chip.endpoint(dram)->port_if_made(NocId::Noc0), nullptr);  // a target's, both NoCs
  EXPECT_EQ(chip.endpoint(kB)->port_if_made(NocId::Noc0), nullptr);
  EXPECT_EQ(chip.endpoint(untouched)->port_if_made(NocId::Noc1), nullptr);
  EXPECT_EQ(chip.endpoint(dram)->port(NocId::Noc1).absorb().packets, 1);
}

TEST(NocBusyWindow, EachChipSumsOnlyInsideItsOwnWindow) {
  Engine engine_a;
  Engine engine_b;
  Chip a(engine_a, 0, testing::wormhole());
  Chip b(engine_b, 0, testing::wormhole());
  a.set_busy_window(BusyWindow{SimTime::zero(), SimTime::from_us(1000)});
  for (Chip* chip : {&a, &b}) {
    Engine& engine = chip->engine();
    Noc& noc = chip->noc(NocId::Noc0);
    engine.spawn_fiber("writer", [&noc] {
      noc.write(kA, 0x1000, {{4, 1}, 0x2000}, 2048);
      block_on(noc.write_barrier(kA));
    });
    engine.run();
  }
  const PacketResource& link_a = a.noc(NocId::Noc0).link({2, 1}, 0);
  const PacketResource& link_b = b.noc(NocId::Noc0).link({2, 1}, 0);
  EXPECT_GT(link_a.busy, SimTime::zero());
  EXPECT_EQ(link_a.busy_in_window, link_a.busy);
  EXPECT_EQ(link_b.busy, link_a.busy);
  EXPECT_EQ(link_b.busy_in_window, SimTime::zero());
  EXPECT_EQ(engine_a.now(), engine_b.now());
}

TEST(NocTiming, SingleWriteLandsFlushesAndIsAckedAtExactTimes) {
  Engine engine;
  Chip chip(engine, 0, testing::wormhole());
  Noc& noc = chip.noc(NocId::Noc0);
  const auto data = pattern(64, 3);
  chip.l1(kA).write(0x1000, data);
  Log log;
  engine.spawn_fiber("writer", [&] {
    noc.write(kA, 0x1000, {kB, 0x2000}, 64);
    block_on(noc.writes_flushed(kA));
    log.add("flushed");
    block_on(noc.write_barrier(kA));
    log.add("acked");
  });
  engine.spawn_fiber("reader", [&] {
    chip.l1(kB).wait_word_blocking(0x2000 + 60, WordCondition::Equal, chip.l1(kA).read_u32(0x1000 + 60));
    log.add("landed");
  });
  engine.run();
  // depart 40 ns; source NIU 40..43.417 (96 B at 28.1); router at +5; link 45..48.417, hop +9;
  // target router -> NIU +5: absorb 59..62.417 = landed. Ack back over 9 hops: 5 + 81 + 5 ns.
  EXPECT_EQ(log.entries, (std::vector<testing::Stamp>{{43'417_ps, "flushed"}, {62'417_ps, "landed"},
                                                      {153'417_ps, "acked"}}));
  EXPECT_EQ(chip.l1(kB).read(0x2000, 64), data);
}

// Flushes and acks are counted by time: a write nobody waits for costs its depart and its
// landing; a barrier or a polling kernel parked for the kind gets one alarm when all are done,
// at the same times as above.
TEST(NocTiming, CompletionsNobodyWaitsForCostNoEvents) {
  Engine engine;
  Chip chip(engine, 0, testing::wormhole());
  Noc& noc = chip.noc(NocId::Noc0);
  chip.l1(kA).write(0x1000, pattern(64, 3));
  engine.schedule_at(SimTime::zero(), [&] {
    for (int i = 0; i < 3; ++i) noc.write(kA, 0x1000, {kB, 0x2000}, 64);
  });
  engine.run();
  EXPECT_EQ(engine.stats().events_executed, 1u + 3u * 2u);  // the issuing event, then depart + land each
  // The run ends with the last landing: the flushes are past, the acks (91 ns later) not yet.
  const NocCounters c = noc.port(kA).counters();
  EXPECT_EQ(c.writes_issued, 3u);
  EXPECT_EQ(c.writes_flushed, 3u);
  EXPECT_EQ(c.nonposted_writes_issued, 3u);
  EXPECT_EQ(c.nonposted_writes_acked, 0u);

  Log log;
  ActivityListener listener("poller");
  engine.spawn_fiber("poller", [&] {
    chip.l1(kA).activity().attach(listener);
    noc.write(kA, 0x1000, {kB, 0x2000}, 64);
    listener.wait_blocking(activity_bit(ActivityKind::NocWritesAcked));
    log.add("acked");
  });
  const SimTime start = engine.now();
  engine.run();
  // Three later writes of kA queue behind nothing now: 153.417 ns after the start, as above.
  EXPECT_EQ(log.entries, (std::vector<testing::Stamp>{{start + 153'417_ps, "acked"}}));
}

// Transaction ids (REFERENCE 1.1): writes tagged with different ids are flushed and acked
// independently; a polling kernel parked for "some id flushed" wakes when the first one is,
// at the time the same write flushes untagged, while the other id and the port's own
// barrier are still outstanding.
SimTime untagged_flush_time(std::uint32_t bytes) {
  Engine engine;
  Chip chip(engine, 0, testing::wormhole());
  Noc& noc = chip.noc(NocId::Noc0);
  SimTime flushed;
  engine.spawn_fiber("writer", [&] {
    noc.write(kA, 0x1000, {kB, 0x8000}, bytes);
    block_on(noc.writes_flushed(kA));
    flushed = engine.now();
  });
  engine.run();
  return flushed;
}

TEST(NocTransactionIds, WritesOnTwoIdsAreFlushedAndAckedIndependently) {
  Engine engine;
  Chip chip(engine, 0, testing::wormhole());
  Noc& noc = chip.noc(NocId::Noc0);
  NocPort& port = noc.port(kA);
  chip.l1(kA).write(0x1000, pattern(8192, 5));
  constexpr CoreCoord kFar{7, 9};
  struct Seen {
    SimTime at;
    bool flushed3, flushed7, all_flushed, acked3, acked7;
  };
  std::vector<Seen> seen;
  ActivityListener listener("poller");
  engine.spawn_fiber("poller", [&] {
    chip.l1(kA).activity().attach(listener);
    EXPECT_TRUE(port.trid_writes_flushed(0));  // an id never used has nothing outstanding
    EXPECT_TRUE(port.trid_writes_acked(0));
    noc.write_with_trid(kA, 0x1000, {kB, 0x8000}, 8192, 3);
    noc.write_with_trid(kA, 0x1000, {kFar, 0x8000}, 64, 7);
    EXPECT_FALSE(port.trid_writes_flushed(3));
    EXPECT_FALSE(port.trid_writes_flushed(7));
    for (int i = 0; i < 2; ++i) {
      listener.wait_blocking(activity_bit(ActivityKind::NocTridWritesFlushed));
      seen.push_back({engine.now(), port.trid_writes_flushed(3), port.trid_writes_flushed(7),
                      port.complete(NocBarrierKind::WritesFlushed), port.trid_writes_acked(3),
                      port.trid_writes_acked(7)});
    }
    block_on(noc.write_barrier(kA));
    EXPECT_TRUE(port.trid_writes_acked(3));
    EXPECT_TRUE(port.trid_writes_acked(7));
    // Tagged writes count in the port's counters too.
    EXPECT_EQ(port.counters().nonposted_writes_acked, 2u);
  });
  engine.run();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].at, untagged_flush_time(8192));
  EXPECT_TRUE(seen[0].flushed3);
  EXPECT_FALSE(seen[0].flushed7);  // queued behind id 3's packet at the NIU
  EXPECT_FALSE(seen[0].all_flushed);
  EXPECT_FALSE(seen[0].acked3);  // left, not landed yet
  EXPECT_GT(seen[1].at, seen[0].at);
  EXPECT_TRUE(seen[1].flushed7);
  EXPECT_TRUE(seen[1].all_flushed);
  // id 3's ack comes back from the neighbour while id 7's is still on its way from (7,9).
  EXPECT_FALSE(seen[1].acked7);
}

// "Some id flushed since" keeps counting ids whose writes all left while nobody looked (the
// port's scans skip ids found all flushed until they tag another write): a kernel that parks
// after such a flush returns at once; one that parks after it waits for the next id, and an
// id used again counts again.
TEST(NocTransactionIds, AFlushNobodyWatchedStillCountsAndAnIdUsedAgainWakesAgain) {
  Engine engine;
  Chip chip(engine, 0, testing::wormhole());
  Noc& noc = chip.noc(NocId::Noc0);
  chip.l1(kA).write(0x1000, pattern(256, 9));
  const SimTime flush64 = untagged_flush_time(64);
  std::vector<SimTime> returned;
  std::vector<SimTime> issued;
  ActivityListener listener("poller");
  engine.spawn_fiber("poller", [&] {
    chip.l1(kA).activity().attach(listener);
    noc.write_with_trid(kA, 0x1000, {kB, 0x8000}, 64, 3);
    block_on(delay(1_us));  // id 3 flushes meanwhile, unobserved
    listener.wait_blocking(activity_bit(ActivityKind::NocTridWritesFlushed));
    returned.push_back(engine.now());  // at once: it flushed after the listener's last return
    issued.push_back(engine.now());
    noc.write_with_trid(kA, 0x1000, {kB, 0x9000}, 64, 5);
    listener.wait_blocking(activity_bit(ActivityKind::NocTridWritesFlushed));
    returned.push_back(engine.now());
    issued.push_back(engine.now());
    noc.write_with_trid(kA, 0x1000, {kB, 0xa000}, 64, 3);
    listener.wait_blocking(activity_bit(ActivityKind::NocTridWritesFlushed));
    returned.push_back(engine.now());
  });
  engine.run();
  ASSERT_EQ(returned.size(), 3u);
  EXPECT_EQ(returned[0], 1_us);
  EXPECT_EQ(returned[1], issued[0] + flush64);
  EXPECT_EQ(returned[2], issued[1] + flush64);
}

TEST(NocTransactionIds, AnIdOutsideTheSixteenOrAWriteBeyondOnePacketFailsACheck) {
  Engine engine;
  Chip chip(engine, 0, testing::wormhole());
  Noc& noc = chip.noc(NocId::Noc0);
  bool ran = false;
  engine.schedule_at(SimTime::zero(), [&] {
    EXPECT_THROW(noc.write_with_trid(kA, 0x1000, {kB, 0x2000}, 64, kNocTransactionIds), InvariantError);
    EXPECT_THROW((void)noc.port(kA).trid_writes_flushed(kNocTransactionIds), InvariantError);
    EXPECT_THROW((void)noc.port(kA).trid_writes_acked(99), InvariantError);
    EXPECT_THROW(noc.write_with_trid(kA, 0x1000, {kB, 0x2000}, 8193, 0), InvariantError);  // 8 KiB max
    EXPECT_EQ(noc.port(kA).counters().writes_issued, 0u);  // nothing was issued
    noc.write_with_trid(kA, 0x1000, {kB, 0x2000}, 64, kNocTransactionIds - 1);
    ran = true;
  });
  engine.run();
  EXPECT_TRUE(ran);
  EXPECT_TRUE(noc.port(kA).trid_writes_flushed(kNocTransactionIds - 1));
}

TEST(NocTiming, SingleReadRoundTrip) {
  Engine engine;
  Chip chip(engine, 0, testing::wormhole());
  Noc& noc = chip.noc(NocId::Noc0);
  const auto data = pattern(64, 9);
  chip.l1(kB).write(0x3000, data);
  SimTime done;
  engine.spawn_fiber("reader", [&] {
    noc.read(kA, {kB, 0x3000}, 0x4000, 64);
    block_on(noc.read_barrier(kA));
    done = engine.now();
  });
  engine.run();
  // Request (32 B header) A -> B, 1 hop: lands at 60.139 ns (as a 32 B write).
  // Response (96 B) B -> A, 9 hops east around the torus: inject 60.139..63.556, +5, nine links
  // with the tail set by the slower NIU (+81), +5, absorb: 63.556 + 5 + 81 + 5 = 154.556 ns.
  EXPECT_EQ(done, 154'556_ps);
  EXPECT_EQ(chip.l1(kA).read(0x4000, 64), data);
  EXPECT_EQ(noc.port(kA).counters().reads_issued, 1u);
  EXPECT_EQ(noc.port(kA).counters().reads_acked, 1u);
}

TEST(NocTiming, AtomicIncrementReturnsOldValueAndWakesWatcher) {
  Engine engine;
  Chip chip(engine, 0, testing::wormhole());
  Noc& noc = chip.noc(NocId::Noc0);
  chip.l1(kB).write_u32(0x100, 41);
  Log log;
  std::uint32_t old = 0;
  engine.spawn_fiber("incrementer", [&] {
    old = block_on(noc.atomic_inc_fetch(kA, {kB, 0x100}, 1));
    log.add("returned");
    noc.atomic_inc(kA, {kB, 0x100}, 3);
    block_on(noc.atomic_barrier(kA));
    log.add("second acked");
  });
  engine.spawn_fiber("waiter", [&] {
    chip.l1(kB).wait_word_blocking(0x100, WordCondition::AtLeast, 42);
    log.add("saw 42");
  });
  engine.run();
  // Header-only packet A -> B lands at 60.139 ns; its return takes 5 + 9 * 9 + 5 = 91 ns.
  // The second is issued at 151.139 ns: +40 setup, +20.139 flight = 211.278, +91 = 302.278.
  EXPECT_EQ(log.entries, (std::vector<testing::Stamp>{{60'139_ps, "saw 42"}, {151'139_ps, "returned"},
                                                      {302'278_ps, "second acked"}}));
  EXPECT_EQ(old, 41u);
  EXPECT_EQ(chip.l1(kB).read_u32(0x100), 45u);
}

TEST(NocTiming, MulticastReachesEveryCoreOfTheRectangle) {
  Engine engine;
  Chip chip(engine, 0, testing::wormhole());
  Noc& noc = chip.noc(NocId::Noc0);
  const auto data = pattern(64, 77);
  chip.l1(kA).write(0x1000, data);
  Log log;
  const CoreRect rect{{2, 1}, {3, 2}};
  for (CoreCoord c : {CoreCoord{2, 1}, CoreCoord{3, 1}, CoreCoord{2, 2}, CoreCoord{3, 2}}) {
    engine.spawn_fiber("watch", [&, c] {
      chip.l1(c).wait_word_blocking(0x5000, WordCondition::Equal, chip.l1(kA).read_u32(0x1000));
      log.add(to_string(c));
    });
  }
  engine.spawn_fiber("sender", [&] {
    noc.multicast_write(kA, 0x1000, rect, 0x5000, 64);
    block_on(noc.write_barrier(kA));
    log.add("acked");
  });
  engine.run();
  // 96 B at the 14 B/c multicast rate: 6858 ps per server. Inject 40..46.858; east along row 1,
  // branching south at x = 2 and x = 3; each target absorbs 5 ns after its router. The write is
  // acked when the farthest target's ack is back: (2,2) and (3,2) at 264.858 ns.
  EXPECT_EQ(log.entries, (std::vector<testing::Stamp>{{65'858_ps, "(2,1)"},
                                                      {74'858_ps, "(2,2)"},
                                                      {74'858_ps, "(3,1)"},
                                                      {83'858_ps, "(3,2)"},
                                                      {264'858_ps, "acked"}}));
  for (CoreCoord c : {CoreCoord{2, 1}, CoreCoord{3, 1}, CoreCoord{2, 2}, CoreCoord{3, 2}}) {
    EXPECT_EQ(chip.l1(c).read(0x5000, 64), data) << to_string(c);
  }
  EXPECT_EQ(chip.l1({4, 1}).read_u32(0x5000), 0u);  // outside the rectangle
  EXPECT_EQ(chip.l1(kA).read_u32(0x5000), 0u);      // the sender, without loopback
}

TEST(NocTiming, LargeTransfersSplitIntoMaxSizePackets) {
  Engine engine;
  Chip chip(engine, 0, testing::wormhole());
  Noc& noc = chip.noc(NocId::Noc0);
  const auto data = pattern(20000, 1);
  chip.l1(kA).write(0x10000, data);
  engine.spawn_fiber("writer", [&] {
    noc.write(kA, 0x10000, {kB, 0x40000}, 20000);
    block_on(noc.write_barrier(kA));
  });
  engine.run();
  EXPECT_EQ(noc.port(kA).counters().nonposted_writes_issued, 3u);  // 8192 + 8192 + 3616
  EXPECT_EQ(noc.stats().payload_bytes, 20000);
  EXPECT_EQ(chip.l1(kB).read(0x40000, 20000), data);
}

TEST(NocTiming, WriteThenIncrementToTheSameCoreArriveInOrder) {
  // A kernel's "data, then semaphore" pattern: the increment must never overtake the data.
  Engine engine;
  Chip chip(engine, 0, testing::wormhole());
  Noc& noc = chip.noc(NocId::Noc0);
  const auto data = pattern(8192, 5);
  chip.l1(kA).write(0x10000, data);
  std::vector<std::uint8_t> seen;
  engine.spawn_fiber("producer", [&] {
    noc.write(kA, 0x10000, {kB, 0x20000}, 8192);
    noc.atomic_inc(kA, {kB, 0x100}, 1);
  });
  engine.spawn_fiber("consumer", [&] {
    chip.l1(kB).wait_word_blocking(0x100, WordCondition::AtLeast, 1);
    seen = chip.l1(kB).read(0x20000, 8192);
  });
  engine.run();
  EXPECT_EQ(seen, data);
}

// Packets wait for their NIU in order; an inline write or atomic goes through its own command
// buffer (REFERENCE 1.1), so one to another core does not wait behind queued data, while one
// to the data's own core still arrives after all of it.
TEST(NocTiming, ControlWritesSkipQueuedDataToOtherCoresButNotToTheirOwn) {
  Engine engine;
  Chip chip(engine, 0, testing::wormhole());
  Noc& noc = chip.noc(NocId::Noc0);
  constexpr CoreCoord kC{1, 3};  // south of kA: no NoC0 link shared with the data to kB
  const auto data = pattern(8192, 9);
  chip.l1(kA).write(0x10000, data);
  Log log;
  std::vector<std::vector<std::uint8_t>> seen;
  engine.spawn_fiber("producer", [&] {
    for (std::uint32_t i = 0; i < 3; ++i) noc.write(kA, 0x10000, {kB, 0x20000 + i * 8192}, 8192);
    noc.atomic_inc(kA, {kB, 0x100}, 1);
    noc.write_u32(kA, {kC, 0x200}, 7);
  });
  engine.spawn_fiber("consumer", [&] {
    chip.l1(kB).wait_word_blocking(0x100, WordCondition::AtLeast, 1);
    log.add("increment");
    for (std::uint32_t i = 0; i < 3; ++i) seen.push_back(chip.l1(kB).read(0x20000 + i * 8192, 8192));
  });
  engine.spawn_fiber("other", [&] {
    chip.l1(kC).wait_word_blocking(0x200, WordCondition::Equal, 7);
    log.add("inline write");
  });
  engine.run();
  ASSERT_EQ(log.entries.size(), 2u);
  EXPECT_EQ(log.entries[0].second, "inline write");
  EXPECT_LT(log.entries[0].first, untagged_flush_time(8192));  // before the first data packet has left
  EXPECT_EQ(log.entries[1].second, "increment");
  EXPECT_EQ(seen, (std::vector<std::vector<std::uint8_t>>(3, data)));
}

// The port counts its issued, not yet booked packets per target (for the ordering rule above).
// Here three targets wait for the NIU in turn; when the first one's packet books, its count
// leaves the front of that list (since the tenth speed pass the last entry moves into its place),
// and an increment to the last target, issued then, must still find its data unbooked and arrive
// after it, while one to the first target, all booked, takes its own command buffer.
TEST(NocTiming, ControlWritesStayBehindUnbookedDataAfterAnotherTargetBooked) {
  Engine engine;
  Chip chip(engine, 0, testing::wormhole());
  Noc& noc = chip.noc(NocId::Noc0);
  constexpr CoreCoord kC{1, 3};
  constexpr CoreCoord kD{3, 1};
  const auto data = pattern(8192, 4);
  chip.l1(kA).write(0x10000, data);
  Log log;
  std::vector<std::uint8_t> seen_at_d;
  engine.spawn_fiber("producer", [&] {
    noc.write(kA, 0x10000, {kB, 0x20000}, 8192);
    noc.write(kA, 0x10000, {kC, 0x20000}, 8192);
    noc.write(kA, 0x10000, {kD, 0x20000}, 8192);
    // The first packet booked at its departure (~41 ns); the next two wait behind its ~292 ns
    // in the NIU.
    block_on(delay(100_ns));
    noc.atomic_inc(kA, {kD, 0x100}, 1);
    noc.atomic_inc(kA, {kB, 0x100}, 1);
  });
  engine.spawn_fiber("watch d", [&] {
    chip.l1(kD).wait_word_blocking(0x100, WordCondition::AtLeast, 1);
    log.add("increment at d");
    seen_at_d = chip.l1(kD).read(0x20000, 8192);
  });
  engine.spawn_fiber("watch b", [&] {
    chip.l1(kB).wait_word_blocking(0x100, WordCondition::AtLeast, 1);
    log.add("increment at b");
  });
  engine.run();
  ASSERT_EQ(log.entries.size(), 2u);
  EXPECT_EQ(log.entries[0].second, "increment at b");  // its data booked: the control path
  EXPECT_LT(log.entries[0].first, untagged_flush_time(8192) + 100_ns);
  EXPECT_EQ(log.entries[1].second, "increment at d");
  EXPECT_EQ(seen_at_d, data);  // behind its data, which left the NIU third
}

TEST(NocContention, TwoFlowsSplitASharedLink) {
  // Flow 1: (1,1) -> (4,1); flow 2: (2,1) -> (4,2). On NoC0 both cross links (2,1)E and
  // (3,1)E; their sources and targets are distinct, so the shared 30 B/c link is the bottleneck.
  constexpr int kPackets = 64;
  constexpr std::uint32_t kBytes = 8192;
  auto run = [&](bool both) {
    Engine engine;
    Chip chip(engine, 0, testing::wormhole());
    Noc& noc = chip.noc(NocId::Noc0);
    std::vector<SimTime> done(2);
    auto flow = [&](int index, CoreCoord from, CoreCoord to) {
      engine.spawn_fiber("flow", [&, index, from, to] {
        for (int i = 0; i < kPackets; ++i) noc.write(from, 0x10000, {to, 0x20000}, kBytes);
        block_on(noc.writes_flushed(from));
        done[static_cast<std::size_t>(index)] = engine.now();
      });
    };
    flow(0, {1, 1}, {4, 1});
    if (both) flow(1, {2, 1}, {4, 2});
    engine.run();
    const PacketResource& shared = noc.link({3, 1}, 0);
    return std::make_tuple(done, shared.busy, shared.packets);
  };
  const auto [alone, alone_busy, alone_packets] = run(false);
  const auto [shared, shared_busy, shared_packets] = run(true);
  const SimTime link_packet = transfer_time(32 + kBytes, Bandwidth::bytes_per_second(30'000'000'000));
  // Alone, a flow is limited by its NIU (28.1 B/c), not the link.
  const SimTime niu_packet = transfer_time(32 + kBytes, Bandwidth::bytes_per_second(28'100'000'000));
  EXPECT_GE(alone[0], niu_packet * kPackets);
  EXPECT_LT(alone[0], niu_packet * (kPackets + 1));
  EXPECT_EQ(alone_packets, kPackets);
  // Together, the link carries both back to back: each flow gets half of it and both finish
  // within one packet time of 2 * 64 link packets.
  EXPECT_EQ(shared_packets, 2 * kPackets);
  EXPECT_EQ(shared_busy, link_packet * (2 * kPackets));
  for (SimTime t : shared) {
    EXPECT_GE(t, link_packet * (2 * kPackets - 1));
    EXPECT_LE(t, link_packet * (2 * kPackets + 1) + 100_ns);
  }
}

TEST(NocErrors, OutOfRangeAccessNamesChipCoreAddressAndSize) {
  Engine engine;
  Chip chip(engine, 7, testing::wormhole());
  Noc& noc = chip.noc(NocId::Noc0);
  std::string message;
  engine.spawn_fiber("bad", [&] {
    try {
      noc.write(kA, 0x1000, {kB, 1499136 - 16}, 64);
    } catch (const AccessError& e) {
      message = e.what();
      EXPECT_EQ(e.details().chip, 7);
      EXPECT_EQ(e.details().core, kB);
      EXPECT_EQ(e.details().address, 1499136u - 16);
      EXPECT_EQ(e.details().bytes, 64u);
    }
  });
  engine.run();
  EXPECT_NE(message.find("chip 7 core (2,1) Tensix L1: write of 64 B at address 0x16dff0 out of range"),
            std::string::npos)
      << message;
  EXPECT_THROW(noc.read(kA, {{0, 2}, 0}, 0, 4), AccessError);        // router-only tile
  EXPECT_THROW(noc.atomic_inc(kA, {{0, 0}, 0x100}, 1), AccessError);  // DRAM: atomics are L1-only
  EXPECT_THROW(noc.atomic_inc(kA, {kB, 0x102}, 1), AccessError);      // misaligned word
}

// The look-ups every request makes report a bad requester (a bug in the caller: an invariant)
// and a target tile without memory (a kernel error) with the chip, the core and what it is.
TEST(NocErrors, ARequesterThatCannotRequestAndATargetWithoutMemoryAreNamed) {
  Engine engine;
  Chip chip(engine, 7, testing::wormhole());
  Noc& noc = chip.noc(NocId::Noc0);
  try {
    noc.write({0, 2}, 0x1000, {kB, 0x2000}, 64);  // a router-only tile
    FAIL() << "expected an invariant error";
  } catch (const InvariantError& e) {
    EXPECT_NE(std::string(e.what()).find("write on " + to_string(NocId::Noc0) +
                                         " of chip 7: requester (0,2) is not a Tensix or ethernet core"),
              std::string::npos)
        << e.what();
  }
  try {
    noc.write(kA, 0x1000, {{0, 2}, 0x2000}, 64);
    FAIL() << "expected an access error";
  } catch (const AccessError& e) {
    EXPECT_EQ(e.details().chip, 7);
    EXPECT_EQ(e.details().core, (CoreCoord{0, 2}));
    EXPECT_EQ(e.details().address, 0x2000u);
    EXPECT_EQ(e.details().bytes, 64u);
    EXPECT_NE(std::string(e.what()).find("targets a tile without memory (" + to_string(chip.tile({0, 2})) + ")"),
              std::string::npos)
        << e.what();
  }
}

TEST(NocErrors, UncaughtFaultInAKernelEndsTheRunWithItsMessage) {
  Engine engine;
  Chip chip(engine, 0, testing::wormhole());
  engine.spawn_fiber("kernel", [&] { chip.noc(NocId::Noc1).read(kA, {kB, 0x20000000}, 0, 32); });
  try {
    engine.run();
    FAIL() << "expected the run to stop";
  } catch (const ProcessFailure& e) {
    EXPECT_NE(std::string(e.what()).find("chip 0 core (2,1) Tensix L1: read of 32 B at address 0x20000000"),
              std::string::npos)
        << e.what();
  }
}


// NoC servers take packets in gaps (sim/model/noc_server.hpp). X, 8 KiB from (6,1) to (4,1),
// wraps east round row 1 and is booked first (both depart at 40 ns), so it reserves the link
// (2,1)->(3,1) from its head's arrival there, 6 hops on, at 99 ns. Y, 64 B from (2,1) to (3,2),
// booked after it, has its head at that link at 45 ns and takes it first, in the idle gap: it
// finishes as it does alone (before: 274 ns later, behind X's reservation).
TEST(NocGaps, APacketBookedLaterThatReachesAnIdleLinkFirstGoesFirst) {
  const auto run = [](bool with_far_packet) {
    Engine engine;
    Chip chip(engine, 0, testing::wormhole());
    Noc& noc = chip.noc(NocId::Noc0);
    if (with_far_packet) {
      engine.spawn_fiber("far", [&] { noc.write({6, 1}, 0x10000, {{4, 1}, 0x20000}, 8192); });
    }
    SimTime acked;
    engine.spawn_fiber("near", [&] {
      noc.write({2, 1}, 0x10000, {{3, 2}, 0x20000}, 64);
      block_on(noc.write_barrier({2, 1}));
      acked = engine.now();
    });
    engine.run();
    return std::make_pair(acked, chip.noc(NocId::Noc0).link({2, 1}, 0).packets);
  };
  const auto [alone, alone_packets] = run(false);
  const auto [shared, shared_packets] = run(true);
  EXPECT_EQ(alone_packets, 1);
  EXPECT_EQ(shared_packets, 2);  // both crossed the link
  EXPECT_EQ(shared, alone);
}

// Packets from one core on one NoC to one target still arrive in order. D, 8 KiB from (2,1) to
// (4,1), does not fit the gap before X's reservation (as above) and waits behind it; an atomic
// from the same core to the same target, issued once D is booked, leaves through its own
// command buffer and would fit that gap (and the one at the target's NIU). It must still land
// after D: the target NIU starts it no earlier than D's end there (NocPort::last_arrival_at).
TEST(NocGaps, AnAtomicDoesNotOvertakeAnEarlierWriteToTheSameCore) {
  Engine engine;
  Chip chip(engine, 0, testing::wormhole());
  Noc& noc = chip.noc(NocId::Noc0);
  constexpr CoreCoord kSource{2, 1};
  constexpr CoreCoord kTarget{4, 1};
  engine.spawn_fiber("far", [&] { noc.write({6, 1}, 0x10000, {kTarget, 0x40000}, 8192); });
  SimTime write_acked;
  SimTime atomic_acked;
  engine.spawn_fiber("writer", [&] {
    noc.write(kSource, 0x10000, {kTarget, 0x20000}, 8192);
    block_on(noc.write_barrier(kSource));
    write_acked = engine.now();
  });
  engine.spawn_fiber("signaller", [&] {
    block_on(delay(41_ns));  // D departs and is booked at 40 ns
    noc.atomic_inc(kSource, {kTarget, 0x100}, 1);
    block_on(noc.atomic_barrier(kSource));
    atomic_acked = engine.now();
  });
  engine.run();
  // Both acks take the same route back: the atomic landed after the write's last byte.
  EXPECT_GT(atomic_acked, write_acked);
  // X (booked first, its reservation there starts at 122 ns) did not make the atomic wait: the
  // atomic is through the target's NIU right after D.
  const SimTime d_serialisation = transfer_time(32 + 8192, Bandwidth::bytes_per_second(28'100'000'000));
  EXPECT_LT(atomic_acked, write_acked + d_serialisation);
}


// A DRAM channel takes requests in the order they reach it, so a read request that arrives
// while the channel is idle is served then, even though a write that arrives later was booked
// on the channel first (when it left its source NIU, 8 KiB from the Tensix core farthest from
// the endpoint on NoC0). The read goes on NoC1 from the nearest core: the two share only the
// channel. Before session 12 the read waited behind the write's reservation.
TEST(NocGaps, ADramReadArrivingFirstIsNotHeldBehindALaterArrivingWrite) {
  const auto run = [](bool with_write) {
    Engine engine;
    Chip chip(engine, 0, testing::wormhole());
    const CoreCoord endpoint = chip.dram_channel(0).endpoints().front();
    Noc& noc0 = chip.noc(NocId::Noc0);
    Noc& noc1 = chip.noc(NocId::Noc1);
    CoreCoord far = chip.tensix_cores().front();
    CoreCoord near = far;
    for (CoreCoord c : chip.tensix_cores()) {
      if (noc0.hops(c, endpoint) > noc0.hops(far, endpoint)) far = c;
      if (noc1.hops(c, endpoint) + noc1.hops(endpoint, c) < noc1.hops(near, endpoint) + noc1.hops(endpoint, near)) {
        near = c;
      }
    }
    if (with_write) engine.spawn_fiber("far", [&] { noc0.write(far, 0x10000, {endpoint, 0}, 8192); });
    SimTime read_done;
    engine.spawn_fiber("near", [&] {
      noc1.read(near, {endpoint, 0x100000}, 0x10000, 64);
      block_on(noc1.read_barrier(near));
      read_done = engine.now();
    });
    engine.run();
    return std::make_pair(read_done, chip.dram_channel(0).server().packets);
  };
  const auto [alone, alone_packets] = run(false);
  const auto [shared, shared_packets] = run(true);
  EXPECT_EQ(alone_packets, 1);
  EXPECT_EQ(shared_packets, 2);  // the write went through the channel too
  EXPECT_EQ(shared, alone);
}

}  // namespace
}  // namespace cclmesh::sim
