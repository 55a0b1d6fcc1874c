// all_gather, reduce_scatter and all_to_all of ROW_MAJOR tensors along dims 0-2 with rows wider
// than a fabric payload (the rows of wide_rows_case.hpp against the 4352 B default payload): the
// pages are whole rows sliced along an outer dim, so each row is
// addressed in q pieces and the op slices as before with q pages a row (row_pieces.hpp). N300 and
// T3K ring and line, bf16 and fp32, DRAM and L1, compared bit for bit with the host reference
// (reduce_scatter's sums in its own order, as its reference_outputs() reproduces). Also dims 0
// and 1, Galaxy columns on 2 links, and 8200 B rows (not a multiple of 32 B).
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "runtime/ccl/all_gather/all_gather.hpp"
#include "runtime/ccl/all_to_all/all_to_all.hpp"
#include "runtime/ccl/common/ccl_common.hpp"
#include "runtime/ccl/reduce_scatter/reduce_scatter.hpp"
#include "tests/integration/ccl/ccl_runners.hpp"
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

}  // namespace
}  // namespace cclmesh::ccltest
