#include "sim/engine/process.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "sim/engine/delay.hpp"
#include "sim/engine/join.hpp"
#include "tests/unit/engine/engine_test_util.hpp"

namespace cclmesh::sim {
namespace {
using namespace literals;

using testing::Log;

Process<> ticker(Log& log, std::string name, SimTime step, int count) {
  for (int i = 0; i < count; ++i) {
    co_await delay(step);
    log.add(name + std::to_string(i));
  }
}

TEST(Process, DelayChainHasExactTimestamps) {
  Engine engine;
  Log log;
  engine.spawn(ticker(log, "a", 10_ns, 3), "a");
  engine.spawn(ticker(log, "b", 15_ns, 2), "b");
  RunResult result = engine.run();
  EXPECT_EQ(result.reason, StopReason::Idle);
  EXPECT_EQ(result.now, 30_ns);
  using E = std::pair<SimTime, std::string>;
  EXPECT_EQ(log.entries, (std::vector<E>{{10_ns, "a0"}, {15_ns, "b0"}, {20_ns, "a1"}, {30_ns, "b1"}, {30_ns, "a2"}}));
  // b1 precedes a2 at 30 ns: b scheduled that wake-up at 15 ns, a only at 20 ns.
}

TEST(Process, EqualTimesRunInSchedulingOrder) {
  Engine engine;
  Log log;
  for (int i = 0; i < 4; ++i) engine.spawn(ticker(log, "p" + std::to_string(i), 0_ns, 2), "p");
  engine.run();
  std::vector<std::string> order;
  for (auto& [time, what] : log.entries) {
    EXPECT_EQ(time, 0_ns);
    order.push_back(what);
  }
  EXPECT_EQ(order, (std::vector<std::string>{"p00", "p10", "p20", "p30", "p01", "p11", "p21", "p31"}));
}

Process<int> compute(int value, SimTime cost) {
  co_await delay(cost);
  co_return value * 2;
}

Process<> parent(Log& log) {
  int a = co_await compute(20, 5_ns);
  log.add("a=" + std::to_string(a));
  int b = co_await compute(1, 7_ns).named("second");
  log.add("b=" + std::to_string(b));
}

TEST(Process, AwaitsSubProcessesAndTheirValues) {
  Engine engine;
  Log log;
  engine.spawn(parent(log), "parent");
  engine.run();
  using E = std::pair<SimTime, std::string>;
  EXPECT_EQ(log.entries, (std::vector<E>{{5_ns, "a=40"}, {12_ns, "b=2"}}));
}

Process<int> failing(SimTime when) {
  co_await delay(when);
  throw std::runtime_error("boom");
  co_return 0;
}

Process<> catcher(Log& log) {
  try {
    co_await failing(3_ns);
  } catch (const std::runtime_error& e) {
    log.add(std::string("caught ") + e.what());
  }
}

TEST(Process, ExceptionReachesTheAwaiter) {
  Engine engine;
  Log log;
  engine.spawn(catcher(log), "catcher");
  EXPECT_EQ(engine.run().reason, StopReason::Idle);
  ASSERT_EQ(log.entries.size(), 1u);
  EXPECT_EQ(log.entries[0].first, 3_ns);
  EXPECT_EQ(log.entries[0].second, "caught boom");
}

Process<> top_level_failure() {
  co_await delay(4_ns);
  throw std::runtime_error("link exploded");
}

TEST(Process, UncaughtExceptionFailsTheRunNamingTheProcess) {
  Engine engine;
  engine.spawn(top_level_failure(), "chip3.router");
  try {
    engine.run();
    FAIL() << "expected ProcessFailure";
  } catch (const ProcessFailure& failure) {
    EXPECT_EQ(failure.actor_name(), "chip3.router");
    EXPECT_EQ(failure.when(), 4_ns);
    EXPECT_NE(std::string(failure.what()).find("link exploded"), std::string::npos);
  }
}

TEST(Process, AllOfWaitsForTheSlowest) {
  Engine engine;
  Log log;
  auto body = [](Log& log) -> Process<> {
    std::vector<Process<int>> children;
    children.push_back(compute(1, 30_ns));
    children.push_back(compute(2, 10_ns));
    children.push_back(compute(3, 20_ns));
    co_await all_of(children);
    log.add("all " + std::to_string(children[0].result() + children[1].result() + children[2].result()));
  };
  engine.spawn(body(log), "joiner");
  engine.run();
  ASSERT_EQ(log.entries.size(), 1u);
  EXPECT_EQ(log.entries[0].first, 30_ns);
  EXPECT_EQ(log.entries[0].second, "all 12");
}

TEST(Process, AnyOfReturnsTheFirstAndCancelsTheRest) {
  Engine engine;
  Log log;
  auto body = [](Log& log) -> Process<> {
    std::vector<Process<>> children;
    children.push_back(ticker(log, "slow", 50_ns, 1));
    children.push_back(ticker(log, "fast", 10_ns, 1));
    std::size_t winner = co_await any_of(children);
    log.add("winner " + std::to_string(winner));
  };
  engine.spawn(body(log), "joiner");
  RunResult result = engine.run();
  using E = std::pair<SimTime, std::string>;
  EXPECT_EQ(log.entries, (std::vector<E>{{10_ns, "fast0"}, {10_ns, "winner 1"}}));
  EXPECT_EQ(result.now, 10_ns);  // the cancelled child's wake-up was withdrawn
}

}  // namespace
}  // namespace cclmesh::sim
