// all_reduce through Auto's default path end to end, every chip's output compared bit for bit
// with all_reduce::reference_outputs: reduce_scatter + all_gather whose reduce_scatter half takes
// the reduce_scatter's own Auto (the one-shot ring up to 512 KiB, REFERENCE 7.5 / 7.6), and the
// one-shot for sizes whose pages do not divide by the chips (all_reduce.hpp, "Auto"). The
// one-shot ring sums in its own order (own slice first, then nearest first), not the chain's, so
// a device that ran the chain would not match the reference.
#include <gtest/gtest.h>

#include "runtime/ccl/all_reduce/all_reduce.hpp"
#include "tests/integration/ccl/ccl_runners.hpp"

namespace cclmesh::ccltest {
namespace {

namespace ar = runtime::ccl::all_reduce;
using runtime::BufferType;
using runtime::FabricMode;
using runtime::ccl::CclTopology;
using runtime::ccl::DataType;

// Runs `tensor` with every choice left to Auto and checks which algorithm that was.
void run_auto(sim::device::SimMeshDevice& device, const runtime::ccl::TensorSpec& tensor, CclTopology topology,
              ar::Algorithm expected, bool expect_rs_intermediate, std::uint32_t num_links = 1,
              std::optional<int> cluster_axis = std::nullopt) {
  ar::Params p;
  p.tensor = tensor;
  p.topology = topology;
  p.num_links = num_links;
  p.groups.cluster_axis = cluster_axis;
  p.fabric = device.options().fabric;
  ASSERT_EQ(ar::resolved_algorithm(p, device.topology()), expected) << ar::to_string(expected);
  // On a ring the one-shot reduce_scatter half needs the copies' buffer, the half-way half its
  // partials' (the chain, asked for, none).
  EXPECT_EQ(ar::needs_rs_intermediate(p, device.topology()), expect_rs_intermediate);
  const RunOutcome out = run_all_reduce(device, p, Memory{BufferType::Dram, std::nullopt});
  EXPECT_TRUE(out.verified);
}

// REFERENCE 8 #33's tensor (256 KiB) on the T3K 8-ring: rs-ag with the one-shot half.
TEST(AllReduceAutoE2e, T3kRingReduceScatterHalfIsTheOneShot) {
  auto device = make_device(topo::build_t3k(), FabricMode::Ring);
  run_auto(*device, tile({1, 1, 32, 4096}), CclTopology::Ring, ar::Algorithm::ReduceScatterAllGather, true);
  // fp32, 512 KiB per chip: still the one-shot half (at its limit).
  run_auto(*device, tile({1, 1, 32, 4096}, DataType::Float32), CclTopology::Ring,
           ar::Algorithm::ReduceScatterAllGather, true);
}

// Above 512 KiB the reduce_scatter half is the half-way ring (tt-metal's ring RS since 2026).
TEST(AllReduceAutoE2e, T3kRingAboveTheReduceScattersLimitRunsHalfWay) {
  auto device = make_device(topo::build_t3k(), FabricMode::Ring);
  run_auto(*device, tile({1, 1, 32, 32 * 264}), CclTopology::Ring, ar::Algorithm::ReduceScatterAllGather, true);
}

// 100 tiles do not divide by 8: the one-shot, not the composite.
TEST(AllReduceAutoE2e, T3kRingPagesNotDividingTakeTheOneShot) {
  auto device = make_device(topo::build_t3k(), FabricMode::Ring);
  run_auto(*device, tile({1, 1, 32, 32 * 100}), CclTopology::Ring, ar::Algorithm::OneShot, false);
}

// The 4-ring (T3K 0,1,3,2): 24 KiB is the one-shot, 32 KiB rs-ag with the one-shot half (the
// rings' 30 KiB limit, session 37).
TEST(AllReduceAutoE2e, FourRingAtAndAboveItsThreshold) {
  auto device = make_device(topo::build_t3k(), FabricMode::Ring, {0, 1, 3, 2});
  run_auto(*device, tile({1, 1, 32, 32 * 12}), CclTopology::Ring, ar::Algorithm::OneShot, false);
  run_auto(*device, tile({1, 1, 32, 32 * 16}), CclTopology::Ring, ar::Algorithm::ReduceScatterAllGather, true);
}

// The same 4 chips as a line keep the one-shot longer (the lines' 36 KiB limit): 32 KiB is the
// one-shot, 40 KiB rs-ag.
TEST(AllReduceAutoE2e, FourLineAtAndAboveItsThreshold) {
  auto device = make_device(topo::build_t3k(), FabricMode::Line, {0, 1, 3, 2});
  run_auto(*device, tile({1, 1, 32, 32 * 16}), CclTopology::Line, ar::Algorithm::OneShot, false);
  run_auto(*device, tile({1, 1, 32, 32 * 20}), CclTopology::Line, ar::Algorithm::ReduceScatterAllGather, true);
}

// ROW_MAJOR rows of 64 bf16 (128 B pages) on the 8-ring: 40 rows are the one-shot, 48 rows pass
// its 40-page cap and run rs-ag though they are only 6 KiB.
TEST(AllReduceAutoE2e, T3kRingSmallPagesCapTheOneShot) {
  auto device = make_device(topo::build_t3k(), FabricMode::Ring);
  using runtime::ccl::Layout;
  using runtime::ccl::TensorSpec;
  run_auto(*device, TensorSpec{{1, 1, 40, 64}, DataType::Bfloat16, Layout::RowMajor}, CclTopology::Ring,
           ar::Algorithm::OneShot, false);
  run_auto(*device, TensorSpec{{1, 1, 48, 64}, DataType::Bfloat16, Layout::RowMajor}, CclTopology::Ring,
           ar::Algorithm::ReduceScatterAllGather, true);
}

// Galaxy columns (4-chip lines) on the per-axis fabric with 2 routing planes: Auto's thresholds
// hold on several links, so 32 KiB is the one-shot (its multicast on plane 0), 48 KiB rs-ag on
// both planes, and 50 KiB (25 tiles, not dividing by 4) the one-shot again.
TEST(AllReduceAutoE2e, GalaxyColumnsOnTwoLinks) {
  auto device = make_device(topo::build_galaxy(),
                            fabric_of(FabricMode::Line, runtime::FabricScope::Axes, 2));
  run_auto(*device, tile({1, 1, 32, 32 * 16}), CclTopology::Line, ar::Algorithm::OneShot, false, 2, 0);
  run_auto(*device, tile({1, 1, 32, 32 * 24}), CclTopology::Line, ar::Algorithm::ReduceScatterAllGather, true, 2, 0);
  run_auto(*device, tile({1, 1, 32, 32 * 25}), CclTopology::Line, ar::Algorithm::OneShot, false, 2, 0);
}

}  // namespace
}  // namespace cclmesh::ccltest
