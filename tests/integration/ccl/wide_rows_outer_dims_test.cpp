// all_gather, reduce_scatter and all_to_all of ROW_MAJOR tensors along dims 0-2 with rows wider
// than a fabric payload (the rows of wide_rows_case.hpp against the 4352 B default payload): the
// pages are whole rows sliced along an outer dim, so each row is
// addressed in q pieces and the op slices as before with q pages a row (row_pieces.hpp). N300 and
// T3K ring and line, bf16 and fp32, DRAM and L1, compared bit for bit with the host reference
// (reduce_scatter's sums in its own order, as its reference_outputs() reproduces). Also dims 0
// and 1, Galaxy columns on 2 links, and 8200 B rows (not a multiple of 32 B).
// Legacy EDM mode (session 40; refused before): rows wider than an EDM buffer (38080 B at the
// defaults) along dims 0-2 move in the fewest 32 B-aligned pieces that fit one (65536 B: 2 x
// 32768 B; 38112 B: 3 x 12704 B), and a row that is not a multiple of 32 B in pieces whose last
// is shorter (38114 B: 19072 + 19042 B; 38116 B: 19072 + 19044 B; session 40, refused before),
// all_gather and reduce_scatter, the same matrix of systems, dtypes and memories, dims 0 and 1,
// 2 links, height-sharded buffers.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "runtime/ccl/all_gather/all_gather.hpp"
#include "runtime/ccl/all_to_all/all_to_all.hpp"
#include "runtime/ccl/common/ccl_common.hpp"
#include "runtime/ccl/reduce_scatter/reduce_scatter.hpp"
#include "runtime/ccl/common/legacy_op.hpp"
#include "tests/integration/ccl/ccl_runners.hpp"
#include "tests/integration/ccl/legacy_runner.hpp"
#include "tests/integration/ccl/wide_rows_case.hpp"
#include "topologies/system_loader.hpp"

namespace cclmesh::ccltest {
namespace {

namespace ag = runtime::ccl::all_gather;
namespace rs = runtime::ccl::reduce_scatter;
namespace a2a = runtime::ccl::all_to_all;

class WideRowsOuterDims : public ::testing::TestWithParam<WideRowCase> {};

TEST_P(WideRowsOuterDims, AllGatherAlongDim2) {
  const WideRowCase& c = GetParam();
  auto device = make_device(system_of(c), fabric_mode_for(c.shape));
  ag::Params p;
  p.input = wide_rows(c.dtype, c.row_bytes, 3);
  ASSERT_GT(runtime::ccl::page_size_bytes(p.input), device->options().fabric.max_payload_bytes);
  p.dim = 2;
  p.topology = c.shape;
  const Memory memory{c.memory, std::nullopt};
  const RunOutcome out = run_all_gather(*device, p, memory, memory);
  EXPECT_TRUE(out.verified);
  EXPECT_GT(out.kernel_ns, 0u);
}

TEST_P(WideRowsOuterDims, ReduceScatterAlongDim2) {
  const WideRowCase& c = GetParam();
  auto device = make_device(system_of(c), fabric_mode_for(c.shape));
  rs::Params p;
  p.input = wide_rows(c.dtype, c.row_bytes, 16);
  p.dim = 2;
  p.topology = c.shape;
  const Memory memory{c.memory, std::nullopt};
  const RunOutcome out = run_reduce_scatter(*device, p, memory, memory);
  EXPECT_TRUE(out.verified);
  EXPECT_GT(out.kernel_ns, 0u);
}

TEST_P(WideRowsOuterDims, AllToAllAlongDim2) {
  const WideRowCase& c = GetParam();
  auto device = make_device(system_of(c), fabric_mode_for(c.shape));
  a2a::Params p;
  p.tensor = wide_rows(c.dtype, c.row_bytes, 16);
  p.dim = 2;
  p.topology = c.shape;
  const RunOutcome out = run_all_to_all(*device, p, Memory{c.memory, std::nullopt});
  EXPECT_TRUE(out.verified);
  EXPECT_GT(out.kernel_ns, 0u);
}

INSTANTIATE_TEST_SUITE_P(Ops, WideRowsOuterDims, ::testing::ValuesIn(wide_row_cases()),
                         wide_row_case_name<WideRowCase>);

// Dims 0 and 1 on the T3K ring, and the ring's reduce_scatter algorithms (one-shot, chain,
// half-way) and the line's wrap along dim 2: every one slices the pieces as pages.
TEST(WideRowsOuterDimsMore, Dims0And1AndEveryReduceScatterAlgorithm) {
  auto ring = make_device(topo::build_t3k(), FabricMode::Ring);
  for (const std::uint32_t dim : {0u, 1u}) {
    SCOPED_TRACE(dim);
    const TensorSpec per_chip = dim == 0 ? wide_rows(DataType::Bfloat16, 8192, 2, 1, 2)
                                         : wide_rows(DataType::Bfloat16, 8192, 2, 2, 1);
    const TensorSpec whole = dim == 0 ? wide_rows(DataType::Bfloat16, 8192, 2, 8, 2)
                                      : wide_rows(DataType::Bfloat16, 8192, 2, 2, 8);
    ag::Params g;
    g.input = per_chip;
    g.dim = dim;
    EXPECT_TRUE(run_all_gather(*ring, g, Memory{}, Memory{}).verified);
    rs::Params r;
    r.input = whole;
    r.dim = dim;
    EXPECT_TRUE(run_reduce_scatter(*ring, r, Memory{}, Memory{}).verified);
    a2a::Params a;
    a.tensor = whole;
    a.dim = dim;
    EXPECT_TRUE(run_all_to_all(*ring, a, Memory{}).verified);
  }
  for (const auto algorithm : {rs::RingAlgorithm::OneShot, rs::RingAlgorithm::Chain, rs::RingAlgorithm::HalfWay}) {
    SCOPED_TRACE(static_cast<int>(algorithm));
    rs::Params r;
    r.input = wide_rows(DataType::Float32, 4384, 16);
    r.dim = 2;
    r.ring_algorithm = algorithm;
    EXPECT_TRUE(run_reduce_scatter(*ring, r, Memory{}, Memory{}).verified);
  }
  auto line = make_device(topo::build_t3k(), FabricMode::Line);
  rs::Params r;
  r.input = wide_rows(DataType::Bfloat16, 8192, 16);
  r.dim = 2;
  r.topology = CclTopology::Line;
  r.line_algorithm = rs::LineAlgorithm::Wrap;
  EXPECT_TRUE(run_reduce_scatter(*line, r, Memory{}, Memory{}).verified);
}

// Every Galaxy column at once (cluster_axis 0, per-axis line fabric on 2 links).
TEST(WideRowsOuterDimsMore, GalaxyColumnsTwoLinks) {
  auto galaxy = make_device(topo::build_galaxy(), fabric_of(FabricMode::Line, runtime::FabricScope::Axes, 2));
  ag::Params g;
  g.input = wide_rows(DataType::Bfloat16, 8192, 2);
  g.dim = 2;
  g.topology = CclTopology::Line;
  g.num_links = 2;
  g.groups.cluster_axis = 0;
  EXPECT_TRUE(run_all_gather(*galaxy, g, Memory{}, Memory{}).verified);
  rs::Params r;
  r.input = wide_rows(DataType::Bfloat16, 4384, 16);
  r.dim = 2;
  r.topology = CclTopology::Line;
  r.num_links = 2;
  r.groups.cluster_axis = 0;
  EXPECT_TRUE(run_reduce_scatter(*galaxy, r, Memory{}, Memory{}).verified);
  a2a::Params a;
  a.tensor = wide_rows(DataType::Float32, 8192, 16);
  a.dim = 2;
  a.topology = CclTopology::Line;
  a.num_links = 2;
  a.groups.cluster_axis = 0;
  EXPECT_TRUE(run_all_to_all(*galaxy, a, Memory{}).verified);
}

// A wide row that is not a multiple of 32 B moves in 32 B-aligned pieces with a shorter last one
// (session 36; refused before): 8200 B rows as 4128 + 4072 B, along dim 2 through each op.
TEST(WideRowsOuterDimsMore, AWideRowNotAMultipleOf32BytesHasAShorterLastPiece) {
  auto device = make_device(topo::build_t3k(), FabricMode::Ring);
  const TensorSpec tensor{{1, 1, 16, 4100}, DataType::Bfloat16, Layout::RowMajor};  // 8200 B rows
  ag::Params g;
  g.input = TensorSpec{{1, 1, 2, 4100}, DataType::Bfloat16, Layout::RowMajor};
  g.dim = 2;
  EXPECT_TRUE(run_all_gather(*device, g, Memory{}, Memory{}).verified);
  rs::Params r;
  r.input = tensor;
  r.dim = 2;
  EXPECT_TRUE(run_reduce_scatter(*device, r, Memory{}, Memory{}).verified);
  a2a::Params a;
  a.tensor = tensor;
  a.dim = 2;
  EXPECT_TRUE(run_all_to_all(*device, a, Memory{}).verified);
}

// Legacy mode's rows wider than an EDM buffer: each chip's [1,1,rows,width] gathered, or
// scattered, along dim 2.
struct LegacyWideRowCase {
  const char* system = "n300";
  CclTopology shape = CclTopology::Line;
  DataType dtype = DataType::Bfloat16;
  std::uint32_t row_bytes = 65536;
  BufferType memory = BufferType::Dram;
};

void PrintTo(const LegacyWideRowCase& c, std::ostream* os) {
  PrintTo(WideRowCase{c.system, c.shape, c.dtype, c.row_bytes, c.memory}, os);
}

std::vector<LegacyWideRowCase> legacy_wide_row_cases() {
  std::vector<LegacyWideRowCase> all;
  const std::pair<const char*, CclTopology> systems[] = {
      {"n300", CclTopology::Line}, {"t3k", CclTopology::Line}, {"t3k", CclTopology::Ring}};
  for (const auto& [system, shape] : systems) {
    for (const DataType dtype : {DataType::Bfloat16, DataType::Float32}) {
      // The last: not a multiple of 32 B, a whole number of elements.
      for (const std::uint32_t row_bytes : {65536u, 38112u, dtype == DataType::Float32 ? 38116u : 38114u}) {
        for (const BufferType memory : {BufferType::Dram, BufferType::L1}) {
          all.push_back({system, shape, dtype, row_bytes, memory});
        }
      }
    }
  }
  return all;
}

class WideRowsOuterDimsLegacy : public ::testing::TestWithParam<LegacyWideRowCase> {};

TEST_P(WideRowsOuterDimsLegacy, AllGatherAlongDim2) {
  const LegacyWideRowCase& c = GetParam();
  auto device = legacy_device(std::string(c.system) == "t3k" ? topo::build_t3k() : topo::build_n300());
  LegacyCase g;
  g.input = wide_rows(c.dtype, c.row_bytes, 3);
  const runtime::ccl::LegacyRowCut cut =
      runtime::ccl::legacy_outer_dim_row_pieces(g.input, 2, {}, device->options().fabric, "all_gather");
  ASSERT_GT(cut.pieces, 1u);
  ASSERT_EQ(cut.last_piece_bytes != 0, c.row_bytes % 32 != 0);
  g.dim = 2;
  g.topology = c.shape;
  g.memory = c.memory;
  EXPECT_GT(run_legacy_all_gather(*device, g).kernel_ns, 0u);
}

TEST_P(WideRowsOuterDimsLegacy, ReduceScatterAlongDim2) {
  const LegacyWideRowCase& c = GetParam();
  const bool n300 = std::string(c.system) == "n300";
  auto device = legacy_device(n300 ? topo::build_n300() : topo::build_t3k());
  LegacyCase r;
  r.input = wide_rows(c.dtype, c.row_bytes, n300 ? 6 : 8);  // an odd number of rows a slice on N300
  r.dim = 2;
  r.topology = c.shape;
  r.memory = c.memory;
  EXPECT_GT(run_legacy_reduce_scatter(*device, r).kernel_ns, 0u);
}

INSTANTIATE_TEST_SUITE_P(Ops, WideRowsOuterDimsLegacy, ::testing::ValuesIn(legacy_wide_row_cases()),
                         wide_row_case_name<LegacyWideRowCase>);

// The data types each part of the legacy wide-row variants runs in.
struct LegacyVariantTypes {
  DataType dims_gather;
  DataType dims_scatter;
  DataType square_scatter;
};

// Legacy mode with rows of `row_bytes`: dims 0 and 1 on the T3K ring, 2 links on the T3K square as
// a ring (each link's run starts mid-row: 3 rows of 2 or more pieces), and height-sharded buffers
// on the N300 (an L1-sharded input into DRAM-sharded output rows, each shard whole rows; the
// gather's output and the scatter's input).
void run_legacy_wide_row_variants(std::uint32_t row_bytes, LegacyVariantTypes types) {
  auto ring = legacy_device(topo::build_t3k());
  for (const std::uint32_t dim : {0u, 1u}) {
    SCOPED_TRACE(dim);
    LegacyCase g;
    g.input = dim == 0 ? wide_rows(types.dims_gather, row_bytes, 2, 1, 2)
                       : wide_rows(types.dims_gather, row_bytes, 2, 2, 1);
    g.dim = dim;
    run_legacy_all_gather(*ring, g);
    LegacyCase r;
    r.input = dim == 0 ? wide_rows(types.dims_scatter, row_bytes, 1, 8, 2)
                       : wide_rows(types.dims_scatter, row_bytes, 1, 2, 8);
    r.dim = dim;
    run_legacy_reduce_scatter(*ring, r);
  }
  auto square = legacy_device(topo::build_t3k());
  LegacyCase g;
  g.input = wide_rows(DataType::Bfloat16, row_bytes, 3);
  g.dim = 2;
  g.groups = {{0, 1, 3, 2}};
  g.num_links = 2;
  run_legacy_all_gather(*square, g);
  LegacyCase r;
  r.input = wide_rows(types.square_scatter, row_bytes, 12);  // 3 rows a slice: its halves may end mid-row
  r.dim = 2;
  r.groups = {{0, 1, 3, 2}};
  r.num_links = 2;
  run_legacy_reduce_scatter(*square, r);

  const auto row_shards = [](const TensorSpec& t, BufferType type, runtime::CoreRange grid, std::uint32_t rows) {
    return runtime::BufferConfig{type, runtime::ccl::size_bytes(t), runtime::ccl::page_size_bytes(t),
                                 runtime::TensorMemoryLayout::HeightSharded,
                                 runtime::ShardSpec{{grid}, rows, 1, 1, runtime::ShardOrientation::RowMajor}};
  };
  auto n300 = legacy_device(topo::build_n300());
  LegacyCase sharded_gather;  // 4 rows a chip, 2 a core; 8 output rows, 2 a bank
  sharded_gather.input = wide_rows(DataType::Bfloat16, row_bytes, 4);
  sharded_gather.dim = 2;
  sharded_gather.topology = CclTopology::Line;
  sharded_gather.input_config = row_shards(sharded_gather.input, BufferType::L1, {{0, 2}, {1, 2}}, 2);
  sharded_gather.output_config =
      row_shards(wide_rows(DataType::Bfloat16, row_bytes, 8), BufferType::Dram, {{0, 0}, {3, 0}}, 2);
  run_legacy_all_gather(*n300, sharded_gather);
  LegacyCase sharded_scatter;  // 8 input rows, 2 a core; 4 output rows, 1 a bank
  sharded_scatter.input = wide_rows(DataType::Float32, row_bytes, 8);
  sharded_scatter.dim = 2;
  sharded_scatter.topology = CclTopology::Line;
  sharded_scatter.input_config = row_shards(sharded_scatter.input, BufferType::L1, {{0, 2}, {3, 2}}, 2);
  sharded_scatter.output_config =
      row_shards(wide_rows(DataType::Float32, row_bytes, 4), BufferType::Dram, {{0, 0}, {3, 0}}, 1);
  run_legacy_reduce_scatter(*n300, sharded_scatter);
}

TEST(WideRowsOuterDimsLegacyMore, Dims0And1TwoLinksAndShardedBuffers) {
  run_legacy_wide_row_variants(65536, {DataType::Bfloat16, DataType::Float32, DataType::Bfloat16});
}

// A row wider than an EDM buffer that is not a multiple of 32 B moves in legacy mode too (session
// 40; refused before), in 32 B-aligned pieces with a shorter last one (38116 B: 19072 + 19044 B),
// the ring's halves of a scattered slice ending mid-row on the square.
TEST(WideRowsOuterDimsLegacyMore, AWideRowNotAMultipleOf32BytesHasAShorterLastPiece) {
  run_legacy_wide_row_variants(38116, {DataType::Float32, DataType::Bfloat16, DataType::Float32});
}

}  // namespace
}  // namespace cclmesh::ccltest
