// Legacy EDM mode (no fabric: per-op EDMs over each group's own links) with one link of a ring down
// from the start, on a device that really has the link down (a LinkDownFault at 0 s, so an EDM
// on either side of it would wait for its peer for ever): the ring runs as the line around the
// link (runtime/ccl/common/legacy_groups.hpp), ranks in the ring's order, and every chip's output
// is the host reference's for its rank, bit for bit, with random inputs (the reference sums a
// line's reduce_scatter in the line's order, reduce_scatter::reference_outputs with the group).
// Whole system: the T3K's one ring, 4-0-2-6-7-3-1-5, which no other ring avoids a link by, with
// its closing link 5-4 down (the line 4-...-5, positions = ranks) or 0-2 mid-ring (the line
// 2-6-7-3-1-5-4-0, ranks 2..7, 0, 1: data placed by position would be wrong). Per axis: the
// 4x4 torus's rows, row 0 with its closing link 3-0 or its first hop 0-1 down, beside the other
// rows' rings. Before session 25 each of these was refused up front (exit 3 in `cclmesh run`).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <utility>

#include "runtime/ccl/all_gather/all_gather.hpp"
#include "runtime/ccl/all_reduce/all_reduce.hpp"
#include "runtime/ccl/common/legacy_edm_plan.hpp"
#include "runtime/ccl/common/legacy_groups.hpp"
#include "runtime/ccl/reduce_scatter/reduce_scatter.hpp"
#include "tests/integration/ccl/ccl_test_util.hpp"
#include "topologies/system_loader.hpp"

namespace cclmesh::ccltest {
namespace {

namespace ag = runtime::ccl::all_gather;
namespace rs = runtime::ccl::reduce_scatter;
namespace ar = runtime::ccl::all_reduce;

enum class Op { AllGather, ReduceScatter, AllReduceRsAg, AllReduceComposite, AllReduceAuto };

const char* op_name(Op op) {
  switch (op) {
    case Op::AllGather: return "all_gather";
    case Op::ReduceScatter: return "reduce_scatter";
    case Op::AllReduceRsAg: return "all_reduce rs-ag";
    case Op::AllReduceComposite: return "all_reduce composite";
    case Op::AllReduceAuto: return "all_reduce auto";
  }
  return "?";
}

struct Case {
  const char* system;
  std::optional<int> axis;  // unset: the whole-system ring
  std::pair<ChipId, ChipId> down;
  TensorSpec tensor;
};

// A legacy device (no fabric) with `down` down from time 0.
std::unique_ptr<sim::device::SimMeshDevice> legacy_device_with_link_down(const Case& c) {
  sim::device::SimMeshDeviceOptions options;
  options.fabric.mode = FabricMode::None;
  options.faults.link_down.push_back(sim::device::LinkDownFault{
      c.down.first, c.down.second, sim::SimTime::zero(), fmt::format("link-down:{}-{}", c.down.first, c.down.second)});
  return std::make_unique<sim::device::SimMeshDevice>(topo::load_system(c.system), options);
}

// Runs `op` asked as rings on `c`'s device; checks every rank of every group against the host
// reference for that group. Returns the groups as legacy mode laid them; all_reduce's part
// choices into `all_reduce_parts` and its workloads into `all_reduce_workloads` when given.
std::vector<runtime::ccl::LegacyGroup> run_and_check(Op op, const Case& c,
                                                     std::vector<ar::PartChoice>* all_reduce_parts = nullptr,
                                                     std::vector<runtime::MeshWorkload>* all_reduce_workloads = nullptr) {
  auto device = legacy_device_with_link_down(c);
  const topo::Topology& topology = device->topology();
  const runtime::FabricOptions& fabric = device->fabric();  // mode None, down_edges {c.down}
  EXPECT_EQ(fabric.down_edges, (std::vector<std::pair<ChipId, ChipId>>{c.down}));
  runtime::ccl::GroupSelection selection;
  selection.cluster_axis = c.axis;
  const auto dram = [&](const TensorSpec& spec) {
    return device->create_buffer(runtime::ccl::interleaved_buffer_config(spec, BufferType::Dram));
  };
  runtime::BufferHandle input;
  runtime::BufferHandle output;
  std::vector<runtime::MeshWorkload> workloads;
  // The expected outputs of one group (chips in rank order), inputs by rank.
  std::function<std::vector<Bytes>(const std::vector<ChipId>&, const std::vector<Bytes>&)> expected;
  if (op == Op::AllGather) {
    ag::Params p;
    p.input = c.tensor;
    p.dim = 3;
    p.groups = selection;
    p.mode = runtime::ccl::CclMode::Legacy;
    p.fabric = fabric;
    input = p.input_buffer = dram(p.input);
    output = p.output_buffer = dram(ag::output_spec(p, topology));
    workloads.push_back(ag::build(p, topology));
    expected = [p](const std::vector<ChipId>&, const std::vector<Bytes>& by_rank) {
      return std::vector<Bytes>(by_rank.size(), runtime::ccl::reference::concat(by_rank, p.input, p.dim));
    };
  } else if (op == Op::ReduceScatter) {
    rs::Params p;
    p.input = c.tensor;
    p.dim = 3;
    p.groups = selection;
    p.mode = runtime::ccl::CclMode::Legacy;
    p.fabric = fabric;
    input = p.input_buffer = dram(p.input);
    output = p.output_buffer = dram(rs::output_spec(p, topology));
    workloads.push_back(rs::build(p, topology));
    expected = [p, &topology](const std::vector<ChipId>& group, const std::vector<Bytes>& by_rank) {
      return rs::reference_outputs(p, topology, group, by_rank);
    };
  } else {
    ar::Params p;
    p.tensor = c.tensor;
    p.groups = selection;
    p.mode = runtime::ccl::CclMode::Legacy;
    p.fabric = fabric;
    p.algorithm = op == Op::AllReduceRsAg       ? ar::Algorithm::ReduceScatterAllGather
                  : op == Op::AllReduceComposite ? ar::Algorithm::Composite
                                                 : ar::Algorithm::Auto;
    input = p.input_buffer = dram(p.tensor);
    output = p.output_buffer = dram(p.tensor);
    p.intermediate_buffer = dram(ar::intermediate_spec(p, topology));
    workloads = ar::build(p, topology);
    if (all_reduce_parts != nullptr) *all_reduce_parts = ar::part_choices(p, topology);
    if (all_reduce_workloads != nullptr) *all_reduce_workloads = workloads;
    expected = [p, &topology](const std::vector<ChipId>& group, const std::vector<Bytes>& by_rank) {
      return ar::reference_outputs(p, topology, group, by_rank);
    };
  }
  const std::vector<std::vector<ChipId>> groups =
      runtime::ccl::resolve_legacy_groups(selection, topology, CclTopology::Ring);
  std::map<ChipId, Bytes> inputs;
  for (const auto& g : groups) {
    for (ChipId chip : g) {
      inputs[chip] = pattern(input.config.size_bytes, 300 + chip);
      device->write_buffer(chip, input, inputs[chip]);
    }
  }
  for (const runtime::MeshWorkload& w : workloads) device->enqueue_workload(w);
  device->finish();
  for (const auto& g : groups) {
    std::vector<Bytes> by_rank;
    for (ChipId chip : g) by_rank.push_back(inputs[chip]);
    const std::vector<Bytes> want = expected(g, by_rank);
    EXPECT_EQ(want.size(), g.size());
    for (std::size_t rank = 0; rank < std::min(want.size(), g.size()); ++rank) {
      EXPECT_TRUE(read_back(*device, g[rank], output) == want[rank])
          << "group " << fmt::format("{}", fmt::join(g, "-")) << ": chip " << g[rank] << " (rank " << rank << ")";
    }
  }
  return runtime::ccl::legacy_groups(selection, topology, CclTopology::Ring, fabric.down_edges, "test");
}

constexpr Op kOps[] = {Op::AllGather, Op::ReduceScatter, Op::AllReduceRsAg, Op::AllReduceComposite};

// T3K's ring 4-0-2-6-7-3-1-5: 16 pages along dim 3, 2 per rank (a line's reduce_scatter chains a
// whole slice; rs-ag's pages split into 8 slices of 2).
TEST(LegacyOpenedRing, T3kRingRunsAsTheLineAroundADownLinkWithRanksInRingOrder) {
  for (const auto& [down, line] : std::vector<std::pair<std::pair<ChipId, ChipId>, std::vector<ChipId>>>{
           {{5, 4}, {4, 0, 2, 6, 7, 3, 1, 5}},     // the closing link: positions are ranks
           {{0, 2}, {2, 6, 7, 3, 1, 5, 4, 0}}}) {  // mid-ring: positions hold ranks 2..7, 0, 1
    for (const Op op : kOps) {
      SCOPED_TRACE(fmt::format("{} with {}-{} down", op_name(op), down.first, down.second));
      const std::vector<runtime::ccl::LegacyGroup> groups =
          run_and_check(op, Case{"t3k", std::nullopt, down, tile({1, 1, 32, 512})});
      ASSERT_EQ(groups.size(), 1u);
      EXPECT_EQ(groups[0].shape, CclTopology::Line);
      EXPECT_EQ(groups[0].chips, line);
      EXPECT_EQ(groups[0].chips_by_rank(), (std::vector<ChipId>{4, 0, 2, 6, 7, 3, 1, 5}));
    }
  }
}

// A 4x4 torus along axis 1 (its rows): row 0 runs as a line around its down link, rows 1-3 as
// rings, in one op. 8 pages along dim 3, 2 per rank.
TEST(LegacyOpenedRing, TorusRowWithADownLinkRunsAsALineBesideTheOtherRowsRings) {
  for (const auto& [down, line] : std::vector<std::pair<std::pair<ChipId, ChipId>, std::vector<ChipId>>>{
           {{3, 0}, {0, 1, 2, 3}}, {{0, 1}, {1, 2, 3, 0}}}) {
    for (const Op op : kOps) {
      SCOPED_TRACE(fmt::format("{} with {}-{} down", op_name(op), down.first, down.second));
      const std::vector<runtime::ccl::LegacyGroup> groups =
          run_and_check(op, Case{"torus:4x4", 1, down, tile({1, 1, 64, 128})});
      ASSERT_EQ(groups.size(), 4u);
      EXPECT_EQ(groups[0].shape, CclTopology::Line);
      EXPECT_EQ(groups[0].chips, line);
      for (std::size_t row = 1; row < groups.size(); ++row) EXPECT_EQ(groups[row].shape, CclTopology::Ring);
    }
  }
}

// Auto per shape (session 25): 16 bf16 tiles weigh 36864 B (legacy_composite_weighted_bytes),
// past a 4-ring's composite threshold and within a 4-line's (default_legacy_composite_max_weighted_bytes:
// 30 and 48 KiB on 1 link), so the rows that stay rings run reduce_scatter + all_gather and row 0,
// opened around its down link, the composite, in one op: its first workload runs the rings'
// reduce_scatter beside the line's gather, its second the rings' all_gather beside the line's
// local sum, on all 16 chips each; every chip's output is its group's reference, bit for bit. The
// intermediate buffer holds the composite's 4 copies; the rings use its first pages (their slice).
TEST(LegacyOpenedRing, TorusAllReduceAutoChoosesTheRingsAndTheOpenedLinesAlgorithmEach) {
  const TensorSpec tensor = tile({1, 1, 128, 128});
  const std::uint64_t weighted = ar::legacy_composite_weighted_bytes(tensor);
  ASSERT_EQ(weighted, 36864u);
  ASSERT_GT(weighted, ar::default_legacy_composite_max_weighted_bytes(CclTopology::Ring, 4, 1));
  ASSERT_LE(weighted, ar::default_legacy_composite_max_weighted_bytes(CclTopology::Line, 4, 1));
  for (const std::pair<ChipId, ChipId>& down : {std::pair<ChipId, ChipId>{3, 0}, std::pair<ChipId, ChipId>{1, 2}}) {
    SCOPED_TRACE(fmt::format("{}-{} down", down.first, down.second));
    std::vector<ar::PartChoice> parts;
    std::vector<runtime::MeshWorkload> workloads;
    run_and_check(Op::AllReduceAuto, Case{"torus:4x4", 1, down, tensor}, &parts, &workloads);
    ASSERT_EQ(parts.size(), 2u);
    EXPECT_EQ(parts[0].shape, CclTopology::Ring);
    EXPECT_EQ(parts[0].groups.chips,
              (std::vector<std::vector<ChipId>>{{4, 5, 6, 7}, {8, 9, 10, 11}, {12, 13, 14, 15}}));
    EXPECT_EQ(parts[0].choice.algorithm, ar::Algorithm::ReduceScatterAllGather);
    EXPECT_EQ(parts[1].shape, CclTopology::Line);
    EXPECT_EQ(parts[1].groups.chips, (std::vector<std::vector<ChipId>>{{0, 1, 2, 3}}));  // rank order
    EXPECT_EQ(parts[1].choice.algorithm, ar::Algorithm::Composite);
    EXPECT_FALSE(parts[1].choice.fallback);
    ASSERT_EQ(workloads.size(), 2u);
    EXPECT_EQ(workloads[0].name, "all_reduce:reduce_scatter_legacy+all_gather_legacy");
    EXPECT_EQ(workloads[1].name, "all_reduce:all_gather_legacy+all_reduce_local_reduce");
    for (const runtime::MeshWorkload& w : workloads) EXPECT_EQ(w.programs.size(), 16u) << w.name;
  }
}

}  // namespace
}  // namespace cclmesh::ccltest
