// all_broadcast's builder and all_gather's broadcast fallback (all_broadcast + concat) as pure
// functions of (params, topology): what they refuse, which kernels run where, the multicast
// reach and the done count, and the concat kernels' tile runs and buffer addresses. No device.
#include <gtest/gtest.h>

#include "kernels/concat/concat_args.hpp"
#include "kernels/host/kernel_args_builder.hpp"
#include "kernels/kernel_args.hpp"
#include "runtime/ccl/all_broadcast/all_broadcast.hpp"
#include "runtime/ccl/all_gather/all_gather.hpp"
#include "tests/unit/ccl/builder_test_util.hpp"
#include "topologies/builtin_systems.hpp"

namespace cclmesh::runtime::ccl {
namespace {

namespace ab = all_broadcast;
namespace ag = all_gather;
using test::dram_buffer;
using test::semaphore;

TensorSpec bf16(std::array<std::uint32_t, 4> shape) { return TensorSpec{shape, DataType::Bfloat16, Layout::Tile}; }

ab::Params broadcast(const topo::Topology& topology, FabricMode fabric, CclTopology shape, TensorSpec input) {
  ab::Params p;
  p.input = input;
  p.topology = shape;
  p.fabric.mode = fabric;
  p.input_buffer = dram_buffer(1, input);
  for (std::uint32_t i = 0; i < ab::output_buffer_count(p, topology); ++i) {
    p.output_buffers.push_back(dram_buffer(10 + i, input));
  }
  p.done_semaphore = semaphore(1, {{0, 0}, {0, 0}});
  return p;
}

template <class F>
void expect_refused(F&& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "expected a refusal mentioning '" << needle << "'";
  } catch (const CclParamsError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

const KernelSpec& writer_of(const Program& program) {
  for (const KernelSpec& k : program.kernels) {
    if (k.processor == DataMovementProcessor::Riscv0) return k;
  }
  throw std::runtime_error("no writer");
}

TEST(AllBroadcastBuilder, RingWorkerMulticastsItsRankBufferHalfWayBothWays) {
  const topo::Topology t3k = topo::build_t3k();
  const ab::Params p = broadcast(t3k, FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 1, 1}));
  ab::validate(p, t3k);
  const MeshWorkload w = ab::build(p, t3k);
  EXPECT_EQ(w.name, "all_broadcast");
  ASSERT_EQ(w.programs.size(), 8u);
  // The buffers the device holds until finish() (MeshWorkload::buffers).
  std::vector<BufferHandle> named{p.input_buffer};
  named.insert(named.end(), p.output_buffers.begin(), p.output_buffers.end());
  EXPECT_EQ(w.buffers, named);
  // And the global semaphores (MeshWorkload::global_semaphores): the done one, no barrier here.
  EXPECT_EQ(w.global_semaphores, (std::vector<GlobalSemaphore>{*p.done_semaphore}));
  const FabricPlan plan(t3k, p.fabric);
  for (std::uint32_t rank = 0; rank < 8; ++rank) {
    const Program& program = w.programs.at(plan.chips()[rank]);
    ASSERT_EQ(program.kernels.size(), 2u);  // reader and writer interpreters on one core
    const KernelSpec& writer = writer_of(program);
    const std::vector<std::uint32_t>& rt = writer.runtime_args.at({0, 0});
    // The writer's tensor is this rank's output buffer.
    EXPECT_EQ(rt[kernels::interpreter::stream_block(0)], p.output_buffers[rank].address);
    const std::string write = kargs::describe_interpreter_command(rt, 0, 0);
    EXPECT_NE(write.find("dest=MCAST fwd=4 bwd=3"), std::string::npos) << write;
    // The done core waits for one increment from every chip, its own included.
    const std::string wait = kargs::describe_interpreter_command(rt, 0, 2);
    EXPECT_NE(wait.find("WAIT_VALUE"), std::string::npos) << wait;
    EXPECT_NE(wait.find("8"), std::string::npos) << wait;
  }
}

TEST(AllBroadcastBuilder, LineEndsMulticastToTheOtherEnd) {
  const topo::Topology t3k = topo::build_t3k();
  const ab::Params p = broadcast(t3k, FabricMode::Line, CclTopology::Line, bf16({1, 1, 32, 64}));
  const MeshWorkload w = ab::build(p, t3k);
  const FabricPlan plan(t3k, p.fabric);
  const auto write_of = [&](std::uint32_t rank) {
    return kargs::describe_interpreter_command(writer_of(w.programs.at(plan.chips()[rank])).runtime_args.at({0, 0}), 0,
                                               0);
  };
  EXPECT_NE(write_of(0).find("dest=MCAST fwd=7 bwd=0"), std::string::npos) << write_of(0);
  EXPECT_NE(write_of(7).find("dest=MCAST fwd=0 bwd=7"), std::string::npos) << write_of(7);
  EXPECT_NE(write_of(3).find("dest=MCAST fwd=4 bwd=3"), std::string::npos) << write_of(3);
}

TEST(AllBroadcastBuilder, Refusals) {
  const topo::Topology t3k = topo::build_t3k();
  const auto base = [&] { return broadcast(t3k, FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 32, 64})); };
  {
    ab::Params p = base();
    p.output_buffers.pop_back();
    expect_refused([&] { ab::validate(p, t3k); }, "7 output buffers for groups of 8 chips");
  }
  {
    ab::Params p = base();
    p.output_buffers[3] = p.output_buffers[2];
    expect_refused([&] { ab::validate(p, t3k); }, "outputs 2 and 3 are the same buffer");
  }
  {
    ab::Params p = base();
    p.output_buffers[1] = dram_buffer(11, bf16({1, 1, 32, 32}));
    expect_refused([&] { ab::validate(p, t3k); }, "output 1 buffer");
  }
  {
    ab::Params p = base();
    p.done_semaphore.reset();
    expect_refused([&] { ab::validate(p, t3k); }, "done_semaphore is missing");
  }
}

ag::Params fallback(const topo::Topology& topology, FabricMode fabric, CclTopology shape, TensorSpec input,
                    std::uint32_t dim) {
  ag::Params p = test::all_gather_params(topology, fabric, shape, input, dim);
  for (std::uint32_t i = 0; i < ag::broadcast_buffer_count(p, topology); ++i) {
    p.broadcast_buffers.push_back(BufferHandle{20 + i, 0x400000ull + 0x10000ull * i, ag::broadcast_buffer_config(p)});
  }
  return p;
}

TEST(AllGatherBroadcastFallback, OnlyForTileDimsThatAreNotWholeTiles) {
  const topo::Topology t3k = topo::build_t3k();
  EXPECT_TRUE(ag::needs_broadcast_fallback(fallback(t3k, FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 1, 1}), 3)));
  EXPECT_TRUE(ag::needs_broadcast_fallback(fallback(t3k, FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 1, 1}), 2)));
  // Padded rows gathered along the width still join in whole tiles; dims 0 and 1 always do.
  EXPECT_FALSE(ag::needs_broadcast_fallback(fallback(t3k, FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 1, 32}), 3)));
  EXPECT_FALSE(ag::needs_broadcast_fallback(fallback(t3k, FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 1, 1}), 1)));
  ag::Params rm = fallback(t3k, FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 4, 64}), 3);
  rm.input.layout = Layout::RowMajor;
  EXPECT_FALSE(ag::needs_broadcast_fallback(rm));
  EXPECT_EQ(ag::broadcast_buffer_count(fallback(t3k, FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 1, 1}), 3), t3k),
            8u);
  EXPECT_EQ(ag::broadcast_buffer_count(fallback(t3k, FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 32, 32}), 3), t3k),
            0u);
}

TEST(AllGatherBroadcastFallback, BuildsAllBroadcastThenConcat) {
  const topo::Topology n300 = topo::build_n300();
  // REFERENCE 8 row 37: 32x736 gathered over 2 chips, 368 columns (11.5 tiles) per chip.
  const ag::Params p = fallback(n300, FabricMode::Line, CclTopology::Line, bf16({1, 1, 32, 368}), 3);
  ag::validate(p, n300);
  const std::vector<MeshWorkload> w = ag::build_workloads(p, n300);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0].name, "all_broadcast");
  EXPECT_EQ(w[1].name, "all_gather_concat");
  ASSERT_EQ(w[1].programs.size(), 2u);
  for (const auto& [chip, program] : w[1].programs) {
    // 23 output tiles over 8 cores: 3, 3, 3, 3, 3, 3, 3, 2.
    ASSERT_EQ(program.kernels.size(), 8u) << "chip " << chip;
    std::uint32_t next = 0;
    for (std::uint32_t c = 0; c < 8; ++c) {
      const KernelSpec& k = program.kernels[c];
      EXPECT_EQ(k.kernel, kernels::kConcatKernelName);
      const CoreCoord core = k.cores.front().start;
      EXPECT_EQ(core, (CoreCoord{c, 0}));
      const std::vector<std::uint32_t>& rt = k.runtime_args.at(core);
      EXPECT_EQ(rt[kernels::concat::kRtFirstTile], next);
      EXPECT_EQ(rt[kernels::concat::kRtNumTiles], c < 7 ? 3u : 2u);
      EXPECT_EQ(rt[kernels::concat::kRtRanks], 2u);
      EXPECT_EQ(rt[kernels::concat::kRtShape + 3], 368u);
      EXPECT_EQ(rt[kernels::concat::kRtOutAddress], p.output_buffer.address);
      EXPECT_EQ(rt[kernels::concat::kRtFirstInAddress + 1], p.broadcast_buffers[1].address);
      next += rt[kernels::concat::kRtNumTiles];
    }
    EXPECT_EQ(next, 23u);
  }
  // build() alone cannot return two workloads.
  expect_refused([&] { ag::build(p, n300); }, "build_workloads");
}

TEST(AllGatherBroadcastFallback, Refusals) {
  const topo::Topology t3k = topo::build_t3k();
  const auto base = [&] { return fallback(t3k, FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 1, 1}), 3); };
  {
    ag::Params p = base();
    p.broadcast_buffers.clear();
    expect_refused([&] { ag::validate(p, t3k); }, "needs broadcast_buffers: 0 given, expected 8");
  }
  {
    ag::Params p = base();
    p.mode = CclMode::Legacy;
    expect_refused([&] { ag::validate(p, t3k); }, "the legacy EDM mode does not have; use fabric mode");
  }
  {
    // bfp8_b runs in fabric mode (below), not in legacy mode.
    ag::Params p = base();
    p.input.dtype = DataType::Bfloat8B;
    p.mode = CclMode::Legacy;
    expect_refused([&] { ag::validate(p, t3k); }, "the legacy EDM mode does not have; use fabric mode");
  }
  {
    // One address generator serves all N broadcast buffers: they must be laid out alike.
    ag::Params p = base();
    p.broadcast_buffers[5].config.type = BufferType::L1;
    expect_refused([&] { ag::validate(p, t3k); }, "the broadcast buffers must all have the same config");
  }
}

// The concat kernels' compile-time args and CBs for `p` on every chip, checked against `check`.
template <class Check>
void for_each_concat_kernel(const ag::Params& p, const topo::Topology& topology, Check check) {
  ag::validate(p, topology);
  const std::vector<MeshWorkload> w = ag::build_workloads(p, topology);
  ASSERT_EQ(w.size(), 2u);
  for (const auto& [chip, program] : w[1].programs) {
    ASSERT_FALSE(program.kernels.empty());
    for (const KernelSpec& k : program.kernels) check(program, k);
  }
}

TEST(AllGatherBroadcastFallback, Bfp8ConcatUnpacksIntoAnFp32Tile) {
  const topo::Topology t3k = topo::build_t3k();
  TensorSpec input = bf16({1, 1, 1, 1});
  input.dtype = DataType::Bfloat8B;
  const ag::Params p = fallback(t3k, FabricMode::Ring, CclTopology::Ring, input, 3);
  EXPECT_EQ(p.broadcast_buffers.front().config.page_size_bytes, 1088u);
  for_each_concat_kernel(p, t3k, [&](const Program& program, const KernelSpec& k) {
    EXPECT_EQ(k.compile_time_args[kernels::concat::kCtElementBytes], kernels::concat::kBfp8ElementBytes);
    EXPECT_EQ(k.runtime_args.begin()->second[kernels::concat::kRtTileBytes], 1088u);
    const std::uint32_t unpack_cb = k.compile_time_args[kernels::concat::kCtUnpackCbId];
    bool has_unpack_cb = false;
    for (const CircularBufferSpec& cb : program.circular_buffers) {
      if (cb.cb_id == unpack_cb && cb.cores.front() == k.cores.front()) {
        has_unpack_cb = true;
        EXPECT_EQ(cb.page_size_bytes, 4096u);
      }
    }
    EXPECT_TRUE(has_unpack_cb);
  });
}

TEST(AllGatherBroadcastFallback, ShardedOutputAndBroadcastBuffers) {
  const topo::Topology t3k = topo::build_t3k();
  // 8 ranks of 20 columns: the output is 160 columns, 5 tiles, width sharded one tile per core.
  ag::Params p = fallback(t3k, FabricMode::Ring, CclTopology::Ring, bf16({1, 1, 32, 20}), 3);
  p.output_buffer.config.type = BufferType::L1;
  p.output_buffer.config.layout = TensorMemoryLayout::WidthSharded;
  p.output_buffer.config.shard = ShardSpec{{CoreRange{{0, 1}, {4, 1}}}, 1, 1, 5, ShardOrientation::RowMajor};
  // The broadcast buffers height sharded in DRAM banks 0 and 1 (one padded tile each, one bank).
  for (BufferHandle& b : p.broadcast_buffers) {
    b.config.layout = TensorMemoryLayout::HeightSharded;
    b.config.shard = ShardSpec{{CoreRange{{0, 0}, {0, 0}}}, 1, 1, 1, ShardOrientation::RowMajor};
  }
  namespace ia = kernels::interpreter;
  for_each_concat_kernel(p, t3k, [&](const Program&, const KernelSpec& k) {
    const std::vector<std::uint32_t>& rt = k.runtime_args.begin()->second;
    const std::uint32_t out = rt[kernels::concat::kRtOutAddrGenOffset];
    EXPECT_EQ(rt[out + ia::kAddrGenLayout], static_cast<std::uint32_t>(api::TensorMemoryLayout::WIDTH_SHARDED));
    EXPECT_EQ(rt[out + ia::kAddrGenShardedNumCores], 5u);
    const std::uint32_t in = rt[kernels::concat::kRtInAddrGenOffset];
    EXPECT_EQ(rt[in + ia::kAddrGenLayout], static_cast<std::uint32_t>(api::TensorMemoryLayout::HEIGHT_SHARDED));
    EXPECT_EQ(rt[in + ia::kAddrGenBufferType], static_cast<std::uint32_t>(api::BufferType::DRAM));
  });
}

}  // namespace
}  // namespace cclmesh::runtime::ccl
