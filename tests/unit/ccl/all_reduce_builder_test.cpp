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

TEST(AllReduceBuilder, Rejects) {
  const topo::Topology t3k = topo::build_t3k();
  {
    ar::Params p = params(t3k, FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 32, 4096}));
    p.tensor.dtype = DataType::Bfloat8B;
    EXPECT_THROW(ar::validate(p, t3k), CclParamsError);
  }
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
