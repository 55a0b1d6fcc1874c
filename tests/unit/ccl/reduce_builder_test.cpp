// reduce's builder as a pure function of (params, topology): what validate() rejects, which
// chain each topology and root run (the order the reference sums in), and which kernels run on
// the chain's start, middle and root.
#include <gtest/gtest.h>

#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "kernels/kernel_args.hpp"
#include "runtime/ccl/common/reduction_chain_cbs.hpp"
#include "runtime/ccl/reduce/reduce.hpp"
#include "tests/unit/ccl/builder_test_util.hpp"
#include "topologies/builtin_systems.hpp"
#include "topologies/system_loader.hpp"

namespace cclmesh::runtime::ccl {
namespace {

using test::dram_buffer;
using test::semaphore;

TensorSpec bf16(std::array<std::uint32_t, 4> shape) { return TensorSpec{shape, DataType::Bfloat16, Layout::Tile}; }

reduce::Params params(FabricMode fabric, CclTopology shape, TensorSpec tensor, std::uint32_t root = 0) {
  reduce::Params p;
  p.tensor = tensor;
  p.root = root;
  p.topology = shape;
  p.fabric.mode = fabric;
  p.input_buffer = dram_buffer(1, tensor);
  p.output_buffer = dram_buffer(2, tensor);
  p.barrier_semaphore = semaphore(1, {{0, 0}, {1, 0}});
  return p;
}

using test::expect_rejected;

TEST(ReduceBuilder, Rejects) {
  const topo::Topology t3k = topo::build_t3k();
  const topo::Topology n300 = topo::build_n300();
  const auto base = [] { return params(FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 32, 256})); };
  EXPECT_NO_THROW(reduce::validate(base(), t3k));
  {
    reduce::Params p = base();
    p.root = 8;
    expect_rejected(p, t3k, "root 8 is not a rank of a group of 8 chips; expected 0..7");
  }
  {
    // bfp8_b is summed tile by tile (kernels/reduce/bfp8_math.hpp): no longer a rejection.
    reduce::Params p = base();
    p.tensor.dtype = DataType::Bfloat8B;
    p.input_buffer = dram_buffer(1, p.tensor);
    p.output_buffer = dram_buffer(2, p.tensor);
    EXPECT_NO_THROW(reduce::validate(p, t3k));
  }
  {
    reduce::Params p = base();
    p.barrier_semaphore.reset();
    expect_rejected(p, t3k, "barrier_semaphore");
  }
  {
    reduce::Params p = base();
    p.output_buffer = p.input_buffer;
    expect_rejected(p, t3k, "same buffer");
  }
  {
    reduce::Params p = base();
    p.output_buffer = dram_buffer(2, bf16({1, 1, 32, 512}));
    expect_rejected(p, t3k, "output buffer is");
  }
  {
    reduce::Params p = base();
    p.mode = CclMode::Legacy;
    expect_rejected(p, t3k, "legacy EDM mode is not supported");
  }
  {
    reduce::Params p = base();
    p.chunk_packets = 0;
    expect_rejected(p, t3k, "chunk_packets");
  }
  {
    reduce::Params p = params(FabricMode::Line, CclTopology::Ring, bf16({1, 1, 32, 256}));
    expect_rejected(p, n300, "must run as a line");
  }
}

// The order each run's pages are summed in, which reference_output() follows.
TEST(ReduceBuilder, ChainsEndAtTheRoot) {
  const topo::Topology t3k = topo::build_t3k();
  using V = std::vector<std::uint32_t>;
  // Ring: an up chain on the first half of the pages, a down chain on the second.
  const reduce::Params ring = params(FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 32, 256}), 2);
  EXPECT_EQ(reduce::chain_order(ring, t3k, 0), (V{3, 4, 5, 6, 7, 0, 1, 2}));
  EXPECT_EQ(reduce::chain_order(ring, t3k, 1), (V{1, 0, 7, 6, 5, 4, 3, 2}));
  EXPECT_THROW(reduce::chain_order(ring, t3k, 2), CclParamsError);
  // Line: root 0 runs the down chain (no wrap); other roots the up chain, wrapping N-1 -> 0.
  const reduce::Params line0 = params(FabricMode::Line, CclTopology::Line, bf16({1, 1, 32, 256}), 0);
  EXPECT_EQ(reduce::chain_order(line0, t3k, 0), (V{7, 6, 5, 4, 3, 2, 1, 0}));
  const reduce::Params line7 = params(FabricMode::Line, CclTopology::Line, bf16({1, 1, 32, 256}), 7);
  EXPECT_EQ(reduce::chain_order(line7, t3k, 0), (V{0, 1, 2, 3, 4, 5, 6, 7}));
  const reduce::Params line3 = params(FabricMode::Line, CclTopology::Line, bf16({1, 1, 32, 256}), 3);
  EXPECT_EQ(reduce::chain_order(line3, t3k, 0), (V{4, 5, 6, 7, 0, 1, 2, 3}));
}

// A torus row opened mid-ring (0-1 down: the line 1-2-3-0, positions 0..3 holding ranks 1, 2, 3,
// 0) runs its one chain along the line to the position of the root's rank, beside the other rows'
// two ring chains; the order is the group's own, so the groupless chain_order refuses.
TEST(ReduceBuilder, ARingOpenedMidRingChainsAlongItsLineToTheRootsRank) {
  const topo::Topology torus = topo::load_system("torus:4x4");
  using V = std::vector<std::uint32_t>;
  reduce::Params p = params(FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 32, 256}), 0);
  p.fabric.scope = FabricScope::Axes;
  p.fabric.down_edges = {{0, 1}};
  p.groups.cluster_axis = 1;
  reduce::validate(p, torus);
  // Root 0 at the line's last position: the up chain, no wrap.
  EXPECT_EQ(reduce::chain_order(p, torus, {0, 1, 2, 3}, 0), (V{1, 2, 3, 0}));
  EXPECT_THROW(reduce::chain_order(p, torus, {0, 1, 2, 3}, 1), CclParamsError);  // a line's one chain
  EXPECT_EQ(reduce::chain_order(p, torus, {4, 5, 6, 7}, 0), (V{1, 2, 3, 0}));
  EXPECT_EQ(reduce::chain_order(p, torus, {4, 5, 6, 7}, 1), (V{3, 2, 1, 0}));
  EXPECT_THROW(reduce::chain_order(p, torus, 0), CclParamsError);
  // Root 2 at position 1: the up chain from position 2 wraps round to it.
  p.root = 2;
  EXPECT_EQ(reduce::chain_order(p, torus, {0, 1, 2, 3}, 0), (V{3, 0, 1, 2}));
  // Asked as a line: every row a line, only row 0 from mid-ring.
  p.topology = CclTopology::Line;
  p.fabric.mode = FabricMode::Line;
  EXPECT_EQ(reduce::chain_order(p, torus, {0, 1, 2, 3}, 0), (V{3, 0, 1, 2}));
  EXPECT_EQ(reduce::chain_order(p, torus, {4, 5, 6, 7}, 0), (V{3, 0, 1, 2}));
  EXPECT_THROW(reduce::chain_order(p, torus, 0), CclParamsError);
}

// The chain's start only reads and sends its input (no reduce kernel); every other chip runs a
// writer and a reader interpreter and the reduce kernel on the compute processor; a ring runs
// two workers per chip.
TEST(ReduceBuilder, KernelsPerPosition) {
  const topo::Topology t3k = topo::build_t3k();
  const reduce::Params line = params(FabricMode::Line, CclTopology::Line, bf16({1, 1, 32, 256}), 7);
  const MeshWorkload w = reduce::build(line, t3k);
  ASSERT_EQ(w.programs.size(), 8u);
  // The buffers the device holds until finish() (MeshWorkload::buffers).
  EXPECT_EQ(w.buffers, (std::vector<runtime::BufferHandle>{line.input_buffer, line.output_buffer}));
  EXPECT_EQ(w.global_semaphores, (std::vector<runtime::GlobalSemaphore>{*line.barrier_semaphore}));
  const runtime::FabricPlan plan(t3k, line.fabric);
  const std::vector<ChipId> order = plan.chips();
  const auto kernels_of = [&](std::uint32_t rank) {
    std::vector<std::string> names;
    for (const auto& k : w.programs.at(order[rank]).kernels) {
      names.push_back(k.kernel + "/" + runtime::processor_name(k.processor));
    }
    return names;
  };
  const std::string writer = std::string(kernels::kCclInterpreterKernelName) + "/dm0";
  const std::string reader = std::string(kernels::kCclInterpreterKernelName) + "/dm1";
  const std::string reducer = std::string(kernels::kReduceKernelName) + "/compute";
  EXPECT_EQ(kernels_of(0), (std::vector<std::string>{writer, reader}));
  for (std::uint32_t rank = 1; rank < 8; ++rank) {
    EXPECT_EQ(kernels_of(rank), (std::vector<std::string>{writer, reader, reducer})) << rank;
  }
  const reduce::Params ring = params(FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 32, 256}), 0);
  const MeshWorkload r = reduce::build(ring, t3k);
  // The root reduces on both workers; rank 1 starts the down chain and continues the up one.
  const runtime::FabricPlan ring_plan(t3k, ring.fabric);
  EXPECT_EQ(r.programs.at(ring_plan.chips()[0]).kernels.size(), 6u);
  EXPECT_EQ(r.programs.at(ring_plan.chips()[1]).kernels.size(), 5u);
  EXPECT_EQ(reduce::semaphore_cores(ring, t3k).size(), 2u);
  EXPECT_EQ(reduce::semaphore_cores(line, t3k).size(), 1u);
}

// The pages of each chunk the line worker (core 0,0) of every sending chip writes to its next chip
// (the root writes its own output), and the pages its reduced CB holds (one chunk).
struct SentChunks {
  std::vector<std::vector<std::uint32_t>> pages_by_chip;
  std::uint32_t reduced_cb_pages = 0;
};
SentChunks sent_chunks(const MeshWorkload& workload) {
  const CoreCoord core{0, 0};
  const std::regex fabric_write(R"(STREAM_CB_TO_TENSOR dest=UNICAST[^\n]* pages=(\d+)\})");
  SentChunks out;
  for (const auto& [chip, program] : workload.programs) {
    for (const KernelSpec& k : program.kernels) {
      if (k.kernel != kernels::kCclInterpreterKernelName || k.processor != DataMovementProcessor::Riscv0) continue;
      const std::string sends = test::stream_text(k.runtime_args.at(core), 0);
      std::vector<std::uint32_t> pages;
      for (auto m = std::sregex_iterator(sends.begin(), sends.end(), fabric_write); m != std::sregex_iterator(); ++m) {
        pages.push_back(static_cast<std::uint32_t>(std::stoul((*m)[1])));
      }
      if (!pages.empty()) out.pages_by_chip.push_back(pages);
    }
    for (const CircularBufferSpec& cb : program.circular_buffers) {
      if (cb.cb_id == kChainReducedCbId) out.reduced_cb_pages = cb.num_pages;
    }
  }
  return out;
}

// Session 37: a chip sends a chunk on only once it has landed whole and been summed, so the
// chain fills over N - 1 chunk times; no credits flow back, so the smallest chunk is the fastest.
// Unset, chunk_packets is 1 packet (8 pages: 2 tiles a 4352 B payload, 4 payloads a packet),
// grown so a run has at most 255 chunks. T3K 8-line, root 0, 1 MiB (512 tiles): 64 chunks of 8
// pages, where the old 8 packets made 8 of 64 (229.53 us against 152.21); 16 MiB (8192 tiles):
// 5-packet chunks, 204 of 40 pages and one of 32. A set chunk_packets is taken as given.
TEST(ReduceBuilder, ChunksAreOnePacketUnlessAskedOrCapped) {
  const topo::Topology t3k = topo::build_t3k();
  struct Case {
    std::uint32_t tiles;
    std::optional<std::uint32_t> chunk_packets;
    std::uint32_t chunk_pages;  // every chunk but the last
    std::uint32_t chunks;
    std::uint32_t last_pages;
  };
  const Case cases[] = {
      {512, std::nullopt, 8, 64, 8},
      {8192, std::nullopt, 40, 205, 32},
      {512, 8u, 64, 8, 64},
      {512, 3u, 24, 22, 8},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message() << c.tiles << " tiles, chunk_packets "
                                      << (c.chunk_packets ? std::to_string(*c.chunk_packets) : "unset"));
    reduce::Params p = params(FabricMode::Line, CclTopology::Line, bf16({1, 1, 32, 32 * c.tiles}), 0);
    p.chunk_packets = c.chunk_packets;
    const SentChunks sent = sent_chunks(reduce::build(p, t3k));
    ASSERT_EQ(sent.pages_by_chip.size(), 7u);  // every chip but the root sends on
    std::vector<std::uint32_t> expected(c.chunks, c.chunk_pages);
    expected.back() = c.last_pages;
    for (const std::vector<std::uint32_t>& pages : sent.pages_by_chip) EXPECT_EQ(pages, expected);
    EXPECT_EQ(sent.reduced_cb_pages, 2 * c.chunk_pages);  // two chunks deep (session 38)
  }
}

TEST(ReduceBuilder, ParamsHashAndEquality) {
  const reduce::Params a = params(FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 32, 256}), 1);
  reduce::Params b = a;
  EXPECT_EQ(reduce::hash_value(a), reduce::hash_value(b));
  b.root = 2;
  EXPECT_NE(a, b);
  EXPECT_NE(reduce::hash_value(a), reduce::hash_value(b));
}

}  // namespace
}  // namespace cclmesh::runtime::ccl
