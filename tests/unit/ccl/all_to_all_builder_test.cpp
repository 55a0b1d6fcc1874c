// all_to_all's builder as a pure function of (params, topology): what validate() rejects, the
// host reference's chunk transpose, and the streams of a 4-chip ring (who sends what, which
// way, and the done count each chip waits for); ROW_MAJOR along dim 3 in row pieces.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>

#include "kernels/interpreter/interpreter_args.hpp"
#include "kernels/kernel_args.hpp"
#include "runtime/ccl/all_to_all/all_to_all.hpp"
#include "runtime/ccl/all_to_all/round_pieces.hpp"
#include "runtime/device/core_map.hpp"
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
  // The tests below were written for one up and one down sender (three worker cores); the
  // per-destination layout has its own tests (SenderLayout*).
  p.senders = all_to_all::SenderLayout::PerDirection;
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
// 2 for 8 KiB chunks (4 KiB pieces of a 4352 B payload), 23 for 4416 B chunks (192 B pieces that
// fill a payload, 22 a packet: RowPieceChoice::FillPayload since session 39).
TEST(AllToAllBuilder, RowMajorAlongTheWidthAddressesRowPieces) {
  const topo::Topology n300 = topo::build_n300();
  for (const std::uint32_t q : {1u, 2u, 23u}) {
    SCOPED_TRACE(q);
    const std::uint32_t chunk_elements = q == 1 ? 128 : q == 2 ? 4096 : 2208;
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

// --- Rounds (round_pieces.hpp) ----------------------------------------------------------------

using all_to_all::PageSpan;
using all_to_all::round_pieces;

// A share is cut into whole packets, the first piece also taking the short packet: 23 pieces of a
// 4416 B chunk's row, 22 a packet, over 5 rows (115 pages, 5 whole packets) go in 5 rounds of 27,
// 22, 22, 22, 22 pages, not 23 each (a packet of one piece every round, session 38's cut).
TEST(AllToAllRounds, PiecesAreWholePackets) {
  EXPECT_EQ(round_pieces(PageSpan{0, 115}, 256, 22),
            (std::vector<PageSpan>{{0, 27}, {27, 22}, {49, 22}, {71, 22}, {93, 22}}));
  // 256 rows of 23 pieces in 256 rounds: 267 whole packets, the first 11 rounds 2 of them.
  const std::vector<PageSpan> rows = round_pieces(PageSpan{0, 256 * 23}, 256, 22);
  ASSERT_EQ(rows.size(), 256u);
  EXPECT_EQ(rows[0], (PageSpan{0, 2 * 22 + 14}));
  EXPECT_EQ(rows[10].count, 2u * 22);
  EXPECT_EQ(rows[11].count, 22u);
  std::uint32_t next = 0;
  for (const PageSpan& piece : rows) {
    EXPECT_EQ(piece.first, next);
    next += piece.count;
  }
  EXPECT_EQ(next, 256u * 23);
  // Fewer rounds than packets, an offset share (a link's or a half's part of a chunk).
  EXPECT_EQ(round_pieces(PageSpan{100, 20}, 3, 2), (std::vector<PageSpan>{{100, 8}, {108, 6}, {114, 6}}));
  // Whole packets already: as part_of splits pages.
  EXPECT_EQ(round_pieces(PageSpan{0, 12}, 3, 2), (std::vector<PageSpan>{{0, 4}, {4, 4}, {8, 4}}));
  EXPECT_EQ(all_to_all::part_of(PageSpan{0, 12}, 3, 1), (PageSpan{4, 4}));
  // Less than two whole packets, or one round: one piece, the whole share.
  EXPECT_EQ(round_pieces(PageSpan{5, 3}, 256, 2), (std::vector<PageSpan>{{5, 3}}));
  EXPECT_EQ(round_pieces(PageSpan{0, 0}, 256, 2), (std::vector<PageSpan>{{0, 0}}));
  EXPECT_EQ(round_pieces(PageSpan{0, 100}, 1, 2), (std::vector<PageSpan>{{0, 100}}));
}

// --- Sender layouts (sender_layout.hpp) ------------------------------------------------------

using all_to_all::SenderLayout;
using all_to_all::SenderPlan;

// Per direction: one up and one down sender per link (slots 0 and 1), then a local-copy worker
// per link (link 0's the done worker, since session 42), no muxes.
TEST(AllToAllSenderLayout, PerDirectionKeepsTwoSendersPerLink) {
  const SenderPlan plan = all_to_all::plan_senders(SenderLayout::PerDirection, CclTopology::Ring, 8, 2, 64);
  EXPECT_EQ(plan.senders_per_direction, 1u);
  EXPECT_EQ(plan.slots_per_link, 2u);
  EXPECT_FALSE(plan.muxes);
  EXPECT_EQ(plan.done_worker(), 4u);
  EXPECT_EQ(plan.copy_worker(0), 4u);
  EXPECT_EQ(plan.copy_worker(1), 5u);
  EXPECT_EQ(plan.core_count(), 6u);
}

// Per destination on an 8-ring: 4 senders each way (the split farthest chunk's half and
// distances 3, 2, 1), 8 slots, the (one link's) copy and done worker at 8 and the muxes at 9 (up)
// and 10 (down).
TEST(AllToAllSenderLayout, PerDestinationRingOfEight) {
  const SenderPlan plan = all_to_all::plan_senders(SenderLayout::Auto, CclTopology::Ring, 8, 1, 64);
  EXPECT_EQ(plan.layout, SenderLayout::PerDestination);
  EXPECT_EQ(plan.senders_per_direction, 4u);
  EXPECT_FALSE(plan.capped());
  EXPECT_EQ(plan.slots_per_link, 8u);
  EXPECT_EQ(plan.done_worker(), 8u);
  EXPECT_EQ(plan.mux_core(0, true), 9u);
  EXPECT_EQ(plan.mux_core(0, false), 10u);
  EXPECT_EQ(plan.core_count(), 11u);
  FabricGroup ring;
  ring.topology = CclTopology::Ring;
  ring.chips = {0, 1, 2, 3, 4, 5, 6, 7};
  ring.ranks = {0, 1, 2, 3, 4, 5, 6, 7};
  const std::vector<all_to_all::Sender> senders = all_to_all::senders_at(ring, 2, plan);
  ASSERT_EQ(senders.size(), 8u);
  for (std::uint32_t i = 0; i < 8; ++i) {
    EXPECT_EQ(senders[i].slot, i);
    EXPECT_EQ(senders[i].up, i < 4);
    ASSERT_EQ(senders[i].sends.size(), 1u);
  }
  // Up: the half of chip 6's chunk, then 5, 4, 3; down: the other half of 6's, then 7, 0, 1.
  EXPECT_EQ(senders[0].sends[0].dest, 6u);
  EXPECT_EQ(senders[0].sends[0].half, 0u);
  EXPECT_EQ(senders[4].sends[0].dest, 6u);
  EXPECT_EQ(senders[4].sends[0].half, 1u);
  EXPECT_EQ(senders[3].sends[0].dest, 3u);
  EXPECT_EQ(senders[7].sends[0].dest, 1u);
}

// Two chips (and a 3-ring) have one destination each way: per destination is per direction.
TEST(AllToAllSenderLayout, OneDestinationEachWayIsPerDirection) {
  for (const auto& [shape, n] : {std::pair{CclTopology::Line, 2u}, std::pair{CclTopology::Ring, 3u}}) {
    const SenderPlan plan = all_to_all::plan_senders(SenderLayout::PerDestination, shape, n, 1, 64);
    EXPECT_EQ(plan.senders_per_direction, 1u);
    EXPECT_EQ(plan.slots_per_link, 2u);
    EXPECT_FALSE(plan.muxes);
  }
}

// An 8-line's end chip has 7 destinations one way; a mux takes 6 clients, so 6 senders, the
// first with the farthest and the nearest destination. Slots: a chip sends at most 7 (6 up and
// 1 down at position 1).
TEST(AllToAllSenderLayout, LineOfEightCapsAtTheMuxsClients) {
  const SenderPlan plan = all_to_all::plan_senders(SenderLayout::Auto, CclTopology::Line, 8, 1, 64);
  EXPECT_EQ(plan.senders_per_direction, kernels::fabric_mux::kMaxClients);
  EXPECT_EQ(plan.needed_per_direction, 7u);
  EXPECT_TRUE(plan.capped());
  EXPECT_EQ(plan.slots_per_link, 7u);
  FabricGroup line;
  line.topology = CclTopology::Line;
  line.chips = {0, 1, 2, 3, 4, 5, 6, 7};
  line.ranks = {0, 1, 2, 3, 4, 5, 6, 7};
  const std::vector<all_to_all::Sender> end = all_to_all::senders_at(line, 0, plan);
  ASSERT_EQ(end.size(), 6u);
  ASSERT_EQ(end[0].sends.size(), 2u);
  EXPECT_EQ(end[0].sends[0].dest, 7u);
  EXPECT_EQ(end[0].sends[1].dest, 1u);
  EXPECT_EQ(end[5].sends.size(), 1u);
  EXPECT_EQ(end[5].sends[0].dest, 2u);
  const std::vector<all_to_all::Sender> second = all_to_all::senders_at(line, 1, plan);
  ASSERT_EQ(second.size(), 7u);
  EXPECT_FALSE(second.back().up);
  EXPECT_EQ(second.back().slot, 6u);
  EXPECT_EQ(all_to_all::sender_layout_choice(SenderLayout::Auto, CclTopology::Line, 8, 1, 64, 1 << 20).reason,
            "auto: per-destination, capped at 6 senders per link and direction (of 7: a fabric mux takes at most 6 "
            "clients), some with several destinations");
}

// Auto runs per destination from 1 MiB a chip on (kPerDestinationMinBytes), per direction below.
TEST(AllToAllSenderLayout, AutoIsPerDirectionBelowOneMebibyte) {
  const auto choice = [](std::uint64_t bytes) {
    return all_to_all::sender_layout_choice(SenderLayout::Auto, CclTopology::Ring, 8, 1, 64, bytes);
  };
  EXPECT_EQ(choice((1 << 20) - 1).plan.layout, SenderLayout::PerDirection);
  EXPECT_EQ(choice((1 << 20) - 1).reason,
            "auto: per-direction, 1048575 B per chip are below the 1048576 B from which one sender per destination "
            "gains more than its fabric mux costs");
  EXPECT_EQ(choice(1 << 20).plan.layout, SenderLayout::PerDestination);
  EXPECT_EQ(choice(1 << 20).plan.senders_per_direction, 4u);
  // Asked for, per destination runs at any size.
  EXPECT_EQ(all_to_all::sender_layout_choice(SenderLayout::PerDestination, CclTopology::Ring, 8, 1, 64, 2048)
                .plan.senders_per_direction,
            4u);
}

// Where the worker grid is short (several links, or a first worker far down the grid), the
// senders per direction shrink to the largest count that fits, down to the per-direction cores.
TEST(AllToAllSenderLayout, WorkerGridCapsTheSenders) {
  // 16-ring on 4 links: 8 each way; 6 per direction take 4 x 12 senders + 4 copy workers + 8
  // muxes = 60 cores.
  SenderPlan plan = all_to_all::plan_senders(SenderLayout::Auto, CclTopology::Ring, 16, 4, 64);
  EXPECT_EQ(plan.senders_per_direction, 6u);
  EXPECT_EQ(plan.core_count(), 60u);
  // 40 cores: 4 per direction (4 x 8 + 4 + 8 = 44) do not fit, 3 do (4 x 6 + 4 + 8 = 36).
  plan = all_to_all::plan_senders(SenderLayout::Auto, CclTopology::Ring, 16, 4, 40);
  EXPECT_EQ(plan.senders_per_direction, 3u);
  EXPECT_EQ(plan.core_count(), 36u);
  // 12 cores on 4 links: only one up and one down sender per link and its copy worker (12 cores).
  plan = all_to_all::plan_senders(SenderLayout::Auto, CclTopology::Ring, 16, 4, 12);
  EXPECT_EQ(plan.senders_per_direction, 1u);
  EXPECT_FALSE(plan.muxes);
  EXPECT_EQ(plan.core_count(), 12u);
  EXPECT_EQ(all_to_all::sender_layout_choice(SenderLayout::PerDestination, CclTopology::Ring, 16, 4, 12, 0).reason,
            "asked for: per-destination, capped at 1 sender per link and direction (of 8: 4 links' senders, "
            "local-copy workers and muxes must fit the 12 worker cores from the first on), some with several "
            "destinations");
}

// The built 4-ring per destination: per chip two senders each way, each on its own core with one
// destination (or half), a mux per direction, and the done core waiting for the same 5
// increments as per direction.
TEST(AllToAllSenderLayout, BuiltRingOfFourRunsAMuxPerDirection) {
  const topo::Topology ring4 = topo::load_system("ring:4");
  all_to_all::Params p = params(FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 32, 32 * 8}));
  p.senders = SenderLayout::PerDestination;
  EXPECT_EQ(all_to_all::semaphore_cores(p, ring4).size(), 5u);  // 4 senders and the done worker
  p.done_semaphore = semaphore(1, {{0, 0}, {4, 0}});
  const MeshWorkload w = all_to_all::build(p, ring4);
  ASSERT_EQ(w.programs.size(), 4u);
  for (const auto& [chip, program] : w.programs) {
    std::uint32_t muxes = 0;
    std::uint32_t interpreters = 0;
    std::string writers;
    for (const auto& k : program.kernels) {
      if (k.kernel == kernels::kFabricMuxKernelName) {
        ++muxes;
        EXPECT_EQ(k.compile_time_args[kernels::fabric_mux::kCtNumClients], 2u);
        continue;
      }
      ++interpreters;
      if (k.processor != DataMovementProcessor::Riscv0) continue;
      for (const auto& [core, rt] : k.runtime_args) writers += stream_text(rt, 0);
    }
    EXPECT_EQ(muxes, 2u) << chip;
    EXPECT_EQ(interpreters, 10u) << chip;  // 4 senders and the done worker, a reader and a writer each
    EXPECT_NE(writers.find("WAIT_VALUE dest=LOCAL src=ABS(0x100020) core=LOCAL value=5\n"), std::string::npos)
        << writers;
  }
}

// --- The local copy per link (session 42) ---------------------------------------------------

// A 2-chip column of torus:2x8/2 on 2 links, per direction: per chip one sender and one copy
// worker per link (4 cores), link k's copy worker reading and writing part k of the chip's own
// chunk (pages [4k, 4k + 4) of 8), and only link 0's (the done core) waiting.
TEST(AllToAllLocalCopy, EachLinkCopiesItsPartOfTheOwnChunk) {
  const topo::Topology torus = topo::load_system("torus:2x8/2");
  all_to_all::Params p = params(FabricMode::Line, CclTopology::Line, bf16({1, 1, 32, 32 * 16}));
  p.groups.cluster_axis = 0;
  p.fabric.scope = FabricScope::Axes;
  p.fabric.num_links = 2;
  p.num_links = 2;
  const std::vector<CoreRange> cores = all_to_all::semaphore_cores(p, torus);
  ASSERT_EQ(cores.size(), 6u);  // 2 slots a link (a line's end chip uses one), 2 copy workers
  p.done_semaphore = semaphore(1, {{0, 0}, {5, 0}});
  const MeshWorkload w = all_to_all::build(p, torus);
  ASSERT_EQ(w.programs.size(), 16u);
  for (const auto& [chip, program] : w.programs) {
    std::map<CoreCoord, std::string> writers;
    std::map<CoreCoord, std::string> readers;
    for (const auto& k : program.kernels) {
      if (k.kernel != kernels::kCclInterpreterKernelName) continue;
      for (const auto& [core, rt] : k.runtime_args) {
        (k.processor == DataMovementProcessor::Riscv0 ? writers : readers)[core] = stream_text(rt, 0);
      }
    }
    ASSERT_EQ(writers.size(), 4u) << chip;  // a sender at slot 0 or 1 of each link, cores (4,0) and (5,0)
    std::uint32_t local_writers = 0;
    for (const auto& [core, text] : writers) {
      if (text.find("STREAM_CB_TO_TENSOR dest=LOCAL") == std::string::npos) continue;
      ++local_writers;
      ASSERT_TRUE(core == (CoreCoord{4, 0}) || core == (CoreCoord{5, 0})) << core.x << "," << core.y;
      const std::string part = fmt::format("worker_off=(0,0,0,{}) pages=4}}", core == CoreCoord{4, 0} ? 0 : 4);
      EXPECT_NE(text.find(part), std::string::npos) << text;
      EXPECT_NE(readers[core].find("STREAM_TENSOR_TO_CB dest=LOCAL"), std::string::npos) << readers[core];
      EXPECT_NE(readers[core].find(part), std::string::npos) << readers[core];
      // Link 0's waits for the other chip's chunk on each link and its own increment.
      const bool waits =
          text.find("WAIT_VALUE dest=LOCAL src=ABS(0x100020) core=LOCAL value=3\n") != std::string::npos;
      EXPECT_EQ(waits, core == (CoreCoord{4, 0})) << text;
    }
    EXPECT_EQ(local_writers, 2u) << chip;
  }
}

// The copy workers count against the worker grid: Galaxy columns on 4 links take 4 x 2 senders
// and 4 copy workers, so 12 cores from the first worker on fit and 11 are refused, per direction
// and per destination alike (capped at one sender a direction, the same cores).
TEST(AllToAllLocalCopy, CopyWorkersMustFitTheWorkerGrid) {
  const topo::Topology galaxy = topo::build_galaxy();
  const CoreCoord grid = common_worker_grid(galaxy);
  const std::uint32_t all = grid.x * grid.y;
  const auto at = [&](std::uint32_t index) { return CoreCoord{index % grid.x, index / grid.x}; };
  for (const SenderLayout layout : {SenderLayout::PerDirection, SenderLayout::PerDestination}) {
    SCOPED_TRACE(all_to_all::to_string(layout));
    all_to_all::Params p = params(FabricMode::Line, CclTopology::Line, bf16({1, 1, 32, 32 * 4 * 8}));
    p.senders = layout;
    p.groups.cluster_axis = 0;
    p.fabric.scope = FabricScope::Axes;
    p.fabric.num_links = 4;
    p.num_links = 4;
    p.first_worker = at(all - 12);
    p.done_semaphore = semaphore(1, {p.first_worker, at(all - 1)});
    EXPECT_EQ(refusal(p, galaxy), "");
    p.first_worker = at(all - 11);
    EXPECT_EQ(refusal(p, galaxy),
              fmt::format("all_to_all: 12 worker cores from ({},{}) do not fit the {}x{} worker grid",
                          p.first_worker.x, p.first_worker.y, grid.x, grid.y));
  }
}

}  // namespace
}  // namespace cclmesh::runtime::ccl
