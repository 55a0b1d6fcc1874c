// RingQueue: first in, first out across its growth and the wrap-around of its buffer, with
// move-only elements (a NoC port's line of waiting packets holds InlineTasks).
#include "sim/engine/ring_queue.hpp"

#include <gtest/gtest.h>

#include <memory>

#include "sim/engine/check.hpp"

namespace cclmesh::sim {
namespace {

TEST(RingQueue, KeepsOrderWhileWrappingAndGrowing) {
  RingQueue<int> queue;
  EXPECT_TRUE(queue.empty());
  int next_in = 0;
  int next_out = 0;
  // Fill and drain unevenly so the front moves round the buffer before and after each growth.
  for (int round = 0; round < 50; ++round) {
    for (int i = 0; i < round % 7 + 3; ++i) queue.push_back(next_in++);
    for (int i = 0; i < round % 5 + 1 && !queue.empty(); ++i) {
      EXPECT_EQ(queue.front(), next_out++);
      queue.pop_front();
    }
    EXPECT_EQ(queue.size(), static_cast<std::size_t>(next_in - next_out));
  }
  while (!queue.empty()) {
    EXPECT_EQ(queue.front(), next_out++);
    queue.pop_front();
  }
  EXPECT_EQ(next_out, next_in);
}

TEST(RingQueue, HoldsMoveOnlyElementsAndReleasesThemWhenTaken) {
  RingQueue<std::unique_ptr<int>> queue;
  for (int i = 0; i < 20; ++i) queue.push_back(std::make_unique<int>(i));
  for (int i = 0; i < 20; ++i) {
    std::unique_ptr<int> taken = std::move(queue.front());
    queue.pop_front();
    ASSERT_NE(taken, nullptr);
    EXPECT_EQ(*taken, i);
  }
  EXPECT_TRUE(queue.empty());
}

TEST(RingQueue, TakingFromAnEmptyQueueFailsACheck) {
  RingQueue<int> queue;
  EXPECT_THROW(queue.pop_front(), InvariantError);
}

}  // namespace
}  // namespace cclmesh::sim
