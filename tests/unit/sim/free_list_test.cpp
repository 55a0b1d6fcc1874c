// The free list under the device allocator: first fit from either end, blocks merged with their
// free neighbours when they come back, and a block that was never handed out refused.
#include <gtest/gtest.h>

#include "sim/device/free_list.hpp"
#include "sim/engine/check.hpp"

namespace cclmesh::sim::device {
namespace {

using From = FreeList::From;

TEST(FreeList, FirstFitFromTheBottomOrTheTopRoundedToTheAlignment) {
  FreeList list(0x1000, 0x2000, 32);
  EXPECT_EQ(list.allocate(100, From::Bottom), 0x1000u);  // 128 B
  EXPECT_EQ(list.allocate(32, From::Bottom), 0x1080u);
  EXPECT_EQ(list.allocate(64, From::Top), 0x1FC0u);
  EXPECT_EQ(list.allocate(1, From::Top), 0x1FA0u);
  EXPECT_EQ(list.free_bytes(), 0x1000u - 128 - 32 - 64 - 32);
  EXPECT_EQ(list.free_block_count(), 1u);
  EXPECT_EQ(list.lowest_in_use(), 0x1000u);
  EXPECT_FALSE(list.allocate(0x1000, From::Bottom));
}

TEST(FreeList, ReleasedBlocksMergeWithTheirFreeNeighbours) {
  FreeList list(0, 4 * 32, 32);
  const std::uint64_t a = *list.allocate(32, From::Bottom);
  const std::uint64_t b = *list.allocate(32, From::Bottom);
  const std::uint64_t c = *list.allocate(32, From::Bottom);
  const std::uint64_t d = *list.allocate(32, From::Bottom);
  EXPECT_EQ(list.free_block_count(), 0u);
  list.release(a, 32);
  list.release(c, 32);
  EXPECT_EQ(list.free_block_count(), 2u);
  EXPECT_EQ(list.largest_free_block(), 32u);
  EXPECT_FALSE(list.allocate(64, From::Bottom));  // 64 B free, but in two pieces
  list.release(b, 32);                            // joins a's block and c's
  EXPECT_EQ(list.free_block_count(), 1u);
  EXPECT_EQ(list.largest_free_block(), 96u);
  EXPECT_EQ(list.allocate(96, From::Top), 0u);
  list.release(d, 32);
  EXPECT_EQ(list.lowest_in_use(), 0u);
}

TEST(FreeList, LowestInUseAndHowFarAllocationsReached) {
  FreeList list(0x100, 0x400, 32);
  EXPECT_EQ(list.lowest_in_use(), 0x400u);  // nothing in use
  const std::uint64_t top = *list.allocate(64, From::Top);
  const std::uint64_t below = *list.allocate(64, From::Top);
  EXPECT_EQ(list.lowest_in_use(), below);
  list.release(below, 64);
  EXPECT_EQ(list.lowest_in_use(), top);
  EXPECT_EQ(list.lowest_ever_used(), below);
  EXPECT_EQ(list.highest_end_ever_used(), 0x400u);
  EXPECT_EQ(*list.allocate(64, From::Top), below);  // the same block again
}

TEST(FreeList, ABlockNeverHandedOutIsAnInvariantError) {
  FreeList list(0, 256, 32);
  const std::uint64_t a = *list.allocate(64, From::Bottom);
  list.release(a, 64);
  EXPECT_THROW(list.release(a, 64), InvariantError);        // free already
  EXPECT_THROW(list.release(224, 64), InvariantError);      // past the end
  EXPECT_THROW(list.release(16, 32), InvariantError);       // misaligned
}

}  // namespace
}  // namespace cclmesh::sim::device
