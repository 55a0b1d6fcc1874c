// all_reduce's builder: the algorithm choice (REFERENCE 7.6), the intermediate buffer it needs,
// the two workloads it returns, and what it rejects.
#include <gtest/gtest.h>

#include "kernels/kernel_args.hpp"
#include "runtime/ccl/all_reduce/all_reduce.hpp"
#include "tests/unit/ccl/builder_test_util.hpp"
#include "topologies/builtin_systems.hpp"

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
  p.barrier_semaphore = semaphore(1, {{0, 0}, {1, 0}});
  p.done_semaphore = semaphore(2, {{0, 0}, {1, 0}});
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

// Up to one_shot_max_bytes Auto runs the one-shot: one workload, on every chip a gather core
// (reader + writer) and a reduce core (interpreter + reduce kernel) that waits for N copies.
TEST(AllReduceBuilder, OneShotForSmallTensors) {
  const topo::Topology t3k = topo::build_t3k();
  ar::Params p = params(t3k, FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 32, 32 * 16}));  // 32 KiB
  EXPECT_EQ(ar::resolved_algorithm(p, t3k), ar::Algorithm::OneShot);
  EXPECT_EQ(ar::intermediate_spec(p, t3k).shape, (std::array<std::uint32_t, 4>{8, 1, 32, 512}));
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
  p.one_shot_max_bytes = 32 * 1024 - 1;
  EXPECT_EQ(ar::resolved_algorithm(p, t3k), ar::Algorithm::ReduceScatterAllGather);
  // The defaults: 32 KiB on a ring, 64 KiB on a line.
  p.one_shot_max_bytes.reset();
  p.tensor = bf16({1, 1, 32, 32 * 17});
  EXPECT_EQ(ar::resolved_algorithm(p, t3k), ar::Algorithm::Composite);  // 17 tiles do not divide by 8
  p.topology = CclTopology::Line;
  EXPECT_EQ(ar::resolved_algorithm(p, t3k), ar::Algorithm::OneShot);
  p.tensor = bf16({1, 1, 32, 32 * 40});
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

// bfp8_b all_reduce: every algorithm validates and its reduce kernels sum Bfp8_b tiles.
TEST(AllReduceBuilder, Bfp8SumsOnEveryAlgorithm) {
  const topo::Topology t3k = topo::build_t3k();
  for (const ar::Algorithm algorithm :
       {ar::Algorithm::ReduceScatterAllGather, ar::Algorithm::OneShot, ar::Algorithm::Composite}) {
    ar::Params p = params(t3k, FabricMode::Ring, CclTopology::Ring,
                          TensorSpec{{1, 1, 32, 32 * 16}, DataType::Bfloat8B, Layout::Tile});
    p.algorithm = algorithm;
    p.intermediate_buffer = dram_buffer(3, ar::intermediate_spec(p, t3k));
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

}  // namespace
}  // namespace cclmesh::runtime::ccl
