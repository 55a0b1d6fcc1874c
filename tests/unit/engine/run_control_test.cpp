// Run control, statistics, hang reports and determinism.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "sim/engine/channel.hpp"
#include "sim/engine/delay.hpp"
#include "sim/engine/process.hpp"
#include "sim/engine/semaphore.hpp"

namespace cclmesh::sim {
namespace {
using namespace literals;

Process<> ticker(int& ticks, SimTime step) {
  while (true) {
    co_await delay(step);
    ++ticks;
  }
}

TEST(RunControl, RunUntilStopsAtTheLimit) {
  Engine engine;
  int ticks = 0;
  engine.spawn(ticker(ticks, 10_ns), "ticker");
  RunResult result = engine.run_until(95_ns);
  EXPECT_EQ(result.reason, StopReason::TimeLimit);
  EXPECT_EQ(result.now, 95_ns);
  EXPECT_EQ(ticks, 9);
  result = engine.run_until(100_ns);  // the event at exactly the limit runs
  EXPECT_EQ(ticks, 10);
  EXPECT_EQ(result.now, 100_ns);
}

TEST(RunControl, RunWhileChecksThePredicateBetweenEvents) {
  Engine engine;
  int ticks = 0;
  engine.spawn(ticker(ticks, 3_ns), "ticker");
  RunResult result = engine.run_while([&] { return ticks < 5; });
  EXPECT_EQ(result.reason, StopReason::Predicate);
  EXPECT_EQ(ticks, 5);
  EXPECT_EQ(result.now, 15_ns);
}

TEST(RunControl, StopEndsTheRun) {
  Engine engine;
  int ticks = 0;
  engine.spawn(ticker(ticks, 1_ns), "ticker");
  engine.schedule_at(7_ns, [&] { engine.stop(); });
  RunResult result = engine.run();
  EXPECT_EQ(result.reason, StopReason::Stopped);
  EXPECT_EQ(result.now, 7_ns);
}

TEST(RunControl, StatisticsCountEvents) {
  Engine engine;
  int ticks = 0;
  engine.spawn(ticker(ticks, 1_ns), "ticker");
  engine.run_until(100_ns);
  EngineStats stats = engine.stats();
  EXPECT_EQ(stats.events_executed, 101u);  // the start plus 100 wake-ups
  EXPECT_EQ(stats.simulated_time, 100_ns);
  EXPECT_EQ(stats.live_actors, 1u);
  EXPECT_GE(stats.wall_seconds, 0.0);
}

Process<> stuck_on(Semaphore& sem) { co_await sem.acquire(2); }
Process<> waits_for_child(Semaphore& sem) { co_await stuck_on(sem).named("child"); }

// A skipped event keeps its sequence number's place: another event scheduled later for the
// same time still runs after it if it is scheduled in its place after all; has_run() tells
// places before and after the running event apart; an idle run ends at the latest skipped
// event's time, and a run up to a limit reports the limit while one lies beyond it.
TEST(SkippedEvents, KeepTheirPlaceAndCountWhereARunEnds) {
  Engine engine;
  std::vector<int> order;
  std::uint64_t skipped = 0;
  engine.schedule_at(1_ns, [&] {
    engine.schedule_at(5_ns, [&] { order.push_back(1); });
    skipped = engine.skip_event(5_ns);  // between 1 and 3 in sequence order
    engine.schedule_at(5_ns, [&] { order.push_back(3); });
    EXPECT_FALSE(engine.has_run(5_ns, skipped));
    engine.skip_event(30_ns);  // never scheduled
  });
  engine.schedule_at(2_ns, [&] {
    EXPECT_TRUE(engine.has_run(1_ns, 0));
    engine.schedule_reserved(5_ns, skipped, [&] {
      EXPECT_TRUE(engine.has_run(5_ns, skipped));
      order.push_back(2);
    });
  });
  RunResult result = engine.run_until(20_ns);
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(result.reason, StopReason::TimeLimit);  // the skipped event at 30 ns is still due
  EXPECT_EQ(result.now, 20_ns);
  result = engine.run();
  EXPECT_EQ(result.reason, StopReason::Idle);
  EXPECT_EQ(result.now, 30_ns);  // as if the skipped event had run last
  EXPECT_EQ(engine.stats().events_executed, 5u);
}

// The keep-going check is asked where the first skipped event past the time cap would have
// run, before the next event that runs, and that event stays queued.
TEST(SkippedEvents, TheKeepGoingCheckStopsAtTheFirstOnePastTheCap) {
  Engine engine;
  engine.set_keep_going_time_cap(10_ns);
  int ran = 0;
  engine.schedule_at(1_ns, [&] {
    engine.skip_event(8_ns);   // before the cap: not asked about
    engine.skip_event(12_ns);  // the first past it
    engine.skip_event(13_ns);
    engine.schedule_at(15_ns, [&] { ++ran; });
  });
  std::vector<SimTime> asked;
  RunResult result = engine.run_while([&] {
    asked.push_back(engine.now());
    return engine.now() <= 10_ns;
  });
  EXPECT_EQ(result.reason, StopReason::Predicate);
  EXPECT_EQ(result.now, 12_ns);
  EXPECT_EQ(ran, 0);
  EXPECT_EQ(asked, (std::vector<SimTime>{0_ns, 1_ns, 12_ns}));
  result = engine.run();  // the event at 15 ns was put back, not lost
  EXPECT_EQ(ran, 1);
  EXPECT_EQ(result.now, 15_ns);
}

TEST(HangReport, ListsEveryParkedActorAndWhatItWaitsFor) {
  Engine engine;
  Semaphore sem(1, "chip0.sem3");
  Channel<int> channel(4, "edm.ch0");
  engine.spawn(waits_for_child(sem), "parent");
  engine.spawn_fiber("chip2.reader", [&] { channel.get_blocking(); });
  // Something else runs until 5 ns, then nothing is left to wake the parked actors.
  engine.spawn([]() -> Process<> { co_await delay(5_ns); }(), "finisher");
  RunResult result = engine.run();
  ASSERT_EQ(result.reason, StopReason::Hang);
  ASSERT_TRUE(result.hang.has_value());
  EXPECT_EQ(result.now, 5_ns);
  const HangReport& report = *result.hang;
  ASSERT_EQ(report.parked.size(), 3u);
  EXPECT_EQ(report.parked[0].name, "parent");
  EXPECT_EQ(report.parked[0].waiting_for, "process 'child' to finish");
  EXPECT_EQ(report.parked[1].name, "chip2.reader");
  EXPECT_EQ(report.parked[1].kind, Actor::Kind::Fiber);
  EXPECT_EQ(report.parked[1].waiting_for, "channel 'edm.ch0' to receive an item (0 of 4 slots used)");
  EXPECT_EQ(report.parked[2].name, "child");
  EXPECT_EQ(report.parked[2].waiting_for, "semaphore 'chip0.sem3' (needs 2, has 1, 1 waiting)");
  const std::string text = report.to_string();
  EXPECT_NE(text.find("3 actor(s) parked"), std::string::npos);
  EXPECT_NE(text.find("fiber 'chip2.reader'"), std::string::npos);
}

// A small but busy scenario: producers and consumers over channels and semaphores.
std::uint64_t run_scenario(std::uint64_t* events) {
  Engine engine;
  Channel<int> channel(3, "c");
  Semaphore credits(2, "s");
  for (int p = 0; p < 4; ++p) {
    engine.spawn([](Channel<int>& channel, Semaphore& credits, int p) -> Process<> {
      for (int i = 0; i < 50; ++i) {
        co_await credits.acquire();
        co_await delay(SimTime::from_ns(1 + (i * 7 + p) % 5));
        co_await channel.put(i);
      }
    }(channel, credits, p), "producer");
  }
  engine.spawn_fiber("consumer", [&] {
    for (int i = 0; i < 200; ++i) {
      channel.get_blocking();
      block_on(delay(SimTime::from_ns(2)));
      credits.release();
    }
  });
  engine.run();
  *events = engine.stats().events_executed;
  return engine.trace_hash();
}

TEST(Determinism, TwoRunsGiveTheSameEventTraceHash) {
  std::uint64_t events_a = 0;
  std::uint64_t events_b = 0;
  const std::uint64_t a = run_scenario(&events_a);
  const std::uint64_t b = run_scenario(&events_b);
  EXPECT_EQ(a, b);
  EXPECT_EQ(events_a, events_b);
  EXPECT_GT(events_a, 400u);
}

TEST(ProgressReport, ComesEveryNEventsAndChangesNothingSimulated) {
  struct Outcome {
    std::uint64_t events;
    std::uint64_t hash;
    SimTime now;
    std::vector<EngineProgress> reports;
  };
  auto run = [](std::uint64_t every) {
    Engine engine;
    int ticks = 0;
    engine.spawn(ticker(ticks, 3_ns), "ticker");
    Outcome outcome{};
    engine.set_progress_report(every, [&](const EngineProgress& p) {
      EXPECT_EQ(p.now, engine.now());  // between events: the time of the one just run
      outcome.reports.push_back(p);
    });
    engine.run_until(50_ns);  // two runs: the count carries over
    engine.run_until(300_ns);
    outcome.events = engine.stats().events_executed;
    outcome.hash = engine.trace_hash();
    outcome.now = engine.now();
    return outcome;
  };
  const Outcome without = run(0);
  const Outcome with = run(7);
  EXPECT_TRUE(without.reports.empty());
  EXPECT_EQ(with.events, without.events);
  EXPECT_EQ(with.hash, without.hash);
  EXPECT_EQ(with.now, without.now);
  ASSERT_EQ(with.reports.size(), without.events / 7);
  for (std::size_t i = 0; i < with.reports.size(); ++i) {
    EXPECT_EQ(with.reports[i].events_executed, 7 * (i + 1));
    if (i > 0) {
      EXPECT_GE(with.reports[i].now, with.reports[i - 1].now);
    }
  }
  EXPECT_GT(with.reports.back().now, 50_ns);
}

}  // namespace
}  // namespace cclmesh::sim
