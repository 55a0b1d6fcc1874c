// CompletionClock: completions counted by their times (a NoC port's flushes and acks).
#include "sim/model/completion_clock.hpp"

#include <gtest/gtest.h>

namespace cclmesh::sim {
namespace {

SimTime ns(std::int64_t n) { return SimTime::from_ns(n); }

TEST(CompletionClock, CountsWhatIsDoneByNowFromTheTimes) {
  CompletionClock c;
  c.issue(ns(0));
  c.issue(ns(0));
  EXPECT_FALSE(c.all_known());
  EXPECT_FALSE(c.resolve(ns(30), ns(5)));
  EXPECT_FALSE(c.resolve(ns(20), ns(6)));  // out of order: kept sorted
  EXPECT_TRUE(c.all_known());
  EXPECT_EQ(c.last_time(), ns(30));
  EXPECT_EQ(c.completed(ns(19)), 0u);
  EXPECT_EQ(c.completed(ns(20)), 1u);  // due at its own time
  EXPECT_FALSE(c.all_done(ns(29)));
  EXPECT_TRUE(c.all_done(ns(30)));
  EXPECT_EQ(c.issued(), 2u);
}

TEST(CompletionClock, RemembersWhenEverythingWasLastDone) {
  CompletionClock c;
  EXPECT_EQ(c.last_all_done(ns(1)), SimTime::zero());
  c.issue(ns(1));
  EXPECT_FALSE(c.resolve(ns(10), ns(2)));
  c.issue(ns(12));  // after the first was done at 10: everything was done from 10 to 12
  EXPECT_FALSE(c.all_done(ns(12)));
  EXPECT_EQ(c.last_all_done(ns(12)), ns(10));
  EXPECT_FALSE(c.resolve(ns(15), ns(13)));
  EXPECT_EQ(c.last_all_done(ns(14)), ns(10));
  EXPECT_EQ(c.last_all_done(ns(40)), ns(15));
  // Unknown times hold "all done" back even when every known one has passed.
  c.issue(ns(41));
  c.issue(ns(41));
  EXPECT_FALSE(c.resolve(ns(45), ns(42)));
  EXPECT_EQ(c.completed(ns(50)), 3u);
  EXPECT_FALSE(c.all_done(ns(50)));
  EXPECT_EQ(c.last_all_done(ns(50)), ns(15));
  EXPECT_TRUE(c.resolve(ns(50), ns(50)));  // due at once, and the last outstanding
  EXPECT_TRUE(c.all_done(ns(50)));
  EXPECT_EQ(c.last_all_done(ns(50)), ns(50));
}

// A completion due at once changes "all done" now, with nothing left in the clock to go off:
// resolve() says so when it is the last one outstanding, and only then, so that the port can
// report the change as it happens (NocPort::done_at_once).
TEST(CompletionClock, SaysWhenAResolutionDueAtOnceCompletesEverything) {
  CompletionClock c;
  c.issue(ns(0));
  c.issue(ns(0));
  c.issue(ns(0));
  EXPECT_FALSE(c.resolve(ns(20), ns(5)));  // later: its alarm finds it
  EXPECT_FALSE(c.resolve(ns(5), ns(5)));   // due at once, but one is still unknown
  EXPECT_FALSE(c.all_done(ns(5)));
  EXPECT_FALSE(c.resolve(ns(8), ns(8)));  // the last unknown, due at once, but 20 is pending
  EXPECT_FALSE(c.all_done(ns(8)));
  EXPECT_TRUE(c.all_done(ns(20)));
  c.issue(ns(25));
  EXPECT_TRUE(c.resolve(ns(25), ns(25)));  // the last outstanding, due at once
  EXPECT_EQ(c.last_all_done(ns(25)), ns(25));
}

}  // namespace
}  // namespace cclmesh::sim
