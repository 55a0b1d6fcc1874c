// Address generators against hand-computed cases (REFERENCE §4.10).
#include "kernels/api/addrgen.hpp"

#include <gtest/gtest.h>

namespace cclmesh::api {
namespace {

void expect_location(const PageLocation& got, uint32_t target, uint32_t page_in_target, uint32_t address,
                     uint32_t contiguous) {
  EXPECT_EQ(got.target, target);
  EXPECT_EQ(got.page_in_target, page_in_target);
  EXPECT_EQ(got.address, address);
  EXPECT_EQ(got.contiguous_pages, contiguous);
}

TEST(AlignUp, PageSizes) {
  EXPECT_EQ(align_up(2048, 32), 2048u);
  EXPECT_EQ(align_up(1088, 32), 1088u);  // bfp8_b tile
  EXPECT_EQ(align_up(2050, 32), 2080u);
  EXPECT_EQ(align_up(100, 16), 112u);
}

TEST(InterleavedAddrGen, DramBanksRoundRobin) {
  // 12 DRAM banks (WH), bf16 tiles, buffer at 0x1000 in every bank.
  const InterleavedAddrGenParams p{0x1000, 12, 2048};
  expect_location(interleaved_page_location(p, 0), 0, 0, 0x1000, 1);
  expect_location(interleaved_page_location(p, 11), 11, 0, 0x1000, 1);
  expect_location(interleaved_page_location(p, 12), 0, 1, 0x1000 + 2048, 1);
  expect_location(interleaved_page_location(p, 25), 1, 2, 0x1000 + 2 * 2048, 1);
  // L1 interleaved over 64 worker cores with a 16 B-aligned 100 B row page.
  const InterleavedAddrGenParams l1{0x20000, 64, align_up(100, 16)};
  expect_location(interleaved_page_location(l1, 130), 2, 2, 0x20000 + 2 * 112, 1);
}

// Pieces: a 4 x 192 B ROW_MAJOR output row (768 B, 32 B-aligned) addressed as 192 B pieces, as
// a 4-chip all_gather along the width writes it. Piece p of row r sits p x 192 B into row r.
TEST(InterleavedAddrGen, PiecesOfPages) {
  const InterleavedAddrGenParams p{0x1000, 12, 768, 4, 192};
  expect_location(interleaved_page_location(p, 0), 0, 0, 0x1000, 4);  // the whole row from here
  expect_location(interleaved_page_location(p, 3), 0, 0, 0x1000 + 3 * 192, 1);
  expect_location(interleaved_page_location(p, 4 * 13 + 2), 1, 1, 0x1000 + 768 + 2 * 192, 2);  // row 13
  // One piece per page is the whole-page addressing.
  const InterleavedAddrGenParams whole{0x1000, 12, 768, 1, 768};
  const InterleavedAddrGenParams plain{0x1000, 12, 768};
  for (uint32_t page : {0u, 5u, 13u, 200u}) {
    const PageLocation a = interleaved_page_location(whole, page);
    const PageLocation b = interleaved_page_location(plain, page);
    EXPECT_EQ(a.address, b.address);
    EXPECT_EQ(a.target, b.target);
    EXPECT_EQ(a.contiguous_pages, 1u);
  }
}

// A 4400 B row (not a multiple of 32 B) in two pieces that each start 32 B-aligned: 2208 B and
// a shorter last 2192 B. Runs that end the row are short by 16 B; the others are whole pieces.
TEST(InterleavedAddrGen, PiecesWithAShorterLastPiece) {
  const InterleavedAddrGenParams p{0x1000, 12, 4416, 2, 2208, 2192};
  expect_location(interleaved_page_location(p, 0), 0, 0, 0x1000, 2);
  expect_location(interleaved_page_location(p, 1), 0, 0, 0x1000 + 2208, 1);
  expect_location(interleaved_page_location(p, 2 * 13 + 1), 1, 1, 0x1000 + 4416 + 2208, 1);  // row 13
  AddrGenParams ag{};
  ag.layout = TensorMemoryLayout::INTERLEAVED;
  ag.interleaved = p;
  EXPECT_EQ(page_run_bytes(ag, 0, 2, 2208), 4400u);
  EXPECT_EQ(page_run_bytes(ag, 0, 1, 2208), 2208u);
  EXPECT_EQ(page_run_bytes(ag, 1, 1, 2208), 2192u);
  EXPECT_EQ(page_run_bytes(ag, 2 * 7 + 1, 1, 2208), 2192u);
  // Equal pieces (last 0) and whole pages are never short.
  ag.interleaved.last_piece_bytes = 0;
  EXPECT_EQ(page_run_bytes(ag, 1, 1, 2208), 2208u);
  ag.interleaved = InterleavedAddrGenParams{0x1000, 12, 4416};
  EXPECT_EQ(page_run_bytes(ag, 5, 1, 4400), 4400u);
  // Sharded buffers take the same last piece.
  ag.layout = TensorMemoryLayout::HEIGHT_SHARDED;
  ag.sharded = ShardedAddrGenParams{TensorMemoryLayout::HEIGHT_SHARDED, 2, 4416, 1,
                                    ShardingContiguityMode::NO_SHARD_PADDING, 1, 4, 0x8000, 2, 2208, 2192};
  EXPECT_EQ(page_run_bytes(ag, 3, 1, 2208), 2192u);
  EXPECT_EQ(page_run_bytes(ag, 2, 2, 2208), 4400u);
  EXPECT_EQ(sharded_page_location(ag.sharded, 3).address, 0x8000u + 4416 + 2208);
}

ShardedAddrGenParams sharded(TensorMemoryLayout type, uint32_t cores, uint32_t pages_per_row, uint32_t shard_width,
                             uint32_t rows_per_shard, ShardingContiguityMode mode) {
  return ShardedAddrGenParams{type, cores, 2048, pages_per_row, mode, shard_width, rows_per_shard, 0x8000};
}

TEST(ShardedAddrGen, HeightSharded) {
  // 2 pages per row, 3 rows per shard: 6 pages per core.
  const auto p = sharded(TensorMemoryLayout::HEIGHT_SHARDED, 4, 2, 2, 3, ShardingContiguityMode::NO_SHARD_PADDING);
  ASSERT_TRUE(sharded_params_are_valid(p));
  expect_location(sharded_page_location(p, 0), 0, 0, 0x8000, 6);
  expect_location(sharded_page_location(p, 7), 1, 1, 0x8000 + 2048, 5);
  expect_location(sharded_page_location(p, 23), 3, 5, 0x8000 + 5 * 2048, 1);
}

TEST(ShardedAddrGen, WidthShardedWithAPaddedRightmostShard) {
  // 10 pages per row over shards 4 wide: cores 0, 1, 2; core 2 holds 2 columns of 4.
  const auto p =
      sharded(TensorMemoryLayout::WIDTH_SHARDED, 3, 10, 4, 1, ShardingContiguityMode::PADDING_IN_RIGHTMOST_SHARD);
  // page 13: row 1, column 3 -> core 0, page in shard 1*4 + 3 = 7, 1 page left in the shard row.
  expect_location(sharded_page_location(p, 13), 0, 7, 0x8000 + 7 * 2048, 1);
  // page 14: row 1, column 4 -> core 1, page in shard 4, a whole shard row of 4 left.
  expect_location(sharded_page_location(p, 14), 1, 4, 0x8000 + 4 * 2048, 4);
  // page 18: row 1, column 8 -> core 2, page in shard 4, only 2 columns left in the tensor row.
  expect_location(sharded_page_location(p, 18), 2, 4, 0x8000 + 4 * 2048, 2);
}

TEST(ShardedAddrGen, BlockSharded) {
  // 10 pages per row, shards 4 wide and 2 rows high: 3 shards per row.
  const auto p = sharded(TensorMemoryLayout::BLOCK_SHARDED, 6, 10, 4, 2, ShardingContiguityMode::PADDING_IN_RIGHTMOST_SHARD);
  // page 35: row 3, column 5 -> shard row 1, shard column 1 -> core 4; (3 % 2) * 4 + 1 = 5.
  expect_location(sharded_page_location(p, 35), 4, 5, 0x8000 + 5 * 2048, 3);
  // page 9: row 0, column 9 -> core 2, page 1 of the padded shard, 1 page left in the row.
  expect_location(sharded_page_location(p, 9), 2, 1, 0x8000 + 2048, 1);
}

TEST(ShardedAddrGen, PaddingBetweenPagesMakesEveryPageItsOwnRun) {
  auto p = sharded(TensorMemoryLayout::HEIGHT_SHARDED, 4, 2, 2, 3, ShardingContiguityMode::PADDING_BETWEEN_PAGES);
  p.page_size_jump_bytes = 2080;
  expect_location(sharded_page_location(p, 7), 1, 1, 0x8000 + 2080, 1);
}

TEST(ShardedAddrGen, PiecesOfPages) {
  // ROW_MAJOR rows of 768 B (one page each), height sharded 3 rows per core, addressed in 4
  // pieces of 192 B: page i is piece i % 4 of row i / 4.
  auto p = sharded(TensorMemoryLayout::HEIGHT_SHARDED, 4, 1, 1, 3, ShardingContiguityMode::NO_SHARD_PADDING);
  p.page_size_jump_bytes = 768;
  p.pieces_per_page = 4;
  p.piece_bytes = 192;
  expect_location(sharded_page_location(p, 0), 0, 0, 0x8000, 4);  // to the end of the row
  expect_location(sharded_page_location(p, 3), 0, 0, 0x8000 + 3 * 192, 1);
  // page 4 * 4 + 2: row 4 -> core 1, row 1 of its shard, third piece; 2 pieces left in the row.
  expect_location(sharded_page_location(p, 4 * 4 + 2), 1, 1, 0x8000 + 768 + 2 * 192, 2);
  // One piece per page is the whole-page addressing.
  auto whole = p;
  whole.pieces_per_page = 1;
  for (uint32_t page : {0u, 4u, 7u, 11u}) {
    const PageLocation a = sharded_page_location(whole, page);
    const PageLocation b = sharded_buffer_page_location(p, page);
    EXPECT_EQ(a.address, b.address);
    EXPECT_EQ(a.target, b.target);
    EXPECT_EQ(a.contiguous_pages, b.contiguous_pages);
  }
}

TEST(AddrGen, OneEntryPointForBothLayouts) {
  AddrGenParams p{TensorMemoryLayout::INTERLEAVED, {0, 12, 2048}, {}};
  EXPECT_EQ(page_location(p, 13).target, 1u);
  p.layout = TensorMemoryLayout::HEIGHT_SHARDED;
  p.sharded = sharded(TensorMemoryLayout::HEIGHT_SHARDED, 4, 2, 2, 3, ShardingContiguityMode::NO_SHARD_PADDING);
  EXPECT_EQ(page_location(p, 13).target, 2u);
  EXPECT_FALSE(sharded_params_are_valid(ShardedAddrGenParams{}));
}

}  // namespace
}  // namespace cclmesh::api
