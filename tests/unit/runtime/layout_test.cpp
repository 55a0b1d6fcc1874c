// The layouts backends and op builders share: logical cores -> NoC0 (with harvesting), the L1
// map, and where every page of a mesh buffer lives.
#include <gtest/gtest.h>

#include "runtime/device/buffer_layout.hpp"
#include "runtime/device/core_map.hpp"
#include "runtime/device/l1_map.hpp"
#include "topologies/builtin_systems.hpp"
#include "topologies/errors.hpp"

namespace cclmesh::runtime {
namespace {

TEST(CoreMap, T3kChipsHaveTwoHarvestedRowsAndAnEightByEightGrid) {
  const topo::Topology t3k = topo::build_t3k();
  const ChipCoreMap map = chip_core_map(t3k, 0);
  EXPECT_EQ(map.worker_grid(), (CoreCoord{8, 8}));
  EXPECT_EQ(map.harvested_rows(), (std::vector<std::uint32_t>{1, 2}));
  EXPECT_EQ(map.tensix_noc0({0, 0}), (Noc0Coord{1, 3}));
  EXPECT_EQ(map.tensix_noc0({4, 3}), (Noc0Coord{6, 7}));  // column 5 and row 6 are not Tensix
  EXPECT_EQ(map.tensix_noc0({7, 7}), (Noc0Coord{9, 11}));
  EXPECT_EQ(map.eth_noc0(0), (Noc0Coord{9, 0}));  // REFERENCE 1.4's channel table
  EXPECT_EQ(map.eth_noc0(8), (Noc0Coord{9, 6}));
  EXPECT_EQ(map.eth_noc0(15), (Noc0Coord{4, 6}));
  EXPECT_EQ(map.noc0(CoreKind::Ethernet, {9, 0}), (Noc0Coord{1, 6}));
  EXPECT_EQ(map.dram_bank_count(), 12u);
  EXPECT_EQ(common_worker_grid(t3k), (CoreCoord{8, 8}));
  EXPECT_EQ(common_worker_grid(topo::build_n150()), (CoreCoord{8, 9}));
}

TEST(CoreMap, CoresOffTheChipAreErrors) {
  const ChipCoreMap map = chip_core_map(topo::build_t3k(), 3);
  EXPECT_THROW(map.tensix_noc0({8, 0}), CoreMapError);
  EXPECT_THROW(map.tensix_noc0({0, 8}), CoreMapError);
  EXPECT_THROW(map.eth_noc0(16), CoreMapError);
  EXPECT_THROW(map.noc0(CoreKind::Ethernet, {1, 1}), CoreMapError);
  EXPECT_THROW(map.l1_bank_core({8, 8}, 64), CoreMapError);
}

// Chips alike share one core map but for the id (built once per architecture and harvesting);
// chips harvested differently each get their own, whichever was asked first, and a harvest mask
// that cannot be mapped throws on every call, not only the first.
TEST(CoreMap, ChipsAlikeShareAMapButKeepTheirIdsAndUnlikeChipsDoNot) {
  std::vector<topo::Chip> chips(4);
  for (std::size_t i = 0; i < chips.size(); ++i) chips[i].id = static_cast<topo::ChipId>(i);
  chips[1].harvesting.tensix_mask = 0b1;    // one row
  chips[2].harvesting.tensix_mask = 0b101;  // two rows, not adjacent
  chips[3].harvesting.tensix_mask = 0b1;
  const topo::Topology mesh("mixed", chips, {});
  for (int round = 0; round < 2; ++round) {  // the second round is served by the cache
    const ChipCoreMap full = chip_core_map(mesh, 0);
    const ChipCoreMap one = chip_core_map(mesh, 1);
    const ChipCoreMap two = chip_core_map(mesh, 2);
    const ChipCoreMap one_again = chip_core_map(mesh, 3);
    EXPECT_EQ(full.chip(), 0u);
    EXPECT_EQ(one.chip(), 1u);
    EXPECT_EQ(two.chip(), 2u);
    EXPECT_EQ(one_again.chip(), 3u);
    EXPECT_EQ(full.worker_grid(), (CoreCoord{8, 10}));
    EXPECT_EQ(one.worker_grid(), (CoreCoord{8, 9}));
    EXPECT_EQ(two.worker_grid(), (CoreCoord{8, 8}));
    EXPECT_TRUE(full.harvested_rows().empty());
    EXPECT_EQ(one.harvested_rows(), (std::vector<std::uint32_t>{1}));
    EXPECT_EQ(two.harvested_rows(), (std::vector<std::uint32_t>{1, 3}));
    EXPECT_EQ(one_again.harvested_rows(), one.harvested_rows());
    EXPECT_EQ(one_again.tensix_noc0({0, 0}), one.tensix_noc0({0, 0}));
    EXPECT_EQ(common_worker_grid(mesh), (CoreCoord{8, 8}));
  }
  std::vector<topo::Chip> bad(1);
  bad[0].harvesting.tensix_mask = 1u << 12;  // a row the chip does not have
  const topo::Topology unmappable("unmappable", bad, {});
  EXPECT_THROW(chip_core_map(unmappable, 0), CoreMapError);
  EXPECT_THROW(chip_core_map(unmappable, 0), CoreMapError);
  EXPECT_THROW(chip_core_map(mesh, 9), topo::InputError);  // not in the topology
}

TEST(L1Map, RegionsDoNotOverlap) {
  static_assert(kTensixCircularBufferBase == kTensixProgramBase + 32 * 16);
  static_assert(kEriscKernelBase == 0x1AC00);  // the default 150 KiB map (l1_map.hpp)
  static_assert(kEriscKernelBase + kEriscKernelBytes == 256 * 1024);
  EXPECT_EQ(tensix_program_semaphore_address(3), 0x20030u);
  EXPECT_EQ(erisc_program_semaphore_address(1), 0x1A810u);
  EXPECT_EQ(EriscL1Map{106 * 1024}.program_semaphore_address(1), 0x25810u);  // the 106 KiB what-if
}

BufferConfig dram(std::uint64_t bytes, std::uint32_t page) {
  return BufferConfig{BufferType::Dram, bytes, page, TensorMemoryLayout::Interleaved, std::nullopt};
}

TEST(BufferLayout, DramInterleavedPagesRoundRobinTheBanks) {
  const BufferLayout l(dram(13 * 2000, 2000), 0x10000, {8, 8}, 12);
  EXPECT_EQ(l.num_pages(), 13u);
  EXPECT_EQ(l.aligned_page_size(), 2016u);
  EXPECT_EQ(l.bytes_per_target(), 2u * 2016u);
  const PageLocation p5 = l.page(5);
  EXPECT_TRUE(p5.dram);
  EXPECT_EQ(p5.bank, 5u);
  EXPECT_EQ(p5.address, 0x10000u);
  const PageLocation p12 = l.page(12);
  EXPECT_EQ(p12.bank, 0u);
  EXPECT_EQ(p12.address, 0x10000u + 2016u);
  const auto args = std::get<kargs::InterleavedTensorArgs>(l.interpreter_args(chip_core_map(topo::build_t3k(), 0)));
  EXPECT_EQ(args.num_banks, 12u);
  EXPECT_EQ(args.aligned_page_size_bytes, 2016u);
}

TEST(BufferLayout, L1InterleavedUsesTheWorkerGridRowMajor) {
  const BufferLayout l(BufferConfig{BufferType::L1, 70 * 1024, 1024, TensorMemoryLayout::Interleaved, std::nullopt},
                       0x100000, {8, 8}, 12);
  EXPECT_EQ(l.num_targets(), 64u);
  const PageLocation p = l.page(65);
  EXPECT_FALSE(p.dram);
  EXPECT_EQ(p.core, (CoreCoord{1, 0}));
  EXPECT_EQ(p.address, 0x100000u + 1024u);
  EXPECT_EQ(l.page(10).core, (CoreCoord{2, 1}));
}

TEST(BufferLayout, WidthShardedPagesFollowTheShardGrid) {
  const BufferConfig config{BufferType::L1, 16 * 64, 64, TensorMemoryLayout::WidthSharded,
                            ShardSpec{{CoreRange{{2, 1}, {3, 1}}}, 2, 4, 8, ShardOrientation::RowMajor}};
  const BufferLayout l(config, 0x80000, {8, 8}, 12);
  EXPECT_EQ(l.shard_cores(), (std::vector<CoreCoord>{{2, 1}, {3, 1}}));
  EXPECT_EQ(l.bytes_per_target(), 8u * 64u);
  EXPECT_EQ(l.page(5).core, (CoreCoord{3, 1}));
  EXPECT_EQ(l.page(5).address, 0x80000u + 1u * 64u);
  EXPECT_EQ(l.page(12).core, (CoreCoord{3, 1}));
  EXPECT_EQ(l.page(12).address, 0x80000u + 4u * 64u);
  const ChipCoreMap map = chip_core_map(topo::build_t3k(), 0);
  const auto args = std::get<kargs::ShardedTensorArgs>(l.interpreter_args(map));
  ASSERT_EQ(args.cores.size(), 2u);
  EXPECT_EQ(args.cores[1].x, map.tensix_noc0({3, 1}).x);
  EXPECT_EQ(args.cores[1].y, map.tensix_noc0({3, 1}).y);
  EXPECT_EQ(args.pages_per_shard_width, 4u);
}

// DRAM sharding (REFERENCE 7.2, 2025): grid "core" (x, 0) is DRAM bank x, one shard per bank,
// and the interpreter's core table carries the bank ids.
TEST(BufferLayout, DramShardsSitOnBanks) {
  const BufferConfig config{BufferType::Dram, 12 * 64, 64, TensorMemoryLayout::HeightSharded,
                            ShardSpec{{CoreRange{{2, 0}, {4, 0}}}, 4, 1, 1, ShardOrientation::RowMajor}};
  const BufferLayout l(config, 0x1000, {8, 8}, 12);
  EXPECT_EQ(l.bytes_per_target(), 4u * 64u);
  EXPECT_TRUE(l.page(0).dram);
  EXPECT_EQ(l.page(0).bank, 2u);
  EXPECT_EQ(l.page(5).bank, 3u);
  EXPECT_EQ(l.page(5).address, 0x1000u + 1u * 64u);
  EXPECT_EQ(l.page(11).bank, 4u);
  const auto args = std::get<kargs::ShardedTensorArgs>(l.interpreter_args(chip_core_map(topo::build_t3k(), 0)));
  ASSERT_EQ(args.cores.size(), 3u);
  EXPECT_EQ(args.cores[2].x, 4u);
  EXPECT_EQ(args.buffer_type, api::BufferType::DRAM);
}

TEST(BufferLayout, ColumnMajorShardOrderWalksColumnsFirst) {
  const BufferConfig config{BufferType::L1, 4 * 4 * 32, 32, TensorMemoryLayout::HeightSharded,
                            ShardSpec{{CoreRange{{0, 0}, {1, 1}}}, 1, 4, 4, ShardOrientation::ColMajor}};
  const BufferLayout l(config, 0x80000, {8, 8}, 12);
  EXPECT_EQ(l.shard_cores(), (std::vector<CoreCoord>{{0, 0}, {0, 1}, {1, 0}, {1, 1}}));
  EXPECT_EQ(l.page(4).core, (CoreCoord{0, 1}));
}

TEST(BufferLayout, ConfigsThatCannotBeLaidOutAreRejected) {
  EXPECT_THROW(BufferLayout(dram(1000, 300), 0, {8, 8}, 12), BufferConfigError);  // not whole pages
  EXPECT_THROW(BufferLayout(dram(1024, 0), 0, {8, 8}, 12), BufferConfigError);
  EXPECT_THROW(BufferLayout(dram(1024, 64), std::uint64_t{1} << 33, {8, 8}, 12), BufferConfigError);
  // DRAM shards sit on banks (x, 0), x < the bank count: bank 12 of 12 and a second row are not.
  BufferConfig dram_sharded = dram(1024, 64);
  dram_sharded.layout = TensorMemoryLayout::HeightSharded;
  dram_sharded.shard = ShardSpec{{CoreRange{{11, 0}, {12, 0}}}, 8, 1, 1, ShardOrientation::RowMajor};
  EXPECT_THROW(BufferLayout(dram_sharded, 0, {8, 8}, 12), BufferConfigError);
  dram_sharded.shard = ShardSpec{{CoreRange{{0, 0}, {0, 1}}}, 8, 1, 1, ShardOrientation::RowMajor};
  EXPECT_THROW(BufferLayout(dram_sharded, 0, {8, 8}, 12), BufferConfigError);
  BufferConfig off_grid{BufferType::L1, 1024, 64, TensorMemoryLayout::HeightSharded,
                        ShardSpec{{CoreRange{{7, 7}, {8, 7}}}, 8, 1, 1, ShardOrientation::RowMajor}};
  EXPECT_THROW(BufferLayout(off_grid, 0, {8, 8}, 12), BufferConfigError);
  BufferConfig too_small{BufferType::L1, 1024, 64, TensorMemoryLayout::HeightSharded,
                         ShardSpec{{CoreRange{{0, 0}, {1, 0}}}, 4, 1, 1, ShardOrientation::RowMajor}};
  EXPECT_THROW(BufferLayout(too_small, 0, {8, 8}, 12), BufferConfigError);  // 16 pages, room for 8
  BufferConfig narrow{BufferType::L1, 1024, 64, TensorMemoryLayout::HeightSharded,
                      ShardSpec{{CoreRange{{0, 0}, {1, 0}}}, 4, 2, 4, ShardOrientation::RowMajor}};
  EXPECT_THROW(BufferLayout(narrow, 0, {8, 8}, 12), BufferConfigError);  // height: width must be the row
}

TEST(CoresOf, RangesInOrderRowMajorInside) {
  EXPECT_EQ(cores_of({CoreRange{{1, 0}, {2, 1}}, CoreRange{{5, 5}, {5, 5}}}),
            (std::vector<CoreCoord>{{1, 0}, {2, 0}, {1, 1}, {2, 1}, {5, 5}}));
  EXPECT_EQ(to_string(BufferType::L1), "L1");
  EXPECT_EQ(to_string(TensorMemoryLayout::BlockSharded), "block sharded");
}

}  // namespace
}  // namespace cclmesh::runtime
