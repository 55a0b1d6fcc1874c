// all_to_all end to end on the simulated device with real data: N300, T3K 4- and 8-chip lines
// and the 8-chip ring (the farthest chunk split both ways), 4-chip rows at once, dims 0..3,
// bf16 / fp32 / bfp8_b, ROW_MAJOR in L1, back to back. Every chip's output is compared bit for
// bit with all_to_all::reference_outputs.
#include "runtime/ccl/all_to_all/all_to_all.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "tests/integration/ccl/ccl_runners.hpp"

namespace cclmesh::ccltest {
namespace {

namespace a2a = runtime::ccl::all_to_all;

struct Case {
  TensorSpec tensor;
  std::uint32_t dim = 3;
  CclTopology topology = CclTopology::Ring;
  BufferType memory = BufferType::Dram;
  std::vector<std::vector<ChipId>> groups;
  std::optional<int> cluster_axis;
  std::uint32_t repeats = 1;
};

RunOutcome run_case(sim::device::SimMeshDevice& device, const Case& c) {
  a2a::Params p;
  p.tensor = c.tensor;
  p.dim = c.dim;
  p.topology = c.topology;
  p.groups.chips = c.groups;
  p.groups.cluster_axis = c.cluster_axis;
  const RunOutcome out = run_all_to_all(device, p, Memory{c.memory, std::nullopt}, RunOptions{c.repeats});
  EXPECT_TRUE(out.verified);
  return out;
}

TEST(AllToAllE2e, N300EveryDim) {
  auto device = make_device(topo::build_n300(), FabricMode::Line);
  for (std::uint32_t dim = 0; dim < 4; ++dim) {
    SCOPED_TRACE(dim);
    Case c;
    c.tensor = tile({2, 2, 64, 64});
    c.dim = dim;
    c.topology = CclTopology::Line;
    run_case(*device, c);
  }
}

TEST(AllToAllE2e, T3kLinesAndRing) {
  {
    auto device = make_device(topo::build_t3k(), FabricMode::Line);
    Case c;
    c.tensor = tile({1, 1, 64, 32 * 16});
    c.topology = CclTopology::Line;
    run_case(*device, c);
    Case four;
    four.tensor = tile({1, 1, 32, 32 * 8}, DataType::Float32);
    four.topology = CclTopology::Line;
    const std::vector<ChipId>& line = device->fabric_plan().chips();
    four.groups = {std::vector<ChipId>(line.begin(), line.begin() + 4)};
    run_case(*device, four);
  }
  auto device = make_device(topo::build_t3k(), FabricMode::Ring);
  Case ring;
  ring.tensor = tile({1, 1, 32, 32 * 24});  // 3 tiles per chunk: the split farthest chunk is uneven
  ring.repeats = 2;
  run_case(*device, ring);
  Case bfp8;
  bfp8.tensor = tile({1, 8, 32, 64}, DataType::Bfloat8B);
  bfp8.dim = 1;
  run_case(*device, bfp8);
}

TEST(AllToAllE2e, T3kRowsAtOnceRowMajorInL1) {
  auto device = make_device(topo::build_t3k(), FabricMode::Ring);
  Case c;
  c.tensor = TensorSpec{{1, 1, 64, 256}, DataType::Bfloat16, Layout::RowMajor};
  c.dim = 2;
  c.topology = CclTopology::Line;
  c.cluster_axis = 1;
  c.memory = BufferType::L1;
  run_case(*device, c);
}

TEST(AllToAllE2eFigures, T3kRingAndLineFourMebibytes) {
  for (const CclTopology t : {CclTopology::Ring, CclTopology::Line}) {
    auto device = make_device(topo::build_t3k(), fabric_mode_for(t));
    Case c;
    c.tensor = tile({1, 1, 1024, 2048});
    c.topology = t;
    const RunOutcome r = run_case(*device, c);
    print_figures(fmt::format("T3K 8-{} all_to_all", shape_name(t)), "per chip", r.input_bytes, r.kernel_ns,
                  exchange_bus_factor(r.group_size));
  }
}

}  // namespace
}  // namespace cclmesh::ccltest
