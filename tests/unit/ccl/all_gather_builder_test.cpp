// all_gather's builder as a pure function of (params, topology): what validate() rejects
// (REFERENCE 11.15 and what the model cannot run), the workload's shape (which kernels on which
// cores of which chips, which fabric connections, CBs and semaphores), the bidirectional mode
// rule (REFERENCE 7.3), and a disassembly golden of the streams of a small case. No device.
#include <gtest/gtest.h>

#include <algorithm>

#include "kernels/host/kernel_args_builder.hpp"
#include "kernels/kernel_args.hpp"
#include "runtime/ccl/all_gather/all_gather.hpp"
#include "runtime/device/core_map.hpp"
#include "runtime/device/l1_map.hpp"
#include "tests/source_tree.hpp"
#include "tests/unit/ccl/builder_test_util.hpp"
#include "topologies/builtin_systems.hpp"
#include "topologies/embedding.hpp"
#include "topologies/errors.hpp"
#include "topologies/system_loader.hpp"

namespace cclmesh::runtime::ccl {
namespace {

namespace ag = all_gather;
using test::all_gather_params;
using test::dram_buffer;
using test::semaphore;
using test::stream_text;

TensorSpec bf16(std::array<std::uint32_t, 4> shape) { return TensorSpec{shape, DataType::Bfloat16, Layout::Tile}; }

// The writer (RISC-V 0) and reader (RISC-V 1) interpreters of a worker core; with
// split_reader_writer (the default) each runs one stream.
const KernelSpec& kernel_on(const Program& program, CoreCoord core, DataMovementProcessor processor) {
  for (const KernelSpec& k : program.kernels) {
    if (k.cores.front().start == core && k.processor == processor) return k;
  }
  throw std::runtime_error("no kernel on that core and processor");
}

const std::vector<std::uint32_t>& writer_rt(const Program& program, CoreCoord core) {
  return kernel_on(program, core, DataMovementProcessor::Riscv0).runtime_args.at(core);
}

const std::vector<std::uint32_t>& reader_rt(const Program& program, CoreCoord core) {
  return kernel_on(program, core, DataMovementProcessor::Riscv1).runtime_args.at(core);
}

using test::expect_rejected;

// --- validate -------------------------------------------------------------------------------------

TEST(AllGatherBuilder, RejectsWhatReference1115Lists) {
  const topo::Topology t3k = topo::build_t3k();
  const topo::Topology n300 = topo::build_n300();
  expect_rejected(all_gather_params(n300, FabricMode::Line, CclTopology::Ring, bf16({1, 1, 32, 64})), n300,
                  "must run as a line");
  {
    ag::Params p = all_gather_params(t3k, FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 32, 64}));
    p.input = TensorSpec{{1, 1, 32, 64}, DataType::Bfloat8B, Layout::RowMajor};
    expect_rejected(p, t3k, "ROW_MAJOR bfp8_b is invalid");
  }
  {
    // A ring on chips without a closing link: the first 4 chips of the T3K's line.
    ag::Params p = all_gather_params(t3k, FabricMode::Line, CclTopology::Ring, bf16({1, 1, 32, 64}));
    const FabricPlan plan(t3k, p.fabric);
    p.groups.chips = {{plan.chips()[0], plan.chips()[1], plan.chips()[2], plan.chips()[3]}};
    p.output_buffer = dram_buffer(2, ag::output_spec(p, t3k));
    expect_rejected(p, t3k, "no closing link");
  }
  {
    // More links than the hop with the fewest has (T3K: 2 per edge), and more than the fabric's 1.
    ag::Params p = all_gather_params(t3k, FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 32, 64}));
    p.num_links = 3;
    expect_rejected(p, t3k, "more than the 2 link(s)");
    p.num_links = 2;
    expect_rejected(p, t3k, "one routing plane");
  }
  {
    // More than 15 hops: a 32-chip line's end chip would multicast 31 hops.
    const topo::Topology galaxy = topo::build_galaxy();
    expect_rejected(all_gather_params(galaxy, FabricMode::Line, CclTopology::Line, bf16({1, 1, 32, 64})), galaxy,
                    "would multicast 31 hops");
  }
}

// Every addrgen block of every interpreter stream of `program` whose layout is `layout`, as
// (pieces per page) values.
std::vector<std::uint32_t> sharded_pieces(const Program& program, api::TensorMemoryLayout layout) {
  namespace ia = kernels::interpreter;
  std::vector<std::uint32_t> pieces;
  for (const KernelSpec& k : program.kernels) {
    if (k.kernel != kernels::kCclInterpreterKernelName) continue;
    for (const auto& [core, rt] : k.runtime_args) {
      for (std::uint32_t s = 0; s < k.compile_time_args[ia::kCtNumStreams]; ++s) {
        const std::uint32_t block = rt[ia::stream_block(s) + ia::kStreamAddrGenOffset];
        if (block != 0 && rt[block + ia::kAddrGenLayout] == static_cast<std::uint32_t>(layout)) {
          pieces.push_back(rt[block + ia::kAddrGenShardedPiecesPerPage]);
        }
      }
    }
  }
  return pieces;
}

// Bug bash, session 44: a system file whose chips keep one Tensix row (harvesting {tensix: 511})
// loads, and the op's refusal of workers past the 8x1 grid said nothing of where the grid came
// from. It now names the system and the harvest; a system without Tensix harvesting adds nothing.
TEST(AllGatherBuilder, WorkersPastAHarvestedGridAreRefusedNamingTheHarvest) {
  const topo::Topology one_row =
      topo::load_system((testing::source_dir() / "tests/data/topologies/t3k_one_tensix_row.yaml").string());
  ag::Params p = all_gather_params(one_row, FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 64, 64}));
  p.first_worker = {7, 0};  // the last core of the one row; SPLIT needs two
  p.bidirectional = ag::BidirectionalMode::SplitTensor;
  expect_rejected(p, one_row,
                  "do not fit the 8x1 worker grid; the worker grid is what Tensix harvesting leaves on system "
                  "'t3k_one_tensix_row': chip 0's harvest mask 0x1ff removes 9 of a wormhole_b0 chip's 10 Tensix rows "
                  "(as on 7 other chips)");
  EXPECT_EQ(worker_grid_harvest_note(topo::build_galaxy()), "");
}

TEST(AllGatherBuilder, RowMajorAlongTheWidthIntoShardedBuffersAddressesRowPieces) {
  const topo::Topology t3k = topo::build_t3k();
  for (const bool wide : {false, true}) {
    // 64 B rows move whole (q = 1); 8 KiB rows in q = 2 pieces of 4 KiB (a 4352 B payload).
    ag::Params p = all_gather_params(t3k, FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 64, 64}));
    p.input = TensorSpec{{1, 1, 16, wide ? 4096u : 32u}, DataType::Bfloat16, Layout::RowMajor};
    const std::uint32_t q = wide ? 2 : 1;
    p.input_buffer = dram_buffer(1, p.input);
    p.input_buffer.config.type = BufferType::L1;
    p.input_buffer.config.layout = TensorMemoryLayout::HeightSharded;
    p.input_buffer.config.shard = ShardSpec{{CoreRange{{0, 1}, {7, 1}}}, 2, 1, 1, ShardOrientation::RowMajor};
    p.output_buffer = dram_buffer(2, ag::output_spec(p, t3k));
    p.output_buffer.config.type = BufferType::L1;
    p.output_buffer.config.layout = TensorMemoryLayout::HeightSharded;
    p.output_buffer.config.shard = ShardSpec{{CoreRange{{0, 2}, {3, 2}}}, 4, 1, 1, ShardOrientation::RowMajor};
    p.done_semaphore = semaphore(1, {{0, 0}, {7, 0}});
    p.done_semaphore->cores = ag::semaphore_cores(p, t3k);
    ASSERT_NO_THROW(ag::validate(p, t3k));
    const MeshWorkload w = ag::build(p, t3k);
    for (const auto& [chip, program] : w.programs) {
      const std::vector<std::uint32_t> pieces = sharded_pieces(program, api::TensorMemoryLayout::HEIGHT_SHARDED);
      ASSERT_FALSE(pieces.empty()) << "chip " << chip;
      // Input streams address q pieces per row, output streams 8 x q.
      for (std::uint32_t k : pieces) EXPECT_TRUE(k == q || k == 8 * q) << "chip " << chip << ": " << k;
      EXPECT_NE(std::find(pieces.begin(), pieces.end(), 8 * q), pieces.end()) << "chip " << chip;
    }
  }
}

TEST(AllGatherBuilder, RejectsWhatTheModelCannotRun) {
  const topo::Topology t3k = topo::build_t3k();
  const auto base = [&t3k] {
    return all_gather_params(t3k, FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 64, 64}));
  };
  {
    ag::Params p = base();
    p.mode = CclMode::Legacy;  // on a device with a persistent fabric: the routers hold the ethernet cores
    expect_rejected(p, t3k, "legacy EDM mode needs a device without a persistent fabric");
  }
  // A cut that is not whole tiles runs as all_broadcast + concat, which needs the caller's broadcast buffers.
  expect_rejected(all_gather_params(t3k, FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 48, 64}), 2), t3k,
                  "which needs broadcast_buffers: 0 given, expected 8");
  {
    ag::Params p = all_gather_params(t3k, FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 48, 64}), 2);
    p.mode = CclMode::Legacy;
    expect_rejected(p, t3k, "all_broadcast + concat (REFERENCE 7.6), a fabric-era composite");
  }
  {
    // ROW_MAJOR along dim 3 writes pieces of output rows, into an interleaved or (below, the
    // sharded address generator's pieces) a sharded output.
    ag::Params p = base();
    p.input = TensorSpec{{1, 1, 64, 64}, DataType::Bfloat16, Layout::RowMajor};
    p.input_buffer = dram_buffer(1, p.input);
    p.output_buffer = dram_buffer(2, ag::output_spec(p, t3k));
    // 64 row pages: the relay runs 2 workers per direction, 4 worker cores (semaphore_cores).
    ASSERT_EQ(ag::semaphore_cores(p, t3k).size(), 4u);
    p.done_semaphore = semaphore(1, {{0, 0}, {3, 0}});
    EXPECT_NO_THROW(ag::validate(p, t3k));
  }
  {
    // 40 bf16 = 80 B rows would land at 80 B offsets: not 32 B-aligned for DRAM.
    ag::Params p = base();
    p.input = TensorSpec{{1, 1, 4, 40}, DataType::Bfloat16, Layout::RowMajor};
    p.input_buffer = dram_buffer(1, p.input);
    p.output_buffer = dram_buffer(2, ag::output_spec(p, t3k));
    expect_rejected(p, t3k, "must be a multiple of 32 B");
  }
  {
    ag::Params p = base();
    p.dim = 4;
    expect_rejected(p, t3k, "dim 4 is out of range");
  }
  {
    ag::Params p = base();
    p.output_buffer = dram_buffer(2, bf16({1, 1, 64, 128}));  // not 8x along dim 3
    expect_rejected(p, t3k, "output buffer is");
  }
  {
    ag::Params p = base();
    p.done_semaphore.reset();
    expect_rejected(p, t3k, "done_semaphore is missing");
    p.done_semaphore = semaphore(1, {{3, 3}, {3, 3}});
    expect_rejected(p, t3k, "is not on worker core (0,0)");
  }
  {
    ag::Params p = all_gather_params(t3k, FabricMode::Line, CclTopology::Line, bf16({1, 1, 64, 64}));
    p.bidirectional = ag::BidirectionalMode::SplitTensor;
    expect_rejected(p, t3k, "SPLIT_TENSOR needs a ring");
  }
  {
    ag::Params p = base();
    p.fabric.mode = FabricMode::Line;
    expect_rejected(p, t3k, "a ring needs a ring fabric");
  }
  {
    ag::Params p = all_gather_params(t3k, FabricMode::Ring, CclTopology::Line, bf16({1, 1, 64, 64}));
    const FabricPlan plan(t3k, p.fabric);
    p.groups.chips = {{plan.chips()[0], plan.chips()[2]}};  // every other chip of the ring
    p.output_buffer = dram_buffer(2, ag::output_spec(p, t3k));
    expect_rejected(p, t3k, "not neighbours");
    p.groups.chips = {{plan.chips()[0], plan.chips()[1]}, {plan.chips()[1], plan.chips()[2]}};
    expect_rejected(p, t3k, "appears twice");
  }
  {
    ag::Params p = base();
    p.first_worker = {7, 7};  // the last core; SPLIT needs two
    p.bidirectional = ag::BidirectionalMode::SplitTensor;
    expect_rejected(p, t3k, "do not fit the 8x8 worker grid");
  }
  {
    ag::Params p = base();
    p.groups.chips = {{0, 99}};
    expect_rejected<topo::InputError>(p, t3k, "99");
  }
}

TEST(AllGatherBuilder, BidirectionalModeFollowsReference73) {
  ag::Params p;
  p.topology = CclTopology::Ring;
  p.input = bf16({1, 1, 32, 32 * 75});  // 75 tiles = 153600 B, half the threshold
  EXPECT_EQ(ag::resolved_bidirectional_mode(p), ag::BidirectionalMode::FullTensor);
  p.input = bf16({1, 1, 32, 32 * 150});  // 307200 B = 2 x the default ERISC unreserved L1: still FULL
  EXPECT_EQ(size_bytes(p.input), 2u * kEriscUnreservedBytes);
  EXPECT_EQ(ag::resolved_bidirectional_mode(p), ag::BidirectionalMode::FullTensor);
  p.input = bf16({1, 1, 32, 32 * 151});
  EXPECT_EQ(ag::resolved_bidirectional_mode(p), ag::BidirectionalMode::SplitTensor);
  // At the 106 KiB what-if the threshold is 2 x 108544 B = 106 tiles.
  p.fabric.erisc_unreserved_bytes = 106 * 1024;
  p.input = bf16({1, 1, 32, 32 * 53});  // 53 tiles = 108544 B, half the threshold
  EXPECT_EQ(ag::resolved_bidirectional_mode(p), ag::BidirectionalMode::FullTensor);
  p.input = bf16({1, 1, 32, 32 * 106});  // 217088 B = 2 x 106 KiB: still FULL
  EXPECT_EQ(ag::resolved_bidirectional_mode(p), ag::BidirectionalMode::FullTensor);
  p.input = bf16({1, 1, 32, 32 * 107});
  EXPECT_EQ(ag::resolved_bidirectional_mode(p), ag::BidirectionalMode::SplitTensor);
  p.fabric.erisc_unreserved_bytes = kEriscUnreservedBytes;
  p.bidirectional = ag::BidirectionalMode::FullTensor;  // the override
  EXPECT_EQ(ag::resolved_bidirectional_mode(p), ag::BidirectionalMode::FullTensor);
  p.topology = CclTopology::Line;  // a line is always FULL_TENSOR
  p.bidirectional = ag::BidirectionalMode::Auto;
  EXPECT_EQ(ag::resolved_bidirectional_mode(p), ag::BidirectionalMode::FullTensor);
}

// --- workload shape -------------------------------------------------------------------------------

// The multicast ring (RingAlgorithm::Multicast; rings relay by default, tests below).
TEST(AllGatherBuilder, RingFullTensorOneWorkerMulticastsHalfWayBothWays) {
  const topo::Topology t3k = topo::build_t3k();
  ag::Params p = all_gather_params(t3k, FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 32, 256}));
  p.ring_algorithm = ag::RingAlgorithm::Multicast;
  const MeshWorkload w = ag::build(p, t3k);
  EXPECT_EQ(w.name, "all_gather");
  ASSERT_EQ(w.programs.size(), 8u);
  // The buffers the device holds until finish() (MeshWorkload::buffers).
  EXPECT_EQ(w.buffers, (std::vector<BufferHandle>{p.input_buffer, p.output_buffer}));
  // And the global semaphores (MeshWorkload::global_semaphores): the done one, no barrier here.
  EXPECT_EQ(w.global_semaphores, (std::vector<GlobalSemaphore>{*p.done_semaphore}));
  for (const auto& [chip, program] : w.programs) {
    // One worker core: a reader (RISC-V 1, NoC1) and a writer (RISC-V 0, NoC0) interpreter.
    ASSERT_EQ(program.kernels.size(), 2u) << "chip " << chip;
    for (const KernelSpec& k : program.kernels) {
      EXPECT_EQ(k.kernel, kernels::kCclInterpreterKernelName);
      EXPECT_EQ(k.cores, (std::vector<CoreRange>{{{0, 0}, {0, 0}}}));
    }
    EXPECT_EQ(kernel_on(program, {0, 0}, DataMovementProcessor::Riscv1).noc, NocIndex::Noc1);
    EXPECT_NE(kargs::describe_interpreter_command(reader_rt(program, {0, 0}), 0, 0).find("STREAM_TENSOR_TO_CB"),
              std::string::npos);
    const std::vector<std::uint32_t>& rt = writer_rt(program, {0, 0});
    EXPECT_NE(rt[kernels::interpreter::kRtForwardConnectionOffset], 0u);
    EXPECT_NE(rt[kernels::interpreter::kRtBackwardConnectionOffset], 0u);
    const std::string write = kargs::describe_interpreter_command(rt, 0, 0);
    EXPECT_NE(write.find("dest=MCAST fwd=4 bwd=3"), std::string::npos) << write;  // REFERENCE 7.3 at N = 8
    // The done core waits for 8 increments: 7 chips' and its own.
    EXPECT_NE(kargs::describe_interpreter_command(rt, 0, 2).find("WAIT_VALUE"), std::string::npos);
    EXPECT_NE(kargs::describe_interpreter_command(rt, 0, 2).find("8"), std::string::npos);
    // CBs: the header pool and 3 packets of 2 bf16 tiles; the two connections' six semaphores.
    ASSERT_EQ(program.circular_buffers.size(), 2u);
    EXPECT_EQ(program.circular_buffers[1].num_pages, 6u);
    EXPECT_EQ(program.circular_buffers[1].page_size_bytes, 2048u);
    EXPECT_EQ(program.semaphores.size(), 6u);
  }
}

TEST(AllGatherBuilder, RingSplitTensorTwoWorkersOneDirectionEach) {
  const topo::Topology t3k = topo::build_t3k();
  ag::Params p = all_gather_params(t3k, FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 32, 256}));
  p.bidirectional = ag::BidirectionalMode::SplitTensor;
  p.ring_algorithm = ag::RingAlgorithm::Multicast;
  const MeshWorkload w = ag::build(p, t3k);
  for (const auto& [chip, program] : w.programs) {
    ASSERT_EQ(program.kernels.size(), 4u);
    const auto& up = writer_rt(program, {0, 0});
    const auto& down = writer_rt(program, {1, 0});
    // The fabric's forward direction is rank-upward on the default ring.
    EXPECT_NE(up[kernels::interpreter::kRtForwardConnectionOffset], 0u);
    EXPECT_EQ(up[kernels::interpreter::kRtBackwardConnectionOffset], 0u);
    EXPECT_EQ(down[kernels::interpreter::kRtForwardConnectionOffset], 0u);
    EXPECT_NE(down[kernels::interpreter::kRtBackwardConnectionOffset], 0u);
    EXPECT_NE(kargs::describe_interpreter_command(up, 0, 0).find("fwd=7 bwd=0"), std::string::npos);
    EXPECT_NE(kargs::describe_interpreter_command(down, 0, 0).find("fwd=0 bwd=7"), std::string::npos);
    // Only worker 0 waits: 2 workers x 8 chips reach every chip.
    EXPECT_NE(kargs::describe_interpreter_command(up, 0, 2).find("WAIT_VALUE"), std::string::npos);
    EXPECT_NE(kargs::describe_interpreter_command(up, 0, 2).find("16"), std::string::npos);
    EXPECT_NE(kargs::describe_interpreter_command(down, 0, 2).find("past the end"), std::string::npos)
        << kargs::describe_interpreter_command(down, 0, 2);
  }
}

// The described commands of one interpreter stream, up to its end.
std::vector<std::string> stream_commands(const std::vector<std::uint32_t>& rt, std::uint32_t stream) {
  std::vector<std::string> commands;
  for (std::uint32_t i = 0;; ++i) {
    std::string c = kargs::describe_interpreter_command(rt, stream, i);
    if (c.find("past the end") != std::string::npos || c.find("outside the runtime args") != std::string::npos) break;
    commands.push_back(std::move(c));
  }
  return commands;
}

// Pages a writer stream sends: the sum of its STREAM_CB_TO_TENSOR slices' pages.
std::uint32_t pages_sent(const std::vector<std::string>& commands) {
  std::uint32_t pages = 0;
  for (const std::string& c : commands) {
    if (c.find("STREAM_CB_TO_TENSOR") == std::string::npos) continue;
    pages += static_cast<std::uint32_t>(std::stoul(c.substr(c.rfind("pages=") + 6)));
  }
  return pages;
}

// The ring relay (the default on rings, REFERENCE 7.4): per link one worker pair per direction;
// each writes its chip's slice one hop and then relays what the previous chip sent, chunk by
// chunk behind a cumulative semaphore. FULL_TENSOR on an even ring: N/2 - 1 whole slices and
// half of the farthest one each way after the own slice (3.5 slices of 8 pages at N = 8), in
// chunks of 4 packets (one chunk a slice; the fitted default: RingRelayFitsTheChunkToTheRun).
TEST(AllGatherBuilder, RingRelaySendsOneHopChunksBehindACumulativeSemaphore) {
  const topo::Topology t3k = topo::build_t3k();
  ag::Params p = all_gather_params(t3k, FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 32, 256}));
  p.chunks_per_sync = ag::kMaxFitChunksPerSync;
  EXPECT_EQ(ag::resolved_ring_algorithm(p), ag::RingAlgorithm::Relay);
  const MeshWorkload w = ag::build(p, t3k);
  ASSERT_EQ(w.programs.size(), 8u);
  for (const auto& [chip, program] : w.programs) {
    ASSERT_EQ(program.kernels.size(), 4u) << "chip " << chip;  // 2 workers: a reader and a writer each
    std::uint32_t own_slice_local_writes = 0;
    for (CoreCoord worker : {CoreCoord{0, 0}, CoreCoord{1, 0}}) {
      const std::vector<std::string> writes = stream_commands(writer_rt(program, worker), 0);
      ASSERT_FALSE(writes.empty());
      EXPECT_EQ(pages_sent(writes), 28u) << "chip " << chip;
      // The own slice goes first; exactly one of the two workers also writes it locally.
      own_slice_local_writes += writes.front().find("dest=MCAST fwd=1 bwd=0") != std::string::npos ||
                                writes.front().find("dest=MCAST fwd=0 bwd=1") != std::string::npos;
      for (std::size_t i = 1; i < writes.size(); ++i) {
        EXPECT_NE(writes[i].find("hops=1"), std::string::npos) << writes[i];  // neighbour hops only
        // Every chunk is followed by one increment of the next chip's semaphore.
        const bool is_data = writes[i].find("STREAM_CB_TO_TENSOR") != std::string::npos;
        EXPECT_EQ(is_data, i % 2 == 0) << writes[i];
      }
      // The relay reads wait for 1, 2, 3, ... chunks landed, then reset the semaphore.
      const std::vector<std::string> relay_reads = stream_commands(reader_rt(program, worker), 1);
      std::uint32_t expected = 1;
      for (const std::string& c : relay_reads) {
        if (c.find("WAIT_VALUE") == std::string::npos) continue;
        EXPECT_NE(c.find("value=" + std::to_string(expected)), std::string::npos) << c;
        ++expected;
      }
      EXPECT_GT(expected, 1u);
      EXPECT_NE(relay_reads.back().find("SET_SEMAPHORE_VALUE"), std::string::npos) << relay_reads.back();
    }
    EXPECT_EQ(own_slice_local_writes, 1u) << "chip " << chip;
  }
}

// The same gather with the fitted default: a run of 4 packets (8 pages of 2 per packet) is too
// short for 3 chunks of 2, so every chunk is 1 packet: 14 chunks of 2 pages per worker, each
// followed by its increment. The relay reads wait for 1 .. 8 chunks (the 2 whole slices relayed
// whole), then for the chunks of the third that hold the half of the farthest slice the worker
// sends on (up: its first half, chunks 9, 10; down: the rest, 11, 12), then for all 14 (4 + 4 +
// 4 + the previous chip's half, 2) before the reset.
TEST(AllGatherBuilder, RingRelayFitsTheChunkToTheRun) {
  const topo::Topology t3k = topo::build_t3k();
  const ag::Params p = all_gather_params(t3k, FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 32, 256}));
  ASSERT_EQ(p.chunks_per_sync, ag::kFitChunksPerSync);
  const MeshWorkload w = ag::build(p, t3k);
  for (const auto& [chip, program] : w.programs) {
    for (CoreCoord worker : {CoreCoord{0, 0}, CoreCoord{1, 0}}) {
      const std::vector<std::string> writes = stream_commands(writer_rt(program, worker), 0);
      std::uint32_t chunks = 0;
      for (std::size_t i = 0; i < writes.size(); ++i) {
        const bool is_data = writes[i].find("STREAM_CB_TO_TENSOR") != std::string::npos;
        EXPECT_EQ(is_data, i % 2 == 0) << writes[i];
        if (!is_data) continue;
        EXPECT_NE(writes[i].find("pages=2}"), std::string::npos) << writes[i];
        ++chunks;
      }
      EXPECT_EQ(chunks, 14u) << "chip " << chip;
      std::vector<std::uint32_t> waits;
      for (const std::string& c : stream_commands(reader_rt(program, worker), 1)) {
        if (c.find("WAIT_VALUE") == std::string::npos) continue;
        waits.push_back(static_cast<std::uint32_t>(std::stoul(c.substr(c.rfind("value=") + 6))));
      }
      std::vector<std::uint32_t> expected;
      for (std::uint32_t v = 1; v <= 8; ++v) expected.push_back(v);
      const bool up = worker.x == 0;
      for (std::uint32_t v : up ? std::vector<std::uint32_t>{9, 10} : std::vector<std::uint32_t>{11, 12}) {
        expected.push_back(v);
      }
      expected.push_back(14);
      EXPECT_EQ(waits, expected) << "chip " << chip;
    }
  }
}

TEST(AllGatherBuilder, LineEndsSendOneWayAndClusterAxisBuildsEveryRow) {
  const topo::Topology t3k = topo::build_t3k();
  ag::Params p = all_gather_params(t3k, FabricMode::Ring, CclTopology::Line, bf16({1, 1, 32, 64}));
  p.groups.cluster_axis = 1;
  p.output_buffer = dram_buffer(2, ag::output_spec(p, t3k));
  EXPECT_EQ(ag::output_spec(p, t3k).shape, (std::array<std::uint32_t, 4>{1, 1, 32, 256}));
  const MeshWorkload w = ag::build(p, t3k);
  EXPECT_EQ(w.programs.size(), 8u);
  for (const auto& g : topo::axis_groups(t3k, 1)) {
    const auto& first = writer_rt(w.programs.at(static_cast<ChipId>(g.front())), {0, 0});
    const auto& last = writer_rt(w.programs.at(static_cast<ChipId>(g.back())), {0, 0});
    // Each end reaches the 3 other chips of its row in one direction only.
    EXPECT_EQ((first[kernels::interpreter::kRtForwardConnectionOffset] == 0) +
                  (first[kernels::interpreter::kRtBackwardConnectionOffset] == 0),
              1);
    EXPECT_EQ((last[kernels::interpreter::kRtForwardConnectionOffset] == 0) +
                  (last[kernels::interpreter::kRtBackwardConnectionOffset] == 0),
              1);
    const std::string write = kargs::describe_interpreter_command(first, 0, 0);
    EXPECT_TRUE(write.find("fwd=3 bwd=0") != std::string::npos || write.find("fwd=0 bwd=3") != std::string::npos)
        << write;
  }
}

TEST(AllGatherBuilder, BarrierPrecedesTheData) {
  const topo::Topology t3k = topo::build_t3k();
  ag::Params p = all_gather_params(t3k, FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 32, 256}));
  p.ring_algorithm = ag::RingAlgorithm::Multicast;
  p.barrier_semaphore = semaphore(2, {{0, 0}, {0, 0}});
  const MeshWorkload w = ag::build(p, t3k);
  const auto& rt = writer_rt(w.programs.begin()->second, {0, 0});
  EXPECT_NE(kargs::describe_interpreter_command(rt, 0, 0).find("ATOMIC_INC"), std::string::npos);
  EXPECT_NE(kargs::describe_interpreter_command(rt, 0, 1).find("WAIT_VALUE"), std::string::npos);
  EXPECT_NE(kargs::describe_interpreter_command(rt, 0, 2).find("SET_SEMAPHORE_VALUE"), std::string::npos);
  EXPECT_NE(kargs::describe_interpreter_command(rt, 0, 3).find("STREAM_CB_TO_TENSOR"), std::string::npos);
}

TEST(AllGatherBuilder, ParamsHashAndCompareByValue) {
  const topo::Topology t3k = topo::build_t3k();
  const ag::Params a = all_gather_params(t3k, FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 32, 256}));
  ag::Params b = a;
  EXPECT_EQ(a, b);
  EXPECT_EQ(ag::hash_value(a), ag::hash_value(b));
  b.dim = 2;
  EXPECT_NE(a, b);
  EXPECT_NE(ag::hash_value(a), ag::hash_value(b));
  b = a;
  b.bidirectional = ag::BidirectionalMode::SplitTensor;
  EXPECT_NE(ag::hash_value(a), ag::hash_value(b));
}

// --- golden ------------------------------------------------------------------------------------------

// N300, two bf16 tiles per chip gathered along dim 3: chip 0 (rank 0) writes output tiles 0-1
// and multicasts forward to chip 1; chip 1 writes tiles 2-3 backward. Each chip's done core
// (logical (0,0) = NoC0 (1,3)) waits for 2 increments, its own and the other chip's.
TEST(AllGatherBuilder, StreamsGoldenN300) {
  const topo::Topology n300 = topo::build_n300();
  const ag::Params p = all_gather_params(n300, FabricMode::Line, CclTopology::Line, bf16({1, 1, 32, 64}));
  const MeshWorkload w = ag::build(p, n300);
  const auto& rank0 = writer_rt(w.programs.at(0), {0, 0});
  EXPECT_EQ(stream_text(reader_rt(w.programs.at(0), {0, 0}), 0),
            "#0 STREAM_TENSOR_TO_CB dest=LOCAL dst=CB(0) core=ADDRGEN slice{shape=(1,1,1,2) slice=(1,1,1,2) "
            "off=(0,0,0,0) worker_off=(0,0,0,0) pages=2}\n");
  EXPECT_EQ(stream_text(rank0, 0),
            "#0 STREAM_CB_TO_TENSOR dest=MCAST fwd=1 bwd=0 src=CB(0) core=ADDRGEN slice{shape=(1,1,1,4) "
            "slice=(1,1,1,2) off=(0,0,0,0) worker_off=(0,0,0,0) pages=2}\n"
            "#1 ATOMIC_INC dest=MCAST fwd=1 bwd=0 dst=ABS(0x100020) core=XY(1,3) inc=1\n"
            "#2 WAIT_VALUE dest=LOCAL src=ABS(0x100020) core=LOCAL value=2\n"
            "#3 SET_SEMAPHORE_VALUE dest=LOCAL dst=ABS(0x100020) core=LOCAL value=0\n");
  const auto& rank1 = writer_rt(w.programs.at(1), {0, 0});
  EXPECT_EQ(stream_text(rank1, 0),
            "#0 STREAM_CB_TO_TENSOR dest=MCAST fwd=0 bwd=1 src=CB(0) core=ADDRGEN slice{shape=(1,1,1,4) "
            "slice=(1,1,1,2) off=(0,0,0,2) worker_off=(0,0,0,0) pages=2}\n"
            "#1 ATOMIC_INC dest=MCAST fwd=0 bwd=1 dst=ABS(0x100020) core=XY(1,3) inc=1\n"
            "#2 WAIT_VALUE dest=LOCAL src=ABS(0x100020) core=LOCAL value=2\n"
            "#3 SET_SEMAPHORE_VALUE dest=LOCAL dst=ABS(0x100020) core=LOCAL value=0\n");
}

}  // namespace
}  // namespace cclmesh::runtime::ccl
