// Read-after-write order at a DRAM channel (docs/sim_model.md, "DRAM order"): a core that writes
// a page, waits only for noc_async_writes_flushed (the data left its NIU) and reads the page back
// on the same NoC must get the new bytes: the read request follows the write on the same route
// to the same endpoint, so it arrives after it, and the channel applies the requests that reach
// it in order. The write is made to wait in the channel (other cores keep channel 0 busy through
// its two other endpoints), which is where the model used to let the read overtake it: the read
// sampled the channel when its request arrived, the write's bytes went in only once the channel
// had served it.
//
// Across NoCs or cores the hardware promises no order until the write is acked; the tests there
// assert only that (after the ack: the new bytes; before: the old or the new, never a mix).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "sim/engine/delay.hpp"
#include "sim/engine/fiber.hpp"
#include "sim/model/chip.hpp"
#include "sim/model/noc.hpp"
#include "tests/unit/sim/sim_test_util.hpp"

namespace cclmesh::sim {
namespace {
using namespace literals;
using testing::pattern;

constexpr CoreCoord kWriter{1, 1};
constexpr CoreCoord kOtherCore{3, 3};
constexpr CoreCoord kDram{0, 0};  // channel 0, whose other endpoints are (0,1) and (0,11)
constexpr CoreCoord kL1Target{7, 9};
constexpr std::uint64_t kTarget = 0x100;
constexpr std::uint64_t kNewBytes = 0x20000;  // in the writer's L1
constexpr std::uint64_t kReadInto = 0x40000;  // in the reader's L1
constexpr std::uint8_t kOldSeed = 200;
constexpr std::uint8_t kNewSeed = 5;

// Background writers keeping DRAM channel 0 busy through its two other endpoints (three NIUs
// absorb up to 72 B/c, the channel serves 43) on the NoC the writer does not use, so the write
// gets to the channel quickly and waits there; or, on the writer's NoC, the L1 target's NIU.
constexpr CoreCoord kBusyCores[] = {{1, 2}, {2, 3}, {3, 4}, {4, 5}, {6, 7}, {7, 8}, {8, 10}, {9, 11}};
constexpr std::uint32_t kBusyBytes = 64 * 1024;

enum class Target : std::uint8_t { Dram, L1 };

struct Case {
  Target target = Target::Dram;
  NocId write_noc = NocId::Noc0;
  NocId read_noc = NocId::Noc0;
  CoreCoord reader = kWriter;
  std::uint32_t bytes = 2048;
  bool skip_unwatched_landings = true;
  bool ack_waiter = false;     // another fiber waits for the writer's acks: the landing is not skipped
  bool wait_for_ack = false;   // the writer waits for write_barrier, not just writes_flushed
  bool inline_write = false;   // one 32-bit noc_inline_dw_write instead of a data write
  bool read_first = false;     // the read is issued before the write
};

std::string describe(const Case& c) {
  return std::string(c.target == Target::Dram ? "DRAM" : "L1") + " write on " + to_string(c.write_noc) +
         ", read on " + to_string(c.read_noc) + " by " + to_string(c.reader) + ", " + std::to_string(c.bytes) +
         " B, skip " + std::to_string(c.skip_unwatched_landings) + ", ack waiter " + std::to_string(c.ack_waiter) +
         ", inline " + std::to_string(c.inline_write);
}

struct Outcome {
  std::vector<std::uint8_t> read_back;
  SimTime backlog;       // how long a DRAM target's channel was booked ahead when the read was issued
  bool unacked = false;  // the write was not yet acked when the read was issued
};

Outcome run(const Case& c) {
  Engine engine;
  Chip chip(engine, 0, testing::wormhole());
  for (NocId id : {NocId::Noc0, NocId::Noc1}) chip.noc(id).set_skip_unwatched_dram_landings(c.skip_unwatched_landings);
  const bool dram = c.target == Target::Dram;
  MemoryRegion& target_memory = dram ? chip.dram_channel(0).memory() : chip.l1(kL1Target);
  const NocAddress target{dram ? kDram : kL1Target, kTarget};
  target_memory.write(kTarget, pattern(c.bytes, kOldSeed));
  chip.l1(kWriter).write(kNewBytes, pattern(c.bytes, kNewSeed));

  for (std::size_t i = 0; i < std::size(kBusyCores); ++i) {
    engine.spawn_fiber("busy " + std::to_string(i), [&, i] {
      const CoreCoord to = dram ? (i % 2 == 0 ? CoreCoord{0, 1} : CoreCoord{0, 11}) : kL1Target;
      const std::uint64_t at = dram ? 0x1000000 + i * 0x100000 : 0x100000 + (i % 2) * kBusyBytes;
      const NocId other = c.write_noc == NocId::Noc0 ? NocId::Noc1 : NocId::Noc0;
      Noc& busy = chip.noc(dram ? other : c.write_noc);
      busy.write(kBusyCores[i], 0x80000, {to, at}, kBusyBytes);
      block_on(busy.write_barrier(kBusyCores[i]));
    });
  }
  Outcome out;
  Noc& write_noc = chip.noc(c.write_noc);
  Noc& read_noc = chip.noc(c.read_noc);
  const SimTime start = 1_us;  // the channel has a backlog by then
  engine.spawn_fiber("writer", [&] {
    block_on(delay(start));
    if (c.read_first) read_noc.read(c.reader, target, kReadInto, c.bytes);
    if (c.inline_write) {
      write_noc.write_u32(kWriter, target, 0xabcd1234);
    } else {
      write_noc.write(kWriter, kNewBytes, target, c.bytes);
    }
    block_on(c.wait_for_ack ? write_noc.write_barrier(kWriter) : write_noc.writes_flushed(kWriter));
    out.unacked = !write_noc.port(kWriter).complete(NocBarrierKind::Writes);
    if (dram) out.backlog = chip.dram_channel(0).server().free_at - engine.now();
    if (!c.read_first) read_noc.read(c.reader, target, kReadInto, c.bytes);
    block_on(read_noc.read_barrier(c.reader));
    out.read_back = chip.l1(c.reader).read(kReadInto, c.bytes);
  });
  if (c.ack_waiter) {
    engine.spawn_fiber("ack waiter", [&] {
      block_on(delay(start));
      block_on(write_noc.write_barrier(kWriter));
    });
  }
  engine.run();
  return out;
}

std::vector<std::uint8_t> inline_value_over_old(std::uint32_t bytes) {
  std::vector<std::uint8_t> expected = pattern(bytes, kOldSeed);
  const std::uint32_t value = 0xabcd1234;
  for (int i = 0; i < 4; ++i) expected[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(value >> (8 * i));
  return expected;
}

TEST(DramOrder, AReadAfterAFlushedWriteOnTheSameNocGetsTheNewBytes) {
  for (NocId noc : {NocId::Noc0, NocId::Noc1}) {
    for (std::uint32_t bytes : {2048u, 16384u}) {  // one packet, two
      for (bool skip : {true, false}) {
        for (bool ack_waiter : {false, true}) {
          Case c;
          c.write_noc = c.read_noc = noc;
          c.bytes = bytes;
          c.skip_unwatched_landings = skip;
          c.ack_waiter = ack_waiter;
          const Outcome out = run(c);
          EXPECT_EQ(out.read_back, pattern(bytes, kNewSeed)) << describe(c);
          // Not vacuous: the write was still waiting in a busy channel when the read went out.
          EXPECT_TRUE(out.unacked) << describe(c);
          EXPECT_GT(out.backlog, 1_us) << describe(c);
        }
      }
    }
  }
}

TEST(DramOrder, AnInlineWriteFlushedBeforeAReadOnTheSameNocIsSeenByIt) {
  for (NocId noc : {NocId::Noc0, NocId::Noc1}) {
    for (bool skip : {true, false}) {
      Case c;
      c.write_noc = c.read_noc = noc;
      c.inline_write = true;
      c.bytes = 64;
      c.skip_unwatched_landings = skip;
      const Outcome out = run(c);
      EXPECT_EQ(out.read_back, inline_value_over_old(64)) << describe(c);
      EXPECT_TRUE(out.unacked) << describe(c);
      EXPECT_GT(out.backlog, 1_us) << describe(c);
    }
  }
}

// An L1 write lands when its last byte is through the target's NIU, the moment a read request
// behind it can arrive at the earliest: no gap to close, checked with the target's NIU busy.
TEST(DramOrder, AReadAfterAFlushedWriteToL1OnTheSameNocGetsTheNewBytes) {
  for (NocId noc : {NocId::Noc0, NocId::Noc1}) {
    for (std::uint32_t bytes : {2048u, 16384u}) {
      Case c;
      c.target = Target::L1;
      c.write_noc = c.read_noc = noc;
      c.bytes = bytes;
      const Outcome out = run(c);
      EXPECT_EQ(out.read_back, pattern(bytes, kNewSeed)) << describe(c);
      EXPECT_TRUE(out.unacked) << describe(c);
    }
  }
}

// The other way round: a read issued before the write on the same NoC arrives first and gets the
// old bytes, though the channel (booked by the write when it left its NIU) may serve it later.
TEST(DramOrder, AReadIssuedBeforeAWriteOnTheSameNocGetsTheOldBytes) {
  for (Target target : {Target::Dram, Target::L1}) {
    for (NocId noc : {NocId::Noc0, NocId::Noc1}) {
      for (bool skip : {true, false}) {
        Case c;
        c.target = target;
        c.write_noc = c.read_noc = noc;
        c.skip_unwatched_landings = skip;
        c.read_first = true;
        EXPECT_EQ(run(c).read_back, pattern(c.bytes, kOldSeed)) << describe(c);
      }
    }
  }
}

// Another NoC or another core: no order before the ack. Before it, the read gets the old or the
// new bytes of each packet whole; after it, the new.
TEST(DramOrder, AcrossNocsOrCoresOnlyTheAckOrdersAReadAfterAWrite) {
  for (Target target : {Target::Dram, Target::L1}) {
    for (const auto& [read_noc, reader] : {std::pair{NocId::Noc1, kWriter}, std::pair{NocId::Noc0, kOtherCore},
                                          std::pair{NocId::Noc1, kOtherCore}}) {
      for (bool wait_for_ack : {false, true}) {
        Case c;
        c.target = target;
        c.read_noc = read_noc;
        c.reader = reader;
        c.wait_for_ack = wait_for_ack;
        const Outcome out = run(c);
        if (wait_for_ack) {
          EXPECT_EQ(out.read_back, pattern(c.bytes, kNewSeed)) << describe(c) << ", after the ack";
        } else {
          EXPECT_TRUE(out.read_back == pattern(c.bytes, kNewSeed) || out.read_back == pattern(c.bytes, kOldSeed))
              << describe(c) << ", after the flush";
        }
      }
    }
  }
}

// A read from another core, on the other NoC, racing a write that waits in the busy channel: it
// gets the new bytes once its request arrives after the write did, long before the channel has
// served the write (and acked it), and the same bytes whether the write's landing is skipped or
// an event, down to the picosecond where the answer changes. The reader's NoC1 route to (0,0)
// (north one hop, then west along row 0) shares no link or NIU with the writer's NoC0 route or
// with the background writes, so only the two arrivals at the channel decide.
constexpr CoreCoord kRacer{3, 1};

struct Race {
  std::vector<std::uint8_t> read_back;
  SimTime acked;  // when the writer's write barrier returned
};

Race race(SimTime read_at, bool skip) {
  Engine engine;
  Chip chip(engine, 0, testing::wormhole());
  for (NocId id : {NocId::Noc0, NocId::Noc1}) chip.noc(id).set_skip_unwatched_dram_landings(skip);
  chip.dram_channel(0).memory().write(kTarget, pattern(2048, kOldSeed));
  chip.l1(kWriter).write(kNewBytes, pattern(2048, kNewSeed));
  for (std::size_t i = 0; i < std::size(kBusyCores); ++i) {
    engine.spawn_fiber("busy " + std::to_string(i), [&, i] {
      Noc& busy = chip.noc(NocId::Noc1);
      busy.write(kBusyCores[i], 0x80000, {i % 2 == 0 ? CoreCoord{0, 1} : CoreCoord{0, 11}, 0x1000000 + i * 0x100000},
                 kBusyBytes);
      block_on(busy.write_barrier(kBusyCores[i]));
    });
  }
  Race out;
  Noc& noc = chip.noc(NocId::Noc0);
  Noc& other = chip.noc(NocId::Noc1);
  engine.spawn_fiber("writer", [&] {
    block_on(delay(1_us));
    noc.write(kWriter, kNewBytes, {kDram, kTarget}, 2048);
    block_on(noc.writes_flushed(kWriter));
    block_on(noc.write_barrier(kWriter));
    out.acked = engine.now();
  });
  engine.spawn_fiber("reader", [&] {
    block_on(delay(read_at));
    other.read(kRacer, {kDram, kTarget}, kReadInto, 2048);
    block_on(other.read_barrier(kRacer));
    out.read_back = chip.l1(kRacer).read(kReadInto, 2048);
  });
  engine.run();
  return out;
}

TEST(DramOrder, AReadRacingAQueuedWriteSeesItFromItsArrivalWithOrWithoutTheLandingEvent) {
  const std::vector<std::uint8_t> old_bytes = pattern(2048, kOldSeed);
  const std::vector<std::uint8_t> new_bytes = pattern(2048, kNewSeed);
  std::int64_t lo = 900'000;   // ps: a read issued then gets the old bytes
  std::int64_t hi = 4'000'000; // the new
  ASSERT_EQ(race(SimTime::from_ps(lo), false).read_back, old_bytes);
  ASSERT_EQ(race(SimTime::from_ps(hi), false).read_back, new_bytes);
  while (hi - lo > 1) {
    const std::int64_t mid = (lo + hi) / 2;
    const std::vector<std::uint8_t> seen = race(SimTime::from_ps(mid), false).read_back;
    ASSERT_TRUE(seen == old_bytes || seen == new_bytes) << "read at " << mid << " ps";
    (seen == old_bytes ? lo : hi) = mid;
  }
  // The first read to see the write went out well before the write was acked: its request
  // arrived after the write's, while the channel still had the write queued. Before the fix a
  // read saw it only once the channel had served it, a read request's flight (~88 ns here) plus
  // the ack's 28 ns before the ack.
  const SimTime acked = race(SimTime::from_ps(hi), false).acked;
  EXPECT_GT(acked - SimTime::from_ps(hi), 500_ns) << "first read of the new bytes at " << hi << " ps, ack at "
                                                  << to_string(acked);
  for (std::int64_t d = -3; d <= 3; ++d) {
    const SimTime at = SimTime::from_ps(hi + d);
    const Race with_events = race(at, false);
    const Race skipped = race(at, true);
    EXPECT_EQ(skipped.read_back, with_events.read_back) << "read at " << to_string(at);
    EXPECT_EQ(skipped.acked, with_events.acked) << "read at " << to_string(at);
  }
}

}  // namespace
}  // namespace cclmesh::sim
