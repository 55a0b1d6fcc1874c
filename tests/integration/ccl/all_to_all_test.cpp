// all_to_all end to end on the simulated device with real data: N300, T3K 4- and 8-chip lines
// and the 8-chip ring (the farthest chunk split both ways), 4-chip rows at once, dims 0..3,
// bf16 / fp32 / bfp8_b, ROW_MAJOR in L1, back to back, ROW_MAJOR along dim 3 (rows cut in
// pieces, interleaved and height-sharded, pieces that fill a payload in rounds of whole
// packets). Every chip's output is compared bit for bit with all_to_all::reference_outputs.
#include "runtime/ccl/all_to_all/all_to_all.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "tests/integration/ccl/ccl_runners.hpp"

namespace cclmesh::ccltest {
namespace {

namespace a2a = runtime::ccl::all_to_all;

struct Case {
  TensorSpec tensor;
  std::uint32_t dim = 3;
  CclTopology topology = CclTopology::Ring;
  BufferType memory = BufferType::Dram;
  std::optional<ShardLayout> shard;
  std::vector<std::vector<ChipId>> groups;
  std::optional<int> cluster_axis;
  std::uint32_t repeats = 1;
  std::uint32_t rounds = 0;  // 0: the default
};

RunOutcome run_case(sim::device::SimMeshDevice& device, const Case& c) {
  a2a::Params p;
  p.tensor = c.tensor;
  p.dim = c.dim;
  p.topology = c.topology;
  p.groups.chips = c.groups;
  p.groups.cluster_axis = c.cluster_axis;
  p.rounds = c.rounds;
  const RunOutcome out = run_all_to_all(device, p, Memory{c.memory, c.shard}, RunOptions{c.repeats});
  EXPECT_TRUE(out.verified);
  return out;
}

TEST(AllToAllE2e, N300EveryDim) {
  auto device = make_device(topo::build_n300(), FabricMode::Line);
  for (std::uint32_t dim = 0; dim < 4; ++dim) {
    SCOPED_TRACE(dim);
    Case c;
    c.tensor = tile({2, 2, 64, 64});
    c.dim = dim;
    c.topology = CclTopology::Line;
    run_case(*device, c);
  }
}

TEST(AllToAllE2e, T3kLinesAndRing) {
  {
    auto device = make_device(topo::build_t3k(), FabricMode::Line);
    Case c;
    c.tensor = tile({1, 1, 64, 32 * 16});
    c.topology = CclTopology::Line;
    run_case(*device, c);
    Case four;
    four.tensor = tile({1, 1, 32, 32 * 8}, DataType::Float32);
    four.topology = CclTopology::Line;
    const std::vector<ChipId>& line = device->fabric_plan().chips();
    four.groups = {std::vector<ChipId>(line.begin(), line.begin() + 4)};
    run_case(*device, four);
  }
  auto device = make_device(topo::build_t3k(), FabricMode::Ring);
  Case ring;
  ring.tensor = tile({1, 1, 32, 32 * 24});  // 3 tiles per chunk: the split farthest chunk is uneven
  ring.repeats = 2;
  run_case(*device, ring);
  Case bfp8;
  bfp8.tensor = tile({1, 8, 32, 64}, DataType::Bfloat8B);
  bfp8.dim = 1;
  run_case(*device, bfp8);
}

TEST(AllToAllE2e, T3kRowsAtOnceRowMajorInL1) {
  auto device = make_device(topo::build_t3k(), FabricMode::Ring);
  Case c;
  c.tensor = TensorSpec{{1, 1, 64, 256}, DataType::Bfloat16, Layout::RowMajor};
  c.dim = 2;
  c.topology = CclTopology::Line;
  c.cluster_axis = 1;
  c.memory = BufferType::L1;
  run_case(*device, c);
}

// --- ROW_MAJOR along dim 3: every row holds a chunk for each rank, moved in row pieces ---------

TensorSpec row_major(std::array<std::uint32_t, 4> shape, DataType dtype = DataType::Bfloat16) {
  return TensorSpec{shape, dtype, Layout::RowMajor};
}

// A chunk per row of 256 B (bf16, 2 chips), 64 B (fp32, 2 chips), and 512 B in L1 (bf16, rows
// not whole tiles: 5 per chip).
TEST(AllToAllE2e, N300RowMajorAlongTheWidth) {
  auto device = make_device(topo::build_n300(), FabricMode::Line);
  Case bf16;
  bf16.tensor = row_major({2, 2, 8, 256});
  bf16.topology = CclTopology::Line;
  run_case(*device, bf16);
  Case fp32;
  fp32.tensor = row_major({1, 3, 5, 32}, DataType::Float32);
  fp32.topology = CclTopology::Line;
  run_case(*device, fp32);
  Case l1;
  l1.tensor = row_major({1, 1, 5, 512});
  l1.topology = CclTopology::Line;
  l1.memory = BufferType::L1;
  run_case(*device, l1);
}

// The 8-line and the 8-ring (its farthest chunk split both ways), bf16 and fp32, twice back to
// back on the ring; chunks of 32 B (the smallest a DRAM-aligned piece can be) to 384 B.
TEST(AllToAllE2e, T3kLineAndRingRowMajorAlongTheWidth) {
  for (const CclTopology t : {CclTopology::Line, CclTopology::Ring}) {
    SCOPED_TRACE(shape_name(t));
    auto device = make_device(topo::build_t3k(), fabric_mode_for(t));
    Case bf16;
    bf16.tensor = row_major({1, 1, 16, 8 * 16});  // 32 B chunks
    bf16.topology = t;
    bf16.repeats = t == CclTopology::Ring ? 2 : 1;
    run_case(*device, bf16);
    Case fp32;
    fp32.tensor = row_major({1, 2, 7, 8 * 96}, DataType::Float32);  // 384 B chunks
    fp32.topology = t;
    run_case(*device, fp32);
  }
}

// Chunks wider than a fabric payload (4352 B) move in q pieces of a row: 8 KiB chunks in 2 pieces
// of 4 KiB, and on the ring 3 rows of them, so the split farthest chunk's halves (3 pieces each)
// cut a row in the middle; 12 KiB fp32 chunks in 3 pieces on a line.
TEST(AllToAllE2e, T3kRowMajorChunksWiderThanAPayload) {
  {
    auto device = make_device(topo::build_t3k(), FabricMode::Ring);
    Case c;
    c.tensor = row_major({1, 1, 3, 8 * 4096});
    run_case(*device, c);
  }
  auto device = make_device(topo::build_t3k(), FabricMode::Line);
  Case c;
  c.tensor = row_major({1, 1, 2, 8 * 3072}, DataType::Float32);
  c.topology = CclTopology::Line;
  run_case(*device, c);
}

// Chunks wider than a payload in pieces that fill one (RowPieceChoice::FillPayload, session 39),
// a sender's rounds cut in whole packets (round_pieces.hpp), so packets straddle rows: 4416 B
// chunks in 23 pieces of 192 B (22 a packet), 4608 B in 9 of 512 B (8 a packet), fp32 8832 B in
// 23 of 384 B (11 a packet); 5 rows, in the default rounds (one packet a round, the first with the
// short one) and in 2 (several packets a round); the ring's split farthest chunk cuts its halves
// mid-packet; DRAM and L1.
TEST(AllToAllE2e, RowMajorChunksInPiecesThatFillAPayload) {
  struct System {
    topo::Topology topology;
    CclTopology shape;
    std::uint32_t n;
  };
  const System systems[] = {{topo::build_n300(), CclTopology::Line, 2},
                            {topo::build_t3k(), CclTopology::Line, 8},
                            {topo::build_t3k(), CclTopology::Ring, 8}};
  for (const System& system : systems) {
    SCOPED_TRACE(shape_name(system.shape));
    auto device = make_device(system.topology, fabric_mode_for(system.shape));
    const std::pair<DataType, std::uint32_t> chunks[] = {
        {DataType::Bfloat16, 2208}, {DataType::Bfloat16, 2304}, {DataType::Float32, 2208}};
    for (const auto& [dtype, chunk_elements] : chunks) {
      for (const std::uint32_t rounds : {0u, 2u}) {
        SCOPED_TRACE(fmt::format("{} elements a chunk, rounds {}", chunk_elements, rounds));
        Case c;
        c.tensor = row_major({1, 1, 5, system.n * chunk_elements}, dtype);
        c.topology = system.shape;
        c.rounds = rounds;
        c.memory = rounds == 0 ? BufferType::Dram : BufferType::L1;
        run_case(*device, c);
      }
    }
  }
}

// The T3K's 4-chip rows at once (cluster_axis 1), 64 rows of 128 B chunks, in L1.
TEST(AllToAllE2e, T3kRowsAtOnceRowMajorAlongTheWidth) {
  auto device = make_device(topo::build_t3k(), FabricMode::Ring);
  Case c;
  c.tensor = row_major({1, 1, 64, 256});
  c.topology = CclTopology::Line;
  c.cluster_axis = 1;
  c.memory = BufferType::L1;
  run_case(*device, c);
}

// Height-sharded buffers (a ROW_MAJOR shard holds whole rows): the sharded address generator's
// pieces. 2 rows per core on 8 L1 cores (256 B chunks), and 64 KiB rows (8 KiB chunks, 2 pieces
// each) on DRAM shards, 4 rows per bank of banks 0-3.
TEST(AllToAllE2e, T3kRingRowMajorAlongTheWidthInShards) {
  using runtime::TensorMemoryLayout;
  auto device = make_device(topo::build_t3k(), FabricMode::Ring);
  Case l1;
  l1.tensor = row_major({1, 1, 16, 8 * 128});
  l1.memory = BufferType::L1;
  l1.shard = ShardLayout{TensorMemoryLayout::HeightSharded, {{{0, 2}, {7, 2}}}, 2, 32};
  run_case(*device, l1);
  Case dram;
  dram.tensor = row_major({1, 1, 16, 8 * 4096});  // 8 KiB chunks: 2 pieces each
  dram.shard = ShardLayout{TensorMemoryLayout::HeightSharded, {{{0, 0}, {3, 0}}}, 4, 32};
  run_case(*device, dram);
}

TEST(AllToAllE2eFigures, T3kRingAndLineFourMebibytes) {
  for (const CclTopology t : {CclTopology::Ring, CclTopology::Line}) {
    auto device = make_device(topo::build_t3k(), fabric_mode_for(t));
    Case c;
    c.tensor = tile({1, 1, 1024, 2048});
    c.topology = t;
    const RunOutcome r = run_case(*device, c);
    print_figures(fmt::format("T3K 8-{} all_to_all", shape_name(t)), "per chip", r.input_bytes, r.kernel_ns,
                  exchange_bus_factor(r.group_size));
  }
}

}  // namespace
}  // namespace cclmesh::ccltest
