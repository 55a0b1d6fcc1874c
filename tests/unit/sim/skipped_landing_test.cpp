// Skipped DRAM landings (docs/sim_model.md, "Skipped events") change the event count and
// nothing else: the same small scenarios run with the skip on and off (Noc's test switch) give
// the same log of who saw what when, the same final bytes and the same end time. The scenarios
// sweep the moment a barrier, a polling kernel or a DRAM reader turns up across the writes'
// whole lives (before the booking, between booking and landing, at the landing's picosecond
// on either side of its place, between landing and ack, after the ack).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
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
constexpr CoreCoord kReader{2, 2};
constexpr CoreCoord kDram{0, 0};  // a DRAM endpoint of channel 0, 20 hops from the writer on NoC0
constexpr CoreCoord kNearDram{5, 0};  // channel 2, 15 hops
constexpr std::uint64_t kTarget = 0x100;
constexpr std::uint32_t kPacket = 2048;

struct Scenario {
  std::optional<SimTime> barrier_at;   // another fiber waits for the writer's acks from then
  std::optional<SimTime> listener_at;  // a polling kernel on the writer parks for its acks
  std::optional<SimTime> read_at;      // a core on NoC1 reads the target from then
  bool posted = false;                 // the writes need no ack
  bool two_channels = false;           // the last write goes to a nearer channel
  std::uint32_t bytes = kPacket;       // per write (small ones: the nearer channel's lands first)
  // A bystander fiber that from `bystander_from` on waits until `bystander_at` (the moment the
  // barrier ends, say): which of the two runs first tells where the barrier's alarm was set.
  std::optional<SimTime> bystander_from;
  SimTime bystander_at;
  std::optional<SimTime> cap;  // a device's --max-sim-time: run while the time has not passed it
  bool trids = false;                  // tagged writes, their acks polled per id
  bool no_noc_latency = false;         // NoC hops and request set-up take no time: acks due at the landing
};

Scenario barrier_at(SimTime at, bool posted = false) {
  Scenario s;
  s.barrier_at = at;
  s.posted = posted;
  return s;
}
Scenario listener_at(SimTime at) {
  Scenario s;
  s.listener_at = at;
  return s;
}
Scenario read_at(SimTime at) {
  Scenario s;
  s.read_at = at;
  return s;
}

struct Outcome {
  std::vector<std::string> log;
  SimTime end;
  std::vector<std::uint8_t> dram;
  std::uint64_t events = 0;
  SimTime barrier_done;
  bool operator==(const Outcome& other) const {
    return log == other.log && end == other.end && dram == other.dram;
  }
};

void PrintTo(const Outcome& o, std::ostream* os) {
  for (const std::string& line : o.log) *os << "\n  " << line;
  *os << "\n  end " << to_string(o.end) << ", " << o.events << " events";
}

std::uint64_t fnv(const std::vector<std::uint8_t>& bytes) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (std::uint8_t b : bytes) h = (h ^ b) * 0x100000001b3ull;
  return h;
}

// Wormhole with no NoC latency (as zero-latency what-if hardware): a write's ack is due the
// moment it lands.
std::shared_ptr<const ArchSpec> wormhole_without_noc_latency() {
  auto spec = std::make_shared<ArchSpec>(*testing::wormhole());
  NocParams& noc = spec->params.noc;
  noc.router_hop = SimTime::zero();
  noc.niu_to_router = SimTime::zero();
  noc.router_to_niu = SimTime::zero();
  noc.request_setup = SimTime::zero();
  noc.request_issue = SimTime::zero();
  return spec;
}

Outcome run(const Scenario& s, bool skip) {
  Engine engine;
  Chip chip(engine, 0, s.no_noc_latency ? wormhole_without_noc_latency() : testing::wormhole());
  chip.noc(NocId::Noc0).set_skip_unwatched_dram_landings(skip);
  chip.noc(NocId::Noc1).set_skip_unwatched_dram_landings(skip);
  Noc& noc = chip.noc(NocId::Noc0);
  for (int i = 0; i < 3; ++i) chip.l1(kWriter).write(0x10000 + i * kPacket, pattern(kPacket, static_cast<std::uint8_t>(i + 1)));
  Outcome out;
  auto note = [&](const std::string& what) { out.log.push_back(to_string(engine.now()) + " " + what); };
  engine.spawn_fiber("writer", [&] {
    // Three writes of different bytes to the same DRAM address, then the writer walks away.
    for (int i = 0; i < 3; ++i) {
      const NocAddress to{s.two_channels && i == 2 ? kNearDram : kDram, kTarget};
      if (s.trids) {
        noc.write_with_trid(kWriter, 0x10000 + i * kPacket, to, s.bytes, static_cast<std::uint32_t>(i));
      } else {
        noc.write(kWriter, 0x10000 + i * kPacket, to, s.bytes, s.posted ? WriteAck::Posted : WriteAck::NonPosted);
      }
      block_on(delay(7_ns));
    }
    const NocCounters c = noc.port(kWriter).counters();
    note("issued; acked " + std::to_string(c.nonposted_writes_acked));
  });
  if (s.barrier_at) {
    engine.spawn_fiber("barrier", [&] {
      block_on(delay(*s.barrier_at));
      note("barrier from; acked " + std::to_string(noc.port(kWriter).counters().nonposted_writes_acked));
      block_on(noc.write_barrier(kWriter));
      note("barrier done");
      out.barrier_done = engine.now();
    });
  }
  ActivityListener listener("poller");
  if (s.listener_at) {
    engine.spawn_fiber("poller", [&] {
      block_on(delay(*s.listener_at));
      chip.l1(kWriter).activity().attach(listener);
      while (!noc.port(kWriter).complete(NocBarrierKind::Writes)) {
        listener.wait_blocking(activity_bit(ActivityKind::NocWritesAcked));
        note("poller woke");
      }
      note("poller done");
    });
  }
  if (s.read_at) {
    engine.spawn_fiber("reader", [&] {
      block_on(delay(*s.read_at));
      Noc& back = chip.noc(NocId::Noc1);
      back.read(kReader, {kDram, kTarget}, 0x40000, kPacket);
      block_on(back.read_barrier(kReader));
      note("read " + std::to_string(fnv(chip.l1(kReader).read(0x40000, kPacket))));
    });
  }
  if (s.bystander_from) {
    engine.spawn_fiber("bystander", [&] {
      block_on(delay(*s.bystander_from));
      block_on(delay(s.bystander_at - engine.now()));
      // One more hand-off in the same picosecond: it goes after the barrier's resumption if
      // the alarm that resumes it ran before the bystander woke, else before it.
      block_on(delay(SimTime::zero()));
      note("bystander");
    });
  }
  if (s.trids) {
    engine.spawn_fiber("trid poller", [&] {
      std::uint32_t seen = 0;
      while (seen != 7) {
        for (std::uint32_t id = 0; id < 3; ++id) {
          if ((seen >> id & 1) == 0 && noc.port(kWriter).trid_writes_acked(id)) {
            seen |= 1u << id;
            note("id " + std::to_string(id) + " acked");
          }
        }
        block_on(delay(SimTime::from_ps(997)));
      }
    });
  }
  RunResult result;
  if (s.cap) {
    engine.set_keep_going_time_cap(*s.cap);
    result = engine.run_while([&] { return engine.now() <= *s.cap; });
  } else {
    result = engine.run();
  }
  out.end = result.now;
  out.log.push_back(to_string(result.reason));
  out.dram = chip.dram_channel(0).memory().read(kTarget, kPacket);
  const std::vector<std::uint8_t> near = chip.dram_channel(2).memory().read(kTarget, kPacket);
  out.dram.insert(out.dram.end(), near.begin(), near.end());
  out.events = engine.stats().events_executed;
  return out;
}

void expect_same(const Scenario& s, const std::string& what) {
  const Outcome with_events = run(s, false);
  const Outcome skipped = run(s, true);
  EXPECT_EQ(skipped, with_events) << what;
  EXPECT_LE(skipped.events, with_events.events) << what;
}

// The writes (1,1) -> DRAM (0,0) land from ~317 ns, 7 ns apart, and are acked 28 ns later
// (tests/unit/sim/dram_test.cpp): the sweeps cover 0..600 ns.
TEST(SkippedLandings, ABarrierTurningUpAnyTimeEndsWhereItWouldWithEveryLandingAnEvent) {
  for (std::int64_t ns = 0; ns <= 600; ns += 3) {
    for (bool posted : {false, true}) {
      expect_same(barrier_at(SimTime::from_ps(ns * 1000 + 17), posted),
                  "barrier at " + std::to_string(ns) + " ns, posted " + std::to_string(posted));
    }
  }
  // The run skipped something at all: the scenario is not vacuous.
  EXPECT_LT(run(Scenario{}, true).events, run(Scenario{}, false).events);
}

// The last booking lands first (a nearer channel): the barrier that turns up after the
// bookings must have its alarm set from the latest landing's place, as when that landing was
// an event. Where it is set shows in the order of the barrier's end and a bystander's wake-up at
// the same picosecond, the bystander's wait starting anywhere from before the first landing to
// after the last.
TEST(SkippedLandings, ABarrierWaitsForTheLastLandingWhenALaterBookingLandsFirst) {
  for (bool trids : {false, true}) {
    Scenario s = barrier_at(100_ns);  // after the three bookings (~40, 47, 54 ns), before any landing
    s.two_channels = true;
    s.bytes = 64;
    s.trids = trids;
    expect_same(s, "barrier at 100 ns, ids " + std::to_string(trids));
    s.bystander_at = run(s, false).barrier_done;
    ASSERT_GT(s.bystander_at, 200_ns);
    for (std::int64_t ns = 101; SimTime::from_ps(ns * 1000) <= s.bystander_at; ns += 1) {
      s.bystander_from = SimTime::from_ps(ns * 1000);
      expect_same(s, "bystander from " + std::to_string(ns) + " ns, ids " + std::to_string(trids));
    }
  }
  for (std::int64_t ns = 0; ns <= 600; ns += 3) {
    for (std::uint32_t bytes : {64u, kPacket}) {
      Scenario s = barrier_at(SimTime::from_ps(ns * 1000 + 11));
      s.two_channels = true;
      s.bytes = bytes;
      expect_same(s, "barrier at " + std::to_string(ns) + " ns, two channels, " + std::to_string(bytes) + " B");
    }
  }
}

// With no NoC latency a skipped landing's ack is due at its own place: the barrier or polling
// kernel that parked before it must end there (NocPort::unseen_ack_place_reached), as it does
// when the landing is an event and resolves the ack due at once (NocPort::resolved).
TEST(SkippedLandings, WithNoNocLatencyAWaiterParkedBeforeTheLastAckEndsAtIt) {
  for (std::int64_t ns = 0; ns <= 400; ns += 3) {
    for (bool listener : {false, true}) {
      Scenario s = listener ? listener_at(SimTime::from_ps(ns * 1000 + 5)) : barrier_at(SimTime::from_ps(ns * 1000 + 17));
      s.no_noc_latency = true;
      const std::string what = (listener ? "listener at " : "barrier at ") + std::to_string(ns) + " ns";
      for (bool skip : {false, true}) {
        const Outcome out = run(s, skip);
        const std::string done = listener ? "poller done" : "barrier done";
        EXPECT_TRUE(std::any_of(out.log.begin(), out.log.end(),
                                [&](const std::string& line) { return line.ends_with(done); }))
            << what << ", skip " << skip << ":" << ::testing::PrintToString(out);
        EXPECT_EQ(out.log.back(), to_string(StopReason::Idle)) << what << ", skip " << skip;
      }
      expect_same(s, what);
    }
  }
}

TEST(SkippedLandings, APollingKernelTurningUpAnyTimeWakesWhereItWould) {
  for (std::int64_t ns = 0; ns <= 600; ns += 3) {
    expect_same(listener_at(SimTime::from_ps(ns * 1000 + 5)), "listener at " + std::to_string(ns) + " ns");
  }
}

// A DRAM read arriving around each landing, down to the picosecond: it sees the bytes of
// exactly the landings placed before it, as when they were events.
TEST(SkippedLandings, AReadRacingTheLandingsSeesWhatItWouldHaveSeen) {
  // Find, with landings as events, the issue times where the bytes read change (a read issued
  // at t sees the landings up to some place; binary search on the picosecond).
  const auto seen = [](SimTime at) {
    for (const std::string& line : run(read_at(at), false).log) {
      const std::size_t read = line.find(" read ");
      if (read != std::string::npos) return line.substr(read);
    }
    return std::string("no read");
  };
  std::vector<SimTime> changes;
  std::string before = seen(SimTime::zero());
  for (std::int64_t ns = 1; ns <= 600; ++ns) {
    const std::string now = seen(SimTime::from_ps(ns * 1000));
    if (now == before) continue;
    std::int64_t lo = (ns - 1) * 1000;  // sees `before`
    std::int64_t hi = ns * 1000;        // sees something else
    while (hi - lo > 1) {
      const std::int64_t mid = (lo + hi) / 2;
      (seen(SimTime::from_ps(mid)) == before ? lo : hi) = mid;
    }
    changes.push_back(SimTime::from_ps(hi));
    before = now;
  }
  ASSERT_GE(changes.size(), 3u);  // each of the three landings is seen from some moment on
  for (SimTime change : changes) {
    for (std::int64_t d = -3; d <= 3; ++d) {
      const SimTime at = change + SimTime::from_ps(d);
      expect_same(read_at(at), "read at " + to_string(at));
      Scenario both = read_at(at);
      both.barrier_at = at;
      expect_same(both, "read and barrier at " + to_string(at));
    }
  }
}

// A --max-sim-time cap anywhere in the writes' lives: the run stops after the same event (or
// skipped landing) at the same time, with the same bytes landed.
TEST(SkippedLandings, ATimeCapStopsTheRunWhereItWouldHaveStopped) {
  for (std::int64_t ns = 0; ns <= 600; ++ns) {
    for (std::int64_t ps : {0, 333, 417, 667}) {
      Scenario s = read_at(200_ns);
      s.cap = SimTime::from_ps(ns * 1000 + ps);
      expect_same(s, "cap " + to_string(*s.cap));
    }
  }
}

// The same race the other way round in sequence order: a read from far away (20 hops) booked
// ~160 ns before a write from near by (2 hops), its request reaching its DRAM endpoint in the
// picosecond the write's bytes land, on their arrival through another endpoint of the same
// channel (docs/sim_model.md, "DRAM order"; through the same endpoint the write would queue
// behind the request: servers are booked in order). The read's place is then before the
// landing's, so it sees the old bytes (and one picosecond later the new), as when the landing
// was an event.
std::vector<std::uint8_t> far_read_near_write(SimTime write_at, bool skip) {
  constexpr CoreCoord kNearWriter{9, 11};  // NoC0: 1 hop east (wrapping), 1 south to (0,0)
  constexpr CoreCoord kFarReader{1, 2};    // 9 + 11 hops to (0,1)
  constexpr CoreCoord kOtherEndpoint{0, 1};  // channel 0 too
  Engine engine;
  Chip chip(engine, 0, testing::wormhole());
  chip.noc(NocId::Noc0).set_skip_unwatched_dram_landings(skip);
  Noc& noc = chip.noc(NocId::Noc0);
  chip.l1(kNearWriter).write(0x10000, pattern(64, 9));
  std::vector<std::uint8_t> seen;
  engine.spawn_fiber("writer", [&] {
    block_on(delay(write_at));
    noc.write(kNearWriter, 0x10000, {kDram, kTarget}, 64);
  });
  engine.spawn_fiber("reader", [&] {
    noc.read(kFarReader, {kOtherEndpoint, kTarget}, 0x40000, 64);
    block_on(noc.read_barrier(kFarReader));
    seen = chip.l1(kFarReader).read(0x40000, 64);
  });
  engine.run();
  return seen;
}

TEST(SkippedLandings, AReadBookedBeforeTheWriteAndArrivingInItsPicosecondSeesTheOldBytes) {
  const std::vector<std::uint8_t> old_bytes(64, 0);
  // The latest write time whose landing the read still sees, with landings as events.
  std::int64_t lo = 0;         // sees the new bytes
  std::int64_t hi = 400'000;   // sees the old
  ASSERT_EQ(far_read_near_write(SimTime::from_ps(lo), false), pattern(64, 9));
  ASSERT_EQ(far_read_near_write(SimTime::from_ps(hi), false), old_bytes);
  while (hi - lo > 1) {
    const std::int64_t mid = (lo + hi) / 2;
    (far_read_near_write(SimTime::from_ps(mid), false) == old_bytes ? hi : lo) = mid;
  }
  EXPECT_GT(hi, 100'000);  // the write is booked well after the read
  for (std::int64_t d = -3; d <= 3; ++d) {
    const SimTime at = SimTime::from_ps(hi + d);
    EXPECT_EQ(far_read_near_write(at, true), far_read_near_write(at, false)) << "write at " << to_string(at);
  }
}

}  // namespace
}  // namespace cclmesh::sim
