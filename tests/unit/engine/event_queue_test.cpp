#include "sim/engine/event_queue.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <random>
#include <utility>
#include <vector>

namespace cclmesh::sim {
namespace {
using namespace literals;

std::vector<int>* sink = nullptr;
void record(void* context) { sink->push_back(*static_cast<int*>(context)); }

std::vector<int> drain(EventQueue& queue) {
  std::vector<int> order;
  sink = &order;
  DueEvent event;
  while (queue.pop(event)) event.fn(event.context);
  sink = nullptr;
  return order;
}

// An EventQueue shadowed by a sorted map of the (time, sequence) places that must still come
// out, for the randomised order tests: each pop is checked against the map's front.
struct ShadowedQueue {
  using Place = std::pair<std::int64_t, std::uint64_t>;
  EventQueue queue;
  std::map<Place, EventId> pending;  // what must still come out, in order
  std::vector<Place> reserved;       // sequence numbers taken, their events not pushed yet
  int reserved_pushed = 0;
  int cancelled = 0;

  static void nothing(void*) {}

  void push(std::int64_t at_ps) {
    const std::uint64_t sequence = queue.scheduled_total();
    pending[{at_ps, sequence}] = queue.push(SimTime::from_ps(at_ps), nothing, nullptr);
  }
  void reserve(std::int64_t at_ps) { reserved.push_back({at_ps, queue.reserve_sequence()}); }
  // A place only reserved (its event pushed later, if ever) or an event pushed now.
  void reserve_or_push(std::int64_t at_ps, bool only_reserve) {
    if (only_reserve) {
      reserve(at_ps);
    } else {
      push(at_ps);
    }
  }
  // One time in `one_in`: a reserved place picked at random is scheduled, if it has not passed.
  void maybe_push_reserved(std::mt19937_64& random, std::uint64_t one_in, const Place& now) {
    if (reserved.empty() || random() % one_in != 0) return;
    const std::size_t pick = static_cast<std::size_t>(random() % reserved.size());
    const Place r = reserved[pick];
    reserved.erase(reserved.begin() + static_cast<std::ptrdiff_t>(pick));
    if (r > now) {  // its place has not passed: it may still be scheduled there
      pending[r] = queue.push_reserved(SimTime::from_ps(r.first), r.second, nothing, nullptr);
      ++reserved_pushed;
    }
  }
  // One time in `one_in`: a pending event picked at random is cancelled.
  void maybe_cancel(std::mt19937_64& random, std::uint64_t one_in) {
    if (random() % one_in != 0 || pending.empty()) return;
    auto victim = pending.begin();
    std::advance(victim, static_cast<std::ptrdiff_t>(random() % pending.size()));
    ASSERT_TRUE(queue.cancel(victim->second));
    pending.erase(victim);
    ++cancelled;
  }

  struct DrainCounts {
    int pops = 0;
    int unpops = 0;
    int same_time_pops = 0;  // at the previous pop's time
  };
  // Pops until the queue is empty, each pop checked against `pending`'s first place; one pop in
  // `unpop_one_in` is put back (the next pop takes it again); after every kept pop,
  // `schedule_more(place, pops so far)` may push, reserve and cancel.
  template <class ScheduleMore>
  void drain_in_exact_order(std::mt19937_64& random, std::uint64_t unpop_one_in, ScheduleMore schedule_more,
                            DrainCounts& counts) {
    std::int64_t last_time = -1;
    DueEvent event;
    while (queue.pop(event)) {
      ASSERT_FALSE(pending.empty());
      const Place place{event.time.ps(), event.sequence};
      ASSERT_EQ(place, pending.begin()->first) << "pop " << counts.pops;
      if (random() % unpop_one_in == 0) {
        queue.unpop(event);
        ++counts.unpops;
        continue;
      }
      pending.erase(pending.begin());
      ++counts.pops;
      if (place.first == last_time) ++counts.same_time_pops;
      last_time = place.first;
      schedule_more(place, counts.pops);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
};

TEST(EventQueue, OrdersByTimeThenSchedulingOrder) {
  EventQueue queue;
  int values[] = {0, 1, 2, 3, 4};
  queue.push(20_ns, record, &values[0]);
  queue.push(10_ns, record, &values[1]);
  queue.push(20_ns, record, &values[2]);
  queue.push(10_ns, record, &values[3]);
  queue.push(5_ns, record, &values[4]);
  EXPECT_EQ(drain(queue), (std::vector<int>{4, 1, 3, 0, 2}));
}

TEST(EventQueue, CancelledEventsAreSkippedAndDropped) {
  EventQueue queue;
  int values[] = {0, 1, 2};
  int dropped = 0;
  struct Counter {
    static void drop(void* context) { ++*static_cast<int*>(context); }
  };
  queue.push(1_ns, record, &values[0]);
  EventId cancelled = queue.push(2_ns, Counter::drop, &dropped, Counter::drop);
  queue.push(3_ns, record, &values[2]);
  EXPECT_TRUE(queue.pending(cancelled));
  EXPECT_TRUE(queue.cancel(cancelled));
  EXPECT_EQ(dropped, 1);
  EXPECT_FALSE(queue.pending(cancelled));
  EXPECT_FALSE(queue.cancel(cancelled));  // second cancel is a no-op
  EXPECT_EQ(queue.live_events(), 2u);
  EXPECT_EQ(queue.next_time(), 1_ns);
  EXPECT_EQ(drain(queue), (std::vector<int>{0, 2}));
  EXPECT_EQ(dropped, 1);
}

// Regression (found by ASan): cancelled entries at the front of a calendar bucket are dropped
// while the bucket is searched, which shrinks it; the live entries behind them must still be
// found, in order, and none read past the bucket's end.
TEST(EventQueue, CancelledEntriesAtTheFrontOfABucketDoNotHideLiveOnes) {
  EventQueue queue;
  int values[] = {0, 1, 2, 3};
  // All four within one 256 ps bucket, none at the current time.
  const EventId a = queue.push(SimTime::from_ps(1000), record, &values[0]);
  const EventId b = queue.push(SimTime::from_ps(1001), record, &values[1]);
  queue.push(SimTime::from_ps(1003), record, &values[2]);
  queue.push(SimTime::from_ps(1002), record, &values[3]);
  EXPECT_TRUE(queue.cancel(a));
  EXPECT_TRUE(queue.cancel(b));
  EXPECT_EQ(drain(queue), (std::vector<int>{3, 2}));
}

TEST(EventQueue, StaleIdsDoNotCancelReusedSlots) {
  EventQueue queue;
  int a = 1;
  int b = 2;
  EventId first = queue.push(1_ns, record, &a);
  EXPECT_EQ(drain(queue), (std::vector<int>{1}));
  EventId second = queue.push(2_ns, record, &b);  // reuses the slot
  EXPECT_EQ(first.slot, second.slot);
  EXPECT_FALSE(queue.cancel(first));
  EXPECT_EQ(drain(queue), (std::vector<int>{2}));
}

// A cancelled event's entry stays queued (it carries its function and context) and its slot
// is freed only when the entry surfaces: events pushed meanwhile must neither take that slot
// nor be skipped as cancelled, and the slot is reused once the stale entry is gone, with the
// old id still unable to cancel the new event.
TEST(EventQueue, ACancelledSlotIsReusedOnlyAfterItsEntryLeaves) {
  EventQueue queue;
  int values[] = {0, 1, 2, 3};
  int dropped = 0;
  const auto count_drop = [](void* c) { ++*static_cast<int*>(c); };
  const EventId cancelled = queue.push(5_ns, record, &dropped, count_drop);
  EXPECT_TRUE(queue.cancel(cancelled));
  const EventId during = queue.push(6_ns, record, &values[1]);
  EXPECT_NE(during.slot, cancelled.slot);
  queue.push(1_ns, record, &values[0]);
  EXPECT_EQ(queue.live_events(), 2u);
  EXPECT_EQ(drain(queue), (std::vector<int>{0, 1}));
  EXPECT_EQ(dropped, 1);
  // Both slots are free again; the cancelled one comes back as some later event's.
  const EventId after_a = queue.push(7_ns, record, &values[2]);
  const EventId after_b = queue.push(8_ns, record, &values[3]);
  EXPECT_TRUE(after_a.slot == cancelled.slot || after_b.slot == cancelled.slot);
  EXPECT_FALSE(queue.cancel(cancelled));
  EXPECT_FALSE(queue.pending(cancelled));
  EXPECT_EQ(drain(queue), (std::vector<int>{2, 3}));
  EXPECT_EQ(dropped, 1);
}

TEST(EventQueue, NextTimeSkipsCancelledHead) {
  EventQueue queue;
  int a = 1;
  EventId head = queue.push(1_ns, record, &a);
  queue.push(4_ns, record, &a);
  queue.cancel(head);
  EXPECT_EQ(queue.next_time(), 4_ns);
  EXPECT_EQ(queue.live_events(), 1u);
}

TEST(EventQueue, DestructionDropsPendingContexts) {
  int dropped = 0;
  {
    EventQueue queue;
    queue.push(1_ns, [](void*) {}, &dropped, [](void* c) { ++*static_cast<int*>(c); });
  }
  EXPECT_EQ(dropped, 1);
}

// The queue against a sort: thousands of events scheduled while others run (as the engine
// does: never before the event being run), a quarter at the current time (the FIFO), most a
// little later (the calendar ring), some far beyond the ring's horizon or piling into one
// crowded bucket (the heap), some cancelled. The order must be exactly (time, scheduling order).
TEST(EventQueue, ManyInterleavedEventsComeOutInTimeThenSchedulingOrder) {
  EventQueue queue;
  std::mt19937_64 random(7);
  struct Scheduled {
    std::int64_t time_ps;
    int id;
  };
  std::vector<Scheduled> expected;
  std::vector<int> ids(20000);
  std::vector<EventId> handles;
  int next_id = 0;
  std::int64_t now_ps = 0;
  auto schedule = [&](std::int64_t at_ps) {
    ids[static_cast<std::size_t>(next_id)] = next_id;
    handles.push_back(queue.push(SimTime::from_ps(at_ps), record, &ids[static_cast<std::size_t>(next_id)]));
    expected.push_back({at_ps, next_id});
    ++next_id;
  };
  for (int i = 0; i < 500; ++i) schedule(static_cast<std::int64_t>(random() % 1000));
  std::vector<int> order;
  std::vector<int> cancelled;
  sink = &order;
  DueEvent event;
  while (queue.pop(event)) {
    now_ps = event.time.ps();
    event.fn(event.context);
    for (int k = 0; k < 2 && next_id < 20000; ++k) {
      const std::uint64_t draw = random();
      std::int64_t delay_ps = static_cast<std::int64_t>(draw % 3000);
      if (draw % 4 == 0) delay_ps = 0;
      if (draw % 8 == 1) delay_ps = static_cast<std::int64_t>(draw % 20'000'000);  // up to 20 us
      if (draw % 8 == 3) delay_ps = 5'000 - now_ps % 5'000;  // many at the same instant
      schedule(now_ps + delay_ps);
    }
    if (random() % 16 == 0) {
      const EventId victim = handles[static_cast<std::size_t>(random() % handles.size())];
      if (queue.cancel(victim)) cancelled.push_back(static_cast<int>(victim.slot));
    }
  }
  sink = nullptr;
  // Events run in (time, id) order except the cancelled ones, which do not run at all.
  std::stable_sort(expected.begin(), expected.end(),
                   [](const Scheduled& a, const Scheduled& b) { return a.time_ps < b.time_ps; });
  EXPECT_EQ(order.size() + cancelled.size(), expected.size());
  std::vector<int> expected_order;
  std::vector<bool> ran(expected.size(), false);
  for (int id : order) ran[static_cast<std::size_t>(id)] = true;
  for (const Scheduled& s : expected) {
    if (ran[static_cast<std::size_t>(s.id)]) expected_order.push_back(s.id);
  }
  EXPECT_EQ(order, expected_order);
}

// The bucket a refused pop_until made the current run still orders events scheduled
// afterwards: an earlier bucket (the heap), the same bucket at the same time and later (the
// run, each after everything at its time), a later bucket (the ring).
TEST(EventQueue, EventsScheduledAfterARefusedPopKeepTheirOrder) {
  EventQueue queue;
  int values[] = {0, 1, 2, 3, 4};
  queue.push(10_ns, record, &values[0]);
  DueEvent event;
  ASSERT_FALSE(queue.pop_until(5_ns, event));
  queue.push(SimTime::from_ps(10'100), record, &values[1]);  // the 10 ns bucket (512 ps wide)
  queue.push(10_ns, record, &values[2]);
  queue.push(12_ns, record, &values[3]);
  queue.push(9_ns, record, &values[4]);
  EXPECT_EQ(drain(queue), (std::vector<int>{4, 0, 2, 1, 3}));
}

// Events at the current time, scheduled while many later events of the same bucket wait,
// still run before them, and after the events already queued for the current time.
TEST(EventQueue, EventsAtTheCurrentTimeGoAheadOfACrowdedBucket) {
  EventQueue queue;
  std::vector<int> values(300);
  for (int i = 0; i < 300; ++i) values[static_cast<std::size_t>(i)] = i;
  queue.push(SimTime::from_ps(1'000), record, &values[0]);
  queue.push(SimTime::from_ps(1'000), record, &values[1]);
  for (int i = 2; i < 200; ++i) queue.push(SimTime::from_ps(1'010), record, &values[static_cast<std::size_t>(i)]);
  std::vector<int> order;
  sink = &order;
  DueEvent event;
  int next = 200;
  while (queue.pop(event)) {
    event.fn(event.context);
    // Each of the first events at 1000 ps schedules more at 1000 ps and at 1010 ps.
    if (event.time.ps() == 1'000 && next < 300) {
      queue.push(SimTime::from_ps(1'000), record, &values[static_cast<std::size_t>(next++)]);
      queue.push(SimTime::from_ps(1'010), record, &values[static_cast<std::size_t>(next++)]);
    }
  }
  sink = nullptr;
  // At 1000 ps: 0, 1, then every even number from 200 on (each pushed by the previous one).
  std::vector<int> expected{0, 1};
  for (int v = 200; v < 300; v += 2) expected.push_back(v);
  for (int v = 2; v < 200; ++v) expected.push_back(v);
  for (int v = 201; v < 300; v += 2) expected.push_back(v);
  EXPECT_EQ(order, expected);
}

// The current run is a buffer of its own: events scheduled into the running bucket while it runs
// (wake-ups at the current time) make it outgrow its first size, and, once its front is being
// consumed as fast as its back grows, move what is left to the buffer's start. Neither may
// change the order: each pop against the sorted places, as above.
TEST(EventQueue, ARunThatOutgrowsItsBufferKeepsTheOrder) {
  ShadowedQueue shadow;
  shadow.push(1'030);  // both in the 512 ps bucket [1024, 1536)
  shadow.push(1'300);
  DueEvent event;
  int pops = 0;
  while (shadow.queue.pop(event)) {
    ASSERT_FALSE(shadow.pending.empty());
    ASSERT_EQ((ShadowedQueue::Place{event.time.ps(), event.sequence}), shadow.pending.begin()->first);
    shadow.pending.erase(shadow.pending.begin());
    ++pops;
    const std::int64_t now = event.time.ps();
    if (pops < 1'500) {  // the run grows by one per pop
      shadow.push(now);
      shadow.push(now);
      if (pops < 512 && pops % 16 == 0) shadow.push(now + 200);  // behind them (fewer than a crowded run's depth)
    } else if (pops < 6'000) {  // as many pushed as popped: the front moves up the buffer
      shadow.push(now);
    }
  }
  EXPECT_TRUE(shadow.pending.empty());
  EXPECT_EQ(pops, 2 + 2 * 1'499 + 511 / 16 + (6'000 - 1'500));
}

// A ring bucket holds four entries in its cache line; more events in the same bucket go to its
// overflow chain, and a cancelled one anywhere is skipped: the order is still (time,
// scheduling order).
TEST(EventQueue, AnOverfullRingBucketKeepsTheOrder) {
  EventQueue queue;
  std::vector<int> values(10);
  for (int i = 0; i < 10; ++i) values[static_cast<std::size_t>(i)] = i;
  const std::int64_t times_ps[] = {5'300, 5'200, 5'300, 5'120, 5'400, 5'200, 5'130, 5'300, 5'120, 5'125};
  std::vector<EventId> ids;
  for (int i = 0; i < 10; ++i) {
    ids.push_back(queue.push(SimTime::from_ps(times_ps[i]), record, &values[static_cast<std::size_t>(i)]));
  }
  ASSERT_TRUE(queue.cancel(ids[2]));  // in the bucket's line
  ASSERT_TRUE(queue.cancel(ids[6]));  // in the overflow chain
  EXPECT_EQ(drain(queue), (std::vector<int>{3, 8, 9, 1, 5, 0, 7, 4}));
}

// A dense mesh's queue: most events land a few hundred ps ahead, so ring buckets overflow into
// their chains again and again while others run, chain nodes are freed and reused, and some
// chained events are cancelled. Against a sort, as above: exactly (time, scheduling order).
TEST(EventQueue, OverflowChainsOfManyCrowdedBucketsKeepTheOrder) {
  EventQueue queue;
  std::mt19937_64 random(11);
  struct Scheduled {
    std::int64_t time_ps;
    int id;
  };
  std::vector<Scheduled> expected;
  constexpr int kEvents = 30000;
  std::vector<int> ids(kEvents);
  std::vector<EventId> handles;
  int next_id = 0;
  auto schedule = [&](std::int64_t at_ps) {
    ids[static_cast<std::size_t>(next_id)] = next_id;
    handles.push_back(queue.push(SimTime::from_ps(at_ps), record, &ids[static_cast<std::size_t>(next_id)]));
    expected.push_back({at_ps, next_id});
    ++next_id;
  };
  for (int i = 0; i < 2000; ++i) schedule(static_cast<std::int64_t>(random() % 4000));  // ~250 per bucket
  std::vector<int> order;
  int cancelled = 0;
  sink = &order;
  DueEvent event;
  while (queue.pop(event)) {
    const std::int64_t now_ps = event.time.ps();
    event.fn(event.context);
    for (int k = 0; k < 2 && next_id < kEvents; ++k) {
      const std::uint64_t draw = random();
      std::int64_t delay_ps = 512 + static_cast<std::int64_t>(draw % 1536);  // the next few buckets
      if (draw % 16 == 0) delay_ps = 0;
      schedule(now_ps + delay_ps);
    }
    if (random() % 8 == 0 && queue.cancel(handles[static_cast<std::size_t>(random() % handles.size())])) ++cancelled;
  }
  sink = nullptr;
  std::stable_sort(expected.begin(), expected.end(),
                   [](const Scheduled& a, const Scheduled& b) { return a.time_ps < b.time_ps; });
  ASSERT_GT(cancelled, 0);
  EXPECT_EQ(order.size() + static_cast<std::size_t>(cancelled), expected.size());
  std::vector<bool> ran(expected.size(), false);
  for (int id : order) ran[static_cast<std::size_t>(id)] = true;
  std::vector<int> expected_order;
  for (const Scheduled& s : expected) {
    if (ran[static_cast<std::size_t>(s.id)]) expected_order.push_back(s.id);
  }
  EXPECT_EQ(order, expected_order);
}

// The skipped-event machinery on a crowded queue: events pushed later into a reserved place
// (older sequence numbers than events already in their bucket, its overflow chain or the
// current run), events put back after a pop, and cancellations, with most buckets overflowing.
// Every pop must be the earliest pending (time, sequence) place, as a sorted map says.
TEST(EventQueue, ReservedPlacesUnpopsAndCancellationsKeepTheOrderInCrowdedBuckets) {
  ShadowedQueue shadowed;
  EventQueue& queue = shadowed.queue;
  auto& pending = shadowed.pending;
  using Place = ShadowedQueue::Place;
  std::mt19937_64 random(23);
  for (int i = 0; i < 2000; ++i) shadowed.push(static_cast<std::int64_t>(random() % 4000));
  ShadowedQueue::DrainCounts counts;
  const auto schedule_more = [&](const Place& place, int pops) {
    if (pops > 40000) return;  // then drain
    for (int k = random() % 10 == 0 ? -1 : 0; k < 1; ++k) {  // the queue stays about as full
      const std::uint64_t draw = random();
      std::int64_t at = place.first + 256 + static_cast<std::int64_t>(draw % 1792);
      if (draw % 8 == 0) at = place.first;  // the current run
      shadowed.reserve_or_push(at, draw % 5 == 0);
    }
    shadowed.maybe_push_reserved(random, 3, place);
    shadowed.maybe_cancel(random, 8);
  };
  ASSERT_NO_FATAL_FAILURE(shadowed.drain_in_exact_order(random, 40, schedule_more, counts));
  EXPECT_TRUE(pending.empty());
  EXPECT_EQ(queue.live_events(), 0u);
  EXPECT_GT(counts.unpops, 100);
  EXPECT_GT(shadowed.reserved_pushed, 1000);
  EXPECT_GT(shadowed.cancelled, 1000);
}

// Most of a simulation's events come at a few fixed delays after the current time (a wake-up
// at the current time; a kernel's issue cycles; a NoC request's setup; an ethernet frame's
// flight): many streams, each in order by itself, interleaved with each other and with events at
// other delays, beyond the ring's horizon, in reserved places, put back after a pop or
// cancelled. Every pop must be the earliest pending (time, sequence) place, as a sorted map
// says; events at equal times (frequent here: the delays are whole nanoseconds) in the order
// they were scheduled, whichever stream they came from.
TEST(EventQueue, FixedDelayStreamsMixedWithOtherEventsComeOutInExactOrder) {
  ShadowedQueue shadowed;
  EventQueue& queue = shadowed.queue;
  auto& pending = shadowed.pending;
  using Place = ShadowedQueue::Place;
  std::mt19937_64 random(41);
  const std::int64_t fixed_delays[] = {0, 8'000, 16'000, 24'000, 48'000, 69'000, 506'560, 844'800};
  // ~3000 pending over ~1 us: a few per 512 ps, as dense as a T3K's queue; whole nanoseconds,
  // so that events of different streams meet at equal times.
  for (int i = 0; i < 3000; ++i) shadowed.push(1'000 * static_cast<std::int64_t>(random() % 100));
  ShadowedQueue::DrainCounts counts;
  const auto schedule_more = [&](const Place& place, int pops) {
    if (pops > 60'000) return;  // then drain
    const int new_events = pending.size() < 3000 ? 2 : 1;  // the queue stays about as full
    for (int k = 0; k < new_events; ++k) {
      const std::uint64_t draw = random();
      std::int64_t at = place.first + fixed_delays[draw % std::size(fixed_delays)];
      if (draw % 10 == 7) at = place.first + 1'000 * static_cast<std::int64_t>(random() % 100);  // another delay
      if (draw % 20 == 9) at = place.first + 3'000'000 + static_cast<std::int64_t>(random() % 1'000'000);  // beyond the ring
      shadowed.reserve_or_push(at, draw % 16 == 5);
    }
    shadowed.maybe_push_reserved(random, 4, place);
    shadowed.maybe_cancel(random, 12);
  };
  ASSERT_NO_FATAL_FAILURE(shadowed.drain_in_exact_order(random, 50, schedule_more, counts));
  EXPECT_TRUE(pending.empty());
  EXPECT_EQ(queue.live_events(), 0u);
  EXPECT_GT(counts.pops, 60'000);
  EXPECT_GT(counts.same_time_pops, 20'000);  // the streams did meet at equal times
  EXPECT_GT(counts.unpops, 500);
  EXPECT_GT(shadowed.reserved_pushed, 2'000);
  EXPECT_GT(shadowed.cancelled, 2'000);
}

// A refill takes several neighbouring buckets into the run at once. Events pushed into the run's
// later buckets while it runs (delays under a few ns, at any picosecond), full buckets whose
// further entries are chained (some among the run's neighbours, some first), reserved places,
// put-back pops and cancellations must still come out in exactly (time, sequence) order.
TEST(EventQueue, EventsPushedIntoTheRunsLaterBucketsComeOutInExactOrder) {
  ShadowedQueue shadowed;
  EventQueue& queue = shadowed.queue;
  auto& pending = shadowed.pending;
  using Place = ShadowedQueue::Place;
  std::mt19937_64 random(38);
  for (int i = 0; i < 2000; ++i) shadowed.push(static_cast<std::int64_t>(random() % 1'000'000));
  ShadowedQueue::DrainCounts counts;
  const auto schedule_more = [&](const Place& place, int pops) {
    if (pops > 50'000) return;  // then drain
    const int new_events = pending.size() < 2000 ? 2 : 1;
    for (int k = 0; k < new_events; ++k) {
      const std::uint64_t draw = random();
      std::int64_t at = place.first + static_cast<std::int64_t>(random() % 5'000);  // within the run's buckets
      if (draw % 4 == 1) at = place.first + static_cast<std::int64_t>(random() % 1'000'000);
      if (draw % 64 == 3) {  // a burst into one bucket: more than its inline entries, chained
        const std::int64_t bucket_start = (at >> 9) << 9;
        for (int b = 0; b < 7; ++b) {
          shadowed.push(std::max(place.first, bucket_start + static_cast<std::int64_t>(random() % 512)));
        }
      }
      shadowed.reserve_or_push(at, draw % 16 == 5);
    }
    shadowed.maybe_push_reserved(random, 4, place);
    shadowed.maybe_cancel(random, 12);
  };
  ASSERT_NO_FATAL_FAILURE(shadowed.drain_in_exact_order(random, 40, schedule_more, counts));
  EXPECT_TRUE(pending.empty());
  EXPECT_EQ(queue.live_events(), 0u);
  EXPECT_GT(counts.pops, 50'000);
  EXPECT_GT(counts.unpops, 500);
  EXPECT_GT(shadowed.reserved_pushed, 1'000);
  EXPECT_GT(shadowed.cancelled, 2'000);
}

// A crowded bucket is sorted by its 8 ps slices, then by an insertion pass: entries of one slice
// at several times pushed newest time first, entries at one picosecond whose sequence numbers
// were reserved in the opposite order of their pushes, and buckets of every size around the
// point where the slices take over from a plain insertion sort (16 entries). Every bucket must
// come out in exactly (time, sequence) order.
TEST(EventQueue, CrowdedBucketsOfEverySizeComeOutInTimeThenSequenceOrder) {
  for (int size = 1; size <= 80; ++size) {
    ShadowedQueue shadowed;
    const std::int64_t bucket_ps = 512 * (1 + size);  // one bucket per size, not the first
    for (int i = 0; i < size; ++i) {
      const std::int64_t in_bucket = i % 3 == 0 ? 7 - (i % 8)  // one slice, newest time first
                                                : i % 3 == 1 ? 300  // one picosecond, reserved below
                                                             : (511 - 37 * i) & 511;  // spread out
      const std::int64_t at = bucket_ps + in_bucket;
      if (i % 3 == 1) {
        shadowed.reserve(at);
      } else {
        shadowed.push(at);
      }
    }
    // The reserved places' events pushed last, newest sequence number first.
    while (!shadowed.reserved.empty()) {
      const ShadowedQueue::Place r = shadowed.reserved.back();
      shadowed.reserved.pop_back();
      shadowed.pending[r] = shadowed.queue.push_reserved(SimTime::from_ps(r.first), r.second, ShadowedQueue::nothing,
                                                          nullptr);
    }
    DueEvent event;
    int pops = 0;
    while (shadowed.queue.pop(event)) {
      ASSERT_FALSE(shadowed.pending.empty());
      const ShadowedQueue::Place place{event.time.ps(), event.sequence};
      ASSERT_EQ(place, shadowed.pending.begin()->first) << "bucket of " << size << ", pop " << pops;
      shadowed.pending.erase(shadowed.pending.begin());
      ++pops;
    }
    EXPECT_EQ(pops, size);
    EXPECT_TRUE(shadowed.pending.empty());
  }
}

TEST(EventQueue, PopUntilLeavesLaterEventsQueued) {
  EventQueue queue;
  int a = 1;
  int b = 2;
  queue.push(1_ns, record, &a);
  queue.push(5_ns, record, &b);
  DueEvent event;
  ASSERT_TRUE(queue.pop_until(2_ns, event));
  EXPECT_EQ(event.time, 1_ns);
  EXPECT_FALSE(queue.pop_until(4_ns, event));
  EXPECT_EQ(queue.live_events(), 1u);
  EXPECT_EQ(queue.next_time(), 5_ns);
  // Something scheduled after the refused pop, still before the queued event, comes first.
  int c = 3;
  queue.push(3_ns, record, &c);
  EXPECT_EQ(drain(queue), (std::vector<int>{3, 2}));
}

}  // namespace
}  // namespace cclmesh::sim
