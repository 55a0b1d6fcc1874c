// The legacy-EDM reduce_scatter builder as a pure function: the three kernels per direction and
// their processors, the EDMs on both ends of every hop with their message counts, the workers'
// step lists (raw, forwarded and final sums; the line's ready hand-off between directions),
// the reduce kernel's block count, and validate's rejections.
#include <gtest/gtest.h>

#include <algorithm>

#include "kernels/kernel_args.hpp"
#include "kernels/legacy_reduce_scatter/legacy_reduce_scatter_args.hpp"
#include "runtime/ccl/common/legacy_edm_plan.hpp"
#include "runtime/ccl/common/legacy_op.hpp"
#include "runtime/ccl/reduce_scatter/reduce_scatter.hpp"
#include "tests/unit/ccl/builder_test_util.hpp"
#include "topologies/builtin_systems.hpp"
#include "topologies/system_loader.hpp"

namespace cclmesh::runtime::ccl {
namespace {

namespace rs = reduce_scatter;
namespace lrs = kernels::legacy_reduce_scatter;
namespace le = kernels::legacy_edm;

rs::Params legacy_params(const topo::Topology& t, CclTopology shape, TensorSpec input) {
  rs::Params p;
  p.input = input;
  p.topology = shape;
  p.mode = CclMode::Legacy;
  p.fabric.mode = FabricMode::None;
  p.input_buffer = test::dram_buffer(1, input);
  p.output_buffer = test::dram_buffer(2, rs::output_spec(p, t));
  return p;
}

std::size_t count_kernels(const Program& program, const std::string& name) {
  std::size_t n = 0;
  for (const KernelSpec& k : program.kernels) n += k.kernel == name ? 1 : 0;
  return n;
}

// The step kinds of a worker's runtime args.
std::vector<std::uint32_t> step_kinds(const std::vector<std::uint32_t>& rt) {
  std::vector<std::uint32_t> kinds;
  for (std::uint32_t s = 0; s < rt.at(lrs::kRtNumSteps); ++s) {
    kinds.push_back(rt.at(rt.at(lrs::kRtStepsOffset) + s * lrs::kStepRecordWords));
  }
  return kinds;
}

TEST(ReduceScatterLegacyBuilder, T3kRingChainsAndEdmCounts) {
  const topo::Topology t = topo::build_t3k();
  rs::Params p = legacy_params(t, CclTopology::Ring, TensorSpec{{1, 1, 32, 32 * 8 * 8}});  // 8 tiles per slice
  p.legacy.pages_per_message = 3;  // 4-tile halves: 2 messages, the second of 1 tile
  const MeshWorkload w = rs::build(p, t);
  ASSERT_EQ(w.programs.size(), 8u);
  // The buffers the device holds until finish() (MeshWorkload::buffers).
  EXPECT_EQ(w.buffers, (std::vector<BufferHandle>{p.input_buffer, p.output_buffer}));
  for (const auto& [chip, program] : w.programs) {
    SCOPED_TRACE(chip);
    EXPECT_EQ(count_kernels(program, kernels::kLegacyEdmKernelName), 2u);
    EXPECT_EQ(count_kernels(program, kernels::kLegacyReduceScatterSenderKernelName), 2u);
    EXPECT_EQ(count_kernels(program, kernels::kLegacyReduceScatterReceiverKernelName), 2u);
    EXPECT_EQ(count_kernels(program, kernels::kReduceKernelName), 2u);
    for (const KernelSpec& k : program.kernels) {
      if (k.kernel == kernels::kLegacyEdmKernelName) {
        // Each hop end: my 7 sends of one direction out, the other direction's 7 in; 2 messages each.
        EXPECT_EQ(k.common_runtime_args.at(le::channel_block(0) + le::kChannelNumMessages), 14u);
        EXPECT_EQ(k.common_runtime_args.at(le::channel_block(1) + le::kChannelNumMessages), 14u);
        continue;
      }
      const std::vector<std::uint32_t>& rt = k.runtime_args.begin()->second;
      if (k.kernel == kernels::kReduceKernelName) {
        EXPECT_EQ(k.processor, DataMovementProcessor::Compute);
        EXPECT_EQ(rt.at(kernels::reduce::kRtNumBlocks), 7u * 2u);  // 7 received steps x 2 messages
        EXPECT_EQ(rt.at(kernels::reduce::kRtPagesPerBlock), 1u);   // a CB page is a message
      } else if (k.kernel == kernels::kLegacyReduceScatterSenderKernelName) {
        EXPECT_EQ(k.processor, DataMovementProcessor::Riscv0);
        // Raw first, six forwarded sums, the final sum to my output.
        std::vector<std::uint32_t> expected{lrs::kSendRaw};
        for (int i = 0; i < 6; ++i) expected.push_back(lrs::kSendReduced);
        expected.push_back(lrs::kWriteReduced);
        EXPECT_EQ(step_kinds(rt), expected);
        EXPECT_EQ(rt.at(lrs::kRtReadySemaphoreId), lrs::kNoReadySemaphore);
      } else {
        EXPECT_EQ(k.processor, DataMovementProcessor::Riscv1);
        EXPECT_EQ(step_kinds(rt), std::vector<std::uint32_t>(7, lrs::kReduceWithInput));
      }
    }
  }
}

TEST(ReduceScatterLegacyBuilder, LineEndsAndTheReadyHandOff) {
  const topo::Topology t = topo::build_t3k();
  const rs::Params p = legacy_params(t, CclTopology::Line, TensorSpec{{1, 1, 32, 32 * 4 * 8}});
  const MeshWorkload w = rs::build(p, t);
  const auto line = resolve_legacy_groups(p.groups, t, CclTopology::Line).front();
  ASSERT_EQ(line.size(), 8u);
  const std::vector<CoreCoord> cores = ccl::worker_cores(t, p.first_worker, 2, "test");
  for (std::uint32_t rank = 0; rank < 8; ++rank) {
    SCOPED_TRACE(rank);
    const Program& program = w.programs.at(line[rank]);
    EXPECT_EQ(count_kernels(program, kernels::kLegacyEdmKernelName), rank == 0 || rank == 7 ? 1u : 2u);
    // The ends have one raw-only direction: no receiver, no reduce there.
    EXPECT_EQ(count_kernels(program, kernels::kLegacyReduceScatterReceiverKernelName), rank == 0 || rank == 7 ? 1u : 2u);
    EXPECT_EQ(count_kernels(program, kernels::kReduceKernelName), rank == 0 || rank == 7 ? 1u : 2u);
    for (const KernelSpec& k : program.kernels) {
      if (k.kernel == kernels::kLegacyEdmKernelName || k.kernel == kernels::kReduceKernelName) continue;
      const bool up = k.cores.front().start == cores[0];
      const std::uint32_t pos = up ? rank : 7 - rank;
      const std::vector<std::uint32_t>& rt = k.runtime_args.begin()->second;
      const std::vector<std::uint32_t> kinds = step_kinds(rt);
      if (k.kernel == kernels::kLegacyReduceScatterSenderKernelName) {
        if (pos == 0) {
          EXPECT_EQ(kinds, std::vector<std::uint32_t>(7, lrs::kSendRaw));
          continue;
        }
        ASSERT_EQ(kinds.size(), 8u - pos);
        EXPECT_EQ(kinds.front(), lrs::kWriteReduced);
        EXPECT_EQ(std::count(kinds.begin(), kinds.end(), lrs::kSendReduced), 7 - pos);
        // The chain's end has no EDM onward; the up sender hands my output to the down receiver.
        EXPECT_EQ(rt.at(lrs::kRtEdmChannelOffset) == 0, pos == 7);
        EXPECT_EQ(rt.at(lrs::kRtReadySemaphoreId) != lrs::kNoReadySemaphore, up && rank < 7);
      } else {
        ASSERT_EQ(kinds.size(), 8u - pos);
        // The down chain ends on the up chain's sum in my output, except on rank 0 (nothing below).
        const bool onto_output = !up && rank > 0;
        EXPECT_EQ(kinds.front(), onto_output ? lrs::kReduceWithOutput : lrs::kReduceWithInput);
        EXPECT_EQ(std::count(kinds.begin(), kinds.end(), lrs::kReduceWithInput),
                  static_cast<long>(kinds.size()) - (onto_output ? 1 : 0));
      }
    }
  }
}

// A worker takes at most kMaxSteps steps (N on a ring, N - 1 on a line). Past that the kernel's
// own argument check refused the group as "sender args rejected at runtime arg 9: BAD_ARGS"
// (session 19: ring:65, a 66-chip line); validate now names the limit and what runs.
TEST(ReduceScatterLegacyBuilder, GroupsPastTheKernelsStepLimitAreRefusedNamingIt) {
  const auto params = [](const topo::Topology& t, CclTopology shape) {
    const auto n = static_cast<std::uint32_t>(t.chips().size());
    return legacy_params(t, shape, TensorSpec{{1, 1, 32, 32 * 2 * n}});  // two tiles per slice
  };
  const auto expect_refused = [&](const std::string& system, CclTopology shape, const std::string& part) {
    const topo::Topology t = topo::load_system(system);
    try {
      rs::validate(params(t, shape), t);
      ADD_FAILURE() << system << " was accepted";
    } catch (const CclParamsError& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  const topo::Topology ring64 = topo::load_system("ring:64");
  EXPECT_NO_THROW(rs::validate(params(ring64, CclTopology::Ring), ring64));
  expect_refused("ring:65", CclTopology::Ring,
                 "reduce_scatter: legacy mode on a ring of 65 chips: a worker would take 65 steps and the legacy "
                 "reduce-scatter kernel takes at most 64 (N per worker on a ring), so a legacy ring reduces over at "
                 "most 64 chips; run it in fabric mode (--mode fabric) or on fewer chips (--chips)");  // no axis on ring:N
  // A 2-D mesh's axis is fewer chips than the whole: --cluster-axis is named there.
  expect_refused("torus:16x16", CclTopology::Ring, "on fewer chips (--cluster-axis, --chips)");
  const topo::Topology ring65 = topo::load_system("ring:65");
  EXPECT_NO_THROW(rs::validate(params(ring65, CclTopology::Line), ring65));
  expect_refused("ring:66", CclTopology::Line, "a legacy line reduces over at most 65 chips");
}

TEST(ReduceScatterLegacyBuilder, Rejections) {
  const topo::Topology t = topo::build_t3k();
  const TensorSpec input{{1, 1, 32, 32 * 16}};
  {
    rs::Params p = legacy_params(t, CclTopology::Ring, input);
    p.num_links = 2;
    EXPECT_THROW(rs::validate(p, t), CclParamsError);
  }
  {
    rs::Params p = legacy_params(t, CclTopology::Ring, input);
    p.fabric.mode = FabricMode::Ring;
    EXPECT_THROW(rs::validate(p, t), CclParamsError);
  }
  {
    // bfp8_b is summed (kernels/reduce/bfp8_math.hpp): not a rejection any more.
    rs::Params p = legacy_params(t, CclTopology::Ring, TensorSpec{{1, 1, 32, 32 * 16}, DataType::Bfloat8B});
    EXPECT_NO_THROW(rs::validate(p, t));
  }
  {
    // One tile per slice: the ring's down half would be empty.
    rs::Params p = legacy_params(t, CclTopology::Ring, TensorSpec{{1, 1, 32, 32 * 8}});
    EXPECT_THROW(rs::validate(p, t), CclParamsError);
    p.topology = CclTopology::Line;
    EXPECT_NO_THROW(rs::validate(p, t));
  }
  {
    rs::Params p = legacy_params(t, CclTopology::Ring, TensorSpec{{1, 1, 32, 32 * 12}});  // 12 tiles, 8 chips
    EXPECT_THROW(rs::validate(p, t), CclParamsError);
  }
  {
    // ROW_MAJOR along dim 3 moves row pieces (scattered_rows.hpp): 1024 B rows into 128 B output
    // rows validate; 384 B rows would leave 48 B output rows, not whole 32 B pieces.
    rs::Params p = legacy_params(t, CclTopology::Ring, TensorSpec{{1, 1, 4, 8 * 64}, DataType::Bfloat16,
                                                                  Layout::RowMajor});
    EXPECT_NO_THROW(rs::validate(p, t));
    // A piece fits an EDM buffer (2 channels x 2 buffers in the ERISC region): 64 KiB output
    // rows move in 2 pieces (ccl_reduce_scatter_row_major_e2e_test runs them on the N300).
    EXPECT_EQ(legacy_row_pieces(1024, p.legacy, p.fabric), 1u);
    EXPECT_EQ(legacy_row_pieces(64 * 1024, p.legacy, p.fabric), 2u);
    // Along dim 2 a row moves whole up to 38080 B (legacy_widest_whole_row), a wider one in
    // pieces (session 40; refused since session 35), the last shorter when it is not a multiple of
    // 32 B (session 40).
    p = legacy_params(t, CclTopology::Ring, TensorSpec{{1, 1, 32, 38080 / 2}, DataType::Bfloat16, Layout::RowMajor});
    p.dim = 2;
    p.output_buffer = test::dram_buffer(2, rs::output_spec(p, t));
    EXPECT_NO_THROW(rs::validate(p, t));
    p.input.shape[3] = 65536 / 2;
    p.input_buffer = test::dram_buffer(1, p.input);
    p.output_buffer = test::dram_buffer(2, rs::output_spec(p, t));
    EXPECT_NO_THROW(rs::validate(p, t));
    p.input.shape[3] = 38114 / 2;
    p.input_buffer = test::dram_buffer(1, p.input);
    p.output_buffer = test::dram_buffer(2, rs::output_spec(p, t));
    EXPECT_NO_THROW(rs::validate(p, t));
    p = legacy_params(t, CclTopology::Ring, TensorSpec{{1, 1, 4, 8 * 24}, DataType::Bfloat16, Layout::RowMajor});
    try {
      rs::validate(p, t);
      ADD_FAILURE() << "accepted 48 B output rows";
    } catch (const CclParamsError& e) {
      EXPECT_STREQ(e.what(), "reduce_scatter: ROW_MAJOR along dim 3 cuts each 384 B input row into 8 output rows of "
                             "48 B; it must be a multiple of 32 B (DRAM alignment, REFERENCE 6.5)");
    }
  }
}

}  // namespace
}  // namespace cclmesh::runtime::ccl
