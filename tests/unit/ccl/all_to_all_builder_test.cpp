// all_to_all's builder as a pure function of (params, topology): what validate() rejects, the
// host reference's chunk transpose, and the streams of a 4-chip ring (who sends what, which
// way, and the done count each chip waits for).
#include <gtest/gtest.h>

#include "kernels/kernel_args.hpp"
#include "runtime/ccl/all_to_all/all_to_all.hpp"
#include "tests/unit/ccl/builder_test_util.hpp"
#include "topologies/builtin_systems.hpp"
#include "topologies/system_loader.hpp"

namespace cclmesh::runtime::ccl {
namespace {

using test::dram_buffer;
using test::semaphore;
using test::stream_text;

TensorSpec bf16(std::array<std::uint32_t, 4> shape) { return TensorSpec{shape, DataType::Bfloat16, Layout::Tile}; }

all_to_all::Params params(FabricMode fabric, CclTopology shape, TensorSpec tensor) {
  all_to_all::Params p;
  p.tensor = tensor;
  p.topology = shape;
  p.fabric.mode = fabric;
  p.input_buffer = dram_buffer(1, tensor);
  p.output_buffer = dram_buffer(2, tensor);
  p.done_semaphore = semaphore(1, {{0, 0}, {2, 0}});
  return p;
}

using test::expect_rejected;

TEST(AllToAllBuilder, Rejects) {
  const topo::Topology t3k = topo::build_t3k();
  const topo::Topology n300 = topo::build_n300();
  const auto base = [] { return params(FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 32, 256})); };
  EXPECT_NO_THROW(all_to_all::validate(base(), t3k));
  {
    all_to_all::Params p = base();
    p.tensor = bf16({1, 1, 32, 32 * 12});  // 12 tiles over 8 chips
    p.input_buffer = dram_buffer(1, p.tensor);
    p.output_buffer = dram_buffer(2, p.tensor);
    expect_rejected(p, t3k, "shape[dim] % N != 0");
  }
  {
    all_to_all::Params p = base();
    p.done_semaphore.reset();
    expect_rejected(p, t3k, "done_semaphore");
  }
  {
    all_to_all::Params p = base();
    p.output_buffer = p.input_buffer;
    expect_rejected(p, t3k, "same buffer");
  }
  {
    all_to_all::Params p = base();
    p.dim = 4;
    expect_rejected(p, t3k, "dim 4 is out of range");
  }
  {
    all_to_all::Params p = base();
    p.cb_packets = 0;
    expect_rejected(p, t3k, "cb_packets");
  }
  {
    all_to_all::Params p = base();
    p.mode = CclMode::Legacy;
    expect_rejected(p, t3k, "legacy EDM mode is not supported");
  }
  {
    all_to_all::Params p = params(FabricMode::Line, CclTopology::Ring, bf16({1, 1, 32, 256}));
    expect_rejected(p, n300, "must run as a line");
  }
}

// Rank j's output is chunk j of every rank's input, in rank order.
TEST(AllToAllBuilder, ReferenceTransposesChunks) {
  const topo::Topology n300 = topo::build_n300();
  const TensorSpec tensor = bf16({1, 1, 32, 64});  // 2 tiles: one chunk per chip
  const all_to_all::Params p = params(FabricMode::Line, CclTopology::Line, tensor);
  std::vector<reference::Bytes> in(2, reference::Bytes(2 * 2048));
  for (std::size_t rank = 0; rank < 2; ++rank) {
    for (std::size_t i = 0; i < in[rank].size(); ++i) in[rank][i] = static_cast<std::byte>(rank * 2 + i / 2048);
  }
  const std::vector<reference::Bytes> out = all_to_all::reference_outputs(p, n300, in);
  ASSERT_EQ(out.size(), 2u);
  // Chip 0 gets (in0 chunk 0, in1 chunk 0) = tiles valued 0, 2; chip 1 (in0 chunk 1, in1 chunk 1) = 1, 3.
  EXPECT_EQ(out[0][0], std::byte{0});
  EXPECT_EQ(out[0][2048], std::byte{2});
  EXPECT_EQ(out[1][0], std::byte{1});
  EXPECT_EQ(out[1][2048], std::byte{3});
}

// A 4-chip ring: each chip sends to its neighbours one way each and splits the chunk of the
// chip opposite (2 hops) between both directions; the done core waits for 3 chunks + 1 split
// half + its own copy = 5 increments.
TEST(AllToAllBuilder, RingSplitsTheFarthestChunk) {
  const topo::Topology ring4 = topo::load_system("ring:4");
  const all_to_all::Params p = params(FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 32, 32 * 8}));
  const MeshWorkload w = all_to_all::build(p, ring4);
  ASSERT_EQ(w.programs.size(), 4u);
  // The buffers the device holds until finish() (MeshWorkload::buffers).
  EXPECT_EQ(w.buffers, (std::vector<BufferHandle>{p.input_buffer, p.output_buffer}));
  EXPECT_EQ(w.global_semaphores, (std::vector<GlobalSemaphore>{*p.done_semaphore}));
  for (const auto& [chip, program] : w.programs) {
    // Two senders and the local copier, a reader and a writer each.
    ASSERT_EQ(program.kernels.size(), 6u) << chip;
    std::string writers;
    for (const auto& k : program.kernels) {
      if (k.processor != DataMovementProcessor::Riscv0) continue;
      for (const auto& [core, rt] : k.runtime_args) writers += stream_text(rt, 0);
    }
    EXPECT_NE(writers.find("WAIT_VALUE dest=LOCAL src=ABS(0x100020) core=LOCAL value=5\n"), std::string::npos)
        << writers;
    // 2 hops (the split chunk, both ways) and 1 hop (the neighbours).
    EXPECT_NE(writers.find("hops=2"), std::string::npos) << writers;
  }
}

}  // namespace
}  // namespace cclmesh::runtime::ccl
