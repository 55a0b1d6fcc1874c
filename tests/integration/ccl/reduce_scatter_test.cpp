// reduce_scatter end to end on the simulated device with real data: N300 (2-chip line), T3K
// 4- and 8-chip lines and the 8-chip ring, every dim, TILE and ROW_MAJOR, bf16 and fp32, DRAM
// and L1, several groups at once, back to back. Every chip's output is compared bit for bit
// with reduce_scatter::reference_outputs, which sums in the device's order with the device's
// bf16 rounding after every addition (no tolerance needed).
#include "runtime/ccl/reduce_scatter/reduce_scatter.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "tests/integration/ccl/ccl_runners.hpp"
#include "tests/integration/ccl/reduce_scatter_case.hpp"
#include "topologies/system_loader.hpp"

namespace cclmesh::ccltest {
namespace {

namespace rs = runtime::ccl::reduce_scatter;

using Case = ReduceScatterCase;

RunOutcome run_case(sim::device::SimMeshDevice& device, const Case& c) { return run_reduce_scatter_case(device, c); }

TEST(ReduceScatterE2e, N300LineEveryDim) {
  auto device = make_device(topo::build_n300(), FabricMode::Line);
  for (std::uint32_t dim = 0; dim < 4; ++dim) {
    SCOPED_TRACE(fmt::format("dim {}", dim));
    Case c;
    c.input = tile({2, 2, 64, 64});
    c.dim = dim;
    c.topology = CclTopology::Line;
    run_case(*device, c);
  }
}

TEST(ReduceScatterE2e, T3kRingEveryDimAndFp32) {
  auto device = make_device(topo::build_t3k(), FabricMode::Ring);
  for (std::uint32_t dim = 0; dim < 4; ++dim) {
    SCOPED_TRACE(fmt::format("dim {}", dim));
    Case c;
    c.input = tile({dim == 0 ? 8u : 1u, dim == 1 ? 8u : 1u, dim == 2 ? 256u : 64u, dim == 3 ? 256u : 64u});
    c.dim = dim;
    run_case(*device, c);
  }
  Case fp32;
  fp32.input = tile({1, 1, 32, 256 * 8}, DataType::Float32);  // REFERENCE 8 #27 shape per chip x 8
  run_case(*device, fp32);
}

TEST(ReduceScatterE2e, T3kEightChipLineRowMajorIntoL1) {
  auto device = make_device(topo::build_t3k(), FabricMode::Line);
  Case c;
  c.input = TensorSpec{{1, 2, 224, 256}, DataType::Bfloat16, Layout::RowMajor};  // REFERENCE 8 #29 per chip, RM
  c.dim = 2;
  c.topology = CclTopology::Line;
  c.output_memory = Memory{BufferType::L1, std::nullopt};
  run_case(*device, c);
}

TEST(ReduceScatterE2e, T3kFourChipLineDim1) {
  const topo::Topology t3k = topo::build_t3k();
  const std::vector<ChipId> line = to_runtime(topo::find_system_line(t3k).chips);
  auto device = make_device(t3k, FabricMode::Line, std::vector<ChipId>(line.begin(), line.begin() + 4));
  Case c;
  c.input = tile({1, 4, 32, 1280});  // REFERENCE 8 #30: out (1,1,32,1280) per chip on a 4-chip line
  c.dim = 1;
  c.topology = CclTopology::Line;
  run_case(*device, c);
}

// Both line algorithms on a 4-chip line, bf16 and fp32, each against its own reduction order
// bit for bit; the two-sided one with one-packet chunks too (many credits and resets per
// message, and the owners' left partials chunk by chunk) and three times back to back.
TEST(ReduceScatterE2e, T3kFourChipLineTwoSidedAndWrap) {
  const topo::Topology t3k = topo::build_t3k();
  const std::vector<ChipId> line = to_runtime(topo::find_system_line(t3k).chips);
  auto device = make_device(t3k, FabricMode::Line, std::vector<ChipId>(line.begin(), line.begin() + 4));
  for (const rs::LineAlgorithm algorithm : {rs::LineAlgorithm::TwoSided, rs::LineAlgorithm::Wrap}) {
    for (const DataType dtype : {DataType::Bfloat16, DataType::Float32}) {
      SCOPED_TRACE(rs::to_string(algorithm));
      Case c;
      c.input = tile({1, 1, 64, 1024}, dtype);
      c.topology = CclTopology::Line;
      c.line_algorithm = algorithm;
      run_case(*device, c);
    }
  }
  Case small;
  small.input = tile({1, 1, 64, 512});
  small.topology = CclTopology::Line;
  small.chunk_packets = 1;
  small.packet_pages = 1;
  run_case(*device, small);
  // Back to back behind the barrier: the intermediate buffer's regions are reused at once.
  Case repeated;
  repeated.input = tile({1, 1, 64, 1024});
  repeated.topology = CclTopology::Line;
  repeated.repeats = 3;
  run_case(*device, repeated);
}

// Many small chunks per message: the receive and credit semaphores alternate and reset many
// times, and a tiny chunk keeps the sender waiting on credits.
TEST(ReduceScatterE2e, T3kRingOnePacketChunksAndClusterAxisRows) {
  auto device = make_device(topo::build_t3k(), FabricMode::Ring);
  Case c;
  c.input = tile({1, 1, 128, 1024});
  c.chunk_packets = 1;
  c.packet_pages = 1;
  run_case(*device, c);
  Case rows;
  rows.input = tile({1, 1, 64, 512});
  rows.topology = CclTopology::Line;
  rows.cluster_axis = 1;
  const RunOutcome r = run_case(*device, rows);
  EXPECT_EQ(r.group_size, 4u);
}

// REFERENCE 8 #31: out (1,1,32,4096) per chip, width sharded (32,128) on 8x4 cores: the output
// is also where the partials land.
TEST(ReduceScatterE2e, T3kRingIntoWidthShardedL1) {
  auto device = make_device(topo::build_t3k(), FabricMode::Ring);
  Case c;
  c.input = tile({1, 1, 32, 4096 * 8});
  c.output_memory = Memory{BufferType::L1, ShardLayout{runtime::TensorMemoryLayout::WidthSharded,
                                                      {runtime::CoreRange{{0, 0}, {7, 3}}}, 32, 128,
                                                      runtime::ShardOrientation::RowMajor}};
  run_case(*device, c);
}

// Galaxy columns (cluster_axis 0: 8 independent 4-chip lines), each on its own fabric line, with
// 2 routing planes: each link's worker reduces its own half of every slice.
TEST(ReduceScatterE2e, GalaxyColumnsOnTwoLinks) {
  auto device = make_device(topo::build_galaxy(), fabric_of(FabricMode::Line, runtime::FabricScope::Axes, 2));
  Case c;
  c.input = tile({1, 1, 64, 32 * 8});
  c.topology = CclTopology::Line;
  c.cluster_axis = 0;
  c.num_links = 2;
  EXPECT_EQ(run_case(*device, c).group_size, 4u);
}

// TG rows (cluster_axis 1), one link.
TEST(ReduceScatterE2e, TgRowsOnThePerAxisFabric) {
  auto device = make_device(topo::build_tg(), fabric_of(FabricMode::Line, runtime::FabricScope::Axes));
  Case c;
  c.input = tile({1, 1, 32, 32 * 16});
  c.topology = CclTopology::Line;
  c.cluster_axis = 1;
  EXPECT_EQ(run_case(*device, c).group_size, 8u);
}

// A ring on 2 links: up and down workers on each plane.
TEST(ReduceScatterE2e, RingOnTwoLinks) {
  auto device = make_device(topo::load_system("ring:8/2"), fabric_of(FabricMode::Ring, runtime::FabricScope::System, 2));
  Case c;
  c.input = tile({1, 1, 64, 32 * 16});
  c.num_links = 2;
  run_case(*device, c);
}

TEST(ReduceScatterE2e, BackToBack) {
  auto device = make_device(topo::build_t3k(), FabricMode::Ring);
  Case c;
  c.input = tile({1, 1, 64, 512});
  c.repeats = 3;
  run_case(*device, c);
}

// The one-shot direct ring (REFERENCE 7.5, one_shot.hpp), bit for bit against its own order
// (own slice first, then the others nearest first): the 8-ring, bf16 and bfp8_b, DRAM into L1
// and L1 into DRAM, one-packet chunks (many read-back passes), dim 2, three times back to back
// (no finish between: the senders' entry handshake keeps a run off copies still being summed).
TEST(ReduceScatterE2e, T3kRingOneShot) {
  auto device = make_device(topo::build_t3k(), FabricMode::Ring);
  const Memory l1{BufferType::L1, std::nullopt};
  for (const DataType dtype : {DataType::Bfloat16, DataType::Bfloat8B}) {
    SCOPED_TRACE(fmt::format("dtype {}", static_cast<int>(dtype)));
    Case c;
    c.input = tile({1, 1, 64, 32 * 8 * 5}, dtype);  // 5 tiles wide per slice, 2 rows
    c.ring_algorithm = rs::RingAlgorithm::OneShot;
    c.output_memory = l1;
    run_case(*device, c);
  }
  Case from_l1;
  from_l1.input = tile({1, 1, 32, 256 * 8});  // REFERENCE 8 #27 per chip x 8
  from_l1.input_memory = l1;
  from_l1.ring_algorithm = rs::RingAlgorithm::OneShot;
  run_case(*device, from_l1);
  Case chunks;
  chunks.input = tile({1, 1, 128, 1024});
  chunks.chunk_packets = 1;
  chunks.packet_pages = 1;
  chunks.ring_algorithm = rs::RingAlgorithm::OneShot;
  run_case(*device, chunks);
  Case rows;
  rows.input = tile({1, 1, 32 * 8, 64});
  rows.dim = 2;
  rows.ring_algorithm = rs::RingAlgorithm::Auto;  // 32 KiB: Auto runs the one-shot
  rows.repeats = 3;
  run_case(*device, rows);
}

// The T3K's MMIO square 0-1-3-2 as a 4-ring (REFERENCE 3.3), DRAM and L1, and the one-shot on
// 2 links (each link's senders and reduce core on its half of every slice's pages), fp32 too.
TEST(ReduceScatterE2e, FourRingAndTwoLinksOneShot) {
  auto square = make_device(topo::build_t3k(), FabricMode::Ring, {0, 1, 3, 2});
  for (const BufferType memory : {BufferType::Dram, BufferType::L1}) {
    Case c;
    c.input = tile({1, 1, 64, 32 * 4 * 3});
    c.ring_algorithm = rs::RingAlgorithm::OneShot;
    c.input_memory = Memory{memory, std::nullopt};
    c.output_memory = Memory{memory, std::nullopt};
    EXPECT_EQ(run_case(*square, c).group_size, 4u);
  }
  auto two_links =
      make_device(topo::load_system("ring:8/2"), fabric_of(FabricMode::Ring, runtime::FabricScope::System, 2));
  for (const DataType dtype : {DataType::Bfloat16, DataType::Float32}) {
    Case c;
    c.input = tile({1, 1, 32, 32 * 8 * 3}, dtype);  // 3 pages per slice: the links get 2 and 1
    c.num_links = 2;
    c.ring_algorithm = rs::RingAlgorithm::OneShot;
    run_case(*two_links, c);
  }
}

// REFERENCE 7.5: the one-shot "sends about 2.3x the bytes". On 8 chips each chip's seven slices
// travel 1, 1, 2, 2, 3, 3, 4 hops (16 slice-hops) against the chain's seven one-hop messages:
// 16/7 = 2.29x of data, checked here on the links at 256 KiB per chip. The links also carry
// packet headers and the chain's credits, so each total must hold its data and stay below one
// more slice-hop per chip (a route the long way round would add at least two).
TEST(ReduceScatterE2e, T3kRingOneShotSends16Over7OfTheChainsBytes) {
  std::int64_t bytes[2] = {};
  for (const rs::RingAlgorithm algorithm : {rs::RingAlgorithm::OneShot, rs::RingAlgorithm::Chain}) {
    auto device = make_device(topo::build_t3k(), FabricMode::Ring);
    Case c;
    c.input = tile({1, 1, 128, 1024});  // 256 KiB per chip
    c.ring_algorithm = algorithm;
    // One worker per link and direction, so the chain's packets carry whole runs of a slice (the
    // size rule gives it 4 since session 36: 4 workers' 2-page packets add headers and credits).
    c.workers_per_link = 1;
    // Every chip's, over every link, since the device was made.
    bytes[algorithm == rs::RingAlgorithm::OneShot ? 0 : 1] = run_case(*device, c).total_link_payload_bytes();
  }
  const std::int64_t slice = 256 * 1024 / 8;
  EXPECT_GE(bytes[0], 8 * 16 * slice);
  EXPECT_LT(bytes[0], 8 * 17 * slice);
  EXPECT_GE(bytes[1], 8 * 7 * slice);
  EXPECT_LT(bytes[1], 8 * 8 * slice);
  std::printf("one-shot %lld B, chain %lld B on the links: %.3fx (data alone 16/7 = 2.286x)\n",
              static_cast<long long>(bytes[0]), static_cast<long long>(bytes[1]),
              static_cast<double>(bytes[0]) / static_cast<double>(bytes[1]));
}

void print_figures(const char* what, const RunOutcome& r) {
  ccltest::print_figures(what, "input", r.input_bytes, r.kernel_ns, exchange_bus_factor(r.group_size));
}

TEST(ReduceScatterE2eFigures, T3kRingSixteenMebibytes) {
  auto device = make_device(topo::build_t3k(), FabricMode::Ring);
  // 2-tile CB packets in chunks of 4 / 16 / 64 packets gave 2.85 / 4.34 / 4.85 GB/s busbw, 8-tile
  // packets in chunks of 8 6.51 and 16-tile packets 7.13 (docs/collectives.md).
  Case c;
  c.input = tile({1, 1, 1024, 8192});  // 16 MiB per chip
  c.chunk_packets = 8;
  print_figures("T3K 8-ring reduce_scatter", run_case(*device, c));
}

TEST(ReduceScatterE2eFigures, T3kLineEightMebibytes) {
  auto device = make_device(topo::build_t3k(), FabricMode::Line);
  Case c;
  c.input = tile({1, 1, 1024, 4096});
  c.topology = CclTopology::Line;
  print_figures("T3K 8-line reduce_scatter", run_case(*device, c));
}

}  // namespace
}  // namespace cclmesh::ccltest
