// all_broadcast and all_gather's broadcast fallback (all_broadcast + concat, for TILE gather
// dims that are not whole tiles, REFERENCE 7.6) end to end on the simulated device with real
// data: every chip's N broadcast buffers against the ranks' inputs, and every chip's gathered
// output against reference::concat (element by element, zeros in the padding), bit for bit:
// bf16, fp32 and bfp8_b (re-blocked), into interleaved and sharded outputs.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>

#include "runtime/ccl/all_broadcast/all_broadcast.hpp"
#include "runtime/ccl/all_gather/all_gather.hpp"
#include "tests/integration/ccl/ccl_runners.hpp"
#include "topologies/builtin_systems.hpp"
#include "topologies/system_loader.hpp"

namespace cclmesh::ccltest {
namespace {

namespace ab = runtime::ccl::all_broadcast;
namespace ag = runtime::ccl::all_gather;

TEST(AllBroadcastE2E, T3kRingEveryChipHoldsEveryRanksInput) {
  auto device = make_device(topo::build_t3k(), FabricMode::Ring);
  ab::Params p;
  p.input = tile({1, 1, 64, 96});  // 6 tiles: 3 packets of 2
  p.topology = CclTopology::Ring;
  const RunOutcome o = run_all_broadcast(*device, p, Memory{});
  EXPECT_TRUE(o.verified);
  EXPECT_EQ(o.group_size, 8u);
  // Every chip's input crosses every hop it needs once: at least N (N - 1) inputs on the links.
  EXPECT_GE(o.total_link_payload_bytes(), static_cast<std::int64_t>(8 * 7 * o.input_bytes));
}

TEST(AllBroadcastE2E, T3kLineInL1BackToBackBehindTheBarrier) {
  auto device = make_device(topo::build_t3k(), FabricMode::Line);
  ab::Params p;
  p.input = tile({1, 1, 32, 64}, DataType::Float32);
  p.topology = CclTopology::Line;
  const RunOutcome o = run_all_broadcast(*device, p, Memory{BufferType::L1, std::nullopt}, RunOptions{2, true});
  EXPECT_TRUE(o.verified);
}

RunOutcome gather(sim::device::SimMeshDevice& device, TensorSpec input, std::uint32_t dim, CclTopology topology,
                  const Memory& memory = {}, const RunOptions& run = {}) {
  ag::Params p;
  p.input = input;
  p.dim = dim;
  p.topology = topology;
  const RunOutcome o = run_all_gather(device, p, memory, memory, run);
  EXPECT_TRUE(o.verified);
  return o;
}

TEST(AllGatherBroadcastFallbackE2E, PiecesStraddlingTilesAndFacesOnAT3kRing) {
  // 20 columns per chip over 8 chips: 160 columns = 5 output tiles, ranks straddling both face
  // (16) and tile (32) boundaries; 2 x 3 outer steps and 5 padded rows.
  auto device = make_device(topo::build_t3k(), FabricMode::Ring);
  const RunOutcome o = gather(*device, tile({2, 3, 5, 20}), 3, CclTopology::Ring);
  EXPECT_EQ(o.output_bytes, 2u * 3 * 5 * 2048);
}

TEST(AllGatherBroadcastFallbackE2E, Fp32RowsAlongDim2OnAT3kLineInL1) {
  // 17 rows per chip over 8 chips (136 rows = 5 output tile rows), 40 columns (2 tiles, padded).
  auto device = make_device(topo::build_t3k(), FabricMode::Line);
  gather(*device, tile({1, 2, 17, 40}, DataType::Float32), 2, CclTopology::Line, Memory{BufferType::L1, std::nullopt});
}

TEST(AllGatherBroadcastFallbackE2E, BackToBackBehindTheEntryBarrierOnN300) {
  auto device = make_device(topo::build_n300(), FabricMode::Line);
  gather(*device, tile({1, 1, 32, 368}), 3, CclTopology::Line, Memory{}, RunOptions{3, true});
}

TEST(AllGatherBroadcastFallbackE2E, SameInputsSameTimes) {
  // Determinism: two devices, the same op, the same simulated span (ns).
  std::uint64_t spans[2] = {};
  for (std::uint64_t& span : spans) {
    auto device = make_device(topo::build_t3k(), FabricMode::Ring);
    span = gather(*device, tile({1, 1, 1, 1}), 3, CclTopology::Ring).kernel_ns;
  }
  EXPECT_EQ(spans[0], spans[1]);
  EXPECT_GT(spans[0], 0u);
}

// An output sharded in elements (ShardLayout) on `grid`.
Memory sharded(BufferType type, runtime::TensorMemoryLayout layout, runtime::CoreRange grid, std::uint32_t height,
               std::uint32_t width) {
  return Memory{type, ShardLayout{layout, {grid}, height, width}};
}

// bfp8_b: the concat unpacks every piece to fp32 and packs each output block again with its
// own shared exponent; reference::concat re-blocks element by element (inputs with bounded
// exponents, as every bfp8_b run here).
TEST(AllGatherBroadcastFallbackE2E, Bfp8PiecesStraddlingBlocksOnAT3kRing) {
  // 20 columns per chip: most output face rows (bfp8_b blocks) mix two ranks' exponents.
  auto device = make_device(topo::build_t3k(), FabricMode::Ring);
  const RunOutcome o = gather(*device, tile({2, 1, 5, 20}, DataType::Bfloat8B), 3, CclTopology::Ring);
  EXPECT_EQ(o.output_bytes, 2u * 5 * 1088);
}

TEST(AllGatherBroadcastFallbackE2E, Bfp8SameInputsSameTimes) {
  // Determinism with the unpack / pack path and a sharded output.
  std::uint64_t spans[2] = {};
  for (std::uint64_t& span : spans) {
    auto device = make_device(topo::build_t3k(), FabricMode::Ring);
    ag::Params p;
    p.input = tile({1, 1, 3, 20}, DataType::Bfloat8B);
    p.dim = 3;
    p.topology = CclTopology::Ring;
    const RunOutcome o = run_all_gather(
        *device, p, Memory{},
        sharded(BufferType::L1, runtime::TensorMemoryLayout::WidthSharded, {{0, 1}, {4, 1}}, 32, 32));
    EXPECT_TRUE(o.verified);
    span = o.kernel_ns;
  }
  EXPECT_EQ(spans[0], spans[1]);
  EXPECT_GT(spans[0], 0u);
}

TEST(AllGatherBroadcastFallbackE2E, Bfp8RowsAlongDim2OnN300LineInL1) {
  auto device = make_device(topo::build_n300(), FabricMode::Line);
  gather(*device, tile({1, 2, 17, 40}, DataType::Bfloat8B), 2, CclTopology::Line, Memory{BufferType::L1, std::nullopt});
}

TEST(AllGatherBroadcastFallbackE2E, Bfp8OnAT3kLine) {
  auto device = make_device(topo::build_t3k(), FabricMode::Line);
  gather(*device, tile({1, 1, 8, 1}, DataType::Bfloat8B), 2, CclTopology::Line);
}

// Sharded outputs: the concat writes each output tile through the sharded address generator.
RunOutcome gather_into(sim::device::SimMeshDevice& device, TensorSpec input, std::uint32_t dim, CclTopology topology,
                       const Memory& output, const std::optional<Memory>& broadcast_memory = std::nullopt) {
  ag::Params p;
  p.input = input;
  p.dim = dim;
  p.topology = topology;
  const RunOutcome o = run_all_gather(device, p, Memory{}, output, RunOptions{}, broadcast_memory);
  EXPECT_TRUE(o.verified);
  return o;
}

TEST(AllGatherBroadcastFallbackE2E, L1WidthShardedOutputOnAT3kRing) {
  // 8 x 20 columns = 160: 5 output tiles, one per core.
  auto device = make_device(topo::build_t3k(), FabricMode::Ring);
  gather_into(*device, tile({1, 1, 32, 20}), 3, CclTopology::Ring,
              sharded(BufferType::L1, runtime::TensorMemoryLayout::WidthSharded, {{0, 0}, {4, 0}}, 32, 32));
}

TEST(AllGatherBroadcastFallbackE2E, DramHeightShardedOutputOnN300Line) {
  // 2 x 17 rows = 34 (2 tile rows) per outer step, 2 outer steps: 4 tile rows of 2 tiles, in
  // shards of 2 tile rows on DRAM banks 0 and 1.
  auto device = make_device(topo::build_n300(), FabricMode::Line);
  gather_into(*device, tile({1, 2, 17, 40}), 2, CclTopology::Line,
              sharded(BufferType::Dram, runtime::TensorMemoryLayout::HeightSharded, {{0, 0}, {1, 0}}, 64, 64));
}

TEST(AllGatherBroadcastFallbackE2E, Bfp8BlockShardedOutputFromShardedBroadcastBuffersOnAT3kLine) {
  // 8 x 20 columns = 160 (5 tiles) by 40 rows (2 tiles): shards of 1 x 2 tiles on a 3 x 2 grid,
  // the rightmost shard column half empty. The broadcast buffers (2 x 1 tiles each) are height
  // sharded in L1, one tile per core.
  auto device = make_device(topo::build_t3k(), FabricMode::Line);
  gather_into(*device, tile({1, 1, 40, 20}, DataType::Bfloat8B), 3, CclTopology::Line,
              sharded(BufferType::L1, runtime::TensorMemoryLayout::BlockSharded, {{0, 0}, {2, 1}}, 32, 64),
              sharded(BufferType::L1, runtime::TensorMemoryLayout::HeightSharded, {{0, 2}, {1, 2}}, 32, 32));
}

TEST(AllGatherBroadcastFallbackE2E, Fp32HeightShardedOutputOnAT3kRing) {
  // One element per chip along dim 2 (REFERENCE 8 row 24's [1,1,8,1] shape, fp32): a single
  // output tile, in a one-core L1 shard.
  auto device = make_device(topo::build_t3k(), FabricMode::Ring);
  gather_into(*device, tile({1, 1, 1, 1}, DataType::Float32), 2, CclTopology::Ring,
              sharded(BufferType::L1, runtime::TensorMemoryLayout::HeightSharded, {{3, 1}, {3, 1}}, 32, 32));
}

// Review (session 8): a 3-rank group (a line over 3 of the ring fabric's chips), COL_MAJOR shard
// grids, partial last shards (height and rightmost width) and DRAM shards, for bf16, fp32 and
// bfp8_b, outputs and broadcast buffers alike.
RunOutcome gather_on_three(sim::device::SimMeshDevice& device, TensorSpec input, std::uint32_t dim,
                           const Memory& output, const std::optional<Memory>& broadcast_memory = std::nullopt) {
  ag::Params p;
  p.input = input;
  p.dim = dim;
  p.topology = CclTopology::Line;
  const std::vector<ChipId>& ring = device.fabric_plan().chips();
  p.groups.chips = {{ring[0], ring[1], ring[2]}};
  const RunOutcome o = run_all_gather(device, p, Memory{}, output, RunOptions{}, broadcast_memory);
  EXPECT_TRUE(o.verified);
  EXPECT_EQ(o.group_size, 3u);
  return o;
}

Memory col_major(BufferType type, runtime::TensorMemoryLayout layout, runtime::CoreRange grid, std::uint32_t height,
                 std::uint32_t width) {
  return Memory{type, ShardLayout{layout, {grid}, height, width, runtime::ShardOrientation::ColMajor}};
}

TEST(AllGatherBroadcastFallbackE2E, ThreeRanksIntoColMajorAndPartialShards) {
  using runtime::TensorMemoryLayout;
  for (const DataType dtype : {DataType::Bfloat16, DataType::Float32, DataType::Bfloat8B}) {
    SCOPED_TRACE(runtime::ccl::to_string(dtype));
    {
      // dim 2: 3 x 17 = 51 rows (2 tile rows) x 40 columns (2 tiles), 2 outer steps: 4 x 2 tiles,
      // height sharded 3 tile rows per core (the second shard 1 row), COL_MAJOR over 1 x 2 cores.
      auto device = make_device(topo::build_t3k(), FabricMode::Ring);
      gather_on_three(*device, tile({2, 1, 17, 40}, dtype), 2,
                      col_major(BufferType::L1, TensorMemoryLayout::HeightSharded, {{5, 2}, {5, 3}}, 96, 64));
    }
    {
      // dim 3: 3 x 20 = 60 columns (2 tiles) x 40 rows (2 tiles): width sharded in DRAM, 1 tile
      // wide per bank; the broadcast buffers block sharded 1 x 1 tile, COL_MAJOR over 2 x 2 cores.
      auto device = make_device(topo::build_t3k(), FabricMode::Ring);
      gather_on_three(*device, tile({1, 1, 40, 20}, dtype), 3,
                      Memory{BufferType::Dram, ShardLayout{TensorMemoryLayout::WidthSharded, {{{0, 0}, {1, 0}}}, 64,
                                                           32}},
                      col_major(BufferType::L1, TensorMemoryLayout::BlockSharded, {{2, 4}, {3, 5}}, 32, 32));
    }
    {
      // dim 3 over the whole 8-ring: 160 columns = 5 tiles, width sharded 2 tiles per shard (the
      // rightmost half empty), COL_MAJOR over 3 cores; the broadcast buffers in DRAM shards.
      auto device = make_device(topo::build_t3k(), FabricMode::Ring);
      ag::Params p;
      p.input = tile({1, 1, 40, 20}, dtype);
      p.dim = 3;
      p.topology = CclTopology::Ring;
      const RunOutcome o = run_all_gather(
          *device, p, Memory{},
          col_major(BufferType::L1, TensorMemoryLayout::WidthSharded, {{6, 0}, {6, 2}}, 64, 64), RunOptions{},
          Memory{BufferType::Dram, ShardLayout{TensorMemoryLayout::HeightSharded, {{{0, 0}, {1, 0}}}, 32, 32}});
      EXPECT_TRUE(o.verified);
    }
  }
}

// The fallback on several links: each link's worker broadcasts its share of the input (2 links
// on an all-MMIO ring, TG's 3 on its rows); a 2-tile input on 3 links leaves one link no page.
TEST(AllGatherBroadcastFallbackE2E, SeveralLinksIntoShardedOutputs) {
  using runtime::TensorMemoryLayout;
  for (const DataType dtype : {DataType::Bfloat16, DataType::Bfloat8B}) {
    for (const std::uint32_t links : {2u, 3u}) {
      SCOPED_TRACE(fmt::format("{}, {} links", runtime::ccl::to_string(dtype), links));
      auto device = links == 2 ? make_device(topo::load_system("ring:8/2"),
                                             fabric_of(FabricMode::Ring, runtime::FabricScope::System, 2))
                               : make_device(topo::build_tg(), fabric_of(FabricMode::Line, runtime::FabricScope::Axes, 3));
      ag::Params p;
      p.input = tile({1, 1, 40, 20}, dtype);  // 2 tiles; 8 x 20 = 160 output columns, 5 tiles wide
      p.dim = 3;
      p.topology = links == 2 ? CclTopology::Ring : CclTopology::Line;
      p.num_links = links;
      if (links == 3) p.groups.cluster_axis = 1;
      const RunOutcome o = run_all_gather(
          *device, p, Memory{},
          col_major(BufferType::L1, TensorMemoryLayout::BlockSharded, {{0, 4}, {2, 5}}, 32, 64), RunOptions{},
          col_major(BufferType::L1, TensorMemoryLayout::HeightSharded, {{5, 0}, {5, 1}}, 32, 32));
      EXPECT_TRUE(o.verified);
      EXPECT_EQ(o.group_size, 8u);
    }
  }
}

// Each chip's concat starts only after its all_broadcast program ended (the chip's program
// queue), and the figures: the broadcast's span, the concat's, and the op's (printed; no
// timing is asserted).
void expect_concat_after_broadcast(sim::device::SimMeshDevice& device, const char* what) {
  std::map<ChipId, std::uint64_t> broadcast_end;
  std::map<ChipId, std::uint64_t> concat_start;
  std::uint64_t first = UINT64_MAX, broadcast_last = 0, concat_first = UINT64_MAX, last = 0;
  for (const runtime::KernelProfile& k : device.profile()) {
    if (k.core_kind != runtime::CoreKind::Tensix) continue;
    first = std::min(first, k.start_ns);
    last = std::max(last, k.end_ns);
    if (k.kernel == "concat") {
      concat_start[k.chip] = concat_start.count(k.chip) ? std::min(concat_start[k.chip], k.start_ns) : k.start_ns;
      concat_first = std::min(concat_first, k.start_ns);
    } else {
      broadcast_end[k.chip] = std::max(broadcast_end[k.chip], k.end_ns);
      broadcast_last = std::max(broadcast_last, k.end_ns);
    }
  }
  ASSERT_FALSE(concat_start.empty());
  for (const auto& [chip, start] : concat_start) EXPECT_GE(start, broadcast_end.at(chip)) << "chip " << chip;
  std::printf("%s: all_broadcast %.2f us, concat %.2f us (from its first start), op %.2f us simulated\n", what,
              static_cast<double>(broadcast_last - first) / 1e3, static_cast<double>(last - concat_first) / 1e3,
              static_cast<double>(last - first) / 1e3);
}

TEST(AllGatherBroadcastFallbackE2E, Figures) {
  {
    auto device = make_device(topo::build_t3k(), FabricMode::Ring);
    gather(*device, tile({1, 1, 1, 1}), 3, CclTopology::Ring);  // REFERENCE 8 row 24
    expect_concat_after_broadcast(*device, "row 24 [1,1,1,8] dim 3, t3k 8-ring");
  }
  {
    auto device = make_device(topo::build_n300(), FabricMode::Line);
    gather(*device, tile({1, 1, 32, 368}), 3, CclTopology::Line);  // REFERENCE 8 row 37
    expect_concat_after_broadcast(*device, "row 37 1x1x32x736 TILE, n300 line");
  }
  {
    auto device = make_device(topo::build_n300(), FabricMode::Line);
    gather(*device, tile({1, 1, 32, 368}, DataType::Bfloat8B), 3, CclTopology::Line);
    expect_concat_after_broadcast(*device, "row 37's shape in bfp8_b, n300 line");
  }
  {
    auto device = make_device(topo::build_t3k(), FabricMode::Ring);
    gather(*device, tile({1, 1, 1, 1}, DataType::Bfloat8B), 3, CclTopology::Ring);
    expect_concat_after_broadcast(*device, "row 24's [1,1,1,8] dim 3 in bfp8_b, t3k 8-ring");
  }
}

}  // namespace
}  // namespace cclmesh::ccltest
