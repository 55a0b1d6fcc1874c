// all_gather (and its all_broadcast + concat fallback), reduce_scatter, all_reduce, reduce,
// all_to_all and all_broadcast on a torus:4x4 per-axis ring fabric with one link of a row or
// column down from the start (FabricOptions::down_edges): that group runs as a line from the chip
// after the link (FabricGroup positions) with its ranks in coordinate order, beside the other
// groups' rings, so every chip's output is the unfaulted run's, byte for byte, whichever link is
// down (reduce: the roots' outputs, the only ones defined). The same on ring:8's whole-system
// ring fabric (session 22), which no other ring avoids a link by: the ring runs as a line from
// the chip after the link, ranks in the ring's order. The inputs
// are small whole numbers in bfloat16, whose sums are exact in any order, so the reductions
// compare with the unfaulted rings too and no host reference is involved (with random inputs a
// line sums in another order than a ring and rounds differently; cli_fault_run_test checks
// those against the host reference). Ranks taken in the line's order (session 20's first cut)
// put row 0's all_gather output at [in1, in2, in3, in0] and reduce_scatter's slice 0 on chip 1:
// both fail here (checked). all_reduce's exact sums are the same on every chip whatever the
// ranks; its cases check that each algorithm runs such a line, not where data goes. reduce's
// root, all_to_all's chunks and all_broadcast's buffers taken by position fail here too (checked:
// the sum lands on chip 1, chunk 0 of row 0 on chip 1, chip 1's input in output 0).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <optional>
#include <utility>

#include "runtime/ccl/all_broadcast/all_broadcast.hpp"
#include "runtime/ccl/all_gather/all_gather.hpp"
#include "runtime/ccl/all_reduce/all_reduce.hpp"
#include "runtime/ccl/all_to_all/all_to_all.hpp"
#include "runtime/ccl/reduce/reduce.hpp"
#include "runtime/ccl/reduce_scatter/reduce_scatter.hpp"
#include "tests/integration/ccl/ccl_test_util.hpp"
#include "topologies/system_loader.hpp"

namespace cclmesh::ccltest {
namespace {

namespace ag = runtime::ccl::all_gather;
namespace rs = runtime::ccl::reduce_scatter;
namespace ar = runtime::ccl::all_reduce;
namespace rd = runtime::ccl::reduce;
namespace a2a = runtime::ccl::all_to_all;
namespace ab = runtime::ccl::all_broadcast;
using Edges = std::vector<std::pair<ChipId, ChipId>>;
using Outputs = std::map<ChipId, Bytes>;

// bfloat16 whole numbers 0..15, different per element and for every chip of a row or column
// (chip ids mod 16 differ there), whose sums of 4 (8 on ring:8) are exact (bfloat16 holds whole
// numbers to 256).
Bytes whole_numbers(std::size_t bytes, ChipId chip) {
  Bytes data(bytes);
  for (std::size_t i = 0; i + 1 < bytes; i += 2) {
    const std::size_t element = i / 2;
    const auto value = static_cast<float>((chip + element * 3 + element / 5) % 16);
    std::uint32_t bits = 0;
    std::memcpy(&bits, &value, sizeof bits);
    data[i] = static_cast<std::byte>((bits >> 16) & 0xFF);
    data[i + 1] = static_cast<std::byte>(bits >> 24);
  }
  return data;
}

enum class Op {
  AllGather,
  AllGatherBroadcastFallback,
  ReduceScatter,
  ReduceScatterWrap,
  ReduceScatterHalfWay,  // the rings half-way, the opened ring's line two-sided
  AllReduceOneShot,
  AllReduceRsAg,
  AllReduceComposite,
  ReduceRoot0,
  ReduceRoot2,
  AllToAll,
  AllBroadcast
};

// 48 elements along dim 3, not whole tiles: all_gather runs as all_broadcast + concat.
const TensorSpec kUntiledTensor = tile({1, 1, 32, 48});

// Where the rings run: a system and its groups (every row or column along `axis` on a per-axis
// fabric, or without one the whole-system ring), and a tensor of whole tiles per rank.
struct Rings {
  const char* system;
  std::optional<int> axis;
  TensorSpec tensor;
};
const Rings kTorusRows{"torus:4x4", 1, tile({1, 1, 64, 128})};  // 8 pages: 2 per rank along dim 3
const Rings kTorusColumns{"torus:4x4", 0, tile({1, 1, 64, 128})};
const Rings kWholeRing{"ring:8", std::nullopt, tile({1, 1, 64, 256})};  // 16 pages: 2 per rank

// Runs `op` as rings on `rings`' fabric, which avoids `down`; returns every chip's outputs, one
// after another (reduce: the roots' only, the rest undefined).
Outputs run(Op op, const Rings& rings, const Edges& down) {
  runtime::FabricOptions fabric = fabric_of(
      FabricMode::Ring, rings.axis ? runtime::FabricScope::Axes : runtime::FabricScope::System);
  fabric.down_edges = down;
  auto device = make_device(topo::load_system(rings.system), fabric);
  const topo::Topology& topology = device->topology();
  const TensorSpec& tensor = rings.tensor;
  runtime::ccl::GroupSelection groups;
  groups.cluster_axis = rings.axis;
  const auto interleaved = [&](const TensorSpec& spec) {
    return device->create_buffer(runtime::ccl::interleaved_buffer_config(spec, runtime::BufferType::Dram));
  };
  const auto semaphore = [&](const std::vector<runtime::CoreRange>& cores) {
    return device->create_global_semaphore(cores, runtime::CoreKind::Tensix, 0);
  };
  runtime::BufferHandle input;
  std::vector<runtime::BufferHandle> outputs_read;
  std::vector<ChipId> chips_read;  // every chip, or reduce's roots
  for (const topo::Chip& chip : topology.chips()) chips_read.push_back(static_cast<ChipId>(chip.id));
  std::vector<runtime::MeshWorkload> workloads;
  if (op == Op::AllGather || op == Op::AllGatherBroadcastFallback) {
    ag::Params p;
    p.input = op == Op::AllGather ? tensor : kUntiledTensor;
    p.dim = 3;
    p.groups = groups;
    p.fabric = fabric;
    input = p.input_buffer = interleaved(p.input);
    outputs_read = {p.output_buffer = interleaved(ag::output_spec(p, topology))};
    for (std::uint32_t i = 0; i < ag::broadcast_buffer_count(p, topology); ++i) {
      p.broadcast_buffers.push_back(device->create_buffer(ag::broadcast_buffer_config(p)));
    }
    EXPECT_EQ(p.broadcast_buffers.empty(), op == Op::AllGather);
    p.done_semaphore = semaphore(ag::semaphore_cores(p, topology));
    workloads = ag::build_workloads(p, topology);
  } else if (op == Op::ReduceRoot0 || op == Op::ReduceRoot2) {
    rd::Params p;
    p.tensor = tensor;
    p.root = op == Op::ReduceRoot0 ? 0 : 2;
    p.groups = groups;
    p.fabric = fabric;
    input = p.input_buffer = interleaved(p.tensor);
    outputs_read = {p.output_buffer = interleaved(p.tensor)};
    p.barrier_semaphore = semaphore(rd::semaphore_cores(p, topology));
    chips_read.clear();
    const runtime::FabricPlan plan(topology, fabric);
    for (const std::vector<ChipId>& group : runtime::ccl::resolve_groups(groups, topology, plan)) {
      chips_read.push_back(group.at(p.root));
    }
    workloads = {rd::build(p, topology)};
  } else if (op == Op::AllToAll) {
    a2a::Params p;
    p.tensor = tensor;
    p.dim = 3;
    p.groups = groups;
    p.fabric = fabric;
    input = p.input_buffer = interleaved(p.tensor);
    outputs_read = {p.output_buffer = interleaved(p.tensor)};
    p.done_semaphore = semaphore(a2a::semaphore_cores(p, topology));
    workloads = {a2a::build(p, topology)};
  } else if (op == Op::AllBroadcast) {
    ab::Params p;
    p.input = tensor;
    p.groups = groups;
    p.fabric = fabric;
    input = p.input_buffer = interleaved(p.input);
    for (std::uint32_t i = 0; i < ab::output_buffer_count(p, topology); ++i) {
      p.output_buffers.push_back(interleaved(p.input));
    }
    outputs_read = p.output_buffers;
    p.done_semaphore = semaphore(ab::semaphore_cores(p, topology));
    workloads = {ab::build(p, topology)};
  } else if (op == Op::ReduceScatter || op == Op::ReduceScatterWrap || op == Op::ReduceScatterHalfWay) {
    rs::Params p;
    p.input = tensor;
    p.dim = 3;
    p.groups = groups;
    p.fabric = fabric;
    p.ring_algorithm = op == Op::ReduceScatterHalfWay ? rs::RingAlgorithm::HalfWay : rs::RingAlgorithm::Chain;
    p.line_algorithm = op == Op::ReduceScatterWrap ? rs::LineAlgorithm::Wrap : rs::LineAlgorithm::TwoSided;
    input = p.input_buffer = interleaved(p.input);
    outputs_read = {p.output_buffer = interleaved(rs::output_spec(p, topology))};
    if (rs::needs_intermediate(p, topology)) p.intermediate_buffer = interleaved(rs::intermediate_spec(p, topology));
    p.barrier_semaphore = semaphore(rs::semaphore_cores(p, topology));
    workloads = {rs::build(p, topology)};
  } else {
    ar::Params p;
    p.tensor = tensor;
    p.groups = groups;
    p.fabric = fabric;
    p.algorithm = op == Op::AllReduceOneShot ? ar::Algorithm::OneShot
                  : op == Op::AllReduceRsAg  ? ar::Algorithm::ReduceScatterAllGather
                                             : ar::Algorithm::Composite;
    input = p.input_buffer = interleaved(p.tensor);
    outputs_read = {p.output_buffer = interleaved(p.tensor)};
    p.intermediate_buffer = interleaved(ar::intermediate_spec(p, topology));
    if (ar::needs_rs_intermediate(p, topology)) {
      p.rs_intermediate_buffer = interleaved(ar::rs_intermediate_spec(p, topology));
    }
    const std::vector<runtime::CoreRange> cores = ar::semaphore_cores(p, topology);
    p.barrier_semaphore = semaphore(cores);
    p.done_semaphore = semaphore(cores);
    workloads = ar::build(p, topology);
  }
  for (const topo::Chip& chip : topology.chips()) {
    const auto id = static_cast<ChipId>(chip.id);
    device->write_buffer(id, input, whole_numbers(input.config.size_bytes, id));
  }
  for (const runtime::MeshWorkload& w : workloads) device->enqueue_workload(w);
  device->finish();
  Outputs outputs;
  for (const ChipId chip : chips_read) {
    for (const runtime::BufferHandle& output : outputs_read) {
      const Bytes bytes = read_back(*device, chip, output);
      outputs[chip].insert(outputs[chip].end(), bytes.begin(), bytes.end());
    }
  }
  return outputs;
}

const std::vector<Op> kOps{Op::AllGather,        Op::AllGatherBroadcastFallback,
                           Op::ReduceScatter,    Op::ReduceScatterWrap,
                           Op::ReduceScatterHalfWay,
                           Op::AllReduceOneShot, Op::AllReduceRsAg,
                           Op::AllReduceComposite, Op::ReduceRoot0,
                           Op::ReduceRoot2,      Op::AllToAll,
                           Op::AllBroadcast};

void expect_unfaulted_outputs(const Outputs& outputs, const Outputs& unfaulted) {
  EXPECT_EQ(outputs.size(), unfaulted.size());
  for (const auto& [chip, bytes] : outputs) {
    EXPECT_TRUE(bytes == unfaulted.at(chip)) << "chip " << chip << ": not the unfaulted run's output";
  }
}

TEST(OpenedRingRanks, EveryOutputIsTheUnfaultedOnesWhicheverLinkIsDown) {
  const std::vector<std::pair<const Rings*, Edges>> cases{{&kTorusRows, {{0, 1}}},
                                                          {&kTorusRows, {{1, 2}}},
                                                          {&kTorusRows, {{3, 0}}},
                                                          {&kTorusColumns, {{0, 4}}},
                                                          {&kTorusColumns, {{4, 8}}}};
  for (const Op op : kOps) {
    const Outputs unfaulted[2] = {run(op, kTorusColumns, {}), run(op, kTorusRows, {})};
    for (const auto& [rings, down] : cases) {
      SCOPED_TRACE(fmt::format("op {} axis {} link {}-{} down", static_cast<int>(op), *rings->axis, down[0].first,
                               down[0].second));
      expect_unfaulted_outputs(run(op, *rings, down), unfaulted[*rings->axis]);
    }
  }
}

// ring:8's whole-system ring, which has no other, with a link down mid-ring (the line 1-...-7-0,
// positions holding ranks 1..7, 0), further on (4-...-3) and at its closing link (0-...-7, the
// positions the ranks): the unfaulted ring's outputs each time. Ranks in the line's order (what
// resolve_groups gave before FabricLine::opened_from) fail here (checked: all_gather's, its
// fallback's and reduce_scatter's outputs differ on every chip with 0-1 or 4-3 down).
TEST(OpenedRingRanks, AWholeSystemRingRunAsALineGivesTheUnfaultedOutputs) {
  for (const Op op : kOps) {
    const Outputs unfaulted = run(op, kWholeRing, {});
    for (const Edges& down : {Edges{{0, 1}}, Edges{{4, 3}}, Edges{{7, 0}}}) {
      SCOPED_TRACE(fmt::format("op {} ring:8 link {}-{} down", static_cast<int>(op), down[0].first, down[0].second));
      expect_unfaulted_outputs(run(op, kWholeRing, down), unfaulted);
    }
  }
}

}  // namespace
}  // namespace cclmesh::ccltest
