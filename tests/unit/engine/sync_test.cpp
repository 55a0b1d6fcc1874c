// Semaphores, channels, triggers and conditions: exact timestamps, FIFO fairness, back-pressure.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/engine/channel.hpp"
#include "sim/engine/delay.hpp"
#include "sim/engine/process.hpp"
#include "sim/engine/semaphore.hpp"
#include "sim/engine/trigger.hpp"
#include "tests/unit/engine/engine_test_util.hpp"

namespace cclmesh::sim {
namespace {
using namespace literals;
using Entry = testing::Stamp;
using testing::Log;

Process<> taker(Semaphore& sem, Log& log, std::string name, std::int64_t amount, SimTime start) {
  co_await delay(start);
  co_await sem.acquire(amount);
  log.add(name);
}

Process<> giver(Semaphore& sem, SimTime when, std::int64_t amount) {
  co_await delay(when);
  sem.release(amount);
}

TEST(Semaphore, StrictFifoFairness) {
  Engine engine;
  Semaphore sem(0, "credits");
  Log log;
  // "big" asks first for 3; "small" asks later for 1 and must not overtake it.
  engine.spawn(taker(sem, log, "big", 3, 1_ns), "big");
  engine.spawn(taker(sem, log, "small", 1, 2_ns), "small");
  engine.spawn(giver(sem, 10_ns, 1), "g1");
  engine.spawn(giver(sem, 20_ns, 2), "g2");
  engine.spawn(giver(sem, 30_ns, 1), "g3");
  engine.run();
  EXPECT_EQ(log.entries, (std::vector<Entry>{{20_ns, "big"}, {30_ns, "small"}}));
  EXPECT_EQ(sem.count(), 0);
}

TEST(Semaphore, ReleaseSchedulesWaitersInsteadOfRunningThem) {
  Engine engine;
  Semaphore sem(0);
  Log log;
  engine.spawn(taker(sem, log, "waiter", 1, 0_ns), "waiter");
  auto releaser = [](Semaphore& sem, Log& log) -> Process<> {
    co_await delay(5_ns);
    sem.release();
    log.add("after release");  // runs before the waiter resumes
  };
  engine.spawn(releaser(sem, log), "releaser");
  engine.run();
  EXPECT_EQ(log.entries, (std::vector<Entry>{{5_ns, "after release"}, {5_ns, "waiter"}}));
}

Process<> producer(Channel<int>& channel, Log& log, int count, SimTime step) {
  for (int i = 0; i < count; ++i) {
    co_await delay(step);
    co_await channel.put(i);
    log.add("put" + std::to_string(i));
  }
}

Process<> consumer(Channel<int>& channel, Log& log, int count, SimTime service) {
  for (int i = 0; i < count; ++i) {
    int item = co_await channel.get();
    log.add("got" + std::to_string(item));
    co_await delay(service);
  }
}

TEST(Channel, BackPressureBlocksTheProducer) {
  Engine engine;
  Channel<int> channel(2, "fifo");
  Log log;
  engine.spawn(producer(channel, log, 5, 1_ns), "producer");
  engine.spawn(consumer(channel, log, 5, 10_ns), "consumer");
  engine.run();
  // The consumer takes item 0 at 1 ns; items 1 and 2 fill the channel at 2 and 3 ns; put3 waits
  // for the get at 11 ns, put4 for the get at 21 ns.
  EXPECT_EQ(log.entries, (std::vector<Entry>{{1_ns, "put0"},
                                             {1_ns, "got0"},
                                             {2_ns, "put1"},
                                             {3_ns, "put2"},
                                             {11_ns, "got1"},
                                             {11_ns, "put3"},
                                             {21_ns, "got2"},
                                             {21_ns, "put4"},
                                             {31_ns, "got3"},
                                             {41_ns, "got4"}}));
}

TEST(Channel, ZeroCapacityIsARendezvous) {
  Engine engine;
  Channel<int> channel(0, "rendezvous");
  Log log;
  engine.spawn(producer(channel, log, 2, 0_ns), "producer");
  auto late_consumer = [](Channel<int>& channel, Log& log) -> Process<> {
    co_await delay(7_ns);
    for (int i = 0; i < 2; ++i) log.add("got" + std::to_string(co_await channel.get()));
  };
  engine.spawn(late_consumer(channel, log), "consumer");
  engine.run();
  EXPECT_EQ(log.entries,
            (std::vector<Entry>{{7_ns, "got0"}, {7_ns, "put0"}, {7_ns, "put1"}, {7_ns, "got1"}}));
}

TEST(Trigger, WakesAllWaitersOnceAndStaysFired) {
  Engine engine;
  Trigger trigger("go");
  Log log;
  auto waiter = [](Trigger& trigger, Log& log, std::string name, SimTime start) -> Process<> {
    co_await delay(start);
    co_await trigger.wait();
    log.add(name);
  };
  engine.spawn(waiter(trigger, log, "early", 1_ns), "early");
  engine.spawn(waiter(trigger, log, "late", 9_ns), "late");
  engine.schedule_at(5_ns, [&] { trigger.fire(); });
  engine.run();
  EXPECT_EQ(log.entries, (std::vector<Entry>{{5_ns, "early"}, {9_ns, "late"}}));
}

TEST(Condition, WaitUntilRechecksOnNotify) {
  Engine engine;
  Condition condition("level");
  int level = 0;
  Log log;
  auto watcher = [](Condition& condition, int& level, Log& log) -> Process<> {
    while (level < 3) co_await condition.wait();
    log.add("level " + std::to_string(level));
  };
  engine.spawn(watcher(condition, level, log), "watcher");
  for (int i = 1; i <= 4; ++i) {
    engine.schedule_at(SimTime::from_ns(i * 10), [&] {
      ++level;
      condition.notify_all();
    });
  }
  engine.run();
  EXPECT_EQ(log.entries, (std::vector<Entry>{{30_ns, "level 3"}}));
}

TEST(Condition, GenerationCountsNotificationsWithoutWaiters) {
  Engine engine;
  Condition condition("activity");
  EXPECT_EQ(condition.generation(), 0u);
  condition.notify_all();  // nobody waits: the notification is still counted
  condition.notify_all();
  EXPECT_EQ(condition.generation(), 2u);
}

}  // namespace
}  // namespace cclmesh::sim
