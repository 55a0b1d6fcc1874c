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
using runtime::BufferType;
using runtime::FabricMode;
using runtime::ccl::CclTopology;
using runtime::ccl::DataType;
using runtime::ccl::Layout;
using runtime::ccl::TensorSpec;

struct Case {
  TensorSpec tensor;
  std::uint32_t root = 0;
  CclTopology topology = CclTopology::Ring;
  BufferType memory = BufferType::Dram;
  std::optional<int> cluster_axis;
  std::uint32_t chunk_packets = 8;
  std::uint32_t repeats = 1;
};

struct Result {
  std::uint64_t kernel_ns = 0;
  std::uint64_t bytes = 0;
};

Result run_case(sim::device::SimMeshDevice& device, const Case& c) {
  rd::Params p;
  p.tensor = c.tensor;
  p.root = c.root;
  p.topology = c.topology;
  p.groups.cluster_axis = c.cluster_axis;
  p.chunk_packets = c.chunk_packets;
  const RunOutcome out = run_reduce(device, p, Memory{c.memory, std::nullopt}, RunOptions{c.repeats});
  EXPECT_TRUE(out.verified);
  return Result{out.kernel_ns, out.input_bytes};
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
    auto device = make_device(topo::build_t3k(), t == CclTopology::Ring ? FabricMode::Ring : FabricMode::Line);
    Case c;
    c.tensor = tile({1, 1, 1024, 2048});
    c.topology = t;
    const Result r = run_case(*device, c);
    const double us = static_cast<double>(r.kernel_ns) / 1e3;
    std::printf("T3K 8-%s reduce: %llu B, %.2f us, busbw = algbw %.2f GB/s\n",
                t == CclTopology::Ring ? "ring" : "line", static_cast<unsigned long long>(r.bytes), us,
                static_cast<double>(r.bytes) / us / 1e3);
  }
}

}  // namespace
}  // namespace cclmesh::ccltest
