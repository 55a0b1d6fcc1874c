// The half-way ring reduce_scatter's builder (RingAlgorithm::HalfWay, half_way_ring.hpp) as a pure
// function of (params, topology): every fabric command a neighbour hop, each worker one direction,
// the bytes each direction of each link carries (the same both ways: 3.5 slices at N = 8), the
// chain lengths of the sets, the workers and cores it takes, and what it refuses.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>

#include "kernels/host/kernel_args_builder.hpp"
#include "kernels/kernel_args.hpp"
#include "runtime/ccl/reduce_scatter/half_way_ring.hpp"
#include "runtime/ccl/reduce_scatter/reduce_scatter.hpp"
#include "tests/unit/ccl/builder_test_util.hpp"
#include "topologies/builtin_systems.hpp"
#include "topologies/system_loader.hpp"

namespace cclmesh::runtime::ccl {
namespace {

namespace rs = reduce_scatter;
using test::dram_buffer;
using test::stream_text;

TensorSpec bf16(std::array<std::uint32_t, 4> shape) { return TensorSpec{shape, DataType::Bfloat16, Layout::Tile}; }

rs::Params half_way(const topo::Topology& topology, TensorSpec input, std::optional<std::uint32_t> workers = 1,
                    std::uint32_t links = 1) {
  rs::Params p;
  p.input = input;
  p.topology = CclTopology::Ring;
  p.ring_algorithm = rs::RingAlgorithm::HalfWay;
  p.workers_per_link = workers;
  p.num_links = links;
  p.fabric.mode = FabricMode::Ring;
  p.fabric.num_links = links;
  p.input_buffer = dram_buffer(1, input);
  p.output_buffer = dram_buffer(2, rs::output_spec(p, topology));
  if (rs::needs_intermediate(p, topology)) p.intermediate_buffer = dram_buffer(3, rs::intermediate_spec(p, topology));
  const std::vector<CoreRange> cores = rs::semaphore_cores(p, topology);
  p.barrier_semaphore = test::semaphore(1, {cores.front().start, cores.back().end});
  return p;
}

using test::expect_rejected;

// Pages a chip's workers write over the fabric, forward and backward, from their writers' streams
// (every fabric write a neighbour hop, checked on the way).
struct LinkPages {
  std::uint64_t forward = 0;
  std::uint64_t backward = 0;
};
LinkPages fabric_write_pages(const Program& program) {
  LinkPages pages;
  for (const KernelSpec& k : program.kernels) {
    if (k.kernel != kernels::kCclInterpreterKernelName || k.processor != DataMovementProcessor::Riscv0) continue;
    for (const auto& [core, rt] : k.runtime_args) {
      for (std::uint32_t s = 0; s < k.compile_time_args[kernels::interpreter::kCtNumStreams]; ++s) {
        const std::string text = stream_text(rt, s);
        for (std::size_t at = text.find("hops="); at != std::string::npos; at = text.find("hops=", at + 1)) {
          EXPECT_EQ(text.substr(at, 7), "hops=1 ") << text;
        }
        const std::string write = "STREAM_CB_TO_TENSOR dest=UNICAST hops=1 ";
        for (std::size_t at = text.find(write); at != std::string::npos; at = text.find(write, at + 1)) {
          const bool forward = text.substr(at + write.size(), 3) == "fwd";
          const std::size_t count_at = text.find("pages=", at) + 6;
          (forward ? pages.forward : pages.backward) += std::stoull(text.substr(count_at));
        }
      }
    }
  }
  return pages;
}

TEST(ReduceScatterHalfWayBuilder, ChainLengthsAndWorkers) {
  // Odd rings one set, (n-1)/2 both ways; even rings two, the opposite position in either chain.
  EXPECT_EQ(rs::plan::half_way_sets(3), 1u);
  EXPECT_EQ(rs::plan::half_way_chains(3, 0, 1).rightward, 1u);
  EXPECT_EQ(rs::plan::half_way_chains(7, 1, 1).leftward, 3u);
  EXPECT_EQ(rs::plan::half_way_chains(8, 0, 1).rightward, 4u);
  EXPECT_EQ(rs::plan::half_way_chains(8, 0, 1).leftward, 3u);
  EXPECT_EQ(rs::plan::half_way_chains(8, 1, 1).rightward, 3u);
  EXPECT_EQ(rs::plan::half_way_chains(8, 1, 1).leftward, 4u);
  // Runs go link by link: on 2 links runs 0 and 1 are set 0 (one per link), 2 and 3 set 1.
  EXPECT_EQ(rs::plan::half_way_chains(8, 1, 2).rightward, 4u);
  EXPECT_EQ(rs::plan::half_way_chains(8, 2, 2).rightward, 3u);
  for (const auto& [asked, even, odd] : std::vector<std::array<std::uint32_t, 3>>{
           {1, 2, 1}, {2, 2, 2}, {3, 4, 3}, {4, 4, 4}, {5, 6, 5}, {6, 6, 6}}) {
    EXPECT_EQ(rs::plan::half_way_workers_per_link(8, asked), even) << asked;
    EXPECT_EQ(rs::plan::half_way_workers_per_link(5, asked), odd) << asked;
  }
  const topo::Topology t3k = topo::build_t3k();
  const rs::Params p = half_way(t3k, bf16({1, 1, 32, 512}));
  EXPECT_EQ(rs::workers_per_link(p, t3k), 2u);
  EXPECT_EQ(rs::semaphore_cores(p, t3k).size(), 4u);  // 2 sets x (rightward, leftward)
  EXPECT_TRUE(rs::needs_intermediate(p, t3k));
  EXPECT_EQ(rs::intermediate_spec(p, t3k).shape[0], 2u);  // regions A and B
  const rs::RingAlgorithmChoice choice = rs::ring_algorithm_choice(p);
  EXPECT_EQ(choice.algorithm, rs::RingAlgorithm::HalfWay);
  EXPECT_EQ(choice.reason, "asked for");
  EXPECT_EQ(rs::to_string(rs::RingAlgorithm::HalfWay), "half_way");
  // Auto: the one-shot up to 512 KiB per chip, then the half-way ring (session 33).
  rs::Params automatic = p;
  automatic.ring_algorithm = rs::RingAlgorithm::Auto;
  automatic.workers_per_link.reset();
  automatic.input = bf16({1, 1, 1024, 1024});
  EXPECT_EQ(rs::resolved_ring_algorithm(automatic), rs::RingAlgorithm::HalfWay);
}

// T3K 8-ring, 4 workers per link: per chip 4 rightward workers (2 per set) that send forward only
// and 4 leftward ones backward only, through the two muxes; every fabric command one hop; each
// chip writes 3.5 slices forward and 3.5 backward (set 0's pages 4 hops right and 3 left, set 1's
// 3 and 4); the leftward workers' reduction adds the left partial as a third input.
TEST(ReduceScatterHalfWayBuilder, EveryLinkDirectionCarriesTheSameBytesOneHopAtATime) {
  const topo::Topology t3k = topo::build_t3k();
  const TensorSpec input = bf16({1, 1, 64, 32 * 8 * 16});  // 32 pages per slice
  const rs::Params p = half_way(t3k, input, 4);
  const MeshWorkload w = rs::build(p, t3k);
  ASSERT_EQ(w.programs.size(), 8u);
  const std::uint64_t slice_pages = 32;
  for (const auto& [chip, program] : w.programs) {
    SCOPED_TRACE(fmt::format("chip {}", chip));
    const LinkPages pages = fabric_write_pages(program);
    EXPECT_EQ(pages.forward, 7 * slice_pages / 2);
    EXPECT_EQ(pages.backward, 7 * slice_pages / 2);
    std::size_t owner_steps = 0;
    for (const KernelSpec& k : program.kernels) {
      if (k.kernel != kernels::kReduceKernelName) continue;
      const CoreCoord core = k.cores.front().start;
      const bool leftward = core.x >= 4;  // cores 0..3 rightward, 4..7 leftward, then the muxes
      const std::size_t args = k.runtime_args.at(core).size();
      EXPECT_EQ(args, leftward ? kernels::reduce::kNumRuntimeArgsWithIn2 : kernels::reduce::kNumRuntimeArgs);
      owner_steps += leftward ? 1 : 0;
    }
    EXPECT_EQ(owner_steps, 4u);
  }
}

// ring:3 (kL = kR = 1): each rightward worker only sends its raw slice (no reduce kernel), each
// leftward one sends its raw slice and sums the two it receives; on 2 links each link's workers
// carry half of each direction's bytes.
TEST(ReduceScatterHalfWayBuilder, ThreeRingAndTwoLinks) {
  const topo::Topology three = topo::load_system("ring:3");
  const rs::Params p = half_way(three, bf16({1, 1, 32, 32 * 3 * 4}));
  for (const auto& [chip, program] : rs::build(p, three).programs) {
    std::size_t reduces = 0;
    for (const KernelSpec& k : program.kernels) reduces += k.kernel == kernels::kReduceKernelName ? 1 : 0;
    EXPECT_EQ(reduces, 1u) << chip;
    const LinkPages pages = fabric_write_pages(program);
    EXPECT_EQ(pages.forward, 4u);
    EXPECT_EQ(pages.backward, 4u);
  }
  const topo::Topology two_links = topo::load_system("ring:8/2");
  const rs::Params on_two = half_way(two_links, bf16({1, 1, 32, 32 * 8 * 4}), 1, 2);
  for (const auto& [chip, program] : rs::build(on_two, two_links).programs) {
    const LinkPages pages = fabric_write_pages(program);
    EXPECT_EQ(pages.forward, 14u) << chip;  // 3.5 slices of 4 pages
    EXPECT_EQ(pages.backward, 14u) << chip;
  }
}

TEST(ReduceScatterHalfWayBuilder, Rejects) {
  const topo::Topology t3k = topo::build_t3k();
  rs::Params line = half_way(t3k, bf16({1, 1, 32, 512}));
  line.topology = CclTopology::Line;
  line.fabric.mode = FabricMode::Line;
  expect_rejected(line, t3k, "ring_algorithm half_way on a line in fabric mode; the half-way runs on a ring");
  rs::Params legacy = half_way(t3k, bf16({1, 1, 32, 512}));
  legacy.mode = CclMode::Legacy;
  EXPECT_THROW(rs::build(legacy, t3k), CclParamsError);
  rs::Params missing = half_way(t3k, bf16({1, 1, 32, 512}));
  missing.intermediate_buffer.reset();
  expect_rejected(missing, t3k, "the half-way ring needs intermediate_buffer");
  rs::Params small = half_way(t3k, bf16({1, 1, 32, 512}));
  small.intermediate_buffer = dram_buffer(3, rs::output_spec(small, t3k));
  expect_rejected(small, t3k, "half-way ring's partials need at least");
  rs::Params big_chunks = half_way(t3k, bf16({1, 1, 32, 512}));
  big_chunks.chunk_packets = 32;
  big_chunks.cb_packets = 20;
  expect_rejected(big_chunks, t3k, "the half-way ring's owner step on worker core (2,0) needs");
  // A 2-chip ring is a line, refused as for the chain.
  rs::Params two = half_way(t3k, bf16({1, 1, 32, 512}));
  two.groups.chips = {{0, 1}};
  expect_rejected(two, t3k, "a 2-chip ring (0,1) must run as a line");
}

}  // namespace
}  // namespace cclmesh::runtime::ccl
