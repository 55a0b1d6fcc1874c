// all_gather end to end on the simulated device with real data: N300 (2-chip line), T3K 4- and
// 8-chip lines and the 8-chip ring, FULL_TENSOR and SPLIT_TENSOR, every dim, TILE and
// ROW_MAJOR, bf16 / fp32 / bfp8_b pages, DRAM and L1, interleaved and sharded, several groups
// at once (cluster_axis), back-to-back ops behind the entry barrier. Every chip's output is
// compared bit for bit with the host reference (reference::concat of the chips' inputs).
#include "runtime/ccl/all_gather/all_gather.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <set>
#include <tuple>
#include <utility>

#include "kernels/kernel_args.hpp"
#include "runtime/ccl/all_gather/ring_relay.hpp"
#include "tests/integration/ccl/ccl_runners.hpp"
#include "topologies/system_loader.hpp"

namespace cclmesh::ccltest {
namespace {

namespace ag = runtime::ccl::all_gather;
using runtime::BufferConfig;
using runtime::BufferHandle;

struct Case {
  TensorSpec input;
  std::uint32_t dim = 3;
  CclTopology topology = CclTopology::Ring;
  ag::BidirectionalMode mode = ag::BidirectionalMode::Auto;
  Memory input_memory;   // DRAM, interleaved
  Memory output_memory;
  std::vector<std::vector<ChipId>> groups;  // empty: the fabric's chips
  std::optional<int> cluster_axis;
  std::uint32_t num_links = 1;
  bool barrier = false;
  std::uint32_t repeats = 1;       // back to back, one finish() at the end
  std::uint32_t packet_pages = 0;  // 0: the op's default
  // Auto on a ring: the case runs twice, relay and multicast, and both must verify.
  ag::RingAlgorithm algorithm = ag::RingAlgorithm::Auto;
  std::uint32_t chunks_per_sync = ag::kFitChunksPerSync;
  std::optional<std::uint32_t> workers_per_link;  // relay only
};

RunOutcome run_one(sim::device::SimMeshDevice& device, const Case& c);

// Runs `c` on `device` and checks every chip of every group against the reference; a ring case
// without an algorithm runs with both (the result is the relay's).
RunOutcome run_case(sim::device::SimMeshDevice& device, const Case& c) {
  if (c.topology != CclTopology::Ring || c.algorithm != ag::RingAlgorithm::Auto) return run_one(device, c);
  Case multicast = c;
  multicast.algorithm = ag::RingAlgorithm::Multicast;
  {
    SCOPED_TRACE("multicast");
    run_one(device, multicast);
  }
  Case relay = c;
  relay.algorithm = ag::RingAlgorithm::Relay;
  SCOPED_TRACE("relay");
  return run_one(device, relay);
}

RunOutcome run_one(sim::device::SimMeshDevice& device, const Case& c) {
  ag::Params p;
  p.input = c.input;
  p.dim = c.dim;
  p.topology = c.topology;
  p.bidirectional = c.mode;
  p.num_links = c.num_links;
  p.groups.chips = c.groups;
  p.groups.cluster_axis = c.cluster_axis;
  p.packet_size_in_pages = c.packet_pages;
  p.ring_algorithm = c.algorithm;
  p.chunks_per_sync = c.chunks_per_sync;
  p.workers_per_link = c.workers_per_link;
  const RunOutcome out = run_all_gather(device, p, c.input_memory, c.output_memory, RunOptions{c.repeats, c.barrier});
  EXPECT_TRUE(out.verified);
  return out;
}

// --- N300 -------------------------------------------------------------------------------------

TEST(AllGatherE2e, N300LineEveryDim) {
  auto device = make_device(topo::build_n300(), FabricMode::Line);
  for (std::uint32_t dim = 0; dim < 4; ++dim) {
    SCOPED_TRACE(fmt::format("dim {}", dim));
    Case c;
    c.input = tile({2, 2, 64, 96});
    c.dim = dim;
    c.topology = CclTopology::Line;
    run_case(*device, c);
  }
}

TEST(AllGatherE2e, N300RowMajorAndFp32) {
  auto device = make_device(topo::build_n300(), FabricMode::Line);
  Case rm;
  rm.input = TensorSpec{{8, 5, 13, 384}, DataType::Bfloat16, Layout::RowMajor};  // REFERENCE 8 #8: non-tile-aligned
  rm.dim = 2;
  rm.topology = CclTopology::Line;
  run_case(*device, rm);
  Case fp32;
  fp32.input = tile({1, 1, 32, 256}, DataType::Float32);
  fp32.topology = CclTopology::Line;
  run_case(*device, fp32);
}

// --- T3K lines ----------------------------------------------------------------------------------

TEST(AllGatherE2e, T3kFourChipLineBfp8IntoL1) {
  const topo::Topology t3k = topo::build_t3k();
  const std::vector<ChipId> line = to_runtime(topo::find_system_line(t3k).chips);
  const std::vector<ChipId> four(line.begin(), line.begin() + 4);
  auto device = make_device(t3k, FabricMode::Line, four);
  Case c;
  c.input = tile({1, 1, 32, 3584 / 4}, DataType::Bfloat8B);  // REFERENCE 8 #6 per chip
  c.dim = 3;
  c.topology = CclTopology::Line;
  c.output_memory = Memory{BufferType::L1, std::nullopt};
  run_case(*device, c);
}

TEST(AllGatherE2e, T3kEightChipLineDim1AndRowMajorDim0) {
  auto device = make_device(topo::build_t3k(), FabricMode::Line);
  Case c;
  c.input = tile({1, 1, 32, 256});  // REFERENCE 8 #5 shape / 8 along dim 1
  c.dim = 1;
  c.topology = CclTopology::Line;
  run_case(*device, c);
  Case rm;
  rm.input = TensorSpec{{1, 1, 256, 32}, DataType::Bfloat16, Layout::RowMajor};  // #2 per chip
  rm.dim = 0;
  rm.topology = CclTopology::Line;
  rm.input_memory = Memory{BufferType::L1, std::nullopt};
  run_case(*device, rm);
}

// A line over 4 of the ring fabric's chips, the other 4 idle.
TEST(AllGatherE2e, T3kLineOnASegmentOfTheRingFabric) {
  auto device = make_device(topo::build_t3k(), FabricMode::Ring);
  const std::vector<ChipId>& ring = device->fabric_plan().chips();
  Case c;
  c.input = tile({1, 1, 64, 128});
  c.dim = 2;
  c.topology = CclTopology::Line;
  c.groups = {{ring[6], ring[7], ring[0], ring[1]}};  // across the ring's closing hop
  run_case(*device, c);
}

// --- T3K ring -------------------------------------------------------------------------------------

TEST(AllGatherE2e, T3kRingFullTensor) {
  auto device = make_device(topo::build_t3k(), FabricMode::Ring);
  Case c;
  c.input = tile({1, 1, 32, 16384 / 8});  // REFERENCE 8 #1
  c.dim = 3;
  ag::Params p;
  p.input = c.input;
  EXPECT_EQ(ag::resolved_bidirectional_mode(p), ag::BidirectionalMode::FullTensor);
  run_case(*device, c);
}

TEST(AllGatherE2e, T3kRingSplitTensorEveryDim) {
  auto device = make_device(topo::build_t3k(), FabricMode::Ring);
  for (std::uint32_t dim = 0; dim < 4; ++dim) {
    SCOPED_TRACE(fmt::format("dim {}", dim));
    Case c;
    c.input = tile({2, 1, 64, 96});
    c.dim = dim;
    c.mode = ag::BidirectionalMode::SplitTensor;
    run_case(*device, c);
  }
}

TEST(AllGatherE2e, T3kRingRowMajorIntoL1) {
  auto device = make_device(topo::build_t3k(), FabricMode::Ring);
  Case c;
  c.input = TensorSpec{{1, 1, 256 / 8, 1024}, DataType::Bfloat16, Layout::RowMajor};  // REFERENCE 8 #13, dim 2
  c.dim = 2;
  c.output_memory = Memory{BufferType::L1, std::nullopt};
  run_case(*device, c);
}

// An L1 buffer sharded on `grid` in shards of whole tiles.
Memory sharded(runtime::TensorMemoryLayout layout, runtime::CoreRange grid, std::uint32_t shard_height_tiles,
               std::uint32_t shard_width_tiles, runtime::ShardOrientation orientation = runtime::ShardOrientation::RowMajor) {
  return Memory{BufferType::L1, ShardLayout{layout, {grid}, shard_height_tiles * 32, shard_width_tiles * 32, orientation}};
}

// REFERENCE 8 #15-#17: gathered into width-, height- and block-sharded L1 outputs, from sharded
// and interleaved inputs.
TEST(AllGatherE2e, T3kRingShardedL1) {
  using runtime::TensorMemoryLayout;
  auto device = make_device(topo::build_t3k(), FabricMode::Ring);
  {
    Case c;  // #15: out (1,1,32,1024), shard (32,32) on 8x4, width sharded
    c.input = tile({1, 1, 32, 128});
    c.input_memory = sharded(TensorMemoryLayout::WidthSharded, {{0, 4}, {3, 4}}, 1, 1);
    c.output_memory = sharded(TensorMemoryLayout::WidthSharded, {{0, 0}, {7, 3}}, 1, 1);
    run_case(*device, c);
  }
  {
    Case c;  // #16: out (1,1,4096,32), shard (128,32) on 8x4, height sharded, column-major cores
    c.input = tile({1, 1, 512, 32});
    c.dim = 2;
    c.output_memory =
        sharded(TensorMemoryLayout::HeightSharded, {{0, 0}, {7, 3}}, 4, 1, runtime::ShardOrientation::ColMajor);
    run_case(*device, c);
  }
  {
    Case c;  // #17: out (1,1,512,512), shard (128,64) on 8x4, block sharded
    c.input = tile({1, 1, 512, 64});
    c.input_memory = sharded(TensorMemoryLayout::HeightSharded, {{0, 5}, {3, 5}}, 4, 2);
    c.output_memory = sharded(TensorMemoryLayout::BlockSharded, {{0, 0}, {7, 3}}, 4, 2);
    run_case(*device, c);
  }
}

// ROW_MAJOR along the width into sharded buffers: every chip's row lands as one piece (or q
// pieces) of each output row through the sharded address generator's pieces_per_page.
TEST(AllGatherE2e, RowMajorAlongTheWidthIntoShardedBuffers) {
  using runtime::TensorMemoryLayout;
  const auto rows = [](BufferType type, runtime::CoreRange grid, std::uint32_t rows_per_shard) {
    return Memory{type, ShardLayout{TensorMemoryLayout::HeightSharded, {grid}, rows_per_shard, 32}};
  };
  {
    // N300 line, REFERENCE 8 #8's [8,5,13,384] per chip (768 B rows move whole): 520 output
    // rows of 1536 B, 65 per core in L1.
    auto device = make_device(topo::build_n300(), FabricMode::Line);
    Case c;
    c.input = TensorSpec{{8, 5, 13, 384}, DataType::Bfloat16, Layout::RowMajor};
    c.topology = CclTopology::Line;
    c.output_memory = rows(BufferType::L1, {{0, 0}, {7, 0}}, 65);
    run_case(*device, c);
  }
  {
    // N300 line into DRAM shards: banks 0-3, 8 rows of 256 B each.
    auto device = make_device(topo::build_n300(), FabricMode::Line);
    Case c;
    c.input = TensorSpec{{1, 1, 32, 64}, DataType::Bfloat16, Layout::RowMajor};
    c.topology = CclTopology::Line;
    c.output_memory = rows(BufferType::Dram, {{0, 0}, {3, 0}}, 8);
    run_case(*device, c);
  }
  {
    // T3K ring (relay and multicast): 8 KiB rows move in 2 pieces of 4 KiB (a 4352 B payload),
    // from a sharded input (4 rows per core) into 64 KiB output rows, 2 per core.
    auto device = make_device(topo::build_t3k(), FabricMode::Ring);
    Case c;
    c.input = TensorSpec{{1, 1, 16, 4096}, DataType::Bfloat16, Layout::RowMajor};
    c.input_memory = rows(BufferType::L1, {{0, 2}, {3, 2}}, 4);
    c.output_memory = rows(BufferType::L1, {{0, 0}, {7, 0}}, 2);
    run_case(*device, c);
  }
}

// Review (session 8): ROW_MAJOR along the width into sharded buffers with partial last shards,
// COL_MAJOR grids and DRAM shards, on a 3-chip line (odd group) and the 8-chip ring, rows moving
// whole and in pieces.
TEST(AllGatherE2e, RowMajorAlongTheWidthIntoPartialColMajorShards) {
  using runtime::TensorMemoryLayout;
  const auto rows = [](BufferType type, runtime::CoreRange grid, std::uint32_t rows_per_shard,
                       runtime::ShardOrientation orientation) {
    return Memory{type, ShardLayout{TensorMemoryLayout::HeightSharded, {grid}, rows_per_shard, 32, orientation}};
  };
  {
    // 3 chips of the ring fabric as a line: 26 rows of 192 B per chip; the output's 576 B rows 4
    // per core over 7 of 8 COL_MAJOR cores (the last shard 2 rows); the input in DRAM shards of
    // 5 rows on 6 banks (the last 1 row).
    auto device = make_device(topo::build_t3k(), FabricMode::Ring);
    const std::vector<ChipId>& ring = device->fabric_plan().chips();
    Case c;
    c.input = TensorSpec{{1, 2, 13, 96}, DataType::Bfloat16, Layout::RowMajor};
    c.topology = CclTopology::Line;
    c.groups = {{ring[0], ring[1], ring[2]}};
    c.input_memory = rows(BufferType::Dram, {{0, 0}, {5, 0}}, 5, runtime::ShardOrientation::RowMajor);
    c.output_memory = rows(BufferType::L1, {{0, 0}, {1, 3}}, 4, runtime::ShardOrientation::ColMajor);
    run_case(*device, c);
  }
  {
    // The 8-ring (relay and multicast): 6 KiB rows in 2 pieces of 3 KiB, 3 rows; 48 KiB output
    // rows 2 per core (the last shard 1 row), COL_MAJOR; the input 2 rows per core (last 1).
    auto device = make_device(topo::build_t3k(), FabricMode::Ring);
    Case c;
    c.input = TensorSpec{{1, 1, 3, 3072}, DataType::Bfloat16, Layout::RowMajor};
    c.input_memory = rows(BufferType::L1, {{4, 4}, {4, 5}}, 2, runtime::ShardOrientation::ColMajor);
    c.output_memory = rows(BufferType::L1, {{0, 4}, {1, 4}}, 2, runtime::ShardOrientation::ColMajor);
    run_case(*device, c);
  }
  {
    // Several links: 5 rows of 6 KiB in 2 pieces = 10 pieces per chip, so the links' runs start
    // mid-row (2 links: 5, 5; TG's 3: 4, 3, 3); outputs in partial COL_MAJOR shards.
    for (const std::uint32_t links : {2u, 3u}) {
      SCOPED_TRACE(fmt::format("{} links", links));
      auto device = links == 2 ? make_device(topo::load_system("ring:8/2"),
                                             fabric_of(FabricMode::Ring, runtime::FabricScope::System, 2))
                               : make_device(topo::build_tg(), fabric_of(FabricMode::Line, runtime::FabricScope::Axes, 3));
      Case c;
      c.input = TensorSpec{{1, 1, 5, 3072}, DataType::Bfloat16, Layout::RowMajor};
      c.topology = links == 2 ? CclTopology::Ring : CclTopology::Line;
      if (links == 3) c.cluster_axis = 1;
      c.num_links = links;
      c.input_memory = rows(BufferType::L1, {{4, 4}, {4, 6}}, 2, runtime::ShardOrientation::ColMajor);
      c.output_memory = rows(BufferType::L1, {{0, 4}, {2, 5}}, 1, runtime::ShardOrientation::ColMajor);
      run_case(*device, c);
    }
  }
}

// cluster_axis = 1 on the T3K's 2x4 mesh: two independent 4-chip lines at once, both on the ring
// fabric (each row is a run of consecutive fabric chips).
TEST(AllGatherE2e, T3kClusterAxisRowsAtOnce) {
  auto device = make_device(topo::build_t3k(), FabricMode::Ring);
  Case c;
  c.input = tile({1, 1, 32, 64});
  c.dim = 3;
  c.topology = CclTopology::Line;
  c.cluster_axis = 1;
  const RunOutcome r = run_case(*device, c);
  EXPECT_EQ(r.group_size, 4u);
}

// A Galaxy (4x8 mesh) with the fabric on the system's snake line: the 8-chip rows are runs of
// it, so cluster_axis 1 runs 4 independent 8-chip lines at once (REFERENCE 3.4). Columns are not
// runs of the snake: cluster_axis 0 needs a fabric per column, which the device does not build.
TEST(AllGatherE2e, GalaxyRowsAtOnce) {
  auto device = make_device(topo::build_galaxy(), FabricMode::Line);
  Case c;
  c.input = tile({1, 1, 32, 64});
  c.topology = CclTopology::Line;
  c.cluster_axis = 1;
  const RunOutcome r = run_case(*device, c);
  EXPECT_EQ(r.group_size, 8u);
  ag::Params columns;
  columns.input = c.input;
  columns.topology = CclTopology::Line;
  columns.groups.cluster_axis = 0;
  columns.fabric = device->options().fabric;
  try {
    ag::validate(columns, device->topology());
    ADD_FAILURE() << "columns of the snake validated";
  } catch (const runtime::ccl::CclParamsError& e) {
    EXPECT_NE(std::string(e.what()).find("fabric"), std::string::npos) << e.what();
  }
}

// --- per-axis fabric (FABRIC_1D: a line per mesh row and column) and routing planes ---------

// REFERENCE 3.4: cluster_axis 0 on the Galaxy's 4x8 mesh is 8 independent 4-chip columns, each
// on its own fabric line, all at once; rows run on the same device afterwards.
TEST(AllGatherE2e, GalaxyColumnsAndRowsOnThePerAxisFabric) {
  auto device = make_device(topo::build_galaxy(), fabric_of(FabricMode::Line, runtime::FabricScope::Axes));
  Case columns;
  columns.input = tile({1, 1, 32, 64});
  columns.topology = CclTopology::Line;
  columns.cluster_axis = 0;
  EXPECT_EQ(run_case(*device, columns).group_size, 4u);
  Case rows = columns;
  rows.cluster_axis = 1;
  rows.dim = 2;
  EXPECT_EQ(run_case(*device, rows).group_size, 8u);
}

// TG: the Galaxy's rows with 3 routing planes (TG's usable num_links, REFERENCE 3.3), each link's
// worker gathering its own third of the input; the gateways take no part.
TEST(AllGatherE2e, TgRowsOnThreeLinks) {
  auto device = make_device(topo::build_tg(), fabric_of(FabricMode::Line, runtime::FabricScope::Axes, 3));
  Case c;
  c.input = tile({1, 1, 32, 32 * 7});
  c.topology = CclTopology::Line;
  c.cluster_axis = 1;
  c.num_links = 3;
  EXPECT_EQ(run_case(*device, c).group_size, 8u);
}

// A 4x4 torus with a ring fabric per axis: each row and then each column is an independent
// 4-chip ring, all at once; a ring case runs with relay and with multicast (Case::algorithm
// Auto), both bit for bit.
TEST(AllGatherE2e, TorusRowsAndColumnsAsRingsOnThePerAxisFabric) {
  auto device = make_device(topo::load_system("torus:4x4"), fabric_of(FabricMode::Ring, runtime::FabricScope::Axes));
  for (const int axis : {1, 0}) {
    SCOPED_TRACE(fmt::format("cluster_axis {}", axis));
    Case c;
    c.input = tile({1, 1, 64, 96});
    c.cluster_axis = axis;
    EXPECT_EQ(run_case(*device, c).group_size, 4u);
  }
}

// A ring with 2 links per hop (an all-MMIO parametric system keeps both): SPLIT_TENSOR puts an up
// and a down worker on each plane, FULL_TENSOR one worker per plane.
TEST(AllGatherE2e, RingOnTwoLinksBothModes) {
  auto device = make_device(topo::load_system("ring:8/2"), fabric_of(FabricMode::Ring, runtime::FabricScope::System, 2));
  for (const ag::BidirectionalMode mode : {ag::BidirectionalMode::SplitTensor, ag::BidirectionalMode::FullTensor}) {
    SCOPED_TRACE(ag::to_string(mode));
    Case c;
    c.input = tile({1, 1, 64, 96});
    c.mode = mode;
    c.num_links = 2;
    run_case(*device, c);
  }
}

// With 2 links every plane carries data: both links of every hop of the ring, both directions
// (each link's workers send their own share over their own plane's routers).
TEST(AllGatherE2e, TwoLinksBothCarryData) {
  auto device = make_device(topo::load_system("ring:8/2"), fabric_of(FabricMode::Ring, runtime::FabricScope::System, 2));
  Case c;
  c.input = tile({1, 1, 32, 32 * 16});
  c.num_links = 2;
  run_case(*device, c);
  std::size_t links = 0;
  for (const auto& link : device->system().links()) {
    EXPECT_GT(link->a().stats().payload_bytes_sent, 0) << "chip " << link->a().chip().id() << " ch " << link->a().channel();
    EXPECT_GT(link->b().stats().payload_bytes_sent, 0) << "chip " << link->b().chip().id() << " ch " << link->b().channel();
    ++links;
  }
  EXPECT_EQ(links, 16u);  // 8 hops x 2 links
}

// Three all-gathers enqueued back to back with one finish(): the entry barrier keeps a fast
// chip's next op from landing in a chip still finishing the previous one.
TEST(AllGatherE2e, BackToBackBehindTheBarrier) {
  auto ring = make_device(topo::build_t3k(), FabricMode::Ring);
  for (ag::BidirectionalMode mode : {ag::BidirectionalMode::FullTensor, ag::BidirectionalMode::SplitTensor}) {
    Case c;
    c.input = tile({1, 1, 64, 64});
    c.mode = mode;
    c.barrier = true;
    c.repeats = 3;
    run_case(*ring, c);
  }
  auto line = make_device(topo::build_t3k(), FabricMode::Line);
  Case c;
  c.input = tile({1, 1, 64, 64});
  c.topology = CclTopology::Line;
  c.barrier = true;
  c.repeats = 3;
  run_case(*line, c);
}

// --- The ring relay (ring_relay.hpp) ---------------------------------------------------------------

// Auto relays on a fabric ring and multicasts on a line; an explicit relay is refused where it
// does not apply, and the algorithm is part of the program cache key.
TEST(AllGatherRelay, AutoAndRefusals) {
  ag::Params p;
  p.input = tile({1, 1, 32, 64});
  EXPECT_EQ(ag::resolved_ring_algorithm(p), ag::RingAlgorithm::Relay);
  p.topology = CclTopology::Line;
  EXPECT_EQ(ag::resolved_ring_algorithm(p), ag::RingAlgorithm::Multicast);
  p.ring_algorithm = ag::RingAlgorithm::Relay;
  EXPECT_THROW(ag::resolved_ring_algorithm(p), runtime::ccl::CclParamsError);
  p.topology = CclTopology::Ring;
  p.mode = runtime::ccl::CclMode::Legacy;
  EXPECT_THROW(ag::resolved_ring_algorithm(p), runtime::ccl::CclParamsError);
  p.mode = runtime::ccl::CclMode::Fabric;
  ag::Params multicast = p;
  multicast.ring_algorithm = ag::RingAlgorithm::Multicast;
  EXPECT_NE(ag::hash_value(p), ag::hash_value(multicast));
  ag::Params coarser = p;
  coarser.chunks_per_sync = 8;
  EXPECT_NE(ag::hash_value(p), ag::hash_value(coarser));
}

// Hop by hop, FULL_TENSOR on an even ring splits the farthest slice: every direction of every
// hop the ring uses carries the same payload (3.5 inputs at N = 8), within a few 1-word
// increment packets; the multicast carries 4 inputs one way and 3 the other.
std::pair<std::int64_t, std::int64_t> busiest_and_idlest_direction(sim::device::SimMeshDevice& device) {
  std::int64_t most = 0;
  std::int64_t least = std::numeric_limits<std::int64_t>::max();
  for (const auto& link : device.system().links()) {
    for (const auto* end : {&link->a(), &link->b()}) {
      const std::int64_t bytes = end->stats().payload_bytes_sent;
      if (bytes == 0) continue;  // a link the ring fabric does not use
      most = std::max(most, bytes);
      least = std::min(least, bytes);
    }
  }
  return {most, least};
}

TEST(AllGatherRelay, EvenRingFullTensorBalancesTheDirections) {
  Case c;
  c.input = tile({1, 1, 64, 128});
  c.mode = ag::BidirectionalMode::FullTensor;
  c.algorithm = ag::RingAlgorithm::Relay;
  auto relay = make_device(topo::build_t3k(), FabricMode::Ring);
  run_case(*relay, c);
  const auto [relay_most, relay_least] = busiest_and_idlest_direction(*relay);
  EXPECT_LE(relay_most - relay_least, relay_most / 100);
  // Every ring direction carries 3.5 inputs (3 whole slices and half of the farthest after the
  // own one, REFERENCE 7.4), plus packet headers, the chunks' semaphore increments and the
  // fabric's start-up handshake: within 10%.
  const std::int64_t input_bytes = 64 * 128 * 2;
  EXPECT_GE(relay_least, input_bytes * 7 / 2);
  EXPECT_LT(relay_most, input_bytes * 7 / 2 * 11 / 10);
  c.algorithm = ag::RingAlgorithm::Multicast;
  auto multicast = make_device(topo::build_t3k(), FabricMode::Ring);
  run_case(*multicast, c);
  const auto [multicast_most, multicast_least] = busiest_and_idlest_direction(*multicast);
  EXPECT_GT(multicast_most - multicast_least, multicast_most / 5);
}

// An odd ring (FULL_TENSOR: (N-1)/2 whole slices each way) and SPLIT_TENSOR on it, both
// algorithms; one packet per sync, the fitted default's largest chunk, 3 (a chunk that does not
// divide the run) and the fitted default.
TEST(AllGatherRelay, OddRingBothModes) {
  auto device = make_device(topo::load_system("ring:5"), FabricMode::Ring);
  for (const ag::BidirectionalMode mode : {ag::BidirectionalMode::FullTensor, ag::BidirectionalMode::SplitTensor}) {
    for (const std::uint32_t sync : {1u, ag::kMaxFitChunksPerSync, 3u, ag::kFitChunksPerSync}) {
      SCOPED_TRACE(fmt::format("{}, chunks_per_sync {}", ag::to_string(mode), sync));
      Case c;
      c.input = tile({1, 2, 64, 96});
      c.dim = 1;
      c.mode = mode;
      c.chunks_per_sync = sync;
      run_case(*device, c);
    }
  }
}

// The fitted chunk: at least 3 chunks per run, of at most 4 packets each and at least 1.
TEST(AllGatherRelay, FittedChunksPerSync) {
  EXPECT_EQ(ag::ring_relay::fitted_chunks_per_sync(1), 1u);
  EXPECT_EQ(ag::ring_relay::fitted_chunks_per_sync(5), 1u);
  EXPECT_EQ(ag::ring_relay::fitted_chunks_per_sync(6), 2u);
  EXPECT_EQ(ag::ring_relay::fitted_chunks_per_sync(9), 3u);
  EXPECT_EQ(ag::ring_relay::fitted_chunks_per_sync(12), 4u);
  EXPECT_EQ(ag::ring_relay::fitted_chunks_per_sync(1000), ag::kMaxFitChunksPerSync);
}

// The T3K ring where the fitted chunk is 1, 2, 3 and 4 packets (runs of 2 .. 18 packets of 2
// tiles at the default payload), both modes, fitted and at 4 packets: bit for bit either way.
TEST(AllGatherRelay, SmallRunsFittedAndFixed) {
  auto device = make_device(topo::build_t3k(), FabricMode::Ring);
  for (const ag::BidirectionalMode mode : {ag::BidirectionalMode::FullTensor, ag::BidirectionalMode::SplitTensor}) {
    for (const std::uint32_t columns : {64u, 96u, 288u}) {
      for (const std::uint32_t sync : {ag::kFitChunksPerSync, ag::kMaxFitChunksPerSync}) {
        SCOPED_TRACE(fmt::format("{}, {} columns, chunks_per_sync {}", ag::to_string(mode), columns, sync));
        Case c;
        c.input = tile({1, 1, 128, columns});
        c.mode = mode;
        c.algorithm = ag::RingAlgorithm::Relay;
        c.chunks_per_sync = sync;
        run_case(*device, c);
      }
    }
  }
}

// Several workers per link and direction (workers_per_link W, sharing the router through a
// mux per link and direction), bit for bit: both modes on the T3K ring, runs that leave some
// workers without pages (4 tiles per chip over up to 12 runs), the odd ring, two links, and back
// to back behind the barrier (which the workers without pages still take part in).
TEST(AllGatherRelay, SeveralWorkersPerDirectionThroughAMux) {
  auto t3k = make_device(topo::build_t3k(), FabricMode::Ring);
  for (const ag::BidirectionalMode mode : {ag::BidirectionalMode::FullTensor, ag::BidirectionalMode::SplitTensor}) {
    for (const std::uint32_t workers : {2u, 3u, 6u}) {
      for (const std::uint32_t columns : {64u, 288u}) {
        SCOPED_TRACE(fmt::format("{}, {} workers, {} columns", ag::to_string(mode), workers, columns));
        Case c;
        c.input = tile({1, 1, 128, columns});
        c.mode = mode;
        c.algorithm = ag::RingAlgorithm::Relay;
        c.workers_per_link = workers;
        run_case(*t3k, c);
      }
    }
  }
  {
    SCOPED_TRACE("4 tiles per chip, 6 workers, barrier, back to back");
    Case c;
    c.input = tile({1, 1, 64, 64});
    c.mode = ag::BidirectionalMode::SplitTensor;
    c.algorithm = ag::RingAlgorithm::Relay;
    c.workers_per_link = 6;
    c.barrier = true;
    c.repeats = 3;
    run_case(*t3k, c);
  }
  auto ring5 = make_device(topo::load_system("ring:5"), FabricMode::Ring);
  for (const ag::BidirectionalMode mode : {ag::BidirectionalMode::FullTensor, ag::BidirectionalMode::SplitTensor}) {
    SCOPED_TRACE(fmt::format("ring:5 {}", ag::to_string(mode)));
    Case c;
    c.input = tile({1, 2, 64, 96});
    c.dim = 1;
    c.mode = mode;
    c.algorithm = ag::RingAlgorithm::Relay;
    c.workers_per_link = 2;
    run_case(*ring5, c);
  }
  auto two_links =
      make_device(topo::load_system("ring:8/2"), fabric_of(FabricMode::Ring, runtime::FabricScope::System, 2));
  Case c;
  c.input = tile({1, 1, 64, 96});
  c.num_links = 2;
  c.algorithm = ag::RingAlgorithm::Relay;
  c.workers_per_link = 2;
  SCOPED_TRACE("ring:8/2 on 2 links");
  run_case(*two_links, c);
}

// The size rule counts a ROW_MAJOR row wider than a fabric payload as the tiles its bytes fill, as
// it was measured on tiles: counted as one page, [1,1,16,4096] bf16 rows (128 KiB a chip, 8192 B
// rows in 2 pieces) took 1 worker where the same bytes as tiles take 2 (T3K 8-ring, --no-data:
// 64.74 us against 54.22 with 2); in pieces, 4384 B rows (137 pieces of 32 B) would take 2 from
// 35 KB, where 1 is faster (21.08 against 26.59 us).
TEST(AllGatherRelay, WideRowsCountAsTheTilesTheirBytesFill) {
  const auto rows = [](std::uint32_t count, std::uint32_t width, DataType dtype) {
    return TensorSpec{{1, 1, count, width}, dtype, Layout::RowMajor};
  };
  ag::Params rule;
  rule.dim = 2;
  ASSERT_EQ(rule.fabric.max_payload_bytes, 4352u);
  const std::uint32_t two = ag::kDefaultRelayWorkersPerLink;
  const std::tuple<TensorSpec, std::uint32_t> cases[] = {
      {tile({1, 1, 32, 2048}), two},                    // 64 tiles, 128 KiB
      {rows(16, 4096, DataType::Bfloat16), two},        // 16 rows of 8192 B: 64 tiles' bytes
      {rows(8, 4096, DataType::Bfloat16), two},         // 32 tiles' bytes
      {rows(16, 2048, DataType::Float32), two},         // 8192 B rows: 32 fp32 tiles' bytes
      {rows(8, 2192, DataType::Bfloat16), 1u},          // 4384 B rows: 17 tiles' bytes
      {rows(16, 2192, DataType::Bfloat16), two},        // 34 tiles' bytes
      {rows(31, 1024, DataType::Bfloat16), 1u},         // rows that fit a payload count as pages
      {rows(32, 1024, DataType::Bfloat16), two}};
  for (const auto& [input, workers] : cases) {
    rule.input = input;
    SCOPED_TRACE(fmt::format("{}", fmt::join(input.shape, ",")));
    EXPECT_EQ(ag::resolved_bidirectional_mode(rule), ag::BidirectionalMode::FullTensor);
    EXPECT_EQ(ag::workers_per_link(rule), workers);
  }
}

// W workers per link and direction take 2W worker cores per link, each with the done semaphore,
// plus a mux core per link and direction (W > 1), which needs none; W outside 1..6 and W for a
// gather that multicasts are refused; W is part of the program cache key.
TEST(AllGatherRelay, WorkersPerLinkCoresAndRefusals) {
  const topo::Topology t3k = topo::build_t3k();
  ag::Params p;
  p.input = tile({1, 1, 32, 32 * 16});  // 16 tiles per chip: pages for every worker
  EXPECT_EQ(ag::workers_per_link(p), 1u);
  EXPECT_EQ(ag::semaphore_cores(p, t3k).size(), 2u);
  ag::Params four = p;
  four.workers_per_link = 4;
  EXPECT_EQ(ag::workers_per_link(four), 4u);
  EXPECT_EQ(ag::semaphore_cores(four, t3k).size(), 8u);
  EXPECT_NE(ag::hash_value(p), ag::hash_value(four));
  for (const std::uint32_t bad : {0u, 7u}) {
    ag::Params q = p;
    q.workers_per_link = bad;
    EXPECT_THROW(ag::workers_per_link(q), runtime::ccl::CclParamsError) << bad;
  }
  // The multicast has no workers per link to set: build refuses it rather than ignore it.
  auto device = make_device(t3k, FabricMode::Ring);
  four.fabric = device->options().fabric;
  ag::Params multicast = four;
  multicast.ring_algorithm = ag::RingAlgorithm::Multicast;
  EXPECT_EQ(ag::workers_per_link(multicast), 1u);
  multicast.input_buffer = device->create_buffer(buffer_config(multicast.input, Memory{}));
  multicast.output_buffer = device->create_buffer(buffer_config(ag::output_spec(multicast, t3k), Memory{}));
  multicast.done_semaphore = device->create_global_semaphore(ag::semaphore_cores(multicast, t3k), runtime::CoreKind::Tensix, 0);
  try {
    ag::build_workloads(multicast, t3k);
    ADD_FAILURE() << "a multicast with workers_per_link was built";
  } catch (const runtime::ccl::CclParamsError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("workers_per_link"));
  }
  // Unset, W is 2 once a link and direction's run holds 32 input pages, else 1: FULL_TENSOR
  // sends the whole input each way, SPLIT_TENSOR half of it; 2 links halve the run again.
  ag::Params rule = p;
  rule.input = tile({1, 1, 32, 32 * 31});
  EXPECT_EQ(ag::workers_per_link(rule), 1u);
  rule.input = tile({1, 1, 32, 32 * 32});
  EXPECT_EQ(ag::resolved_bidirectional_mode(rule), ag::BidirectionalMode::FullTensor);
  EXPECT_EQ(ag::workers_per_link(rule), ag::kDefaultRelayWorkersPerLink);
  EXPECT_EQ(ag::semaphore_cores(rule, t3k).size(), 4u);
  rule.num_links = 2;
  EXPECT_EQ(ag::workers_per_link(rule), 1u);
  rule.num_links = 1;
  rule.input = tile({1, 1, 64 * 32, 32});  // 64 pages, 128 KiB: SPLIT_TENSOR, 32 pages each way
  rule.bidirectional = ag::BidirectionalMode::SplitTensor;
  EXPECT_EQ(ag::workers_per_link(rule), 2u);
  rule.input = tile({1, 1, 62 * 32, 32});
  EXPECT_EQ(ag::workers_per_link(rule), 1u);
  // The relay with 4 workers per direction builds 8 interpreter pairs and 2 muxes per chip.
  ag::Params relay = four;
  relay.input_buffer = multicast.input_buffer;
  relay.output_buffer = multicast.output_buffer;
  relay.done_semaphore = device->create_global_semaphore(ag::semaphore_cores(relay, t3k), runtime::CoreKind::Tensix, 0);
  const auto workloads = ag::build_workloads(relay, t3k);
  ASSERT_EQ(workloads.size(), 1u);
  for (const auto& [chip, program] : workloads.front().programs) {
    std::size_t muxes = 0;
    std::size_t interpreters = 0;
    for (const auto& k : program.kernels) {
      muxes += k.kernel == kernels::kFabricMuxKernelName ? 1 : 0;
      interpreters += k.kernel == kernels::kCclInterpreterKernelName ? 1 : 0;
    }
    EXPECT_EQ(muxes, 2u) << "chip " << chip;
    EXPECT_EQ(interpreters, 16u) << "chip " << chip;
  }
  // With 2 per direction the 4 workers take logical (0..3, 0) and the muxes start the next row
  // of the worker grid, (0, 1) and (1, 1), not the workers' row.
  ag::Params two = relay;
  two.workers_per_link = 2;
  two.done_semaphore = device->create_global_semaphore(ag::semaphore_cores(two, t3k), runtime::CoreKind::Tensix, 0);
  const auto two_workloads = ag::build_workloads(two, t3k);
  for (const auto& [chip, program] : two_workloads.front().programs) {
    std::set<std::pair<std::uint32_t, std::uint32_t>> mux_cores;
    std::set<std::pair<std::uint32_t, std::uint32_t>> worker_cores;
    for (const auto& k : program.kernels) {
      const runtime::CoreCoord at = k.cores.front().start;
      if (k.kernel == kernels::kFabricMuxKernelName) mux_cores.insert({at.x, at.y});
      if (k.kernel == kernels::kCclInterpreterKernelName) worker_cores.insert({at.x, at.y});
    }
    using Cores = std::set<std::pair<std::uint32_t, std::uint32_t>>;
    EXPECT_EQ(mux_cores, (Cores{{0, 1}, {1, 1}})) << "chip " << chip;
    EXPECT_EQ(worker_cores, (Cores{{0, 0}, {1, 0}, {2, 0}, {3, 0}})) << "chip " << chip;
  }
}

// More chunks than an 8-bit wait counts (2 MiB per chip): the chunks grow to fit.
TEST(AllGatherRelay, LargeInputGrowsTheChunks) {
  auto device = make_device(topo::build_t3k(), FabricMode::Ring);
  Case c;
  c.input = tile({1, 1, 1024, 1024});
  c.algorithm = ag::RingAlgorithm::Relay;
  c.chunks_per_sync = 1;
  run_case(*device, c);
}

}  // namespace
}  // namespace cclmesh::ccltest

namespace cclmesh::ccltest {
namespace {

// The figures the issue asks about, printed (not asserted: no timing thresholds in tests):
// simulated kernel time and nccl-tests busbw of larger all-gathers.
void print_figures(const std::string& what, const RunOutcome& r) {
  ccltest::print_figures(what, "output", r.output_bytes, r.kernel_ns, exchange_bus_factor(r.group_size));
}

TEST(AllGatherE2eFigures, T3kRingSixteenMebibytes) {
  auto device = make_device(topo::build_t3k(), FabricMode::Ring);
  // Bigger CB packets (8 tiles) change nothing here: the routers, not the reads, set the pace.
  for (ag::RingAlgorithm algorithm : {ag::RingAlgorithm::Relay, ag::RingAlgorithm::Multicast}) {
    for (ag::BidirectionalMode mode : {ag::BidirectionalMode::SplitTensor, ag::BidirectionalMode::FullTensor}) {
      Case c;
      c.input = tile({1, 1, 1024, 1024});  // 2 MiB per chip, 16 MiB gathered
      c.dim = 3;
      c.mode = mode;
      c.algorithm = algorithm;
      print_figures(
          fmt::format("T3K 8-ring all_gather {} {}", ag::to_string(algorithm), ag::to_string(mode)).c_str(),
          run_case(*device, c));
    }
  }
}

TEST(AllGatherE2eFigures, T3kLineFourMebibytes) {
  auto device = make_device(topo::build_t3k(), FabricMode::Line);
  Case c;
  c.input = tile({1, 1, 512, 1024});
  c.topology = CclTopology::Line;
  print_figures("T3K 8-line all_gather", run_case(*device, c));
}

TEST(AllGatherE2eFigures, N300FourMebibytes) {
  auto device = make_device(topo::build_n300(), FabricMode::Line);
  Case c;
  c.input = tile({1, 1, 1024, 1024});
  c.topology = CclTopology::Line;
  print_figures("N300 all_gather", run_case(*device, c));
}

}  // namespace
}  // namespace cclmesh::ccltest
