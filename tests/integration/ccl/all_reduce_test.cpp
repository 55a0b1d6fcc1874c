// all_reduce end to end on the simulated device with real data: reduce_scatter + all_gather on
// N300, T3K lines and the 8-chip ring, and the composite fallback (all_gather + local reduce)
// when the tiles do not divide by the chips (REFERENCE 8 #36: 3 tiles on 4 chips). Every chip's
// output is compared bit for bit with all_reduce::reference_outputs.
#include "runtime/ccl/all_reduce/all_reduce.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "tests/integration/ccl/ccl_runners.hpp"

namespace cclmesh::ccltest {
namespace {

namespace ar = runtime::ccl::all_reduce;
namespace rs = runtime::ccl::reduce_scatter;

struct Case {
  TensorSpec tensor;
  CclTopology topology = CclTopology::Ring;
  BufferType memory = BufferType::Dram;
  std::optional<int> cluster_axis;
  std::uint32_t num_links = 1;
  ar::Algorithm algorithm = ar::Algorithm::Auto;
  std::optional<std::uint64_t> one_shot_max_bytes;  // unset: the topology's default
  std::uint32_t repeats = 1;
  rs::RingAlgorithm rs_ring_algorithm = rs::RingAlgorithm::Chain;  // pinned (Auto's: all_reduce_auto_test.cpp)
};

struct Result {
  std::uint64_t kernel_ns = 0;
  std::uint64_t bytes = 0;
  std::uint32_t group_size = 0;
  ar::Algorithm algorithm = ar::Algorithm::Auto;
};

Result run_case(sim::device::SimMeshDevice& device, const Case& c) {
  ar::Params p;
  p.tensor = c.tensor;
  p.topology = c.topology;
  p.num_links = c.num_links;
  p.groups.cluster_axis = c.cluster_axis;
  p.fabric = device.options().fabric;
  p.algorithm = c.algorithm;
  p.one_shot_max_bytes = c.one_shot_max_bytes;
  p.rs_ring_algorithm = c.rs_ring_algorithm;
  const RunOutcome out = run_all_reduce(device, p, Memory{c.memory, std::nullopt}, RunOptions{c.repeats});
  EXPECT_TRUE(out.verified);
  return Result{out.kernel_ns, out.input_bytes, out.group_size, ar::resolved_algorithm(p, device.topology())};
}

// Galaxy columns on the per-axis fabric with 2 routing planes: reduce_scatter and all_gather both
// split their work across the planes.
TEST(AllReduceE2e, GalaxyColumnsOnTwoLinks) {
  runtime::FabricOptions fabric;
  fabric.mode = FabricMode::Line;
  fabric.scope = runtime::FabricScope::Axes;
  fabric.num_links = 2;
  auto device = make_device(topo::build_galaxy(), fabric);
  Case c;
  c.tensor = tile({1, 1, 64, 32 * 8});
  c.topology = CclTopology::Line;
  c.cluster_axis = 0;
  c.num_links = 2;
  c.one_shot_max_bytes = 0;  // 32 KiB on 4 chips would be Auto's one-shot
  const Result r = run_case(*device, c);
  EXPECT_EQ(r.group_size, 4u);
  EXPECT_EQ(r.algorithm, ar::Algorithm::ReduceScatterAllGather);
}

TEST(AllReduceE2e, N300Line) {
  auto device = make_device(topo::build_n300(), FabricMode::Line);
  Case c;
  c.tensor = tile({1, 1, 32, 4096});
  c.topology = CclTopology::Line;
  EXPECT_EQ(run_case(*device, c).algorithm, ar::Algorithm::ReduceScatterAllGather);
}

TEST(AllReduceE2e, T3kRingBf16AndFp32) {
  auto device = make_device(topo::build_t3k(), FabricMode::Ring);
  Case c;
  c.tensor = tile({1, 1, 32, 4096});  // REFERENCE 8 #33
  run_case(*device, c);
  Case fp32;
  fp32.tensor = tile({2, 4, 256, 32}, DataType::Float32);  // #35's shape, smaller
  run_case(*device, fp32);
}

// reduce_scatter + all_gather with the reduce_scatter's one-shot ring (not the default, which
// keeps the chain): its copies go to rs_intermediate_buffer, its 3 cores per link hold the
// barrier semaphore, and the result is bit for bit the one-shot's order.
TEST(AllReduceE2e, T3kRingReduceScatterOneShot) {
  auto device = make_device(topo::build_t3k(), FabricMode::Ring);
  Case c;
  c.tensor = tile({1, 1, 32, 4096});  // REFERENCE 8 #33
  c.algorithm = ar::Algorithm::ReduceScatterAllGather;
  c.rs_ring_algorithm = rs::RingAlgorithm::OneShot;
  run_case(*device, c);
}

// The same with the half-way ring (its partials in rs_intermediate_buffer, its two sets of
// workers on the 8-ring), bit for bit in the half-way order.
TEST(AllReduceE2e, T3kRingReduceScatterHalfWay) {
  auto device = make_device(topo::build_t3k(), FabricMode::Ring);
  Case c;
  c.tensor = tile({1, 1, 32, 4096});  // REFERENCE 8 #33
  c.algorithm = ar::Algorithm::ReduceScatterAllGather;
  c.rs_ring_algorithm = rs::RingAlgorithm::HalfWay;
  run_case(*device, c);
}

TEST(AllReduceE2e, T3kLineRowMajorIntoL1) {
  auto device = make_device(topo::build_t3k(), FabricMode::Line);
  Case c;
  c.tensor = TensorSpec{{1, 1, 64, 512}, DataType::Bfloat16, Layout::RowMajor};
  c.topology = CclTopology::Line;
  c.memory = BufferType::L1;
  run_case(*device, c);
}

// REFERENCE 8 #36: [96] on the 4-chip rows of the T3K (cluster_axis 1): 3 tiles on 4 chips
// fall back to the composite; [8,8,128,128] divides and runs reduce_scatter + all_gather.
TEST(AllReduceE2e, T3kRowsCompositeAndDivisible) {
  auto device = make_device(topo::build_t3k(), FabricMode::Ring);
  Case odd;
  odd.tensor = tile({1, 1, 1, 96});
  odd.topology = CclTopology::Line;
  odd.cluster_axis = 1;
  odd.one_shot_max_bytes = 0;  // above the one-shot threshold Auto falls back to the composite
  const Result r = run_case(*device, odd);
  EXPECT_EQ(r.algorithm, ar::Algorithm::Composite);
  EXPECT_EQ(r.group_size, 4u);
  Case even;
  even.tensor = tile({8, 8, 128, 128});
  even.topology = CclTopology::Line;
  even.cluster_axis = 1;
  EXPECT_EQ(run_case(*device, even).algorithm, ar::Algorithm::ReduceScatterAllGather);
}

TEST(AllReduceE2e, CompositeOnTheRingWithSeveralChunks) {
  auto device = make_device(topo::build_t3k(), FabricMode::Ring);
  Case c;
  c.tensor = tile({1, 1, 32, 32 * 45});  // 45 tiles on 8 chips
  c.one_shot_max_bytes = 0;  // else Auto takes the one-shot for pages that do not divide
  c.repeats = 2;
  EXPECT_EQ(run_case(*device, c).algorithm, ar::Algorithm::Composite);
}

// The local sum's two forms (local_sum.hpp): running sums in L1 (the one-shot always, the
// composite while its sums fit kMaxReducedCbBytes) from one page up, and the composite above the
// limit, one workload per pass chained through the output (257 tiles: 516 KiB of sums).
TEST(AllReduceE2e, LocalSumInL1AndChainedPasses) {
  auto device = make_device(topo::build_t3k(), FabricMode::Ring);
  for (const std::uint32_t tiles : {1u, 3u, 16u, 33u}) {
    for (const ar::Algorithm a : {ar::Algorithm::OneShot, ar::Algorithm::Composite}) {
      Case c;
      c.tensor = tile({1, 1, 32, 32 * tiles});
      c.algorithm = a;
      EXPECT_EQ(run_case(*device, c).algorithm, a) << tiles;
    }
  }
  Case fp32;
  fp32.tensor = tile({1, 1, 32, 32 * 5}, DataType::Float32);
  fp32.algorithm = ar::Algorithm::Composite;
  run_case(*device, fp32);
  Case above;
  above.tensor = tile({1, 1, 32, 32 * 257});
  EXPECT_EQ(run_case(*device, above).algorithm, ar::Algorithm::Composite);
}

// The one-shot (multicast + local reduce in one workload): Auto's pick for small tensors, on
// N300, the T3K ring and line, cluster_axis rows, bf16 and fp32, pages that do not divide by N,
// back to back.
TEST(AllReduceE2e, OneShotEverywhere) {
  {
    auto device = make_device(topo::build_n300(), FabricMode::Line);
    Case c;
    c.tensor = tile({1, 1, 32, 512});  // 32 KiB, under the 2-chip default
    c.topology = CclTopology::Line;
    EXPECT_EQ(run_case(*device, c).algorithm, ar::Algorithm::OneShot);
  }
  {
    auto device = make_device(topo::build_t3k(), FabricMode::Ring);
    Case c;
    c.tensor = tile({1, 1, 32, 32 * 5});  // 5 tiles on 8 chips
    c.repeats = 2;
    EXPECT_EQ(run_case(*device, c).algorithm, ar::Algorithm::OneShot);
    Case fp32;
    fp32.tensor = tile({1, 2, 64, 64}, DataType::Float32);
    run_case(*device, fp32);
    Case rows;
    rows.tensor = tile({1, 1, 1, 96});  // REFERENCE 8 #36's [96]
    rows.topology = CclTopology::Line;
    rows.cluster_axis = 1;
    EXPECT_EQ(run_case(*device, rows).algorithm, ar::Algorithm::OneShot);
    // Forced above the threshold, with several local-reduce chunks.
    Case big;
    big.tensor = tile({1, 1, 32, 32 * 64});
    big.algorithm = ar::Algorithm::OneShot;
    run_case(*device, big);
  }
  auto device = make_device(topo::build_t3k(), FabricMode::Line);
  Case line;
  line.tensor = tile({1, 1, 64, 128});  // 16 KiB, the 8-chip default
  line.topology = CclTopology::Line;
  EXPECT_EQ(run_case(*device, line).algorithm, ar::Algorithm::OneShot);
}

// Simulated time of both algorithms around the threshold (docs/collectives.md has the table).
TEST(AllReduceE2eFigures, OneShotAgainstReduceScatterAllGather) {
  for (const CclTopology t : {CclTopology::Ring, CclTopology::Line}) {
    for (const std::uint32_t tiles : {8u, 16u, 32u, 64u, 128u}) {
      for (const ar::Algorithm a : {ar::Algorithm::OneShot, ar::Algorithm::ReduceScatterAllGather}) {
        auto device = make_device(topo::build_t3k(), fabric_mode_for(t));
        Case c;
        c.tensor = tile({1, 1, 32, 32 * tiles});
        c.topology = t;
        c.algorithm = a;
        const Result r = run_case(*device, c);
        std::printf("T3K 8-%s all_reduce %-28s %7llu B: %8.2f us\n", shape_name(t),
                    ar::to_string(a).c_str(), static_cast<unsigned long long>(r.bytes),
                    static_cast<double>(r.kernel_ns) / 1e3);
      }
    }
  }
}

TEST(AllReduceE2eFigures, T3kRingEightMebibytes) {
  auto device = make_device(topo::build_t3k(), FabricMode::Ring);
  Case c;
  c.tensor = tile({1, 1, 1024, 4096});
  const Result r = run_case(*device, c);
  print_figures("T3K 8-ring all_reduce", "per chip", r.bytes, r.kernel_ns, 2 * exchange_bus_factor(r.group_size));
}

}  // namespace
}  // namespace cclmesh::ccltest
