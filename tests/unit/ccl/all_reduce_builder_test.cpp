// all_reduce's builder: the algorithm choice (REFERENCE 7.6), the intermediate buffer it needs,
// the two workloads it returns, and what it rejects.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <set>

#include "kernels/kernel_args.hpp"
#include "runtime/ccl/all_reduce/all_reduce.hpp"
#include "tests/refusal.hpp"
#include "tests/unit/ccl/builder_test_util.hpp"
#include "topologies/builtin_systems.hpp"
#include "topologies/parametric.hpp"
#include "topologies/system_loader.hpp"

namespace cclmesh::runtime::ccl {
namespace {

namespace ar = all_reduce;
using test::dram_buffer;
using test::semaphore;

TensorSpec bf16(std::array<std::uint32_t, 4> shape) { return TensorSpec{shape, DataType::Bfloat16, Layout::Tile}; }

ar::Params params(const topo::Topology& topology, FabricMode fabric, CclTopology shape, TensorSpec tensor) {
  ar::Params p;
  p.tensor = tensor;
  p.topology = shape;
  // The one-worker-per-link structure these tests describe (several workers and their fabric
  // mux: ccl_reduce_scatter_workers_e2e_test).
  p.workers_per_link = 1;
  p.fabric.mode = fabric;
  p.input_buffer = dram_buffer(1, tensor);
  p.output_buffer = dram_buffer(2, tensor);
  p.intermediate_buffer = dram_buffer(3, ar::intermediate_spec(p, topology));
  if (ar::needs_rs_intermediate(p, topology)) p.rs_intermediate_buffer = dram_buffer(4, ar::rs_intermediate_spec(p, topology));
  // 3 cores: the reduce_scatter half's one-shot ring runs two senders and a reduce core per link.
  p.barrier_semaphore = semaphore(1, {{0, 0}, {2, 0}});
  p.done_semaphore = semaphore(2, {{0, 0}, {2, 0}});
  return p;
}

TEST(AllReduceBuilder, ReduceScatterThenAllGatherWhenTheTilesDivide) {
  const topo::Topology t3k = topo::build_t3k();
  const ar::Params p = params(t3k, FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 32, 4096}));
  EXPECT_EQ(ar::resolved_algorithm(p, t3k), ar::Algorithm::ReduceScatterAllGather);
  // 128 tiles as one row, 16 per chip.
  EXPECT_EQ(ar::intermediate_spec(p, t3k).shape, (std::array<std::uint32_t, 4>{1, 1, 32, 512}));
  const std::vector<MeshWorkload> w = ar::build(p, t3k);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0].name, "all_reduce:reduce_scatter");
  EXPECT_EQ(w[1].name, "all_reduce:all_gather");
  // The buffers the device holds until finish() (MeshWorkload::buffers).
  std::vector<BufferHandle> named{p.input_buffer, p.output_buffer, p.intermediate_buffer};
  if (p.rs_intermediate_buffer) named.push_back(*p.rs_intermediate_buffer);
  for (const MeshWorkload& each : w) EXPECT_EQ(each.buffers, named);
  // And all of its global semaphores, the reduce-scatter's barrier and the gather's done.
  for (const MeshWorkload& each : w) {
    EXPECT_EQ(each.global_semaphores, (std::vector<GlobalSemaphore>{*p.barrier_semaphore, *p.done_semaphore}));
  }
  EXPECT_EQ(w[0].programs.size(), 8u);
  EXPECT_EQ(w[1].programs.size(), 8u);
}

TEST(AllReduceBuilder, CompositeWhenTheyDoNot) {
  const topo::Topology t3k = topo::build_t3k();
  ar::Params p = params(t3k, FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 1, 96}));  // 3 tiles, 8 chips
  p.one_shot_max_bytes = 0;  // above the one-shot threshold, Auto falls back to the composite
  EXPECT_EQ(ar::resolved_algorithm(p, t3k), ar::Algorithm::Composite);
  EXPECT_EQ(ar::intermediate_spec(p, t3k).shape, (std::array<std::uint32_t, 4>{8, 1, 32, 96}));
  const std::vector<MeshWorkload> w = ar::build(p, t3k);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0].name, "all_reduce:all_gather");
  EXPECT_EQ(w[1].name, "all_reduce:all_reduce_local_reduce");
  for (const auto& [chip, program] : w[1].programs) {
    ASSERT_EQ(program.kernels.size(), 2u);
    EXPECT_EQ(program.kernels[0].kernel, kernels::kCclInterpreterKernelName);
    EXPECT_EQ(program.kernels[1].kernel, kernels::kReduceKernelName);
  }
  // Forcing the reduce_scatter path on 3 tiles is the reduce_scatter's shape error.
  p.algorithm = ar::Algorithm::ReduceScatterAllGather;
  EXPECT_THROW(ar::intermediate_spec(p, t3k), CclParamsError);
}

// The choice and its reason, as the CLI prints them: the composite is a fallback (rs-ag cannot
// run: the pages do not divide), a size threshold or an explicit algorithm is not.
TEST(AllReduceBuilder, AlgorithmChoiceSaysWhy) {
  const topo::Topology t3k = topo::build_t3k();
  ar::Params p = params(t3k, FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 32, 4096}));  // 128 tiles
  ar::AlgorithmChoice choice = ar::algorithm_choice(p, t3k);
  EXPECT_EQ(choice.algorithm, ar::Algorithm::ReduceScatterAllGather);
  EXPECT_FALSE(choice.fallback);
  EXPECT_EQ(choice.reason, "262144 B in 128 pages are past the one-shot's 20480 B or 40 pages for a ring of 8 chips");
  p.tensor = bf16({1, 1, 1, 96});  // 3 tiles, 8 chips
  p.one_shot_max_bytes = 0;
  choice = ar::algorithm_choice(p, t3k);
  EXPECT_EQ(choice.algorithm, ar::Algorithm::Composite);
  EXPECT_TRUE(choice.fallback);
  EXPECT_EQ(choice.reason, "the 3 pages do not divide by the 8 chips, which reduce_scatter + all_gather needs");
  p.algorithm = ar::Algorithm::Composite;
  choice = ar::algorithm_choice(p, t3k);
  EXPECT_FALSE(choice.fallback);
  EXPECT_EQ(choice.reason, "asked for");
  // resolved_algorithm is the choice's algorithm, whatever the path.
  EXPECT_EQ(ar::resolved_algorithm(p, t3k), choice.algorithm);
}

// Up to one_shot_max_bytes Auto runs the one-shot: one workload, on every chip a gather core
// (reader + writer) and a reduce core (interpreter + reduce kernel) that waits for N copies.
TEST(AllReduceBuilder, OneShotForSmallTensors) {
  const topo::Topology t3k = topo::build_t3k();
  ar::Params p = params(t3k, FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 32, 32 * 8}));  // 16 KiB
  EXPECT_EQ(ar::resolved_algorithm(p, t3k), ar::Algorithm::OneShot);
  EXPECT_EQ(ar::intermediate_spec(p, t3k).shape, (std::array<std::uint32_t, 4>{8, 1, 32, 256}));
  p.intermediate_buffer = dram_buffer(3, ar::intermediate_spec(p, t3k));
  const std::vector<MeshWorkload> w = ar::build(p, t3k);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].name, "all_reduce:one_shot");
  ASSERT_EQ(w[0].programs.size(), 8u);
  for (const auto& [chip, program] : w[0].programs) {
    ASSERT_EQ(program.kernels.size(), 4u);
    EXPECT_EQ(program.kernels[2].kernel, kernels::kCclInterpreterKernelName);
    EXPECT_EQ(program.kernels[3].kernel, kernels::kReduceKernelName);
    const CoreCoord reduce_core = program.kernels[3].cores.front().start;
    EXPECT_EQ(reduce_core, (CoreCoord{1, 0}));
    const std::string s0 = test::stream_text(program.kernels[2].runtime_args.at(reduce_core), 0);
    EXPECT_EQ(s0.rfind("#0 WAIT_VALUE dest=LOCAL src=ABS(0x100040) core=LOCAL value=8\n", 0), 0u) << s0;
  }
  // Just above the threshold, Auto takes reduce_scatter + all_gather (the pages divide).
  p.one_shot_max_bytes = 16 * 1024 - 1;
  EXPECT_EQ(ar::resolved_algorithm(p, t3k), ar::Algorithm::ReduceScatterAllGather);
  // An explicit threshold holds for pages that do not divide too: 9 tiles on 8 chips, 18 KiB.
  p.tensor = bf16({1, 1, 32, 32 * 9});
  EXPECT_EQ(ar::resolved_algorithm(p, t3k), ar::Algorithm::Composite);
  // The defaults (8 chips: 16 KiB, ring and line alike; AutoThresholdsByChipCount has the rest).
  p.one_shot_max_bytes.reset();
  EXPECT_EQ(ar::resolved_algorithm(p, t3k), ar::Algorithm::OneShot);  // 9 tiles do not divide by 8
  p.tensor = bf16({1, 1, 32, 32 * 8});
  EXPECT_EQ(ar::resolved_algorithm(p, t3k), ar::Algorithm::OneShot);
  p.tensor = bf16({1, 1, 32, 32 * 16});
  EXPECT_EQ(ar::resolved_algorithm(p, t3k), ar::Algorithm::ReduceScatterAllGather);
  p.topology = CclTopology::Line;
  p.tensor = bf16({1, 1, 32, 32 * 8});
  EXPECT_EQ(ar::resolved_algorithm(p, t3k), ar::Algorithm::OneShot);
  p.tensor = bf16({1, 1, 32, 32 * 17});
  EXPECT_EQ(ar::resolved_algorithm(p, t3k), ar::Algorithm::OneShot);  // 17 tiles do not divide by 8
  p.tensor = bf16({1, 1, 32, 32 * 16});
  EXPECT_EQ(ar::resolved_algorithm(p, t3k), ar::Algorithm::ReduceScatterAllGather);
  // Forced, the one-shot runs whatever the size and divisibility.
  ar::Params odd = params(t3k, FabricMode::Line, CclTopology::Line, bf16({1, 1, 1, 96}));
  odd.algorithm = ar::Algorithm::OneShot;
  odd.one_shot_max_bytes = 0;
  EXPECT_EQ(ar::build(odd, t3k).size(), 1u);
  // The reduce core needs the done semaphore too.
  odd.done_semaphore = test::semaphore(2, {{0, 0}, {0, 0}});
  EXPECT_THROW(ar::build(odd, t3k), CclParamsError);
}

// Auto's one-shot limits by chip count and topology (all_reduce.hpp's measured tables): for sizes
// whose pages divide by N, the one-shot exactly at the limit and rs-ag at the next size that
// divides; one page above the limit the pages do not divide, and that is the one-shot.
TEST(AllReduceBuilder, AutoThresholdsByChipCountAndTopology) {
  EXPECT_EQ(ar::default_one_shot_limits(CclTopology::Line, 2).max_bytes, 48u * 1024);
  EXPECT_EQ(ar::default_one_shot_limits(CclTopology::Ring, 2).max_bytes, 48u * 1024);  // a 2-chip ring is a line
  EXPECT_EQ(ar::default_one_shot_limits(CclTopology::Ring, 3).max_bytes, 30u * 1024);
  EXPECT_EQ(ar::default_one_shot_limits(CclTopology::Ring, 4).max_bytes, 30u * 1024);
  EXPECT_EQ(ar::default_one_shot_limits(CclTopology::Ring, 5).max_bytes, 20u * 1024);
  EXPECT_EQ(ar::default_one_shot_limits(CclTopology::Ring, 8).max_bytes, 20u * 1024);
  EXPECT_EQ(ar::default_one_shot_limits(CclTopology::Line, 3).max_bytes, 36u * 1024);
  EXPECT_EQ(ar::default_one_shot_limits(CclTopology::Line, 4).max_bytes, 36u * 1024);
  EXPECT_EQ(ar::default_one_shot_limits(CclTopology::Line, 5).max_bytes, 30u * 1024);
  EXPECT_EQ(ar::default_one_shot_limits(CclTopology::Line, 8).max_bytes, 30u * 1024);
  const auto parametric = [](const char* spec) { return topo::build_parametric(topo::parse_parametric_spec(spec)); };
  struct Group {
    const char* name;
    topo::Topology topology;
    FabricMode fabric;
    CclTopology shape;
    std::vector<ChipId> chips;  // empty: the whole system
    std::uint32_t at_tiles;     // the last size at or below the limit whose tiles (2 KiB) divide by N
    std::uint32_t next_tiles;   // the next tile count that divides by N
  };
  const std::vector<Group> groups = {
      {"t3k 8-ring", topo::build_t3k(), FabricMode::Ring, CclTopology::Ring, {}, 8, 16},
      {"t3k 8-line", topo::build_t3k(), FabricMode::Line, CclTopology::Line, {}, 8, 16},
      {"ring:5", parametric("ring:5/2"), FabricMode::Ring, CclTopology::Ring, {}, 10, 15},    // 20 KiB
      {"ring:5 line", parametric("ring:5/2"), FabricMode::Line, CclTopology::Line, {}, 15, 20},  // 30 KiB
      {"t3k 4-ring", topo::build_t3k(), FabricMode::Ring, CclTopology::Ring, {0, 1, 3, 2}, 12, 16},  // 24 KiB
      {"ring:3", parametric("ring:3/2"), FabricMode::Ring, CclTopology::Ring, {}, 15, 18},    // 30 KiB
      {"t3k 4-line", topo::build_t3k(), FabricMode::Line, CclTopology::Line, {0, 1, 3, 2}, 16, 20},  // 32 KiB
      {"ring:3 line", parametric("ring:3/2"), FabricMode::Line, CclTopology::Line, {}, 18, 21},  // 36 KiB
      {"n300", topo::build_n300(), FabricMode::Line, CclTopology::Line, {}, 24, 26},
  };
  for (const Group& g : groups) {
    ar::Params p = params(g.topology, g.fabric, g.shape, bf16({1, 1, 32, 32 * g.at_tiles}));
    p.fabric.chip_order = g.chips;
    EXPECT_EQ(ar::resolved_algorithm(p, g.topology), ar::Algorithm::OneShot) << g.name;
    p.tensor = bf16({1, 1, 32, 32 * (g.at_tiles + 1)});
    EXPECT_EQ(ar::resolved_algorithm(p, g.topology), ar::Algorithm::OneShot) << g.name << ": one page above";
    p.tensor = bf16({1, 1, 32, 32 * g.next_tiles});
    EXPECT_EQ(ar::resolved_algorithm(p, g.topology), ar::Algorithm::ReduceScatterAllGather) << g.name;
    // The same on 2 links.
    p.num_links = 2;
    p.tensor = bf16({1, 1, 32, 32 * g.at_tiles});
    EXPECT_EQ(ar::resolved_algorithm(p, g.topology), ar::Algorithm::OneShot) << g.name;
    p.tensor = bf16({1, 1, 32, 32 * (g.at_tiles + 1)});
    EXPECT_EQ(ar::resolved_algorithm(p, g.topology), ar::Algorithm::OneShot) << g.name;
    p.tensor = bf16({1, 1, 32, 32 * g.next_tiles});
    EXPECT_EQ(ar::resolved_algorithm(p, g.topology), ar::Algorithm::ReduceScatterAllGather) << g.name;
  }
}

// Small pages: Auto also caps the one-shot's pages (142 on 2 chips; rings 48 on 3-4 chips, 40 on
// more; lines 80 on 3-4, 56 on more), here ROW_MAJOR bf16 rows of 64 (128 B pages): exactly at
// the cap the one-shot, at the next row count that divides rs-ag, one row above the cap (not
// dividing) the one-shot.
TEST(AllReduceBuilder, AutoCapsTheOneShotsPages) {
  EXPECT_EQ(ar::default_one_shot_limits(CclTopology::Line, 2).max_pages, 142u);
  EXPECT_EQ(ar::default_one_shot_limits(CclTopology::Ring, 4).max_pages, 48u);
  EXPECT_EQ(ar::default_one_shot_limits(CclTopology::Ring, 8).max_pages, 40u);
  EXPECT_EQ(ar::default_one_shot_limits(CclTopology::Line, 4).max_pages, 80u);
  EXPECT_EQ(ar::default_one_shot_limits(CclTopology::Line, 8).max_pages, 56u);
  const auto rows = [](std::uint32_t n) { return TensorSpec{{1, 1, n, 64}, DataType::Bfloat16, Layout::RowMajor}; };
  struct Group {
    const char* name;
    topo::Topology topology;
    FabricMode fabric;
    CclTopology shape;
    std::vector<ChipId> chips;
    std::uint32_t n;
    std::uint32_t cap;
    std::uint32_t next;  // the next row count that divides by N
  };
  const std::vector<Group> groups = {
      {"t3k 8-ring", topo::build_t3k(), FabricMode::Ring, CclTopology::Ring, {}, 8, 40, 48},
      {"t3k 8-line", topo::build_t3k(), FabricMode::Line, CclTopology::Line, {}, 8, 56, 64},
      {"t3k 4-ring", topo::build_t3k(), FabricMode::Ring, CclTopology::Ring, {0, 1, 3, 2}, 4, 48, 52},
      {"t3k 4-line", topo::build_t3k(), FabricMode::Line, CclTopology::Line, {0, 1, 3, 2}, 4, 80, 84},
      {"n300", topo::build_n300(), FabricMode::Line, CclTopology::Line, {}, 2, 142, 144},
  };
  for (const Group& g : groups) {
    ar::Params p = params(g.topology, g.fabric, g.shape, rows(g.cap));
    p.fabric.chip_order = g.chips;
    EXPECT_EQ(ar::resolved_algorithm(p, g.topology), ar::Algorithm::OneShot) << g.name;
    p.tensor = rows(g.next);
    EXPECT_LT(size_bytes(p.tensor), ar::default_one_shot_limits(g.shape, g.n).max_bytes)
        << g.name << ": the pages decide";
    EXPECT_EQ(ar::resolved_algorithm(p, g.topology), ar::Algorithm::ReduceScatterAllGather) << g.name;
    p.tensor = rows(g.cap + 1);
    EXPECT_EQ(ar::resolved_algorithm(p, g.topology), ar::Algorithm::OneShot) << g.name << ": not dividing";
  }
}

// Legacy mode's Auto: the composite while pages x (page size + 256 B) is at most 30 KiB on a ring,
// 12 KiB per chip up to 80 KiB on a line on 1 link, on more links each / (1 - s + s / links) with
// s = 0.33 on a ring, 0.38 on a line of up to 4 chips, 0.22 on longer lines (session 12's re-fit
// after the NoC gaps), in whole KiB (all_reduce.hpp has the measurements),
// else rs-ag where the legacy reduce_scatter takes the slices. ROW_MAJOR bf16 rows sized so that the threshold's
// row count divides by N: exactly at it the composite; the same rows 16 elements wider (32 B a
// page above) and the next dividing row count rs-ag; one row above (not dividing) the composite.
TEST(AllReduceBuilder, LegacyAutoCompositeThresholds) {
  EXPECT_EQ(ar::legacy_composite_weighted_bytes(bf16({1, 1, 32, 32 * 10})), 10u * (2048 + 256));
  EXPECT_EQ(ar::legacy_composite_weighted_bytes(TensorSpec{{1, 1, 32, 32}, DataType::Bfloat8B, Layout::Tile}),
            1088u + 256);
  EXPECT_EQ(ar::default_legacy_composite_max_weighted_bytes(CclTopology::Ring, 3, 1), 30u * 1024);
  EXPECT_EQ(ar::default_legacy_composite_max_weighted_bytes(CclTopology::Ring, 8, 1), 30u * 1024);
  EXPECT_EQ(ar::default_legacy_composite_max_weighted_bytes(CclTopology::Line, 2, 1), 24u * 1024);
  EXPECT_EQ(ar::default_legacy_composite_max_weighted_bytes(CclTopology::Line, 4, 1), 48u * 1024);
  EXPECT_EQ(ar::default_legacy_composite_max_weighted_bytes(CclTopology::Line, 6, 1), 72u * 1024);
  EXPECT_EQ(ar::default_legacy_composite_max_weighted_bytes(CclTopology::Line, 7, 1), 80u * 1024);
  EXPECT_EQ(ar::default_legacy_composite_max_weighted_bytes(CclTopology::Line, 8, 1), 80u * 1024);
  // On more links (session 12): 30 KiB x 1.20 / 1.28 / 1.33 on a ring; lines of up to 4 chips
  // x 1.23 / 1.34 / 1.40 (N300's 24 KiB, the 3-line's 36, the 4-line's 48); longer lines x 1.12 /
  // 1.17 / 1.20 (the 8-line's 80 KiB, the 6-line's 72, the 5-line's 60); 0 links read as 1.
  EXPECT_EQ(ar::default_legacy_composite_max_weighted_bytes(CclTopology::Ring, 4, 2), 35u * 1024);
  EXPECT_EQ(ar::default_legacy_composite_max_weighted_bytes(CclTopology::Ring, 4, 3), 38u * 1024);
  EXPECT_EQ(ar::default_legacy_composite_max_weighted_bytes(CclTopology::Ring, 8, 4), 39u * 1024);
  EXPECT_EQ(ar::default_legacy_composite_max_weighted_bytes(CclTopology::Line, 4, 2), 59u * 1024);
  EXPECT_EQ(ar::default_legacy_composite_max_weighted_bytes(CclTopology::Line, 4, 3), 64u * 1024);
  EXPECT_EQ(ar::default_legacy_composite_max_weighted_bytes(CclTopology::Line, 4, 4), 67u * 1024);
  EXPECT_EQ(ar::default_legacy_composite_max_weighted_bytes(CclTopology::Line, 8, 2), 89u * 1024);
  EXPECT_EQ(ar::default_legacy_composite_max_weighted_bytes(CclTopology::Line, 8, 3), 93u * 1024);
  EXPECT_EQ(ar::default_legacy_composite_max_weighted_bytes(CclTopology::Line, 8, 4), 95u * 1024);
  EXPECT_EQ(ar::default_legacy_composite_max_weighted_bytes(CclTopology::Line, 6, 2), 80u * 1024);
  EXPECT_EQ(ar::default_legacy_composite_max_weighted_bytes(CclTopology::Line, 6, 3), 84u * 1024);
  EXPECT_EQ(ar::default_legacy_composite_max_weighted_bytes(CclTopology::Line, 6, 4), 86u * 1024);
  EXPECT_EQ(ar::default_legacy_composite_max_weighted_bytes(CclTopology::Line, 5, 2), 67u * 1024);
  EXPECT_EQ(ar::default_legacy_composite_max_weighted_bytes(CclTopology::Line, 3, 2), 44u * 1024);
  EXPECT_EQ(ar::default_legacy_composite_max_weighted_bytes(CclTopology::Line, 2, 2), 29u * 1024);
  EXPECT_EQ(ar::default_legacy_composite_max_weighted_bytes(CclTopology::Line, 4, 0), 48u * 1024);
  const auto rows = [](std::uint32_t n, std::uint32_t width) {
    return TensorSpec{{1, 1, n, width}, DataType::Bfloat16, Layout::RowMajor};
  };
  struct Group {
    const char* name;
    topo::Topology topology;
    CclTopology shape;
    std::vector<ChipId> chips;  // empty: the whole system, or its axis-0 groups (Galaxy)
    std::uint32_t n;
    std::uint32_t links;
    std::uint32_t rows;   // at the threshold: rows x (2 x width + 256) == it
    std::uint32_t width;
    std::uint32_t next;   // the next row count that divides by N
    int cluster_axis = 0;  // a Galaxy's groups: its columns (0) or rows (1)
  };
  const std::vector<Group> groups = {
      {"t3k 8-ring", topo::build_t3k(), CclTopology::Ring, {}, 8, 1, 16, 832, 24},        // 30 KiB
      {"t3k 4-ring", topo::build_t3k(), CclTopology::Ring, {0, 1, 3, 2}, 4, 1, 16, 832, 20},
      {"t3k 4-ring, 2 links", topo::build_t3k(), CclTopology::Ring, {0, 1, 3, 2}, 4, 2, 16, 992, 20},  // 35 KiB
      // 39 KiB in 48 rows: a ring's legacy reduce_scatter needs 2 x 4 runs of a page per slice.
      {"ring:6, 4 links", topo::build_parametric(topo::parse_parametric_spec("ring:6")), CclTopology::Ring, {}, 6, 4,
       48, 288, 54},
      {"n300", topo::build_n300(), CclTopology::Line, {}, 2, 1, 16, 640, 18},             // 24 KiB
      {"t3k 3-line", topo::build_t3k(), CclTopology::Line, {0, 1, 3}, 3, 1, 24, 640, 27},  // 36 KiB
      {"t3k 4-line", topo::build_t3k(), CclTopology::Line, {0, 1, 3, 2}, 4, 1, 32, 640, 36},  // 48 KiB
      {"t3k 4-line, 2 links", topo::build_t3k(), CclTopology::Line, {0, 1, 3, 2}, 4, 2, 32, 816, 36},  // 59 KiB
      {"galaxy columns, 4 links", topo::build_galaxy(), CclTopology::Line, {}, 4, 4, 32, 944, 36},  // 67 KiB
      {"galaxy rows, 4 links", topo::build_galaxy(), CclTopology::Line, {}, 8, 4, 64, 632, 72, 1},  // 95 KiB
      // 80 KiB, not 8 x 12: 72 rows (90 KiB weighted) are rs-ag.
      {"t3k 8-line", topo::build_t3k(), CclTopology::Line, {}, 8, 1, 64, 512, 72},
  };
  for (const Group& g : groups) {
    SCOPED_TRACE(g.name);
    ar::Params p;  // resolved_algorithm() needs no buffers
    p.tensor = rows(g.rows, g.width);
    p.topology = g.shape;
    p.mode = CclMode::Legacy;
    p.num_links = g.links;
    if (!g.chips.empty()) p.groups.chips = {g.chips};
    if (g.topology.chip_count() > 8) p.groups.cluster_axis = g.cluster_axis;
    ASSERT_EQ(ar::legacy_composite_weighted_bytes(p.tensor),
              ar::default_legacy_composite_max_weighted_bytes(g.shape, g.n, g.links));
    EXPECT_EQ(ar::resolved_algorithm(p, g.topology), ar::Algorithm::Composite) << "at the threshold";
    p.tensor = rows(g.rows, g.width + 16);
    EXPECT_EQ(ar::resolved_algorithm(p, g.topology), ar::Algorithm::ReduceScatterAllGather) << "32 B a page above";
    p.tensor = rows(g.next, g.width);
    EXPECT_EQ(ar::resolved_algorithm(p, g.topology), ar::Algorithm::ReduceScatterAllGather) << "the next dividing";
    p.tensor = rows(g.rows + 1, g.width);
    EXPECT_EQ(ar::resolved_algorithm(p, g.topology), ar::Algorithm::Composite) << "one row above, not dividing";
    // An explicit threshold replaces the default: 0 leaves the composite to what rs-ag cannot run.
    p.tensor = rows(g.rows, g.width);
    p.legacy_composite_max_weighted_bytes = 0;
    EXPECT_EQ(ar::resolved_algorithm(p, g.topology), ar::Algorithm::ReduceScatterAllGather) << "threshold 0";
    p.legacy_composite_max_weighted_bytes = 1024 * 1024;
    p.tensor = rows(g.next, g.width);
    EXPECT_EQ(ar::resolved_algorithm(p, g.topology), ar::Algorithm::Composite) << "threshold 1 MiB";
  }
}

// The one-shot's gather sends its CB packets as scatter writes of at most 4 interleaved pages, so
// its default CB packet is whole scatter writes: the payload's pages rounded down to a multiple of
// 4 (128 B rows: 34 -> 32, 8 packets of 4 rows; 256 B: 17 -> 16), left as they are when already
// a multiple (64 B rows: 68) or when fewer than 4 fit (bf16 tiles: 2); an explicit
// packet_size_in_pages is kept. The local sum's packet stays 4 payloads (4 x 34 rows of 128 B).
TEST(AllReduceBuilder, OneShotGatherPacketIsWholeScatterWrites) {
  namespace ia = kernels::interpreter;
  const topo::Topology t3k = topo::build_t3k();
  const auto rows = [](std::uint32_t n, std::uint32_t width) {
    return TensorSpec{{1, 1, n, width}, DataType::Bfloat16, Layout::RowMajor};
  };
  struct Case {
    TensorSpec tensor;
    std::uint32_t requested;
    std::uint32_t gather;
    std::uint32_t local;
  };
  const std::vector<Case> cases = {
      {rows(129, 64), 0, 32, 136}, {rows(40, 128), 0, 16, 68}, {rows(45, 32), 0, 68, 272},
      {bf16({1, 1, 32, 32 * 8}), 0, 2, 8}, {rows(129, 64), 34, 34, 136}, {rows(129, 64), 3, 3, 12},
  };
  for (const Case& c : cases) {
    ar::Params p = params(t3k, FabricMode::Ring, CclTopology::Ring, c.tensor);
    p.algorithm = ar::Algorithm::OneShot;
    p.packet_size_in_pages = c.requested;
    // validate() checks the composite's all_gather too, whose ring relay takes 2 workers per
    // direction for these page counts.
    p.done_semaphore = semaphore(2, {{0, 0}, {3, 0}});
    const std::vector<MeshWorkload> w = ar::build(p, t3k);
    ASSERT_EQ(w.size(), 1u);
    for (const auto& [chip, program] : w[0].programs) {
      ASSERT_EQ(program.kernels.size(), 4u);
      for (std::size_t k = 0; k < 2; ++k) {
        const auto& gather = program.kernels[k];
        EXPECT_EQ(gather.runtime_args.at(gather.cores.front().start).at(ia::kRtPacketSizeInPages), c.gather)
            << "chip " << chip << " kernel " << k << " requested " << c.requested;
      }
      const auto& local = program.kernels[2];
      EXPECT_EQ(local.runtime_args.at(local.cores.front().start).at(ia::kRtPacketSizeInPages), c.local)
          << "chip " << chip << " requested " << c.requested;
    }
  }
}

// Pages that do not divide by N: the one-shot while its running sums fit L1 (whole CB packets of
// 4 payloads, 8 bf16 tiles, at most 512 KiB), above it the composite.
TEST(AllReduceBuilder, PagesNotDividingTakeTheOneShotUpToItsL1Limit) {
  const topo::Topology t3k = topo::build_t3k();
  ar::Params p = params(t3k, FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 32, 32 * 255}));
  // validate() checks the composite's all_gather too, which at this size runs more workers.
  p.barrier_semaphore = semaphore(1, {{0, 0}, {7, 0}});
  p.done_semaphore = semaphore(2, {{0, 0}, {7, 0}});
  // 255 tiles: 32 packets of 8 = 512 KiB of sums, exactly the limit.
  EXPECT_EQ(ar::resolved_algorithm(p, t3k), ar::Algorithm::OneShot);
  // 257 tiles: 33 packets, 528 KiB.
  p.tensor = bf16({1, 1, 32, 32 * 257});
  EXPECT_EQ(ar::resolved_algorithm(p, t3k), ar::Algorithm::Composite);
  // The same on 2 links; an explicit one_shot_max_bytes replaces the L1 rule.
  p.num_links = 2;
  EXPECT_EQ(ar::resolved_algorithm(p, t3k), ar::Algorithm::Composite);
  p.tensor = bf16({1, 1, 32, 32 * 255});
  EXPECT_EQ(ar::resolved_algorithm(p, t3k), ar::Algorithm::OneShot);
  p.one_shot_max_bytes = 255 * 2048 - 1;
  EXPECT_EQ(ar::resolved_algorithm(p, t3k), ar::Algorithm::Composite);
  p.one_shot_max_bytes.reset();
  p.num_links = 1;
  // fp32 (4 KiB pages, 4 per packet): 127 pages fit (508 KiB), 129 do not (516 KiB of sums).
  p.tensor = TensorSpec{{1, 1, 32, 32 * 127}, DataType::Float32, Layout::Tile};
  EXPECT_EQ(ar::resolved_algorithm(p, t3k), ar::Algorithm::OneShot);
  p.tensor = TensorSpec{{1, 1, 32, 32 * 129}, DataType::Float32, Layout::Tile};
  EXPECT_EQ(ar::resolved_algorithm(p, t3k), ar::Algorithm::Composite);
  // Auto's choice builds: 255 tiles as one one-shot workload.
  p.tensor = bf16({1, 1, 32, 32 * 255});
  p.intermediate_buffer = dram_buffer(3, ar::intermediate_spec(p, t3k));
  const std::vector<MeshWorkload> w = ar::build(p, t3k);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].name, "all_reduce:one_shot");
}

// rs-ag's reduce_scatter half follows the reduce_scatter's own Auto on the all_reduce's tensor:
// the one-shot ring (3 cores per link, its copies in rs_intermediate_buffer: the slice x N) up
// to 512 KiB, the chain above; rs_ring_algorithm forces either.
TEST(AllReduceBuilder, ReduceScatterHalfFollowsTheReduceScattersAuto) {
  const topo::Topology t3k = topo::build_t3k();
  const auto rs_cores = [&](const ar::Params& p) {
    const MeshWorkload rs = ar::build(p, t3k).front();
    EXPECT_EQ(rs.name, "all_reduce:reduce_scatter");
    std::set<CoreCoord> cores;
    for (const KernelSpec& k : rs.programs.at(0).kernels) cores.insert(k.cores.front().start);
    return cores.size();
  };
  ar::Params p = params(t3k, FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 32, 32 * 128}));  // 256 KiB
  EXPECT_EQ(p.rs_ring_algorithm, reduce_scatter::RingAlgorithm::Auto);
  p.barrier_semaphore = semaphore(1, {{0, 0}, {7, 0}});
  p.done_semaphore = semaphore(2, {{0, 0}, {7, 0}});
  // The buffers of a tensor of `tiles` tiles, for what the op resolves to.
  const auto resize = [&](std::uint32_t tiles) {
    p.tensor = bf16({1, 1, 32, 32 * tiles});
    p.input_buffer = dram_buffer(1, p.tensor);
    p.output_buffer = dram_buffer(2, p.tensor);
    p.intermediate_buffer = dram_buffer(3, ar::intermediate_spec(p, t3k));
    p.rs_intermediate_buffer.reset();
    if (ar::needs_rs_intermediate(p, t3k)) p.rs_intermediate_buffer = dram_buffer(4, ar::rs_intermediate_spec(p, t3k));
  };
  ASSERT_EQ(ar::resolved_algorithm(p, t3k), ar::Algorithm::ReduceScatterAllGather);
  ASSERT_TRUE(ar::needs_rs_intermediate(p, t3k));
  EXPECT_EQ(ar::rs_intermediate_spec(p, t3k).shape, (std::array<std::uint32_t, 4>{8, 1, 32, 512}));
  EXPECT_EQ(rs_cores(p), 3u);
  // Exactly 512 KiB: still the one-shot.
  resize(256);
  EXPECT_TRUE(ar::needs_rs_intermediate(p, t3k));
  EXPECT_EQ(rs_cores(p), 3u);
  // The next size that divides by 8 (264 tiles, 528 KiB): the half-way ring, its partials in the
  // intermediate; on an even ring its two sets of runs are a worker each per link and direction,
  // sharing the router through a mux: 4 workers and 2 mux cores.
  resize(264);
  EXPECT_TRUE(ar::needs_rs_intermediate(p, t3k));
  EXPECT_EQ(rs_cores(p), 6u);
  // Forced either way.
  p.rs_ring_algorithm = reduce_scatter::RingAlgorithm::OneShot;
  resize(264);
  EXPECT_TRUE(ar::needs_rs_intermediate(p, t3k));
  EXPECT_EQ(rs_cores(p), 3u);
  p.rs_ring_algorithm = reduce_scatter::RingAlgorithm::Chain;
  resize(128);
  EXPECT_FALSE(ar::needs_rs_intermediate(p, t3k));
  EXPECT_EQ(rs_cores(p), 2u);
  // Several workers per link: the reduce_scatter's Auto runs the half-way ring (the one-shot runs
  // one), whose partials need the intermediate.
  p.rs_ring_algorithm = reduce_scatter::RingAlgorithm::Auto;
  p.workers_per_link = 2;
  EXPECT_TRUE(ar::needs_rs_intermediate(p, t3k));
  // A line has no one-shot half.
  ar::Params line = params(t3k, FabricMode::Line, CclTopology::Line, bf16({1, 1, 32, 32 * 128}));
  line.rs_line_algorithm = reduce_scatter::LineAlgorithm::Wrap;
  EXPECT_FALSE(ar::needs_rs_intermediate(line, t3k));
}

// What each half of reduce_scatter + all_gather runs, from the halves' own choice functions on the
// params the builder gives them: the reduce_scatter half's Auto sees the whole tensor and the
// workers per link, the all_gather half the algorithm asked; the other algorithms and legacy mode
// have no halves that choose.
TEST(AllReduceBuilder, HalvesChoicesSayWhatEachHalfRuns) {
  const topo::Topology t3k = topo::build_t3k();
  ar::Params p = params(t3k, FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 32, 32 * 128}));  // 256 KiB
  std::vector<ar::HalvesChoice> halves = ar::halves_choices(p, t3k);
  ASSERT_EQ(halves.size(), 1u);
  EXPECT_EQ(halves[0].shape, CclTopology::Ring);
  EXPECT_EQ(halves[0].rs_ring.algorithm, reduce_scatter::RingAlgorithm::OneShot);
  EXPECT_EQ(halves[0].rs_ring.reason, "auto: 262144 B per chip are within the one-shot's 524288 B");
  EXPECT_EQ(halves[0].all_gather.algorithm, all_gather::RingAlgorithm::Relay);
  EXPECT_EQ(halves[0].all_gather.reason, "auto: a fabric ring relays");
  // What it says is what builds: the one-shot ring's 3 cores per link, the chain's 2.
  const auto rs_cores = [&](const ar::Params& op) {
    const MeshWorkload rs = ar::build(op, t3k).front();
    std::set<CoreCoord> cores;
    for (const KernelSpec& k : rs.programs.at(0).kernels) cores.insert(k.cores.front().start);
    return cores.size();
  };
  EXPECT_EQ(rs_cores(p), 3u);
  p.workers_per_link = 2;
  halves = ar::halves_choices(p, t3k);
  EXPECT_EQ(halves[0].rs_ring.algorithm, reduce_scatter::RingAlgorithm::HalfWay);
  EXPECT_EQ(halves[0].rs_ring.reason,
            "auto: workers_per_link 2; the one-shot runs one worker per link and direction, so the half-way ring");
  p.workers_per_link = 1;
  p.rs_ring_algorithm = reduce_scatter::RingAlgorithm::Chain;
  p.ag_ring_algorithm = all_gather::RingAlgorithm::Multicast;
  halves = ar::halves_choices(p, t3k);
  EXPECT_EQ(halves[0].rs_ring.algorithm, reduce_scatter::RingAlgorithm::Chain);
  EXPECT_EQ(halves[0].rs_ring.reason, "asked for");
  EXPECT_EQ(rs_cores(p), 2u);
  EXPECT_EQ(halves[0].all_gather.algorithm, all_gather::RingAlgorithm::Multicast);
  EXPECT_EQ(halves[0].all_gather.reason, "asked for");
  // A line: its line algorithm, and the gather multicasts.
  ar::Params line = params(t3k, FabricMode::Line, CclTopology::Line, bf16({1, 1, 32, 32 * 128}));
  line.rs_line_algorithm = reduce_scatter::LineAlgorithm::Wrap;
  halves = ar::halves_choices(line, t3k);
  ASSERT_EQ(halves.size(), 1u);
  EXPECT_EQ(halves[0].shape, CclTopology::Line);
  EXPECT_EQ(halves[0].rs_line, reduce_scatter::LineAlgorithm::Wrap);
  EXPECT_EQ(halves[0].all_gather.algorithm, all_gather::RingAlgorithm::Multicast);
  // No halves: the one-shot, the composite, legacy mode.
  ar::Params small = params(t3k, FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 32, 32 * 8}));  // 16 KiB
  ASSERT_EQ(ar::resolved_algorithm(small, t3k), ar::Algorithm::OneShot);
  EXPECT_TRUE(ar::halves_choices(small, t3k).empty());
  small.algorithm = ar::Algorithm::Composite;
  EXPECT_TRUE(ar::halves_choices(small, t3k).empty());
  ar::Params legacy = p;
  legacy.mode = CclMode::Legacy;
  legacy.rs_ring_algorithm = reduce_scatter::RingAlgorithm::Auto;
  legacy.ag_ring_algorithm = all_gather::RingAlgorithm::Auto;
  ASSERT_EQ(ar::resolved_algorithm(legacy, t3k), ar::Algorithm::ReduceScatterAllGather);
  EXPECT_TRUE(ar::halves_choices(legacy, t3k).empty());
}

// A torus row opened by a down link runs as a line beside the other rows' rings: the halves of
// each shape, rings first, the line's as a line runs them (the ring's choices left to the rings).
TEST(AllReduceBuilder, HalvesChoicesOfARingRunAsALineAreTheLines) {
  const topo::Topology torus = topo::load_system("torus:4x4");
  ar::Params p;
  p.tensor = bf16({1, 1, 32, 32 * 128});  // 256 KiB on rows of 4: rs-ag
  p.topology = CclTopology::Ring;
  p.fabric.mode = FabricMode::Ring;
  p.fabric.scope = FabricScope::Axes;
  p.fabric.down_edges = {{0, 1}};
  p.groups.cluster_axis = 1;
  p.rs_ring_algorithm = reduce_scatter::RingAlgorithm::OneShot;
  const std::vector<ar::HalvesChoice> halves = ar::halves_choices(p, torus);
  ASSERT_EQ(halves.size(), 2u);
  EXPECT_EQ(halves[0].shape, CclTopology::Ring);
  EXPECT_EQ(halves[0].rs_ring.algorithm, reduce_scatter::RingAlgorithm::OneShot);
  EXPECT_EQ(halves[0].all_gather.algorithm, all_gather::RingAlgorithm::Relay);
  EXPECT_EQ(halves[1].shape, CclTopology::Line);
  EXPECT_EQ(halves[1].rs_line, reduce_scatter::LineAlgorithm::TwoSided);
  EXPECT_EQ(halves[1].rs_ring.algorithm, reduce_scatter::RingAlgorithm::Chain);  // not the one-shot asked
  EXPECT_EQ(halves[1].all_gather.algorithm, all_gather::RingAlgorithm::Multicast);
  EXPECT_EQ(halves[1].all_gather.reason, "auto: a line multicasts");
}

// What the composite's all_gather runs, from the all_gather's own part_choices() on the params
// the builder gives it: a fabric ring relays by Auto, multicasts as asked, and a line multicasts;
// the built gather is the algorithm it names (the relay's two workers per link, a reader and a
// writer each, the ring multicast's one for a tensor this small). The other algorithms and legacy
// mode record none.
TEST(AllReduceBuilder, CompositeGatherChoicesSayWhatItsGatherRuns) {
  const topo::Topology t3k = topo::build_t3k();
  ar::Params p = params(t3k, FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 1, 96}));  // 3 tiles, 8 chips
  p.algorithm = ar::Algorithm::Composite;
  std::vector<all_gather::PartChoice> gather = ar::composite_gather_choices(p, t3k);
  ASSERT_EQ(gather.size(), 1u);
  EXPECT_EQ(gather[0].shape, CclTopology::Ring);
  EXPECT_EQ(gather[0].algorithm.algorithm, all_gather::RingAlgorithm::Relay);
  EXPECT_EQ(gather[0].algorithm.reason, "auto: a fabric ring relays");
  const auto gather_kernels = [&](const ar::Params& op) {
    const MeshWorkload built = ar::build(op, t3k).front();
    EXPECT_EQ(built.name, "all_reduce:all_gather");
    return built.programs.at(0).kernels.size();
  };
  EXPECT_EQ(gather_kernels(p), 4u);
  p.ag_ring_algorithm = all_gather::RingAlgorithm::Multicast;
  gather = ar::composite_gather_choices(p, t3k);
  ASSERT_EQ(gather.size(), 1u);
  EXPECT_EQ(gather[0].algorithm.algorithm, all_gather::RingAlgorithm::Multicast);
  EXPECT_EQ(gather[0].algorithm.reason, "asked for");
  EXPECT_EQ(gather_kernels(p), 2u);
  // Auto's fallback to the composite records it the same way.
  ar::Params fallback = params(t3k, FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 1, 96}));
  fallback.one_shot_max_bytes = 0;
  ASSERT_EQ(ar::resolved_algorithm(fallback, t3k), ar::Algorithm::Composite);
  gather = ar::composite_gather_choices(fallback, t3k);
  ASSERT_EQ(gather.size(), 1u);
  EXPECT_EQ(gather[0].algorithm.algorithm, all_gather::RingAlgorithm::Relay);
  // A line multicasts.
  ar::Params line = params(t3k, FabricMode::Line, CclTopology::Line, bf16({1, 1, 1, 96}));
  line.algorithm = ar::Algorithm::Composite;
  gather = ar::composite_gather_choices(line, t3k);
  ASSERT_EQ(gather.size(), 1u);
  EXPECT_EQ(gather[0].shape, CclTopology::Line);
  EXPECT_EQ(gather[0].algorithm.algorithm, all_gather::RingAlgorithm::Multicast);
  EXPECT_EQ(gather[0].algorithm.reason, "auto: a line multicasts");
  // None: rs-ag (its halves are halves_choices()), the one-shot, legacy mode's EDM gather.
  ar::Params rs_ag = params(t3k, FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 32, 32 * 128}));
  ASSERT_EQ(ar::resolved_algorithm(rs_ag, t3k), ar::Algorithm::ReduceScatterAllGather);
  EXPECT_TRUE(ar::composite_gather_choices(rs_ag, t3k).empty());
  ar::Params one_shot = params(t3k, FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 1, 96}));
  ASSERT_EQ(ar::resolved_algorithm(one_shot, t3k), ar::Algorithm::OneShot);
  EXPECT_TRUE(ar::composite_gather_choices(one_shot, t3k).empty());
  ar::Params legacy = params(t3k, FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 1, 96}));
  legacy.mode = CclMode::Legacy;
  legacy.algorithm = ar::Algorithm::Composite;
  EXPECT_TRUE(ar::composite_gather_choices(legacy, t3k).empty());
}

// A torus row opened by a down link runs its composite gather as a line beside the other rows'
// rings: each shape's choice, rings first.
TEST(AllReduceBuilder, CompositeGatherChoicesOfARingRunAsALineAreTheLines) {
  const topo::Topology torus = topo::load_system("torus:4x4");
  ar::Params p;
  p.tensor = bf16({1, 1, 1, 96});  // 3 tiles on rows of 4
  p.topology = CclTopology::Ring;
  p.fabric.mode = FabricMode::Ring;
  p.fabric.scope = FabricScope::Axes;
  p.fabric.down_edges = {{0, 1}};
  p.groups.cluster_axis = 1;
  p.algorithm = ar::Algorithm::Composite;
  const std::vector<all_gather::PartChoice> gather = ar::composite_gather_choices(p, torus);
  ASSERT_EQ(gather.size(), 2u);
  EXPECT_EQ(gather[0].shape, CclTopology::Ring);
  EXPECT_EQ(gather[0].algorithm.algorithm, all_gather::RingAlgorithm::Relay);
  EXPECT_EQ(gather[1].shape, CclTopology::Line);
  EXPECT_EQ(gather[1].algorithm.algorithm, all_gather::RingAlgorithm::Multicast);
  EXPECT_EQ(gather[1].algorithm.reason, "auto: a line multicasts");
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t count = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++count;
  return count;
}

// The reduce kernel's passes (absent from its args: 1).
std::uint32_t reduce_passes(const KernelSpec& k) {
  const std::vector<std::uint32_t>& rt = k.runtime_args.at(k.cores.front().start);
  return rt.size() > kernels::reduce::kRtPasses ? rt[kernels::reduce::kRtPasses] : 1;
}

// The local sum keeps its running sums in the reduce kernel's sums CB (N - 1 passes, the output
// written once, never read) while the whole tensor's sums fit kMaxReducedCbBytes; a larger
// composite chains one workload per pass through the output, each pass reading back what the
// previous program wrote (acked by its end); a larger one-shot is refused.
TEST(AllReduceBuilder, LocalSumInL1BelowTheLimitAndPassWorkloadsAbove) {
  const topo::Topology t3k = topo::build_t3k();
  // One-shot, 32 KiB: the reduce core's interpreter (kernel 2), output stream = one write.
  ar::Params one_shot = params(t3k, FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 32, 32 * 16}));
  one_shot.algorithm = ar::Algorithm::OneShot;
  one_shot.intermediate_buffer = dram_buffer(3, ar::intermediate_spec(one_shot, t3k));  // Auto's was rs-ag's
  const std::vector<MeshWorkload> single = ar::build(one_shot, t3k);
  ASSERT_EQ(single.size(), 1u);
  for (const auto& [chip, program] : single[0].programs) {
    ASSERT_EQ(program.kernels.size(), 4u);
    EXPECT_EQ(reduce_passes(program.kernels[3]), 7u);
    const std::string out = test::stream_text(program.kernels[2].runtime_args.at({1, 0}), 1);
    EXPECT_EQ(count_of(out, "\n#"), 0u) << out;
    EXPECT_EQ(count_of(out, "STREAM_CB_TO_TENSOR"), 1u) << out;
    EXPECT_EQ(count_of(out, "STREAM_TENSOR_TO_CB"), 0u) << out;
  }
  // Composite: 255 tiles (not a multiple of 8) in packets of 2 (one 4352 B payload) are 128
  // packets, 256 pages x 2 KiB = 512 KiB of sums, just the limit: one local workload.
  ar::Params at_limit = params(t3k, FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 32, 32 * 255}));
  // The all_gather of that size runs more workers: semaphores on a whole row of cores.
  at_limit.barrier_semaphore = semaphore(1, {{0, 0}, {7, 0}});
  at_limit.done_semaphore = semaphore(2, {{0, 0}, {7, 0}});
  // Auto takes the one-shot here (its sums fit too: PagesNotDividingTakeTheOneShotUpToItsL1Limit).
  ASSERT_EQ(ar::resolved_algorithm(at_limit, t3k), ar::Algorithm::OneShot);
  at_limit.algorithm = ar::Algorithm::Composite;
  const std::vector<MeshWorkload> in_l1 = ar::build(at_limit, t3k);
  ASSERT_EQ(in_l1.size(), 2u);
  EXPECT_EQ(in_l1[1].name, "all_reduce:all_reduce_local_reduce");
  for (const auto& [chip, program] : in_l1[1].programs) {
    EXPECT_EQ(reduce_passes(program.kernels[1]), 7u);
    const std::string out = test::stream_text(program.kernels[0].runtime_args.at({0, 0}), 1);
    EXPECT_EQ(count_of(out, "STREAM_TENSOR_TO_CB"), 0u) << out;
  }
  // 257 tiles: 516 KiB of sums, above it: the gather, then passes 1 .. 7, one workload each;
  // pass 1 sums copies 0 and 1 without a read-back, passes 2 .. 7 read the output back.
  ar::Params above = params(t3k, FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 32, 32 * 257}));
  above.barrier_semaphore = at_limit.barrier_semaphore;
  above.done_semaphore = at_limit.done_semaphore;
  ASSERT_EQ(ar::resolved_algorithm(above, t3k), ar::Algorithm::Composite);
  const std::vector<MeshWorkload> chained = ar::build(above, t3k);
  ASSERT_EQ(chained.size(), 8u);
  for (std::uint32_t pass = 1; pass < 8; ++pass) {
    const MeshWorkload& w = chained[pass];
    EXPECT_EQ(w.name, fmt::format("all_reduce:all_reduce_local_reduce_pass{}", pass));
    ASSERT_EQ(w.programs.size(), 8u);
    for (const auto& [chip, program] : w.programs) {
      EXPECT_EQ(reduce_passes(program.kernels[1]), 1u);
      const std::string copies = test::stream_text(program.kernels[0].runtime_args.at({0, 0}), 0);
      const std::string out = test::stream_text(program.kernels[0].runtime_args.at({0, 0}), 1);
      // 257 pages in chunks of 8 packets of 2 pages: 17 chunks.
      EXPECT_EQ(count_of(copies, "STREAM_TENSOR_TO_CB"), pass == 1 ? 34u : 17u) << pass;
      EXPECT_EQ(count_of(out, "STREAM_TENSOR_TO_CB"), pass == 1 ? 0u : 17u) << pass;
      EXPECT_EQ(count_of(out, "STREAM_CB_TO_TENSOR"), 17u) << pass;
    }
  }
  // A one-shot that large would need the sums in L1: refused, naming the bytes.
  above.algorithm = ar::Algorithm::OneShot;
  EXPECT_THROW(ar::build(above, t3k), CclParamsError);
}

// bfp8_b all_reduce: every algorithm validates and its reduce kernels sum Bfp8_b tiles.
TEST(AllReduceBuilder, Bfp8SumsOnEveryAlgorithm) {
  const topo::Topology t3k = topo::build_t3k();
  for (const ar::Algorithm algorithm :
       {ar::Algorithm::ReduceScatterAllGather, ar::Algorithm::OneShot, ar::Algorithm::Composite}) {
    ar::Params p = params(t3k, FabricMode::Ring, CclTopology::Ring,
                          TensorSpec{{1, 1, 32, 32 * 16}, DataType::Bfloat8B, Layout::Tile});
    p.algorithm = algorithm;
    p.intermediate_buffer = dram_buffer(3, ar::intermediate_spec(p, t3k));
    if (ar::needs_rs_intermediate(p, t3k)) p.rs_intermediate_buffer = dram_buffer(4, ar::rs_intermediate_spec(p, t3k));
    EXPECT_NO_THROW(ar::validate(p, t3k)) << ar::to_string(algorithm);
    std::size_t reduce_kernels = 0;
    for (const MeshWorkload& w : ar::build(p, t3k)) {
      for (const auto& [chip, program] : w.programs) {
        for (const KernelSpec& k : program.kernels) {
          if (k.kernel != kernels::kReduceKernelName) continue;
          ++reduce_kernels;
          EXPECT_EQ(k.compile_time_args.at(kernels::reduce::kCtDataFormat), kernels::reduce::kDataFormatBfp8B);
        }
      }
    }
    EXPECT_GE(reduce_kernels, 8u) << ar::to_string(algorithm);
  }
}

TEST(AllReduceBuilder, Rejects) {
  const topo::Topology t3k = topo::build_t3k();
  {
    ar::Params p = params(t3k, FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 32, 4096}));
    p.intermediate_buffer = p.output_buffer;  // the full size, not a slice
    EXPECT_THROW(ar::validate(p, t3k), CclParamsError);
  }
  {
    ar::Params p = params(t3k, FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 32, 4096}));
    p.done_semaphore.reset();
    EXPECT_THROW(ar::validate(p, t3k), CclParamsError);
  }
}

// A tensor of one page is "1 page" in the choice's reasons and in the refusal of rs-ag asked for
// (session 37's config_fuzz met "1 pages do not split into 8 equal slices").
TEST(AllReduceBuilder, OnePageIsOnePageInReasonsAndRefusals) {
  const topo::Topology t3k = topo::build_t3k();
  ar::Params p = params(t3k, FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 32, 32}));
  EXPECT_EQ(ar::algorithm_choice(p, t3k).reason,
            "the 1 page does not divide by the 8 chips, which reduce_scatter + all_gather needs, and the one-shot's "
            "running sums of the whole tensor fit L1");
  p.one_shot_max_bytes = 0;
  EXPECT_EQ(ar::algorithm_choice(p, t3k).reason,
            "the 1 page does not divide by the 8 chips, which reduce_scatter + all_gather needs");
  p.algorithm = ar::Algorithm::ReduceScatterAllGather;
  EXPECT_EQ(cclmesh::testing::refusal<CclParamsError>([&] { ar::intermediate_spec(p, t3k); }),
            "all_reduce: 1 page does not split into 8 equal slices for reduce_scatter + all_gather (shape[dim] % N "
            "!= 0, REFERENCE 11.15); use the composite algorithm");
}

// A refusal of one of its halves names all_reduce, the op the caller ran, and the half: the
// runtime's callers read "reduce_scatter: ..." as a reduce_scatter's (bug bash leftover, session
// 39: only the CLI renamed it). The exception keeps its type.
TEST(AllReduceBuilder, AHalfsRefusalNamesAllReduce) {
  const topo::Topology ring32 = topo::load_system("ring:32");
  ar::Params p = params(ring32, FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 32, 32 * 32}));
  p.algorithm = ar::Algorithm::ReduceScatterAllGather;
  p.rs_ring_algorithm = reduce_scatter::RingAlgorithm::OneShot;
  p.intermediate_buffer = dram_buffer(3, ar::intermediate_spec(p, ring32));
  const std::string scatter_half = cclmesh::testing::refusal<CclParamsError>([&] { ar::validate(p, ring32); });
  EXPECT_THAT(scatter_half,
              ::testing::StartsWith("all_reduce (its reduce_scatter half): the one-shot ring of 32 chips"));
  EXPECT_EQ(cclmesh::testing::refusal<CclParamsError>([&] { ar::build(p, ring32); }), scatter_half);

  const topo::Topology t3k = topo::build_t3k();
  p = params(t3k, FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 32, 4096}));
  p.done_semaphore.reset();
  EXPECT_THAT(cclmesh::testing::refusal<CclParamsError>([&] { ar::validate(p, t3k); }),
              ::testing::StartsWith("all_reduce (its all_gather half): "));
}

// A ring of 32 (the whole Galaxy) multicasts 16 hops up from every chip in the one-shot, one
// past a route's reach; it was refused only by the command encoder (session 28's bug bash). The
// composite's all_gather relays hop by hop and still validates.
TEST(AllReduceBuilder, OneShotPastTheFabricsReachIsRefused) {
  const topo::Topology ring32 = topo::load_system("ring:32");
  ar::Params p = params(ring32, FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 32, 32 * 32}));
  p.algorithm = ar::Algorithm::OneShot;
  p.intermediate_buffer = dram_buffer(3, ar::intermediate_spec(p, ring32));
  try {
    ar::validate(p, ring32);
    ADD_FAILURE() << "a one-shot ring of 32 validated";
  } catch (const CclParamsError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("the one-shot's multicast from chip"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("reaches 16 hops; a fabric route holds at most 15"));
  }
  p.algorithm = ar::Algorithm::Composite;
  p.intermediate_buffer = dram_buffer(3, ar::intermediate_spec(p, ring32));
  // The composite's relay all_gather runs more workers per link than the one-shot's two cores.
  p.barrier_semaphore = semaphore(1, {{0, 0}, {7, 0}});
  p.done_semaphore = semaphore(2, {{0, 0}, {7, 0}});
  EXPECT_NO_THROW(ar::validate(p, ring32));
}

// The program cache keys on hash_value(Params): a field it leaves out lets two different ops
// share a cached program. Changing any one field (and any field of the buffers, semaphores and
// fabric options within) must change the hash.
TEST(AllReduceBuilder, EveryParamsFieldChangesTheHash) {
  const topo::Topology t3k = topo::build_t3k();
  const ar::Params base = params(t3k, FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 32, 1024}));
  using Change = void (*)(ar::Params&);
  const std::vector<std::pair<const char*, Change>> changes = {
      {"tensor.shape", [](ar::Params& p) { p.tensor.shape[2] = 64; }},
      {"tensor.dtype", [](ar::Params& p) { p.tensor.dtype = DataType::Float32; }},
      {"tensor.layout", [](ar::Params& p) { p.tensor.layout = Layout::RowMajor; }},
      {"input_buffer.id", [](ar::Params& p) { p.input_buffer.id += 10; }},
      {"input_buffer.address", [](ar::Params& p) { p.input_buffer.address += 4096; }},
      {"input_buffer.config.type", [](ar::Params& p) { p.input_buffer.config.type = BufferType::L1; }},
      {"input_buffer.config.size_bytes", [](ar::Params& p) { p.input_buffer.config.size_bytes *= 2; }},
      {"input_buffer.config.page_size_bytes", [](ar::Params& p) { p.input_buffer.config.page_size_bytes /= 2; }},
      {"input_buffer.config.layout",
       [](ar::Params& p) { p.input_buffer.config.layout = TensorMemoryLayout::WidthSharded; }},
      {"input_buffer.config.shard",
       [](ar::Params& p) {
         p.input_buffer.config.shard = ShardSpec{{CoreRange{{0, 0}, {7, 3}}}, 1, 1, 32, ShardOrientation::RowMajor};
       }},
      {"output_buffer", [](ar::Params& p) { p.output_buffer.address += 4096; }},
      {"intermediate_buffer", [](ar::Params& p) { p.intermediate_buffer.address += 4096; }},
      {"rs_intermediate_buffer", [](ar::Params& p) { p.rs_intermediate_buffer = p.output_buffer; }},
      {"rs_line_algorithm", [](ar::Params& p) { p.rs_line_algorithm = reduce_scatter::LineAlgorithm::Wrap; }},
      {"rs_ring_algorithm", [](ar::Params& p) { p.rs_ring_algorithm = reduce_scatter::RingAlgorithm::OneShot; }},
      {"topology", [](ar::Params& p) { p.topology = CclTopology::Line; }},
      {"num_links", [](ar::Params& p) { p.num_links = 2; }},
      {"workers_per_link", [](ar::Params& p) { p.workers_per_link = 4; }},
      {"workers_per_link unset", [](ar::Params& p) { p.workers_per_link.reset(); }},
      {"groups.cluster_axis", [](ar::Params& p) { p.groups.cluster_axis = 1; }},
      {"groups.chips", [](ar::Params& p) { p.groups.chips = {{0, 1, 2, 3}}; }},
      {"mode", [](ar::Params& p) { p.mode = CclMode::Legacy; }},
      {"fabric.mode", [](ar::Params& p) { p.fabric.mode = FabricMode::Line; }},
      {"fabric.scope", [](ar::Params& p) { p.fabric.scope = FabricScope::Axes; }},
      {"fabric.num_links", [](ar::Params& p) { p.fabric.num_links = 2; }},
      {"fabric.max_payload_bytes", [](ar::Params& p) { p.fabric.max_payload_bytes = 2048; }},
      {"fabric.chip_order", [](ar::Params& p) { p.fabric.chip_order = {0, 1}; }},
      {"fabric.bubble_flow_control", [](ar::Params& p) { p.fabric.bubble_flow_control = false; }},
      {"fabric.first_level_acks", [](ar::Params& p) { p.fabric.first_level_acks = !p.fabric.first_level_acks; }},
      {"fabric.switch_interval", [](ar::Params& p) { p.fabric.switch_interval += 1; }},
      {"fabric.sender_slots", [](ar::Params& p) { p.fabric.sender_slots = 4; }},
      {"fabric.receiver_slots", [](ar::Params& p) { p.fabric.receiver_slots = 4; }},
      {"fabric.receiver_packets_in_flight", [](ar::Params& p) { p.fabric.receiver_packets_in_flight = 1; }},
      {"algorithm", [](ar::Params& p) { p.algorithm = ar::Algorithm::OneShot; }},
      {"one_shot_max_bytes", [](ar::Params& p) { p.one_shot_max_bytes = 0; }},
      {"legacy_composite_max_weighted_bytes", [](ar::Params& p) { p.legacy_composite_max_weighted_bytes = 0; }},
      {"barrier_semaphore.id", [](ar::Params& p) { p.barrier_semaphore->id += 10; }},
      {"barrier_semaphore.address", [](ar::Params& p) { p.barrier_semaphore->address += 16; }},
      {"barrier_semaphore.cores", [](ar::Params& p) { p.barrier_semaphore->cores.push_back({{2, 0}, {2, 0}}); }},
      {"barrier_semaphore unset", [](ar::Params& p) { p.barrier_semaphore.reset(); }},
      {"done_semaphore", [](ar::Params& p) { p.done_semaphore = semaphore(7, {{0, 0}, {0, 0}}); }},
      {"first_worker", [](ar::Params& p) { p.first_worker = {0, 1}; }},
      {"packet_size_in_pages", [](ar::Params& p) { p.packet_size_in_pages = 3; }},
      {"chunk_packets", [](ar::Params& p) { p.chunk_packets = 2; }},
  };
  const std::size_t base_hash = ar::hash_value(base);
  EXPECT_EQ(ar::hash_value(ar::Params(base)), base_hash);
  for (const auto& [field, change] : changes) {
    ar::Params changed = base;
    change(changed);
    EXPECT_NE(changed, base) << field << ": the change is a no-op";
    EXPECT_NE(ar::hash_value(changed), base_hash) << field << " is not hashed";
  }
}

// Legacy mode chooses per shape (part_choices): on the 4x4 torus's rows with 0-1 down from the
// start, row 0 runs as a line beside three rings. A tensor weighing between the 4-ring's and the
// 4-line's composite thresholds (16 bf16 tiles, 36864 B) runs rs-ag on the rings and the composite
// on the line, and the intermediate holds the composite's 4 copies (the largest part's); past both
// (32 tiles) both run rs-ag and it holds a slice; the threshold asked (0) holds for both shapes;
// an algorithm asked runs on both. Without the down link: one part.
TEST(AllReduceBuilder, LegacyAutoChoosesPerShapeWhenARingRunsAsALine) {
  const topo::Topology torus = topo::load_system("torus:4x4");
  const auto legacy = [&](TensorSpec tensor, std::vector<std::pair<ChipId, ChipId>> down) {
    ar::Params p;
    p.tensor = tensor;
    p.groups.cluster_axis = 1;
    p.mode = CclMode::Legacy;
    p.fabric.mode = FabricMode::None;
    p.fabric.down_edges = std::move(down);
    return p;
  };
  const auto algorithms = [&](const ar::Params& p) {
    std::vector<std::pair<CclTopology, ar::Algorithm>> shapes;
    for (const ar::PartChoice& part : ar::part_choices(p, torus)) shapes.emplace_back(part.shape, part.choice.algorithm);
    return shapes;
  };
  using Shapes = std::vector<std::pair<CclTopology, ar::Algorithm>>;
  const ar::Params between = legacy(bf16({1, 1, 128, 128}), {{0, 1}});
  EXPECT_EQ(algorithms(between), (Shapes{{CclTopology::Ring, ar::Algorithm::ReduceScatterAllGather},
                                         {CclTopology::Line, ar::Algorithm::Composite}}));
  EXPECT_EQ(ar::resolved_algorithm(between, torus), ar::Algorithm::ReduceScatterAllGather);  // the rings'
  EXPECT_EQ(ar::intermediate_spec(between, torus).shape, (std::array<std::uint32_t, 4>{4, 1, 32, 512}));
  const ar::Params past = legacy(bf16({1, 1, 256, 128}), {{0, 1}});
  EXPECT_EQ(algorithms(past), (Shapes{{CclTopology::Ring, ar::Algorithm::ReduceScatterAllGather},
                                      {CclTopology::Line, ar::Algorithm::ReduceScatterAllGather}}));
  EXPECT_EQ(ar::intermediate_spec(past, torus).shape, (std::array<std::uint32_t, 4>{1, 1, 32, 256}));
  ar::Params threshold = between;
  threshold.legacy_composite_max_weighted_bytes = 0;
  EXPECT_EQ(algorithms(threshold), (Shapes{{CclTopology::Ring, ar::Algorithm::ReduceScatterAllGather},
                                           {CclTopology::Line, ar::Algorithm::ReduceScatterAllGather}}));
  ar::Params asked = between;
  asked.algorithm = ar::Algorithm::Composite;
  EXPECT_EQ(algorithms(asked),
            (Shapes{{CclTopology::Ring, ar::Algorithm::Composite}, {CclTopology::Line, ar::Algorithm::Composite}}));
  EXPECT_EQ(algorithms(legacy(bf16({1, 1, 128, 128}), {})),
            (Shapes{{CclTopology::Ring, ar::Algorithm::ReduceScatterAllGather}}));
}


// Legacy mode on the 4x4 torus's rows; with 0-1 down from the start row 0 runs as a line beside
// three rings, each part its own algorithm (parts_by_shape). `asked` unset: Auto.
ar::Params legacy_torus_rows(TensorSpec tensor, const topo::Topology& torus, std::optional<ar::Algorithm> asked,
                             std::vector<std::pair<ChipId, ChipId>> down) {
  ar::Params p;
  p.tensor = tensor;
  p.groups.cluster_axis = 1;
  p.mode = CclMode::Legacy;
  p.fabric.mode = FabricMode::None;
  p.fabric.down_edges = std::move(down);
  if (asked) p.algorithm = *asked;
  p.input_buffer = dram_buffer(1, tensor);
  p.output_buffer = dram_buffer(2, tensor);
  p.intermediate_buffer = dram_buffer(3, ar::intermediate_spec(p, torus));
  return p;
}

// Legacy mode's composite sums its copies in packets of one fabric payload (the only thing the
// payload sizes there): a page past it was refused by build() alone, and validate() passed.
TEST(AllReduceBuilder, ValidateRefusesALegacyCompositePagePastThePayload) {
  const topo::Topology torus = topo::load_system("torus:4x4");
  ar::Params p = legacy_torus_rows(bf16({1, 1, 32, 32 * 4}), torus, ar::Algorithm::Composite, {});
  p.fabric.max_payload_bytes = 1024;
  EXPECT_EQ(testing::refusal<PageExceedsPacketError>([&] { ar::validate(p, torus); }),
            "page size 2048 B does not fit a fabric packet of 1024 B");
  EXPECT_EQ(testing::refusal<PageExceedsPacketError>([&] { ar::build(p, torus); }),
            "page size 2048 B does not fit a fabric packet of 1024 B");
}

// A part's refusal (an op of several parts) names the part's groups and all_reduce once, and
// keeps its type: a caller tells a page past the payload (the CLI: --fabric-payload) by it.
// 16 tiles run rs-ag on the rings and the composite on the line (LegacyAutoChoosesPerShape...),
// whose local sum a payload of 1024 B does not take; rs-ag asked of 4 tiles leaves a ring's
// slice 1 page, and a ring runs each slice as two halves.
TEST(AllReduceBuilder, APartsRefusalKeepsItsTypeAndNamesAllReduceOnce) {
  const topo::Topology torus = topo::load_system("torus:4x4");
  ar::Params line_composite = legacy_torus_rows(bf16({1, 1, 128, 128}), torus, std::nullopt, {{0, 1}});
  line_composite.fabric.max_payload_bytes = 1024;
  try {
    ar::validate(line_composite, torus);
    ADD_FAILURE() << "validate passed";
  } catch (const PageExceedsPacketError& e) {
    EXPECT_STREQ(e.what(), "all_reduce: its groups that run as lines (0-1-2-3): page size 2048 B does not fit a "
                           "fabric packet of 1024 B");
    EXPECT_EQ(e.page_size_bytes(), 2048u);
  }
  const ar::Params rings_rs_ag =
      legacy_torus_rows(bf16({1, 1, 32, 128}), torus, ar::Algorithm::ReduceScatterAllGather, {{0, 1}});
  EXPECT_EQ(testing::refusal<CclParamsError>([&] { ar::validate(rings_rs_ag, torus); }),
            "all_reduce: its groups that run as rings (4-5-6-7, 8-9-10-11, 12-13-14-15): its reduce_scatter half: a "
            "slice of 1 page(s) on 1 link(s) in legacy mode; every link's two directions each chain a share of a "
            "slice, so it needs at least 2 pages");
}

// Every part refused: each part is named, one reason said once after the parts it refuses (until
// session 41 only the first part was named, so a user who fixed it met the next). The composite
// asked of every part sums in packets of one payload, which 1024 B is past.
TEST(AllReduceBuilder, EveryPartRefusedNamesEachPartAndEachReasonOnce) {
  const topo::Topology torus = topo::load_system("torus:4x4");
  ar::Params composite = legacy_torus_rows(bf16({1, 1, 128, 128}), torus, ar::Algorithm::Composite, {{0, 1}});
  composite.fabric.max_payload_bytes = 1024;
  EXPECT_EQ(testing::refusal<PageExceedsPacketError>([&] { ar::validate(composite, torus); }),
            "all_reduce: its groups that run as rings (4-5-6-7, 8-9-10-11, 12-13-14-15) and its groups that run as "
            "lines (0-1-2-3): page size 2048 B does not fit a fabric packet of 1024 B");
}

}  // namespace
}  // namespace cclmesh::runtime::ccl
