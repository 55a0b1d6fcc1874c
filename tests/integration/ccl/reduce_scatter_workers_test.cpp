// reduce_scatter (and all_reduce through it) with several workers per link and direction
// (Params::workers_per_link > 1): the workers of a link and direction share the router's worker
// channel through a fabric mux (kernels/fabric_mux.cpp). Every chip's output is compared bit
// for bit with the host reference, which sums each worker's run in that worker's chain order;
// rings and lines, several links, shapes whose pages do not split evenly over the workers.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "kernels/kernel_args.hpp"
#include "runtime/ccl/reduce_scatter/reduce_scatter.hpp"
#include "tests/integration/ccl/ccl_runners.hpp"
#include "topologies/system_loader.hpp"

namespace cclmesh::ccltest {
namespace {

namespace rs = runtime::ccl::reduce_scatter;
namespace ar = runtime::ccl::all_reduce;

rs::Params rs_params(TensorSpec input, std::uint32_t dim, CclTopology topology, std::uint32_t workers) {
  rs::Params p;
  p.input = input;
  p.dim = dim;
  p.topology = topology;
  p.workers_per_link = workers;
  // The chain's workers (the one-shot ring runs one sender per link and direction).
  p.ring_algorithm = rs::RingAlgorithm::Chain;
  return p;
}

std::size_t mux_kernels(const runtime::MeshWorkload& w) {
  std::size_t n = 0;
  for (const auto& [chip, program] : w.programs) {
    n += static_cast<std::size_t>(std::count_if(program.kernels.begin(), program.kernels.end(), [](const auto& k) {
      return k.kernel == kernels::kFabricMuxKernelName;
    }));
  }
  return n;
}

TEST(ReduceScatterWorkersE2e, N300LineTwoAndThreeWorkers) {
  auto device = make_device(topo::build_n300(), FabricMode::Line);
  for (std::uint32_t workers : {2u, 3u}) {
    for (std::uint32_t dim : {2u, 3u}) {
      SCOPED_TRACE(fmt::format("{} workers, dim {}", workers, dim));
      // 2 x 5 tiles per slice along x: 10 pages per worker run set, uneven over 3 workers.
      const RunOutcome r = run_reduce_scatter(
          *device, rs_params(tile({1, 1, 64, 320}), dim, CclTopology::Line, workers), Memory{}, Memory{});
      EXPECT_TRUE(r.verified);
    }
  }
  const RunOutcome fp32 = run_reduce_scatter(
      *device, rs_params(tile({1, 2, 64, 256}, DataType::Float32), 1, CclTopology::Line, 2), Memory{}, Memory{});
  EXPECT_TRUE(fp32.verified);
}

TEST(ReduceScatterWorkersE2e, T3kRingTwoWorkersBf16AndFp32) {
  auto device = make_device(topo::build_t3k(), FabricMode::Ring);
  EXPECT_TRUE(run_reduce_scatter(*device, rs_params(tile({1, 1, 128, 1024}), 3, CclTopology::Ring, 2), Memory{},
                                 Memory{})
                  .verified);
  EXPECT_TRUE(run_reduce_scatter(*device, rs_params(tile({1, 1, 256, 64}, DataType::Float32), 2, CclTopology::Ring, 2),
                                 Memory{}, Memory{})
                  .verified);
}

// A 4-chip line whose middle chips use both directions, with 4 workers per link (each mux has
// 4 clients), the output in L1; and 3 workers with one-packet chunks (many chunk handshakes
// through the muxes).
TEST(ReduceScatterWorkersE2e, T3kFourChipLineFourWorkersAndSmallChunks) {
  const topo::Topology t3k = topo::build_t3k();
  const std::vector<ChipId> line = to_runtime(topo::find_system_line(t3k).chips);
  auto device = make_device(t3k, FabricMode::Line, std::vector<ChipId>(line.begin(), line.begin() + 4));
  EXPECT_TRUE(run_reduce_scatter(*device, rs_params(tile({1, 4, 32, 1280}), 1, CclTopology::Line, 4), Memory{},
                                 Memory{runtime::BufferType::L1, std::nullopt})
                  .verified);
  rs::Params small = rs_params(tile({1, 1, 64, 1536}), 3, CclTopology::Line, 3);
  small.chunk_packets = 1;
  small.packet_size_in_pages = 1;
  EXPECT_TRUE(run_reduce_scatter(*device, small, Memory{}, Memory{}).verified);
}

// Two routing planes, two workers per plane and direction: four muxes per chip.
TEST(ReduceScatterWorkersE2e, RingOnTwoLinksTwoWorkers) {
  auto device =
      make_device(topo::load_system("ring:8/2"), fabric_of(FabricMode::Ring, runtime::FabricScope::System, 2));
  rs::Params p = rs_params(tile({1, 1, 64, 32 * 16}), 3, CclTopology::Ring, 2);
  p.num_links = 2;
  EXPECT_TRUE(run_reduce_scatter(*device, p, Memory{}, Memory{}).verified);
}

TEST(ReduceScatterWorkersE2e, AllReduceRingAndLineTwoWorkers) {
  for (const bool ring : {true, false}) {
    SCOPED_TRACE(ring ? "ring" : "line");
    auto device = make_device(topo::build_t3k(), ring ? FabricMode::Ring : FabricMode::Line);
    ar::Params p;
    p.tensor = tile({1, 1, 64, 2048});
    p.topology = ring ? CclTopology::Ring : CclTopology::Line;
    p.algorithm = ar::Algorithm::ReduceScatterAllGather;
    p.workers_per_link = 2;
    EXPECT_TRUE(run_all_reduce(*device, p, Memory{}).verified);
  }
}

TEST(ReduceScatterWorkers, MuxOnlyWithSeveralWorkers) {
  const topo::Topology t3k = topo::build_t3k();
  auto device = make_device(t3k, FabricMode::Ring);
  for (std::uint32_t workers : {1u, 2u}) {
    rs::Params p = rs_params(tile({1, 1, 64, 2048}), 3, CclTopology::Ring, workers);
    p.fabric = device->options().fabric;
    p.input_buffer = device->create_buffer(runtime::ccl::interleaved_buffer_config(p.input, runtime::BufferType::Dram));
    p.output_buffer = device->create_buffer(
        runtime::ccl::interleaved_buffer_config(rs::output_spec(p, t3k), runtime::BufferType::Dram));
    p.barrier_semaphore =
        device->create_global_semaphore(rs::semaphore_cores(p, t3k), runtime::CoreKind::Tensix, 0);
    // Ring: up and down workers use one direction each, so one mux per direction per chip.
    EXPECT_EQ(mux_kernels(rs::build(p, t3k)), workers == 1 ? 0u : 2u * 8u);
    EXPECT_EQ(rs::semaphore_cores(p, t3k).size(), 2u * workers);
  }
}

// Unset, the workers follow the size rule: 4 once each link and direction carries
// kPagesForSeveralWorkers output pages, 1 below. The T3K ring's 2 directions split the output.
TEST(ReduceScatterWorkers, UnsetWorkersFollowTheSizeRule) {
  const topo::Topology t3k = topo::build_t3k();
  auto device = make_device(t3k, FabricMode::Ring);
  const std::uint32_t threshold_pages = rs::kPagesForSeveralWorkers;
  // Output tiles per chip = width in tiles / 8; per direction half of that.
  for (const std::uint32_t out_pages_per_direction : {threshold_pages - 1, threshold_pages}) {
    rs::Params p = rs_params(tile({1, 1, 32, 32 * 8 * 2 * out_pages_per_direction}), 3, CclTopology::Ring, 1);
    p.workers_per_link.reset();
    p.fabric = device->options().fabric;
    const std::uint32_t expected = out_pages_per_direction >= threshold_pages ? rs::kDefaultWorkersPerLink : 1;
    EXPECT_EQ(rs::workers_per_link(p, t3k), expected) << out_pages_per_direction << " pages per direction";
    EXPECT_EQ(rs::semaphore_cores(p, t3k).size(), 2u * expected);
    EXPECT_TRUE(run_reduce_scatter(*device, p, Memory{}, Memory{}).verified);
  }
}

// The rule was measured on tiles. A piece of a ROW_MAJOR row wider than a payload counts as at
// least the tiles its bytes fill: counted as one page, a 4096 B piece of an 8192 B row gave half the
// workers of the same bytes as tiles (N300 [1,1,16,4096] along dim 2: 15.87 -> 14.11 us with 4;
// T3K 8-line [1,1,64,4096] 110.13 -> 63.16). Pieces smaller than a tile still count one each
// (4384 B rows: 137 pieces of 32 B, each a NoC transfer and a reduce step), as before.
TEST(ReduceScatterWorkers, WideRowPiecesCountAtLeastTheTilesTheirBytesFill) {
  const auto rows = [](std::uint32_t count, std::uint32_t width, DataType dtype) {
    return TensorSpec{{1, 1, count, width}, dtype, Layout::RowMajor};
  };
  const std::uint32_t four = rs::kDefaultWorkersPerLink;
  struct Case {
    topo::Topology system;
    FabricMode mode;
    TensorSpec input;
    std::uint32_t workers;
  };
  const Case cases[] = {
      {topo::build_n300(), FabricMode::Line, tile({1, 1, 64, 1024}), four},  // 32 output tiles
      {topo::build_n300(), FabricMode::Line, rows(16, 4096, DataType::Bfloat16), four},  // 16 pieces of 2 tiles
      {topo::build_n300(), FabricMode::Line, rows(8, 4096, DataType::Bfloat16), 1u},
      {topo::build_n300(), FabricMode::Line, rows(16, 2048, DataType::Float32), 1u},  // 4096 B: one fp32 tile
      {topo::build_n300(), FabricMode::Line, rows(2, 2192, DataType::Bfloat16), four},  // 137 pieces of 32 B
      {topo::build_t3k(), FabricMode::Line, rows(64, 4096, DataType::Bfloat16), four},
      {topo::build_t3k(), FabricMode::Line, rows(32, 4096, DataType::Bfloat16), 1u}};
  for (const Case& c : cases) {
    auto device = make_device(c.system, c.mode);
    rs::Params p = rs_params(c.input, 2, CclTopology::Line, 1);
    p.workers_per_link.reset();
    p.fabric = device->options().fabric;
    SCOPED_TRACE(fmt::format("{} chips, [{}] {}", c.system.chip_count(), fmt::join(c.input.shape, ","),
                             c.input.layout == Layout::Tile ? "tile" : "row_major"));
    EXPECT_EQ(rs::workers_per_link(p, device->topology()), c.workers);
    EXPECT_TRUE(run_reduce_scatter(*device, p, Memory{}, Memory{}).verified);
  }
}

TEST(ReduceScatterWorkers, RefusesZeroAndTooManyWorkers) {
  const topo::Topology t3k = topo::build_t3k();
  auto device = make_device(t3k, FabricMode::Ring);
  for (std::uint32_t workers : {0u, kernels::fabric_mux::kMaxClients + 1}) {
    rs::Params p = rs_params(tile({1, 1, 64, 2048}), 3, CclTopology::Ring, workers);
    p.fabric = device->options().fabric;
    p.input_buffer = device->create_buffer(runtime::ccl::interleaved_buffer_config(p.input, runtime::BufferType::Dram));
    p.output_buffer = device->create_buffer(
        runtime::ccl::interleaved_buffer_config(rs::output_spec(p, t3k), runtime::BufferType::Dram));
    try {
      rs::validate(p, t3k);
      ADD_FAILURE() << workers << " workers accepted";
    } catch (const runtime::ccl::CclParamsError& e) {
      EXPECT_NE(std::string(e.what()).find("workers_per_link is " + std::to_string(workers)), std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace cclmesh::ccltest
