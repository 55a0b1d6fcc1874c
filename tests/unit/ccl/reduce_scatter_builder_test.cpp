// reduce_scatter's builder as a pure function of (params, topology): what validate() rejects,
// which kernels run on which cores (a writer and a reader interpreter and the reduce kernel per
// worker), which way each worker talks, and the streams of a small case.
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <string>
#include <vector>

#include "kernels/host/kernel_args_builder.hpp"
#include "kernels/kernel_args.hpp"
#include "runtime/ccl/common/reduction_chain_cbs.hpp"
#include "runtime/ccl/common/reduction_chunks.hpp"
#include "runtime/ccl/reduce_scatter/reduce_scatter.hpp"
#include "tests/unit/ccl/builder_test_util.hpp"
#include "topologies/builtin_systems.hpp"

namespace cclmesh::runtime::ccl {
namespace {

namespace rs = reduce_scatter;
using test::dram_buffer;
using test::semaphore;
using test::stream_text;

TensorSpec bf16(std::array<std::uint32_t, 4> shape) { return TensorSpec{shape, DataType::Bfloat16, Layout::Tile}; }

rs::Params params(const topo::Topology& topology, FabricMode fabric, CclTopology shape, TensorSpec input,
                  std::uint32_t dim = 3) {
  rs::Params p;
  p.input = input;
  p.dim = dim;
  p.topology = shape;
  // The one-worker-per-link structure these tests describe (several workers and their fabric
  // mux: ccl_reduce_scatter_workers_e2e_test).
  p.workers_per_link = 1;
  // The chain on a ring (the one-shot's structure: RingOneShot* below).
  p.ring_algorithm = rs::RingAlgorithm::Chain;
  p.fabric.mode = fabric;
  p.input_buffer = dram_buffer(1, input);
  p.output_buffer = dram_buffer(2, rs::output_spec(p, topology));
  if (rs::needs_intermediate(p, topology)) p.intermediate_buffer = dram_buffer(3, rs::intermediate_spec(p, topology));
  p.barrier_semaphore = semaphore(1, {{0, 0}, {1, 0}});
  return p;
}

using test::expect_rejected;

// bfp8_b is summed on the reduce kernel, tile by tile (kernels/reduce/bfp8_math.hpp): it
// validates, and every reduce kernel is told the Bfp8_b format.
TEST(ReduceScatterBuilder, Bfp8SumsRunOnTheReduceKernel) {
  const topo::Topology t3k = topo::build_t3k();
  const rs::Params p =
      params(t3k, FabricMode::Ring, CclTopology::Ring, TensorSpec{{1, 1, 32, 256 * 8}, DataType::Bfloat8B});
  EXPECT_NO_THROW(rs::validate(p, t3k));
  std::size_t reduce_kernels = 0;
  for (const auto& [chip, program] : rs::build(p, t3k).programs) {
    for (const KernelSpec& k : program.kernels) {
      if (k.kernel != kernels::kReduceKernelName) continue;
      ++reduce_kernels;
      EXPECT_EQ(k.compile_time_args.at(kernels::reduce::kCtDataFormat), kernels::reduce::kDataFormatBfp8B);
    }
  }
  EXPECT_GE(reduce_kernels, 8u);
}

// Auto's rule (REFERENCE 7.5): the one-shot while each chip's input is at most 512 KiB, the
// half-way ring (tt-metal's ring RS since 2026) from one page above and with several workers per
// link; a line and legacy mode chain.
TEST(ReduceScatterBuilder, RingAutoPicksOneShotUpTo512KiBPerChip) {
  const topo::Topology t3k = topo::build_t3k();
  rs::Params p;
  p.topology = CclTopology::Ring;
  p.input = bf16({1, 1, 32, 32 * 256});  // 256 pages of 2048 B: exactly 512 KiB
  ASSERT_EQ(size_bytes(p.input), rs::kDefaultOneShotMaxBytes);
  EXPECT_EQ(rs::resolved_ring_algorithm(p), rs::RingAlgorithm::OneShot);
  EXPECT_TRUE(rs::needs_intermediate(p, t3k));
  p.input = bf16({1, 1, 32, 32 * 257});  // one page above
  EXPECT_EQ(rs::resolved_ring_algorithm(p), rs::RingAlgorithm::HalfWay);
  EXPECT_TRUE(rs::needs_intermediate(p, t3k));
  p.ring_algorithm = rs::RingAlgorithm::Chain;
  EXPECT_FALSE(rs::needs_intermediate(p, t3k));
  p.ring_algorithm = rs::RingAlgorithm::Auto;
  p.ring_algorithm = rs::RingAlgorithm::OneShot;
  EXPECT_EQ(rs::resolved_ring_algorithm(p), rs::RingAlgorithm::OneShot);
  p.ring_algorithm = rs::RingAlgorithm::Auto;
  p.input = bf16({1, 1, 32, 32 * 8});
  p.workers_per_link = 2;
  EXPECT_EQ(rs::resolved_ring_algorithm(p), rs::RingAlgorithm::HalfWay);
  p.workers_per_link = 1;
  EXPECT_EQ(rs::resolved_ring_algorithm(p), rs::RingAlgorithm::OneShot);
  p.mode = CclMode::Legacy;
  EXPECT_EQ(rs::resolved_ring_algorithm(p), rs::RingAlgorithm::Chain);
  p.mode = CclMode::Fabric;
  p.topology = CclTopology::Line;
  EXPECT_EQ(rs::resolved_ring_algorithm(p), rs::RingAlgorithm::Chain);
  // Forced where it does not apply: refused, naming why.
  p.ring_algorithm = rs::RingAlgorithm::OneShot;
  EXPECT_THROW(rs::resolved_ring_algorithm(p), CclParamsError);
  p.topology = CclTopology::Ring;
  p.workers_per_link = 2;
  EXPECT_THROW(rs::resolved_ring_algorithm(p), CclParamsError);
}

// The one-shot's programs: per link a forward sender, a backward sender and a reduce core (the
// barrier semaphore on all three); the intermediate holds N copies of the output; the reduce core
// has a semaphore per copy (N - 1) and folds them in N - 1 passes. A run whose sums would not fit
// the sums CB is refused.
TEST(ReduceScatterBuilder, RingOneShotSendersAndReduceCore) {
  const topo::Topology t3k = topo::build_t3k();
  rs::Params p = params(t3k, FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 32, 256 * 8}));
  p.ring_algorithm = rs::RingAlgorithm::OneShot;
  const TensorSpec mid = rs::intermediate_spec(p, t3k);
  EXPECT_EQ(mid.shape[0], 8u);
  EXPECT_EQ(size_bytes(mid), 8 * size_bytes(rs::output_spec(p, t3k)));
  expect_rejected(p, t3k, "needs intermediate_buffer");
  p.intermediate_buffer = dram_buffer(3, mid);
  expect_rejected(p, t3k, "is not on worker core (2,0)");
  p.barrier_semaphore = semaphore(1, {{0, 0}, {2, 0}});
  ASSERT_EQ(rs::semaphore_cores(p, t3k).size(), 3u);
  const MeshWorkload w = rs::build(p, t3k);
  ASSERT_EQ(w.programs.size(), 8u);
  // The buffers the device holds until finish() (MeshWorkload::buffers).
  EXPECT_EQ(w.buffers, (std::vector<BufferHandle>{p.input_buffer, p.output_buffer, *p.intermediate_buffer}));
  EXPECT_EQ(w.global_semaphores, (std::vector<GlobalSemaphore>{*p.barrier_semaphore}));
  for (const auto& [chip, program] : w.programs) {
    std::map<std::uint32_t, std::uint32_t> kernels_by_core_x;
    std::uint32_t reduce_kernels = 0;
    for (const KernelSpec& k : program.kernels) {
      ++kernels_by_core_x[k.cores.front().start.x];
      if (k.kernel == kernels::kReduceKernelName) {
        ++reduce_kernels;
        EXPECT_EQ(k.cores.front().start.x, 2u);
        // The N - 1 copies folded in passes, the running sums in L1.
        EXPECT_EQ(k.runtime_args.at(k.cores.front().start).at(kernels::reduce::kRtPasses), 7u);
      }
    }
    EXPECT_EQ(reduce_kernels, 1u);
    std::uint32_t reduce_core_semaphores = 0;
    for (const SemaphoreSpec& sem : program.semaphores) {
      if (sem.cores.front().start.x == 2) ++reduce_core_semaphores;
    }
    EXPECT_EQ(reduce_core_semaphores, 7u);
    // Senders: reader + writer; the reduce core: two interpreters and the reduce kernel.
    EXPECT_EQ(kernels_by_core_x, (std::map<std::uint32_t, std::uint32_t>{{0, 2}, {1, 2}, {2, 3}}));
  }
  rs::Params big = params(t3k, FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 32, 32 * 8 * 512}));  // 8 MiB
  big.ring_algorithm = rs::RingAlgorithm::OneShot;
  big.intermediate_buffer = dram_buffer(3, rs::intermediate_spec(big, t3k));
  big.barrier_semaphore = semaphore(1, {{0, 0}, {2, 0}});
  expect_rejected(big, t3k, "keeps each link's run of the output in L1");
}

TEST(ReduceScatterBuilder, Rejects) {
  const topo::Topology t3k = topo::build_t3k();
  const topo::Topology n300 = topo::build_n300();
  const auto base = [&t3k] { return params(t3k, FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 32, 256})); };
  {
    rs::Params p = base();
    p.input = bf16({1, 1, 32, 32 * 12});  // 12 tiles over 8 chips
    expect_rejected(p, t3k, "shape[dim] % N != 0");
  }
  {
    rs::Params p = base();
    p.barrier_semaphore.reset();
    expect_rejected(p, t3k, "barrier_semaphore is missing");
    p.barrier_semaphore = semaphore(1, {{0, 0}, {0, 0}});  // the down worker's core (1,0) lacks it
    expect_rejected(p, t3k, "is not on worker core (1,0)");
  }
  expect_rejected(params(n300, FabricMode::Line, CclTopology::Ring, bf16({1, 1, 32, 64})), n300, "must run as a line");
  {
    rs::Params p = base();
    p.num_links = 2;
    expect_rejected(p, t3k, "one routing plane");
  }
  {
    rs::Params p = base();
    p.output_buffer = p.input_buffer;
    expect_rejected(p, t3k, "output buffer is");
  }
}

TEST(ReduceScatterBuilder, RingWorkersEachUseOneDirection) {
  const topo::Topology t3k = topo::build_t3k();
  const rs::Params p = params(t3k, FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 32, 512}));
  const MeshWorkload w = rs::build(p, t3k);
  ASSERT_EQ(w.programs.size(), 8u);
  for (const auto& [chip, program] : w.programs) {
    ASSERT_EQ(program.kernels.size(), 6u) << "chip " << chip;  // 2 workers x (writer, reader, reduce)
    for (std::uint32_t x = 0; x < 2; ++x) {
      const KernelSpec* writer = nullptr;
      const KernelSpec* reader = nullptr;
      const KernelSpec* reduce = nullptr;
      for (const KernelSpec& k : program.kernels) {
        if (k.cores.front().start != CoreCoord{x, 0}) continue;
        if (k.kernel == kernels::kReduceKernelName) {
          reduce = &k;
        } else {
          (k.processor == DataMovementProcessor::Riscv0 ? writer : reader) = &k;
        }
      }
      ASSERT_NE(writer, nullptr);
      ASSERT_NE(reader, nullptr);
      ASSERT_NE(reduce, nullptr);
      EXPECT_EQ(reader->processor, DataMovementProcessor::Riscv1);
      EXPECT_EQ(reader->noc, NocIndex::Noc1);
      EXPECT_EQ(reduce->processor, DataMovementProcessor::Compute);
      const auto& rt = writer->runtime_args.at(CoreCoord{x, 0});
      // Worker 0 (up) sends forward only, worker 1 (down) backward only; credits go the long way.
      EXPECT_EQ(rt[kernels::interpreter::kRtForwardConnectionOffset] != 0, x == 0);
      EXPECT_EQ(rt[kernels::interpreter::kRtBackwardConnectionOffset] != 0, x == 1);
      // The reader opens no fabric connection: it only reads.
      const auto& reader_rt = reader->runtime_args.at(CoreCoord{x, 0});
      EXPECT_EQ(reader_rt[kernels::interpreter::kRtForwardConnectionOffset], 0u);
      EXPECT_EQ(reader_rt[kernels::interpreter::kRtBackwardConnectionOffset], 0u);
      const std::string sends = stream_text(rt, 0);
      EXPECT_NE(sends.find("hops=7"), std::string::npos);  // the barrier to the previous rank
      EXPECT_NE(sends.find("hops=1"), std::string::npos);  // data to the next rank
      // 7 received messages, one chunk each: the last one is written locally.
      EXPECT_NE(sends.find("STREAM_CB_TO_TENSOR dest=LOCAL"), std::string::npos);
      // The credit stream: one credit per chunk of the 6 messages that are passed on.
      const std::string credits = stream_text(rt, 1);
      EXPECT_EQ(std::count(credits.begin(), credits.end(), '\n'), 6 * 3);
      EXPECT_NE(credits.find("ATOMIC_INC dest=UNICAST hops=7"), std::string::npos) << credits;
      // Reader stream 1: the raw slice and one slice per received message.
      const std::string inputs = stream_text(reader_rt, 1);
      EXPECT_EQ(std::count(inputs.begin(), inputs.end(), '\n'), 8);
    }
  }
}

TEST(ReduceScatterBuilder, WrapLineHasOneWorkerThatWrapsBack) {
  const topo::Topology t3k = topo::build_t3k();
  rs::Params p = params(t3k, FabricMode::Line, CclTopology::Line, bf16({1, 1, 32, 256}));
  p.line_algorithm = rs::LineAlgorithm::Wrap;
  const FabricPlan plan(t3k, p.fabric);
  const MeshWorkload w = rs::build(p, t3k);
  const Program& last = w.programs.at(plan.chips().back());
  ASSERT_EQ(last.kernels.size(), 3u);  // writer, reader, reduce
  const auto& rt = last.kernels[0].runtime_args.at(CoreCoord{0, 0});
  // The last rank sends to rank 0, 7 hops back.
  EXPECT_NE(stream_text(rt, 0).find("UNICAST hops=7 bwd"), std::string::npos) << stream_text(rt, 0);
}

// The two-sided line on the T3K 8-line: per chip a rightward worker (core (0,0)) that talks
// forward only and a leftward one (core (1,0)) that talks backward only, every fabric command a
// neighbour hop; the chain ends send raw slices (no reduce kernel), the owners' leftward workers
// add the left partial as a third input.
TEST(ReduceScatterBuilder, TwoSidedLineWorkersTalkToNeighboursOnly) {
  const topo::Topology t3k = topo::build_t3k();
  const rs::Params p = params(t3k, FabricMode::Line, CclTopology::Line, bf16({1, 1, 32, 256}));
  const FabricPlan plan(t3k, p.fabric);
  const MeshWorkload w = rs::build(p, t3k);
  const std::vector<ChipId> chips = plan.chips();
  ASSERT_EQ(chips.size(), 8u);
  for (std::uint32_t rank = 0; rank < 8; ++rank) {
    const Program& program = w.programs.at(chips[rank]);
    for (std::uint32_t x = 0; x < 2; ++x) {
      const bool rightward = x == 0;
      const bool position_zero = rightward ? rank == 0 : rank == 7;
      const bool has_next = rightward ? rank < 7 : rank > 0;
      const KernelSpec* writer = nullptr;
      const KernelSpec* reduce = nullptr;
      for (const KernelSpec& k : program.kernels) {
        if (k.cores.front().start != CoreCoord{x, 0}) continue;
        if (k.kernel == kernels::kReduceKernelName) reduce = &k;
        if (k.kernel != kernels::kReduceKernelName && k.processor == DataMovementProcessor::Riscv0) writer = &k;
      }
      ASSERT_NE(writer, nullptr);
      EXPECT_EQ(reduce == nullptr, position_zero) << "rank " << rank << " worker " << x;
      const auto& rt = writer->runtime_args.at(CoreCoord{x, 0});
      EXPECT_EQ(rt[kernels::interpreter::kRtForwardConnectionOffset] != 0, rightward && has_next) << rank;
      EXPECT_EQ(rt[kernels::interpreter::kRtBackwardConnectionOffset] != 0, !rightward && has_next) << rank;
      std::string all = stream_text(rt, 0);
      if (writer->compile_time_args[kernels::interpreter::kCtNumStreams] > 1) all += stream_text(rt, 1);
      for (std::size_t at = all.find("hops="); at != std::string::npos; at = all.find("hops=", at + 1)) {
        EXPECT_EQ(all.substr(at, 8), rightward ? "hops=1 f" : "hops=1 b") << "rank " << rank << ": " << all;
      }
      const bool owner_step = !rightward && rank > 0 && rank < 7;
      if (reduce != nullptr) {
        EXPECT_EQ(reduce->runtime_args.at(CoreCoord{x, 0}).size(),
                  owner_step ? kernels::reduce::kNumRuntimeArgsWithIn2 : kernels::reduce::kNumRuntimeArgs)
            << "rank " << rank << " worker " << x;
      }
      // The owner's step reads on NoC0 and writes on NoC1 (its reads would share one NoC1 link
      // with the other owners' on the row); every other worker keeps reader NoC1, writer NoC0.
      for (const KernelSpec& k : program.kernels) {
        if (k.cores.front().start != CoreCoord{x, 0} || k.kernel == kernels::kReduceKernelName) continue;
        const bool reader = k.processor == DataMovementProcessor::Riscv1;
        EXPECT_EQ(k.noc, reader == owner_step ? NocIndex::Noc0 : NocIndex::Noc1)
            << "rank " << rank << " worker " << x << (reader ? " reader" : " writer");
      }
    }
  }
  rs::Params missing = p;
  missing.intermediate_buffer.reset();
  expect_rejected(missing, t3k, "needs intermediate_buffer");
  rs::Params small = p;
  small.intermediate_buffer = dram_buffer(3, rs::output_spec(p, t3k));
  expect_rejected(small, t3k, "need at least");
}

// The pages of each chunk the writer on `core` sends over the fabric (stream 0), in order, on every
// chip whose worker there sends; and that worker's reduced CB (one chunk).
struct SentChunks {
  std::vector<std::vector<std::uint32_t>> pages_by_chip;
  std::uint32_t reduced_cb_pages = 0;
};
SentChunks sent_chunks(const MeshWorkload& workload, CoreCoord core) {
  SentChunks out;
  const std::regex fabric_write(R"(STREAM_CB_TO_TENSOR dest=UNICAST[^\n]* pages=(\d+)\})");
  for (const auto& [chip, program] : workload.programs) {
    for (const KernelSpec& k : program.kernels) {
      if (k.kernel != kernels::kCclInterpreterKernelName || k.processor != DataMovementProcessor::Riscv0) continue;
      const auto args = k.runtime_args.find(core);
      if (args == k.runtime_args.end()) continue;
      const std::string sends = stream_text(args->second, 0);
      std::vector<std::uint32_t> pages;
      for (auto m = std::sregex_iterator(sends.begin(), sends.end(), fabric_write); m != std::sregex_iterator(); ++m) {
        pages.push_back(static_cast<std::uint32_t>(std::stoul((*m)[1])));
      }
      if (!pages.empty()) out.pages_by_chip.push_back(pages);
    }
    for (const CircularBufferSpec& cb : program.circular_buffers) {
      const bool here =
          std::any_of(cb.cores.begin(), cb.cores.end(), [&](const CoreRange& r) { return r.start == core; });
      if (cb.cb_id == 2 && here) out.reduced_cb_pages = cb.num_pages;
    }
  }
  return out;
}

// Session 37: a chunk is credited back only once the receiver has read it, and the sender's chunk c
// of the next message waits for that credit, so a message of one chunk cannot land while the
// previous one is read. Unset, chunk_packets is fitted so a worker's message is at least 3 chunks
// of at most 8 packets (8 pages each here: 2 tiles a 4352 B payload, 4 payloads a packet). T3K
// 8-line, 4 MiB a chip (256 output tiles), 4 workers: 64-page messages in chunks of 3, 3 and 2
// packets (24, 24, 16 pages), where 8 made one 64-page chunk (460.60 us against 342.39; 2
// workers 128 pages in 48, 48, 32; 1 worker and 16 MiB stay at 64-page chunks). An explicit
// chunk_packets is taken as given.
TEST(ReduceScatterBuilder, ChunksFitEachMessageInAtLeastThree) {
  const topo::Topology t3k = topo::build_t3k();
  EXPECT_EQ(fitted_reduction_chunk_packets(64, 8), 3u);
  EXPECT_EQ(fitted_reduction_chunk_packets(11, 8), 1u);  // 2 packets: one each
  EXPECT_EQ(fitted_reduction_chunk_packets(256, 8), kDefaultReductionChunkPackets);
  struct Case {
    std::uint32_t input_pages;
    std::uint32_t workers;
    std::optional<std::uint32_t> chunk_packets;
    std::vector<std::uint32_t> message;  // pages of each chunk of one message
  };
  const Case cases[] = {
      {2048, 4, std::nullopt, {24, 24, 16}},
      {2048, 2, std::nullopt, {48, 48, 32}},
      {2048, 1, std::nullopt, {64, 64, 64, 64}},
      {8192, 4, std::nullopt, {64, 64, 64, 64}},
      {2048, 4, 8u, {64}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message() << c.input_pages << " input pages, " << c.workers << " workers");
    rs::Params p = params(t3k, FabricMode::Line, CclTopology::Line, bf16({1, 1, 32, 32 * c.input_pages}));
    p.workers_per_link = c.workers;
    p.chunk_packets = c.chunk_packets;
    p.barrier_semaphore = semaphore(1, {{0, 0}, {2 * c.workers - 1, 0}});
    const SentChunks sent = sent_chunks(rs::build(p, t3k), CoreCoord{0, 0});
    // The rightward worker of a link sends on every chip but the last: 7 to 1 messages.
    ASSERT_EQ(sent.pages_by_chip.size(), 7u);
    std::vector<std::uint32_t> messages;
    for (const std::vector<std::uint32_t>& pages : sent.pages_by_chip) {
      ASSERT_EQ(pages.size() % c.message.size(), 0u);
      for (std::size_t i = 0; i < pages.size(); ++i) EXPECT_EQ(pages[i], c.message[i % c.message.size()]);
      messages.push_back(static_cast<std::uint32_t>(pages.size() / c.message.size()));
    }
    std::sort(messages.begin(), messages.end());
    EXPECT_EQ(messages, (std::vector<std::uint32_t>{1, 2, 3, 4, 5, 6, 7}));
    // Two chunks deep (session 38: the reduce fills one while the writer sends the other).
    EXPECT_EQ(sent.reduced_cb_pages, 2 * c.message.front());
  }
}

// The reduced CB is two chunks deep while two stay within kMaxReducedCbBytes, one chunk beyond
// (a chunk grown to keep a long run within 255 chunks must still fit L1).
TEST(ReduceScatterBuilder, ReducedCbHoldsTwoChunksWhereTheyFit) {
  const auto sizes = [](std::uint32_t chunk_pages) {
    return ReductionChainCbSizes{.packet_pages = 8, .local_packets = 3, .chunk_pages = chunk_pages, .page_size = 2048};
  };
  EXPECT_EQ(reduced_cb_pages(sizes(8)), 16u);
  EXPECT_EQ(reduced_cb_pages(sizes(128)), 256u);  // 2 x 256 KiB: exactly the limit
  EXPECT_EQ(reduced_cb_pages(sizes(136)), 136u);  // 2 x 272 KiB would exceed it
  EXPECT_EQ(reduced_cb_pages(sizes(256)), 256u);  // one 512 KiB chunk, the most a chunk may be
}

// The owner's step holds two chunk-sized CBs (the reduced sums and the left partial), which the
// reduced CB's own limit does not bound: the builder refuses a layout that overflows a Tensix L1
// and names the size, and accepts the same chunk with a shallower local CB.
TEST(ReduceScatterBuilder, TwoSidedOwnerStepCbsMustFitL1) {
  const topo::Topology t3k = topo::build_t3k();
  rs::Params p = params(t3k, FabricMode::Line, CclTopology::Line, bf16({1, 1, 32, 256}));
  p.chunk_packets = 32;  // 32 packets of 8 pages of 2048 B: 512 KiB, the reduced CB's limit
  p.cb_packets = 3;
  EXPECT_NO_THROW(rs::validate(p, t3k));
  p.cb_packets = 20;  // 1 MiB of chunk CBs + 320 KiB of local CB + the partial CB: above 1464 KiB
  expect_rejected(p, t3k, "owner step on worker core (1,0) needs 1409408 B of CBs");
  expect_rejected(p, t3k, "above the 1499136 B of a Tensix L1");
  // Two chips have no owner's step: the same layout fits there (one chunk CB per worker).
  const topo::Topology n300 = topo::build_n300();
  rs::Params two = params(n300, FabricMode::Line, CclTopology::Line, bf16({1, 1, 32, 256}));
  two.chunk_packets = 32;
  two.cb_packets = 20;
  EXPECT_NO_THROW(rs::validate(two, n300));
}

// N300 wrap line, 2 tiles per chip scattered along dim 3: rank 0 sends its raw tile 1 forward, waits
// for rank 1's tile 0, adds its own tile 0 and keeps the sum. The writer sends and keeps the sum,
// the reader takes in the received partial and the chip's own tiles; the raw tile goes through
// its own CB (3) straight to the writer.
TEST(ReduceScatterBuilder, WrapStreamsGoldenN300) {
  const topo::Topology n300 = topo::build_n300();
  rs::Params p = params(n300, FabricMode::Line, CclTopology::Line, bf16({1, 1, 32, 64}));
  p.line_algorithm = rs::LineAlgorithm::Wrap;
  const MeshWorkload w = rs::build(p, n300);
  const Program& program = w.programs.at(0);
  ASSERT_EQ(program.kernels.size(), 3u);
  const auto& writer = program.kernels[0].runtime_args.at(CoreCoord{0, 0});
  const auto& reader = program.kernels[1].runtime_args.at(CoreCoord{0, 0});
  EXPECT_EQ(stream_text(writer, 0),
            "#0 ATOMIC_INC dest=UNICAST hops=1 fwd dst=ABS(0x100020) core=XY(1,3) inc=1\n"
            "#1 WAIT_VALUE dest=LOCAL src=ABS(0x100020) core=LOCAL value=1\n"
            "#2 SET_SEMAPHORE_VALUE dest=LOCAL dst=ABS(0x100020) core=LOCAL value=0\n"
            "#3 STREAM_CB_TO_TENSOR dest=UNICAST hops=1 fwd src=CB(3) core=ADDRGEN slice{shape=(1,1,1,1) "
            "slice=(1,1,1,1) off=(0,0,0,0) worker_off=(0,0,0,0) pages=1}\n"
            "#4 ATOMIC_INC dest=UNICAST hops=1 fwd dst=SEM(7) core=XY(1,3) inc=1\n"
            "#5 STREAM_CB_TO_TENSOR dest=LOCAL src=CB(2) core=ADDRGEN slice{shape=(1,1,1,1) slice=(1,1,1,1) "
            "off=(0,0,0,0) worker_off=(0,0,0,0) pages=1}\n");
  EXPECT_EQ(stream_text(reader, 0),
            "#0 WAIT_VALUE dest=LOCAL src=SEM(7) core=LOCAL value=1\n"
            "#1 STREAM_TENSOR_TO_CB dest=LOCAL dst=CB(0) core=ADDRGEN slice{shape=(1,1,1,1) slice=(1,1,1,1) "
            "off=(0,0,0,0) worker_off=(0,0,0,0) pages=1}\n"
            "#2 SET_SEMAPHORE_VALUE dest=LOCAL dst=SEM(7) core=LOCAL value=0\n");
  EXPECT_EQ(stream_text(reader, 1),
            "#0 STREAM_TENSOR_TO_CB dest=LOCAL dst=CB(3) core=ADDRGEN slice{shape=(1,1,1,2) slice=(1,1,1,1) "
            "off=(0,0,0,1) worker_off=(0,0,0,0) pages=1}\n"
            "#1 STREAM_TENSOR_TO_CB dest=LOCAL dst=CB(1) core=ADDRGEN slice{shape=(1,1,1,2) slice=(1,1,1,1) "
            "off=(0,0,0,0) worker_off=(0,0,0,0) pages=1}\n");
}

// ROW_MAJOR along dim 3 (scattered_rows.hpp): every input row is cut into N output rows, the
// workers moving equal row pieces that each fit a fabric payload (4352 B by default). Every ring
// algorithm and both line algorithms build; the CBs hold pieces, not rows: 4 KiB output rows move
// whole, 8 KiB ones in 2 pieces. Rows that do not cut evenly, or into whole 32 B pieces, or into
// pieces a payload holds, are refused naming the op and the bytes.
TEST(ReduceScatterBuilder, RowMajorAlongDim3MovesRowPieces) {
  const topo::Topology t3k = topo::build_t3k();
  const auto rows = [](std::uint32_t width) {
    return TensorSpec{{1, 1, 4, width}, DataType::Bfloat16, Layout::RowMajor};
  };
  // Of the worker cores' CBs (a fabric mux's slots hold whole packets).
  const auto largest_cb_page = [](const MeshWorkload& w) {
    std::uint32_t largest = 0;
    for (const auto& [chip, program] : w.programs) {
      std::vector<CoreRange> muxes;
      for (const KernelSpec& k : program.kernels) {
        if (k.kernel == kernels::kFabricMuxKernelName) muxes.insert(muxes.end(), k.cores.begin(), k.cores.end());
      }
      for (const CircularBufferSpec& cb : program.circular_buffers) {
        if (std::find(muxes.begin(), muxes.end(), cb.cores.front()) == muxes.end()) {
          largest = std::max(largest, cb.page_size_bytes);
        }
      }
    }
    return largest;
  };
  for (const std::uint32_t out_row_bytes : {4096u, 8192u}) {
    SCOPED_TRACE(out_row_bytes);
    const TensorSpec input = rows(8 * out_row_bytes / 2);
    for (const rs::RingAlgorithm algorithm :
         {rs::RingAlgorithm::Chain, rs::RingAlgorithm::OneShot, rs::RingAlgorithm::HalfWay}) {
      SCOPED_TRACE(rs::to_string(algorithm));
      rs::Params p = params(t3k, FabricMode::Ring, CclTopology::Ring, input);
      p.ring_algorithm = algorithm;
      if (rs::needs_intermediate(p, t3k)) p.intermediate_buffer = dram_buffer(3, rs::intermediate_spec(p, t3k));
      p.barrier_semaphore = semaphore(1, {{0, 0}, {7, 0}});
      EXPECT_EQ(largest_cb_page(rs::build(p, t3k)), 4096u);
    }
    for (const rs::LineAlgorithm algorithm : {rs::LineAlgorithm::TwoSided, rs::LineAlgorithm::Wrap}) {
      SCOPED_TRACE(rs::to_string(algorithm));
      rs::Params p = params(t3k, FabricMode::Line, CclTopology::Line, input);
      p.line_algorithm = algorithm;
      p.intermediate_buffer.reset();
      if (rs::needs_intermediate(p, t3k)) p.intermediate_buffer = dram_buffer(3, rs::intermediate_spec(p, t3k));
      EXPECT_EQ(largest_cb_page(rs::build(p, t3k)), 4096u);
    }
  }
  expect_rejected(params(t3k, FabricMode::Ring, CclTopology::Ring, rows(8 * 24)), t3k,
                  "reduce_scatter: ROW_MAJOR along dim 3 cuts each 384 B input row into 8 output rows of 48 B; it "
                  "must be a multiple of 32 B (DRAM alignment, REFERENCE 6.5)");
  rs::Params uneven = params(t3k, FabricMode::Ring, CclTopology::Ring, rows(8 * 64));
  uneven.input = rows(100);
  expect_rejected(uneven, t3k,
                  "reduce_scatter: input dim 3 is 100 elements and does not split into 8 equal slices (shape[dim] % "
                  "N != 0, REFERENCE 11.15)");
  rs::Params tiny_payload = params(t3k, FabricMode::Ring, CclTopology::Ring, rows(8 * 64));
  tiny_payload.fabric.max_payload_bytes = 16;
  expect_rejected(tiny_payload, t3k,
                  "reduce_scatter: a 128 B ROW_MAJOR output row does not split into equal pieces of at most 16 B (the "
                  "fabric payload) that are multiples of 32 B");
  // bfp8_b has no ROW_MAJOR form (REFERENCE 7.1), along dim 3 as elsewhere.
  rs::Params bfp8 = params(t3k, FabricMode::Ring, CclTopology::Ring, rows(8 * 64));
  bfp8.input.dtype = DataType::Bfloat8B;
  expect_rejected(bfp8, t3k, "ROW_MAJOR");
}

}  // namespace
}  // namespace cclmesh::runtime::ccl
