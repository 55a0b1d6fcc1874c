// reduce end to end on the simulated device with real data: N300, T3K 8-chip line (roots at
// both ends and in the middle, so no wrap, and a wrap over 7 hops) and the 8-chip ring, 4-chip
// rows at once (cluster_axis), bf16 and fp32, ROW_MAJOR in L1, several sync chunks, back to
// back. The root's output is compared bit for bit with reduce::reference_output, which sums in
// the chain's order with the device's bf16 rounding after every addition (no tolerance).
#include "runtime/ccl/reduce/reduce.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "tests/integration/ccl/ccl_runners.hpp"

namespace cclmesh::ccltest {
namespace {

namespace rd = runtime::ccl::reduce;

struct Case {
  TensorSpec tensor;
  std::uint32_t root = 0;
  CclTopology topology = CclTopology::Ring;
  BufferType memory = BufferType::Dram;
  std::optional<int> cluster_axis;
  std::optional<std::uint32_t> chunk_packets;  // unset: the op's chunk fitted to each run
  std::uint32_t repeats = 1;
};

RunOutcome run_case(sim::device::SimMeshDevice& device, const Case& c) {
  rd::Params p;
  p.tensor = c.tensor;
  p.root = c.root;
  p.topology = c.topology;
  p.groups.cluster_axis = c.cluster_axis;
  p.chunk_packets = c.chunk_packets;
  const RunOutcome out = run_reduce(device, p, Memory{c.memory, std::nullopt}, RunOptions{c.repeats});
  EXPECT_TRUE(out.verified);
  return out;
}

TEST(ReduceE2e, N300BothRoots) {
  auto device = make_device(topo::build_n300(), FabricMode::Line);
  for (std::uint32_t root : {0u, 1u}) {
    Case c;
    c.tensor = tile({1, 1, 32, 2048});
    c.topology = CclTopology::Line;
    c.root = root;
    run_case(*device, c);
  }
}

TEST(ReduceE2e, T3kLineEveryKindOfRoot) {
  auto device = make_device(topo::build_t3k(), FabricMode::Line);
  for (std::uint32_t root : {0u, 3u, 7u}) {
    SCOPED_TRACE(root);
    Case c;
    c.tensor = tile({1, 1, 64, 1024});
    c.topology = CclTopology::Line;
    c.root = root;
    run_case(*device, c);
  }
}

TEST(ReduceE2e, T3kRingBf16AndFp32) {
  auto device = make_device(topo::build_t3k(), FabricMode::Ring);
  Case c;
  c.tensor = tile({1, 1, 32, 4096});
  c.root = 5;
  run_case(*device, c);
  Case fp32;
  fp32.tensor = tile({2, 4, 64, 32}, DataType::Float32);
  fp32.root = 0;
  run_case(*device, fp32);
}

// An odd page count splits unevenly between the ring's two chains; one-packet chunks make many
// sync rounds; two ops back to back behind the entry barrier.
TEST(ReduceE2e, T3kRingUnevenRunsSmallChunksBackToBack) {
  auto device = make_device(topo::build_t3k(), FabricMode::Ring);
  Case c;
  c.tensor = tile({1, 1, 32, 32 * 45});
  c.root = 2;
  c.chunk_packets = 1;
  c.repeats = 2;
  run_case(*device, c);
}

TEST(ReduceE2e, T3kRowsAtOnceRowMajorInL1) {
  auto device = make_device(topo::build_t3k(), FabricMode::Ring);
  Case c;
  c.tensor = TensorSpec{{1, 1, 64, 512}, DataType::Bfloat16, Layout::RowMajor};
  c.topology = CclTopology::Line;
  c.cluster_axis = 1;
  c.memory = BufferType::L1;
  c.root = 2;
  run_case(*device, c);
}

TEST(ReduceE2eFigures, T3kRingAndLineFourMebibytes) {
  for (const CclTopology t : {CclTopology::Ring, CclTopology::Line}) {
    auto device = make_device(topo::build_t3k(), fabric_mode_for(t));
    Case c;
    c.tensor = tile({1, 1, 1024, 2048});
    c.topology = t;
    const RunOutcome r = run_case(*device, c);
    // nccl-tests' reduce: bus factor 1 (busbw = algbw).
    print_figures(fmt::format("T3K 8-{} reduce", shape_name(t)), "per chip", r.input_bytes, r.kernel_ns, 1.0);
  }
}

}  // namespace
}  // namespace cclmesh::ccltest
