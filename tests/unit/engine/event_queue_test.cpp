#include "sim/engine/event_queue.hpp"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace cclmesh::sim
