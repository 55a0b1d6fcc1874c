#include "sim/engine/inline_task.hpp"

#include <gtest/gtest.h>

#include <array>
#include <deque>
#include <memory>
#include <utility>

namespace cclmesh::sim {
namespace {

// Small and large callables run once each, survive moves (also inside a deque that grows),
// and are destroyed exactly once, whether they were stored inline or on the heap.
TEST(InlineTask, RunsMovesAndDestroysSmallAndLargeCallables) {
  auto alive = std::make_shared<int>(0);
  int runs = 0;
  {
    std::deque<InlineTask> queue;
    for (int i = 0; i < 100; ++i) {
      if (i % 2 == 0) {
        queue.emplace_back([&runs, token = alive] { runs += 1; });  // inline
      } else {
        std::array<char, 200> padding{};  // too big for the inline storage
        queue.emplace_back([&runs, token = alive, padding] { runs += 1000 + padding[0]; });
      }
    }
    EXPECT_EQ(alive.use_count(), 101);
    InlineTask moved = std::move(queue.front());
    queue.pop_front();
    EXPECT_TRUE(static_cast<bool>(moved));
    moved();
    while (!queue.empty()) {
      InlineTask task = std::move(queue.front());
      queue.pop_front();
      task();
    }
    EXPECT_EQ(runs, 50 + 50 * 1000);
  }
  EXPECT_EQ(alive.use_count(), 1);
}

}  // namespace
}  // namespace cclmesh::sim
