// all_to_all's builder as a pure function of (params, topology): what validate() rejects, the
// host reference's chunk transpose, and the streams of a 4-chip ring (who sends what, which
// way, and the done count each chip waits for); ROW_MAJOR along dim 3 in row pieces.
#include <gtest/gtest.h>

#include "kernels/interpreter/interpreter_args.hpp"
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

TensorSpec row_major(std::array<std::uint32_t, 4> shape, DataType dtype = DataType::Bfloat16) {
  return TensorSpec{shape, dtype, Layout::RowMajor};
}

// A ROW_MAJOR exchange along dim 3 with its buffers.
all_to_all::Params row_major_params(FabricMode fabric, CclTopology shape, TensorSpec tensor) {
  all_to_all::Params p = params(fabric, shape, bf16({1, 1, 32, 256}));
  p.tensor = tensor;
  p.input_buffer = dram_buffer(1, tensor);
  p.output_buffer = dram_buffer(2, tensor);
  return p;
}

// validate()'s exact message for `p`, or "" when it accepts it.
std::string refusal(const all_to_all::Params& p, const topo::Topology& topology) {
  try {
    all_to_all::validate(p, topology);
  } catch (const CclParamsError& e) {
    return e.what();
  }
  return "";
}

// ROW_MAJOR along dim 3: a chunk of a row must be a multiple of 32 B, fit payload-sized pieces,
// and the row's elements must split into N.
TEST(AllToAllBuilder, RowMajorAlongTheWidthRefusals) {
  const topo::Topology t3k = topo::build_t3k();
  // 8 x 32 B chunks of 256 B rows run.
  EXPECT_EQ(refusal(row_major_params(FabricMode::Ring, CclTopology::Ring, row_major({1, 1, 4, 128})), t3k), "");
  EXPECT_EQ(refusal(row_major_params(FabricMode::Ring, CclTopology::Ring, row_major({1, 1, 4, 64})), t3k),
            "all_to_all: ROW_MAJOR along dim 3 cuts each 128 B row into 8 chunks, one per chip: a chunk is 16 B; it "
            "must be a multiple of 32 B (DRAM alignment, REFERENCE 6.5)");
  EXPECT_EQ(refusal(row_major_params(FabricMode::Ring, CclTopology::Ring, row_major({1, 1, 4, 200}, DataType::Float32)),
                    t3k),
            "all_to_all: ROW_MAJOR along dim 3 cuts each 800 B row into 8 chunks, one per chip: a chunk is 100 B; it "
            "must be a multiple of 32 B (DRAM alignment, REFERENCE 6.5)");
  EXPECT_EQ(refusal(row_major_params(FabricMode::Ring, CclTopology::Ring, row_major({1, 1, 4, 1028})), t3k),
            "all_to_all: dim 3 is 1028 elements and does not split into 8 equal chunks (shape[dim] % N != 0, "
            "REFERENCE 11.15)");
  {
    // A 32 B chunk cannot move in pieces of a 16 B payload.
    all_to_all::Params p = row_major_params(FabricMode::Ring, CclTopology::Ring, row_major({1, 1, 4, 128}));
    p.fabric.max_payload_bytes = 16;
    EXPECT_EQ(refusal(p, t3k),
              "all_to_all: a 32 B chunk of a ROW_MAJOR row does not split into equal pieces of at most 16 B (the "
              "fabric payload) that are multiples of 32 B");
  }
}

// The pieces per page of every interleaved addrgen block of `program`'s interpreter streams.
std::vector<std::uint32_t> interleaved_pieces(const Program& program) {
  namespace ia = kernels::interpreter;
  std::vector<std::uint32_t> pieces;
  for (const KernelSpec& k : program.kernels) {
    if (k.kernel != kernels::kCclInterpreterKernelName) continue;
    for (const auto& [core, rt] : k.runtime_args) {
      for (std::uint32_t s = 0; s < k.compile_time_args[ia::kCtNumStreams]; ++s) {
        const std::uint32_t block = rt[ia::stream_block(s) + ia::kStreamAddrGenOffset];
        if (block != 0 && rt[block + ia::kAddrGenLayout] ==
                              static_cast<std::uint32_t>(api::TensorMemoryLayout::INTERLEAVED)) {
          pieces.push_back(rt[block + ia::kAddrGenInterleavedPiecesPerPage]);
        }
      }
    }
  }
  return pieces;
}

// Every stream, input and output alike, addresses a row in N x q pieces: q = 1 for 256 B chunks,
// 2 for 8 KiB chunks (4 KiB pieces of a 4352 B payload).
TEST(AllToAllBuilder, RowMajorAlongTheWidthAddressesRowPieces) {
  const topo::Topology n300 = topo::build_n300();
  for (const std::uint32_t q : {1u, 2u}) {
    SCOPED_TRACE(q);
    const std::uint32_t chunk_elements = q == 1 ? 128 : 4096;
    const all_to_all::Params p =
        row_major_params(FabricMode::Line, CclTopology::Line, row_major({1, 1, 2, 2 * chunk_elements}));
    const MeshWorkload w = all_to_all::build(p, n300);
    ASSERT_EQ(w.programs.size(), 2u);
    for (const auto& [chip, program] : w.programs) {
      const std::vector<std::uint32_t> pieces = interleaved_pieces(program);
      ASSERT_FALSE(pieces.empty()) << "chip " << chip;
      for (const std::uint32_t k : pieces) EXPECT_EQ(k, 2 * q) << "chip " << chip;
    }
  }
}

}  // namespace
}  // namespace cclmesh::runtime::ccl
