// reduce_scatter and all_reduce (legacy reduce_scatter + legacy all_gather) in legacy EDM mode
// end to end on the simulated device with real data: per-op EDMs on both ends of every hop,
// partial sums moving neighbour to neighbour (REFERENCE 5, 7.5). N300 line, T3K 8-chip ring
// and line and a 4-chip line; bf16 and fp32; TILE and ROW_MAJOR; DRAM and L1; both EDM
// termination modes; one-buffer channels and small messages (many messages per slice, a short
// last one). Every chip's output is compared bit for bit with reference_outputs, which sums in
// the legacy chains' order (reduce_scatter_legacy.hpp).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "runtime/ccl/all_reduce/all_reduce.hpp"
#include "runtime/ccl/reduce_scatter/reduce_scatter.hpp"
#include "tests/integration/ccl/legacy_runner.hpp"

namespace cclmesh::ccltest {
namespace {

namespace rs = runtime::ccl::reduce_scatter;
namespace ar = runtime::ccl::all_reduce;
using runtime::ccl::LegacyTermination;

// The EDMs reduce_scatter launched; every chip's output is checked against reference_outputs.
std::size_t run_reduce_scatter(sim::device::SimMeshDevice& device, const LegacyCase& c) {
  return run_legacy_reduce_scatter(device, c).edms;
}

TEST(ReduceScatterLegacy, N300LineEveryDim) {
  for (std::uint32_t dim = 0; dim < 4; ++dim) {
    SCOPED_TRACE(dim);
    auto device = legacy_device(topo::build_n300());
    LegacyCase c;
    c.input = tile({2, 2, 64, 64});
    c.dim = dim;
    c.topology = CclTopology::Line;
    EXPECT_EQ(run_reduce_scatter(*device, c), 2u);  // one EDM on each end of the one hop
  }
}

TEST(ReduceScatterLegacy, T3kRingAndLines) {
  {
    auto device = legacy_device(topo::build_t3k());
    LegacyCase c;
    c.input = tile({1, 1, 64, 32 * 8 * 6});  // 12 tiles per slice: two 6-tile halves
    EXPECT_EQ(run_reduce_scatter(*device, c), 16u);  // 8 hops, both ends
  }
  {
    auto device = legacy_device(topo::build_t3k());
    LegacyCase c;
    c.input = tile({1, 1, 64, 32 * 8 * 3});
    c.topology = CclTopology::Line;
    EXPECT_EQ(run_reduce_scatter(*device, c), 14u);
  }
  {
    auto device = legacy_device(topo::build_t3k());
    LegacyCase c;  // a 4-chip line, dim 2
    const auto line = to_runtime(topo::find_system_line(device->topology()).chips);
    c.groups = {{line[0], line[1], line[2], line[3]}};
    c.input = tile({1, 1, 32 * 8, 64});
    c.dim = 2;
    c.topology = CclTopology::Line;
    EXPECT_EQ(run_reduce_scatter(*device, c), 6u);
  }
}

TEST(ReduceScatterLegacy, DtypesLayoutsAndMemories) {
  struct Variant {
    TensorSpec input;
    std::uint32_t dim;
    BufferType memory;
    CclTopology topology;
  };
  const Variant variants[] = {
      {tile({1, 1, 32, 32 * 16}, DataType::Float32), 3, BufferType::Dram, CclTopology::Ring},
      {tile({1, 1, 32, 32 * 16}, DataType::Float32), 3, BufferType::L1, CclTopology::Line},
      {TensorSpec{{1, 1, 16, 96}, DataType::Bfloat16, Layout::RowMajor}, 2, BufferType::Dram, CclTopology::Ring},
      {TensorSpec{{1, 1, 16, 100}, DataType::Bfloat16, Layout::RowMajor}, 2, BufferType::L1, CclTopology::Line},
      {tile({1, 8, 32, 64}), 1, BufferType::L1, CclTopology::Ring},
  };
  for (const Variant& v : variants) {
    SCOPED_TRACE(fmt::format("dim {} {}", v.dim, runtime::ccl::to_string(v.topology)));
    auto device = legacy_device(topo::build_t3k());
    LegacyCase c;
    c.input = v.input;
    c.dim = v.dim;
    c.memory = v.memory;
    c.topology = v.topology;
    run_reduce_scatter(*device, c);
  }
}

TEST(ReduceScatterLegacy, TerminationModesAndSmallMessages) {
  for (const CclTopology shape : {CclTopology::Ring, CclTopology::Line}) {
    for (const LegacyTermination termination : {LegacyTermination::MessageCount, LegacyTermination::WorkerSignal}) {
      SCOPED_TRACE(fmt::format("{} {}", runtime::ccl::to_string(shape), runtime::ccl::to_string(termination)));
      auto device = legacy_device(topo::build_t3k());
      LegacyCase c;
      c.input = tile({1, 1, 32, 32 * 8 * 10});  // 10 tiles per slice, 3-tile messages: a short last one
      c.topology = shape;
      c.legacy.termination = termination;
      c.legacy.buffers_per_channel = 1;
      c.legacy.pages_per_message = 3;
      run_reduce_scatter(*device, c);
    }
  }
}

TEST(AllReduceLegacy, N300AndT3kRingAndLine) {
  {
    auto device = legacy_device(topo::build_n300());
    run_legacy_all_reduce(*device, CclTopology::Line, tile({1, 1, 32, 32 * 6}));
  }
  {
    auto device = legacy_device(topo::build_t3k());
    run_legacy_all_reduce(*device, CclTopology::Ring, tile({1, 1, 64, 32 * 16}));
  }
  {
    auto device = legacy_device(topo::build_t3k());
    run_legacy_all_reduce(*device, CclTopology::Line, tile({1, 1, 32, 32 * 8}, DataType::Float32));
  }
}

// Legacy mode builds reduce_scatter + all_gather and the composite (its all_gather the legacy
// one, legacy_all_reduce_composite_test.cpp), not the one-shot, which multicasts over the fabric.
TEST(AllReduceLegacy, CompositeButNotOneShot) {
  auto device = legacy_device(topo::build_t3k());
  ar::Params p;
  p.tensor = tile({1, 1, 32, 32 * 8});
  p.mode = runtime::ccl::CclMode::Legacy;
  p.fabric = device->options().fabric;
  p.algorithm = ar::Algorithm::OneShot;
  EXPECT_THROW(ar::resolved_algorithm(p, device->topology()), runtime::ccl::CclParamsError);
  p.algorithm = ar::Algorithm::Composite;
  EXPECT_EQ(ar::resolved_algorithm(p, device->topology()), ar::Algorithm::Composite);
  p.algorithm = ar::Algorithm::ReduceScatterAllGather;
  EXPECT_EQ(ar::resolved_algorithm(p, device->topology()), ar::Algorithm::ReduceScatterAllGather);
}

}  // namespace
}  // namespace cclmesh::ccltest
