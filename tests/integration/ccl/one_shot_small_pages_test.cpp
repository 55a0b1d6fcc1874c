// The one-shot all_reduce with small ROW_MAJOR pages (rows of 64 and 128 B), end to end with real
// data: every chip's output bit for bit against all_reduce::reference_outputs, on the T3K 8-ring
// and N300, bf16 and fp32, row counts that do not divide by the chips or by a fabric packet's
// pages. And that its multicast goes out in whole scatter writes of 4 rows (one_shot.cpp,
// gather_packet; docs/collectives.md "Small pages: the mechanism").
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "runtime/ccl/all_reduce/all_reduce.hpp"
#include "tests/integration/ccl/ccl_runners.hpp"

namespace cclmesh::ccltest {
namespace {

namespace ar = runtime::ccl::all_reduce;

TensorSpec rows(std::uint32_t count, std::uint32_t width, DataType dtype = DataType::Bfloat16) {
  return TensorSpec{{1, 1, count, width}, dtype, Layout::RowMajor};
}

ar::Params one_shot(TensorSpec tensor, CclTopology shape) {
  ar::Params p;
  p.tensor = tensor;
  p.topology = shape;
  p.algorithm = ar::Algorithm::OneShot;
  return p;
}

struct SmallRows {
  const char* name;
  TensorSpec tensor;
};

// 128 B rows (bf16 x 64, fp32 x 32) and 64 B rows (bf16 x 32); 129, 37 and 45 rows divide neither
// by 8 nor by the 32 rows of a CB packet, 136 is 4 whole 34-row payloads.
const std::vector<SmallRows>& small_rows() {
  static const std::vector<SmallRows> cases = {
      {"bf16 129 rows of 128 B", rows(129, 64)},
      {"bf16 136 rows of 128 B", rows(136, 64)},
      {"bf16 45 rows of 64 B", rows(45, 32)},
      {"fp32 37 rows of 128 B", rows(37, 32, DataType::Float32)},
  };
  return cases;
}

TEST(OneShotSmallPagesE2e, T3kRingBitForBit) {
  auto device = make_device(topo::build_t3k(), FabricMode::Ring);
  for (const SmallRows& c : small_rows()) {
    SCOPED_TRACE(c.name);
    const RunOutcome out = run_all_reduce(*device, one_shot(c.tensor, CclTopology::Ring), Memory{});
    EXPECT_TRUE(out.verified);
    EXPECT_EQ(out.group_size, 8u);
  }
}

TEST(OneShotSmallPagesE2e, N300BitForBit) {
  auto device = make_device(topo::build_n300(), FabricMode::Line);
  for (const SmallRows& c : small_rows()) {
    SCOPED_TRACE(c.name);
    const RunOutcome out = run_all_reduce(*device, one_shot(c.tensor, CclTopology::Line), Memory{});
    EXPECT_TRUE(out.verified);
    EXPECT_EQ(out.group_size, 2u);
  }
  // In L1 too (interleaved over the worker cores' banks).
  const RunOutcome l1 =
      run_all_reduce(*device, one_shot(rows(129, 64), CclTopology::Line), Memory{runtime::BufferType::L1, {}});
  EXPECT_TRUE(l1.verified);
}

// The gather's default CB packet is whole scatter writes: 128 rows of 128 B leave each chip as 32
// fabric packets of 4 rows. With the payload's 34 rows per CB packet (the explicit
// packet_size_in_pages = 34, the builder's old default; the local sum's packet is 4 x 34 either
// way) the same rows took 34 packets (every CB packet ended in one of 2 rows): the same data
// bytes, 2 packets' headers and acknowledgements more per chip and direction.
TEST(OneShotSmallPagesE2e, WholeScatterWritesSendFewerPackets) {
  for (const bool ring : {true, false}) {
    SCOPED_TRACE(ring ? "t3k 8-ring" : "n300");
    const CclTopology shape = ring ? CclTopology::Ring : CclTopology::Line;
    // A fresh device per run: link statistics count from the device's start.
    const auto link_bytes = [&](std::uint32_t packet_size_in_pages) {
      auto device =
          ring ? make_device(topo::build_t3k(), FabricMode::Ring) : make_device(topo::build_n300(), FabricMode::Line);
      ar::Params p = one_shot(rows(128, 64), shape);
      p.packet_size_in_pages = packet_size_in_pages;
      const RunOutcome out = run_all_reduce(*device, p, Memory{});
      EXPECT_TRUE(out.verified);
      return out.total_link_payload_bytes();
    };
    EXPECT_LT(link_bytes(0), link_bytes(34));
    // 32 explicitly is the default.
    EXPECT_EQ(link_bytes(0), link_bytes(32));
  }
}

}  // namespace
}  // namespace cclmesh::ccltest
