// reduce_scatter of ROW_MAJOR tensors along dim 3 (scattered_rows.hpp) end to end on the simulated
// device with real data: every input row cut into N output rows, moved in 32 B-aligned row pieces.
// Fabric mode: the N300 line, the T3K 8-ring under Auto (the one-shot up to 512 KiB per chip, the
// half-way ring above) and the chain, the T3K 8-line (two-sided and wrap), rows wider than one
// fabric payload (several pieces per output row), height-sharded L1 input and output; legacy mode
// on the T3K ring and line and the N300 (rows wider than an EDM buffer). bf16 and fp32. Every
// chip's output is compared bit for bit with reduce_scatter::reference_outputs.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "runtime/ccl/reduce_scatter/reduce_scatter.hpp"
#include "tests/integration/ccl/ccl_runners.hpp"
#include "tests/integration/ccl/legacy_runner.hpp"
#include "tests/integration/ccl/reduce_scatter_case.hpp"
#include "topologies/system_loader.hpp"

namespace cclmesh::ccltest {
namespace {

namespace rs = runtime::ccl::reduce_scatter;

TensorSpec rows(std::array<std::uint32_t, 4> shape, DataType dtype = DataType::Bfloat16) {
  return TensorSpec{shape, dtype, Layout::RowMajor};
}

// A ROW_MAJOR case along dim 3, the ring's algorithm Auto unless a test asks for another.
struct Case : ReduceScatterCase {
  Case() { ring_algorithm = rs::RingAlgorithm::Auto; }
};

// What Auto runs on a fabric ring for `input` (it goes by bytes per chip).
rs::RingAlgorithm auto_choice(const TensorSpec& input) {
  rs::Params p;
  p.input = input;
  return rs::resolved_ring_algorithm(p);
}

TEST(ReduceScatterRowMajorE2e, N300LineBf16AndFp32) {
  auto device = make_device(topo::build_n300(), FabricMode::Line);
  for (const rs::LineAlgorithm algorithm : {rs::LineAlgorithm::TwoSided, rs::LineAlgorithm::Wrap}) {
    SCOPED_TRACE(rs::to_string(algorithm));
    Case bf16;
    bf16.input = rows({1, 2, 8, 1024});  // 2 KiB rows into 1 KiB output rows
    bf16.topology = CclTopology::Line;
    bf16.line_algorithm = algorithm;
    run_reduce_scatter_case(*device, bf16);
    Case fp32 = bf16;
    fp32.input = rows({1, 1, 4, 8192}, DataType::Float32);  // 16 KiB output rows: 4 pieces of 4 KiB
    run_reduce_scatter_case(*device, fp32);
  }
}

// Auto on the 8-ring: the one-shot at 128 KiB per chip, the half-way ring at 1 MiB; the chain
// when asked for, bf16 and fp32.
TEST(ReduceScatterRowMajorE2e, T3kRingAutoAndChain) {
  auto device = make_device(topo::build_t3k(), FabricMode::Ring);
  Case small;
  small.input = rows({1, 1, 32, 2048});  // 4 KiB rows into 512 B output rows
  ASSERT_EQ(auto_choice(small.input), rs::RingAlgorithm::OneShot);
  run_reduce_scatter_case(*device, small);
  Case large;
  large.input = rows({1, 1, 128, 4096});  // 1 MiB
  ASSERT_EQ(auto_choice(large.input), rs::RingAlgorithm::HalfWay);
  run_reduce_scatter_case(*device, large);
  for (const DataType dtype : {DataType::Bfloat16, DataType::Float32}) {
    SCOPED_TRACE(static_cast<int>(dtype));
    Case chain;
    chain.input = rows({1, 2, 8, 2048}, dtype);
    chain.ring_algorithm = rs::RingAlgorithm::Chain;
    run_reduce_scatter_case(*device, chain);
  }
}

TEST(ReduceScatterRowMajorE2e, T3kEightChipLine) {
  auto device = make_device(topo::build_t3k(), FabricMode::Line);
  for (const rs::LineAlgorithm algorithm : {rs::LineAlgorithm::TwoSided, rs::LineAlgorithm::Wrap}) {
    SCOPED_TRACE(rs::to_string(algorithm));
    Case c;
    c.input = rows({1, 1, 32, 2048}, DataType::Float32);  // 8 KiB rows into 1 KiB output rows
    c.topology = CclTopology::Line;
    c.line_algorithm = algorithm;
    run_reduce_scatter_case(*device, c);
  }
}

// 64 KiB rows into 8 KiB output rows, wider than a 4352 B payload: 2 pieces of 4 KiB per output
// row, 16 per input row, under every ring algorithm and on the two-sided line.
TEST(ReduceScatterRowMajorE2e, RowsWiderThanAPayload) {
  auto ring = make_device(topo::build_t3k(), FabricMode::Ring);
  for (const rs::RingAlgorithm algorithm :
       {rs::RingAlgorithm::OneShot, rs::RingAlgorithm::HalfWay, rs::RingAlgorithm::Chain}) {
    SCOPED_TRACE(rs::to_string(algorithm));
    Case c;
    c.input = rows({1, 1, 8, 8 * 4096});
    c.ring_algorithm = algorithm;
    run_reduce_scatter_case(*ring, c);
  }
  auto line = make_device(topo::build_t3k(), FabricMode::Line);
  Case c;
  c.input = rows({1, 1, 8, 8 * 4096});
  c.topology = CclTopology::Line;
  run_reduce_scatter_case(*line, c);
}

// Height-sharded L1 buffers (the sharded address generator's pieces): 1 KiB output rows from 8 KiB
// input rows, 8 input rows per core on 4 cores into 4 output rows per core on 8; and 8 KiB output
// rows in 2 pieces from 64 KiB input rows, 2 input rows per core into 1 output row per core.
TEST(ReduceScatterRowMajorE2e, HeightShardedL1InputAndOutput) {
  using runtime::TensorMemoryLayout;
  const auto sharded = [](runtime::CoreRange grid, std::uint32_t rows_per_shard) {
    return Memory{BufferType::L1, ShardLayout{TensorMemoryLayout::HeightSharded, {grid}, rows_per_shard, 32}};
  };
  auto device = make_device(topo::build_t3k(), FabricMode::Ring);
  for (const rs::RingAlgorithm algorithm : {rs::RingAlgorithm::OneShot, rs::RingAlgorithm::Chain}) {
    SCOPED_TRACE(rs::to_string(algorithm));
    Case whole;
    whole.input = rows({1, 1, 32, 4096});
    whole.ring_algorithm = algorithm;
    whole.input_memory = sharded({{0, 2}, {3, 2}}, 8);
    whole.output_memory = sharded({{0, 0}, {7, 0}}, 4);
    run_reduce_scatter_case(*device, whole);
    Case pieces;
    pieces.input = rows({1, 1, 8, 8 * 4096});
    pieces.ring_algorithm = algorithm;
    pieces.input_memory = sharded({{0, 2}, {3, 2}}, 2);
    pieces.output_memory = sharded({{0, 0}, {7, 0}}, 1);
    run_reduce_scatter_case(*device, pieces);
  }
}

// Legacy EDM mode: the T3K ring and 8-line, bf16 and fp32 (rows that fit an EDM buffer move
// whole), and the N300 with 128 KiB input rows whose 64 KiB output rows are wider than an EDM
// buffer (2 pieces of 32 KiB, each its own page of a message).
TEST(ReduceScatterRowMajorLegacy, T3kRingAndLineAndRowsWiderThanABuffer) {
  for (const CclTopology shape : {CclTopology::Ring, CclTopology::Line}) {
    for (const DataType dtype : {DataType::Bfloat16, DataType::Float32}) {
      SCOPED_TRACE(fmt::format("{} {}", shape == CclTopology::Ring ? "ring" : "line", static_cast<int>(dtype)));
      auto device = legacy_device(topo::build_t3k());
      LegacyCase c;
      c.input = rows({1, 2, 8, 2048}, dtype);
      c.topology = shape;
      run_legacy_reduce_scatter(*device, c);
    }
  }
  auto n300 = legacy_device(topo::build_n300());
  LegacyCase wide;
  wide.input = rows({1, 1, 2, 65536});
  wide.topology = CclTopology::Line;
  run_legacy_reduce_scatter(*n300, wide);
}

}  // namespace
}  // namespace cclmesh::ccltest
