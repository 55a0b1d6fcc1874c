// The legacy-EDM all_gather builder as a pure function: which kernels on which cores, the EDMs
// on both ends of every hop with their message counts, the workers' slices, the buffer sizing
// from the ERISC kernel region, and the per-direction counts on lines and rings.
#include <gtest/gtest.h>

#include <algorithm>
#include <utility>

#include "kernels/kernel_args.hpp"
#include "kernels/legacy_all_gather/legacy_all_gather_args.hpp"
#include "runtime/ccl/all_gather/all_gather.hpp"
#include "runtime/ccl/all_gather/all_gather_legacy.hpp"
#include "runtime/ccl/common/legacy_edm_plan.hpp"
#include "runtime/ccl/common/legacy_op.hpp"
#include "runtime/device/l1_map.hpp"
#include "tests/unit/ccl/builder_test_util.hpp"
#include "topologies/builtin_systems.hpp"
#include "topologies/system_loader.hpp"

namespace cclmesh::runtime::ccl {
namespace {

namespace ag = all_gather;
namespace la = kernels::legacy_all_gather;
namespace le = kernels::legacy_edm;

ag::Params legacy_params(const topo::Topology& t, CclTopology shape, TensorSpec input) {
  ag::Params p;
  p.input = input;
  p.topology = shape;
  p.mode = CclMode::Legacy;
  p.input_buffer = test::dram_buffer(1, input);
  p.output_buffer = test::dram_buffer(2, ag::output_spec(p, t));
  return p;
}

std::size_t count_kernels(const Program& program, const std::string& name) {
  std::size_t n = 0;
  for (const KernelSpec& k : program.kernels) n += k.kernel == name ? 1 : 0;
  return n;
}

TEST(AllGatherLegacyBuilder, DirectionCounts) {
  // Line of 4: up, rank r receives r slices and (below the top) sends its own plus them.
  const ag::legacy::DirectionCounts up1 = ag::legacy::direction_counts(CclTopology::Line, 4, 1, true);
  EXPECT_EQ(up1.received, 1u);
  EXPECT_EQ(up1.sent, 2u);
  const ag::legacy::DirectionCounts top = ag::legacy::direction_counts(CclTopology::Line, 4, 3, true);
  EXPECT_EQ(top.received, 3u);
  EXPECT_EQ(top.sent, 0u);
  const ag::legacy::DirectionCounts down0 = ag::legacy::direction_counts(CclTopology::Line, 4, 0, false);
  EXPECT_EQ(down0.received, 3u);
  EXPECT_EQ(down0.sent, 0u);
  // Ring of 8, FULL_TENSOR: 4 up, 3 down (REFERENCE 7.3).
  EXPECT_EQ(ag::legacy::direction_counts(CclTopology::Ring, 8, 5, true).sent, 4u);
  EXPECT_EQ(ag::legacy::direction_counts(CclTopology::Ring, 8, 5, false).received, 3u);
  // What a chip sends one way is what the next chip that way receives.
  for (const std::uint32_t n : {2u, 3u, 4u, 8u}) {
    for (std::uint32_t r = 0; r + 1 < n; ++r) {
      EXPECT_EQ(ag::legacy::direction_counts(CclTopology::Line, n, r, true).sent,
                ag::legacy::direction_counts(CclTopology::Line, n, r + 1, true).received);
      EXPECT_EQ(ag::legacy::direction_counts(CclTopology::Line, n, r + 1, false).sent,
                ag::legacy::direction_counts(CclTopology::Line, n, r, false).received);
    }
  }
}

TEST(AllGatherLegacyBuilder, N300Workload) {
  const topo::Topology t = topo::build_n300();
  const ag::Params p = legacy_params(t, CclTopology::Line, TensorSpec{{1, 1, 32, 32 * 40}});  // 40 tiles
  const MeshWorkload w = ag::build(p, t);
  ASSERT_EQ(w.programs.size(), 2u);
  // The buffers the device holds until finish() (MeshWorkload::buffers).
  EXPECT_EQ(w.buffers, (std::vector<BufferHandle>{p.input_buffer, p.output_buffer}));
  // The ERISC kernel region split over 2 channels x 2 buffers: 18 bf16 tiles per message in the
  // default 150 KiB region, 13 in the 106 KiB what-if.
  const std::uint32_t pages = legacy_pages_per_message(p.legacy, 2048, 2, "test");
  EXPECT_EQ(pages, 18u);
  EXPECT_EQ(legacy_pages_per_message(p.legacy, 2048, 2, "test", EriscL1Map{106 * 1024}), 13u);
  const std::uint32_t messages = (40 + pages - 1) / pages;  // 3
  for (const auto& [chip, program] : w.programs) {
    SCOPED_TRACE(chip);
    EXPECT_EQ(count_kernels(program, kernels::kLegacyEdmKernelName), 1u);
    EXPECT_EQ(count_kernels(program, kernels::kLegacyAllGatherSenderKernelName), 1u);
    EXPECT_EQ(count_kernels(program, kernels::kLegacyAllGatherReceiverKernelName), 1u);
    for (const KernelSpec& k : program.kernels) {
      if (k.kernel == kernels::kLegacyEdmKernelName) {
        EXPECT_EQ(k.core_kind, CoreKind::Ethernet);
        const auto cfg = kernels::read_legacy_edm_config([&](std::uint32_t i) { return k.compile_time_args.at(i); });
        EXPECT_EQ(cfg.num_sender_channels, 1u);
        EXPECT_EQ(cfg.num_receiver_channels, 1u);
        EXPECT_EQ(cfg.buffer_size_bytes, pages * 2048);
        EXPECT_EQ(cfg.termination_mode, le::kTerminationMessageCountReached);
        EXPECT_EQ(cfg.is_handshake_master, chip == 0);
        const auto layout = kernels::make_legacy_edm_layout(cfg);
        EXPECT_LE(layout.end, kEriscKernelBase + kEriscKernelBytes);
        // Each chip sends its input (4 messages) and receives the other's.
        for (std::uint32_t c = 0; c < 2; ++c) {
          EXPECT_EQ(k.common_runtime_args.at(le::channel_block(c) + le::kChannelNumMessages), messages);
        }
      } else {
        const std::vector<std::uint32_t>& rt = k.runtime_args.begin()->second;
        const bool sender = k.kernel == kernels::kLegacyAllGatherSenderKernelName;
        EXPECT_EQ(k.processor, sender ? DataMovementProcessor::Riscv0 : DataMovementProcessor::Riscv1);
        EXPECT_EQ(rt.at(la::kRtPagesPerMessage), pages);
        // Sender: input + own slice (no relay on 2 chips); receiver: the other chip's slice.
        EXPECT_EQ(rt.at(la::kRtNumSlices), sender ? 2u : 1u);
        EXPECT_EQ(rt.at(la::kRtLocalCopy), sender ? 1u : 0u);
        const api::CclCommandTensor first = kernels::read_slice_record(rt.data() + rt.at(la::kRtSlicesOffset) +
                                                                       (sender ? la::kSliceRecordWords : 0));
        const std::uint32_t origin = sender ? static_cast<std::uint32_t>(chip) : 1 - static_cast<std::uint32_t>(chip);
        EXPECT_EQ(first.tensor_slice_offset.x, origin * 40);
        EXPECT_EQ(first.worker_pages_per_slice, 40u);
      }
    }
  }
}

TEST(AllGatherLegacyBuilder, T3kRingEdmCountsAndRelays) {
  const topo::Topology t = topo::build_t3k();
  ag::Params p = legacy_params(t, CclTopology::Ring, TensorSpec{{1, 1, 32, 32 * 8}});
  p.legacy.pages_per_message = 3;  // 3 messages per 8-tile slice
  p.legacy.termination = LegacyTermination::WorkerSignal;
  const MeshWorkload w = ag::build(p, t);
  ASSERT_EQ(w.programs.size(), 8u);
  for (const auto& [chip, program] : w.programs) {
    SCOPED_TRACE(chip);
    EXPECT_EQ(count_kernels(program, kernels::kLegacyEdmKernelName), 2u);
    EXPECT_EQ(count_kernels(program, kernels::kLegacyAllGatherSenderKernelName), 2u);
    EXPECT_EQ(count_kernels(program, kernels::kLegacyAllGatherReceiverKernelName), 2u);
    std::vector<std::uint32_t> sender_slices;
    for (const KernelSpec& k : program.kernels) {
      if (k.kernel == kernels::kLegacyEdmKernelName) {
        const auto cfg = kernels::read_legacy_edm_config([&](std::uint32_t i) { return k.compile_time_args.at(i); });
        EXPECT_EQ(cfg.termination_mode, le::kTerminationWorkerInitiated);
        const std::uint32_t sent = k.common_runtime_args.at(le::channel_block(0) + le::kChannelNumMessages);
        const std::uint32_t received = k.common_runtime_args.at(le::channel_block(1) + le::kChannelNumMessages);
        // Toward up: 4 slices out, 3 in; toward down: 3 out, 4 in. 3 messages each.
        EXPECT_EQ(sent + received, 7u * 3u);
        EXPECT_TRUE(sent == 12u || sent == 9u);
      } else if (k.kernel == kernels::kLegacyAllGatherSenderKernelName) {
        const std::vector<std::uint32_t>& rt = k.runtime_args.begin()->second;
        sender_slices.push_back(rt.at(la::kRtNumSlices));
        EXPECT_EQ(rt.at(la::kRtEdmTerminationSemaphoreId), kLegacyEdmTerminationSemaphoreId);
      }
    }
    // Input + own + relays: 4 up (3 relays), 3 down (2 relays); exactly one local copy.
    std::sort(sender_slices.begin(), sender_slices.end());
    EXPECT_EQ(sender_slices, (std::vector<std::uint32_t>{4u, 5u}));
  }
}

// ROW_MAJOR along dim 3 (REFERENCE 8 row 3's RM variant, 4 chips on 2 links): the workers move
// row pieces, addressing the output in N x q pieces per row and the input in q, each chip's at
// x = rank x q of the output rows. q = 1 for row 3's 16 KiB rows (2 to a message); 64 KiB rows
// are wider than an EDM buffer and move in q = 2 pieces of 32 KiB.
TEST(AllGatherLegacyBuilder, RowMajorAlongTheWidthMovesRowPieces) {
  const topo::Topology t = topo::build_t3k();
  const std::vector<ChipId> square{0, 1, 3, 2};
  for (const auto& [width, q] : {std::pair{8192u, 1u}, std::pair{32768u, 2u}}) {
    SCOPED_TRACE(width);
    ag::Params p;
    p.input = TensorSpec{{1, 1, 32, width}, DataType::Bfloat16, Layout::RowMajor};
    p.mode = CclMode::Legacy;
    p.groups.chips = {square};
    p.num_links = 2;
    p.input_buffer = test::dram_buffer(1, p.input);
    p.output_buffer = test::dram_buffer(2, ag::output_spec(p, t));
    const std::uint32_t piece = width * 2 / q;
    const std::uint32_t pages = legacy_pages_per_message(p.legacy, piece, kLegacyHopChannels, "t");
    if (q == 1) {
      EXPECT_EQ(pages, 2u);
    }
    const MeshWorkload w = ag::build(p, t);
    ASSERT_EQ(w.programs.size(), 4u);
    for (const auto& [chip, program] : w.programs) {
      SCOPED_TRACE(chip);
      const std::uint32_t rank = static_cast<std::uint32_t>(std::find(square.begin(), square.end(), chip) -
                                                            square.begin());
      std::size_t workers = 0;
      for (const KernelSpec& k : program.kernels) {
        const bool sender = k.kernel == kernels::kLegacyAllGatherSenderKernelName;
        if (!sender && k.kernel != kernels::kLegacyAllGatherReceiverKernelName) continue;
        ++workers;
        const std::vector<std::uint32_t>& rt = k.runtime_args.begin()->second;
        kernels::LegacyAllGatherArgs args{};
        ASSERT_TRUE(kernels::parse_legacy_all_gather_args(sender, rt.data(), static_cast<std::uint32_t>(rt.size()),
                                                          args)
                        .ok());
        EXPECT_EQ(args.page_size_bytes, piece);
        EXPECT_EQ(args.page_stride_bytes, piece);
        EXPECT_EQ(args.pages_per_message, pages);
        EXPECT_EQ(args.output.addrgen.interleaved.pieces_per_page, 4 * q);
        EXPECT_EQ(args.output.addrgen.interleaved.piece_bytes, piece);
        if (sender) {
          EXPECT_EQ(args.input.addrgen.interleaved.pieces_per_page, q);
          EXPECT_EQ(args.input.addrgen.interleaved.piece_bytes, piece);
        }
        for (std::uint32_t s = 0; s < args.num_slices; ++s) {
          const api::CclCommandTensor slice =
              kernels::read_slice_record(rt.data() + args.slices_offset + s * la::kSliceRecordWords);
          // Each link carries 16 of the 32 rows' pieces.
          EXPECT_EQ(slice.worker_pages_per_slice, 16 * q);
          EXPECT_EQ(slice.tensor_slice_shape.x, q);
          if (sender && s == 0) {
            EXPECT_EQ(slice.tensor_shape.x, q);  // the input
          } else {
            EXPECT_EQ(slice.tensor_shape.x, 4 * q);
            EXPECT_EQ(slice.tensor_slice_offset.x % q, 0u);
            if (sender && s == 1) {
              EXPECT_EQ(slice.tensor_slice_offset.x, rank * q);  // my own part
            }
          }
        }
      }
      EXPECT_EQ(workers, 2u * 2u * 2u);  // 2 links x 2 directions x sender and receiver
    }
  }
}

TEST(AllGatherLegacyBuilder, RowMajorAlongTheWidthRefusals) {
  const topo::Topology t = topo::build_t3k();
  const auto params = [&](std::uint32_t width) {
    ag::Params p;
    p.input = TensorSpec{{1, 1, 4, width}, DataType::Bfloat16, Layout::RowMajor};
    p.mode = CclMode::Legacy;
    p.input_buffer = test::dram_buffer(1, p.input);
    p.output_buffer = test::dram_buffer(2, ag::output_spec(p, t));
    return p;
  };
  const auto expect_error = [&](const ag::Params& p, const std::string& part) {
    try {
      ag::validate(p, t);
      ADD_FAILURE() << "accepted; expected an error containing '" << part << "'";
    } catch (const CclParamsError& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  EXPECT_NO_THROW(ag::validate(params(48), t));  // 96 B rows
  // 48 B rows: rank r's part would start at r x 48 B of the output row.
  expect_error(params(24), "all_gather: ROW_MAJOR along dim 3 writes each chip's 48 B row");
  // An explicit message size counts pieces; it does not shrink them to fit.
  ag::Params many = params(8192);
  many.legacy.pages_per_message = 3;
  expect_error(many, "messages of 3 pages (49152 B)");
  many.legacy.pages_per_message = 2;
  EXPECT_NO_THROW(ag::validate(many, t));
}

// Along dims 0-2 a ROW_MAJOR row is a page, moved whole up to the widest an EDM buffer holds
// (38080 B at the defaults, 26816 B in a 106 KiB ERISC region) and in the fewest 32 B-aligned
// pieces that fit one past it (session 40; refused since session 35 naming that figure, and
// before as "a 65536 B page x 2 buffers x 2 channels does not fit the 152576 B ERISC kernel
// region"). A wider row that is not a multiple of 32 B moves in pieces that all start 32 B-aligned,
// the last shorter (session 40; refused until then).
TEST(AllGatherLegacyBuilder, RowMajorRowsWiderThanAnEdmBufferAlongDim2MoveInPieces) {
  const topo::Topology t = topo::build_t3k();
  const auto params = [&](std::uint32_t width) {
    ag::Params p = legacy_params(t, CclTopology::Ring, TensorSpec{{1, 1, 32, width}, DataType::Bfloat16,
                                                                   Layout::RowMajor});
    p.dim = 2;
    p.output_buffer = test::dram_buffer(2, ag::output_spec(p, t));
    return p;
  };
  EXPECT_EQ(legacy_widest_whole_row({}, FabricOptions{}), 38080u);
  FabricOptions small_region;
  small_region.erisc_unreserved_bytes = 106 * 1024;
  EXPECT_EQ(legacy_widest_whole_row({}, small_region), 26816u);
  const auto cut = [](std::uint32_t row_bytes, const FabricOptions& fabric) {
    return legacy_outer_dim_row_pieces(TensorSpec{{1, 1, 32, row_bytes / 2}, DataType::Bfloat16, Layout::RowMajor},
                                       2, {}, fabric, "all_gather");
  };
  const auto pieces = [&](std::uint32_t row_bytes, const FabricOptions& fabric) {
    return cut(row_bytes, fabric).pieces;
  };
  EXPECT_EQ(pieces(38080, FabricOptions{}), 1u);
  EXPECT_EQ(pieces(38112, FabricOptions{}), 3u);  // 1191 x 32 B = 3 x 397 x 32 B
  EXPECT_EQ(pieces(65536, FabricOptions{}), 2u);
  EXPECT_EQ(pieces(38080, small_region), 2u);
  EXPECT_EQ(cut(65536, FabricOptions{}).piece_bytes, 32768u);
  EXPECT_EQ(cut(65536, FabricOptions{}).last_piece_bytes, 0u);
  // 38114 B: 2 pieces (38080 B rounded down to 32 B holds half of it), 19072 B and the 19042 B left.
  EXPECT_EQ(pieces(38114, FabricOptions{}), 2u);
  EXPECT_EQ(cut(38114, FabricOptions{}).piece_bytes, 19072u);
  EXPECT_EQ(cut(38114, FabricOptions{}).last_piece_bytes, 19042u);
  EXPECT_EQ(pieces(38082, FabricOptions{}), 2u);
  EXPECT_EQ(cut(38082, FabricOptions{}).last_piece_bytes, 19010u);
  EXPECT_EQ(pieces(80002, FabricOptions{}), 3u);  // 3 x 26688 B would be 80064 B: 26688 + 26688 + 26626 B
  EXPECT_EQ(cut(80002, FabricOptions{}).piece_bytes, 26688u);
  EXPECT_EQ(cut(80002, FabricOptions{}).last_piece_bytes, 26626u);
  EXPECT_EQ(pieces(38078, FabricOptions{}), 1u);  // fits whole: not a multiple of 32 B is no matter
  EXPECT_EQ(legacy_outer_dim_row_pieces(TensorSpec{{1, 1, 32, 32768}, DataType::Bfloat16, Layout::RowMajor}, 3, {},
                                        FabricOptions{}, "all_gather")
                .pieces,
            1u);  // dim 3's pieces are the op's own (legacy_row_pieces)
  EXPECT_NO_THROW(ag::validate(params(38080 / 2), t));
  EXPECT_NO_THROW(ag::validate(params(38112 / 2), t));
  EXPECT_NO_THROW(ag::validate(params(65536 / 2), t));
  EXPECT_NO_THROW(ag::validate(params(38114 / 2), t));
  ag::Params along_width = params(32768);  // 64 KiB rows along dim 3: in pieces
  along_width.dim = 3;
  along_width.output_buffer = test::dram_buffer(2, ag::output_spec(along_width, t));
  EXPECT_NO_THROW(ag::validate(along_width, t));
}

// Session 41 measured every piece count from the fewest to the fewest + 11 for these rows and kept
// the fewest (docs/collectives.md, "How many pieces a legacy wide row takes"): more pieces a row
// pack more bytes into each message but lose where slices are a few messages (up to 40 % at one
// row a chip), so no rule of the row alone won everywhere. The cuts measured, and the pages a
// message each takes (every message crosses the link as its whole buffer).
TEST(AllGatherLegacyBuilder, RowMajorWideRowsTakeTheFewestPiecesAsMeasuredInSession41) {
  struct Cut {
    std::uint32_t row_bytes;
    DataType dtype;
    std::uint32_t pieces;
    std::uint32_t piece_bytes;
    std::uint32_t last_piece_bytes;
    std::uint32_t pages_per_message;
  };
  const Cut cuts[] = {
      {38114, DataType::Bfloat16, 2, 19072, 19042, 1}, {38116, DataType::Float32, 2, 19072, 19044, 1},
      {38144, DataType::Bfloat16, 2, 19072, 0, 1},     {40000, DataType::Bfloat16, 2, 20000, 0, 1},
      {45000, DataType::Bfloat16, 2, 22528, 22472, 1}, {50000, DataType::Bfloat16, 2, 25024, 24976, 1},
      {65536, DataType::Bfloat16, 2, 32768, 0, 1},     {76800, DataType::Bfloat16, 3, 25600, 0, 1},
      {100000, DataType::Bfloat16, 5, 20000, 0, 1},    {38112, DataType::Bfloat16, 3, 12704, 0, 2},
  };
  const FabricOptions fabric;
  for (const Cut& c : cuts) {
    SCOPED_TRACE(c.row_bytes);
    const std::uint32_t element = c.dtype == DataType::Float32 ? 4 : 2;
    const LegacyRowCut cut = legacy_outer_dim_row_pieces(
        TensorSpec{{1, 1, 32, c.row_bytes / element}, c.dtype, Layout::RowMajor}, 2, {}, fabric, "all_gather");
    EXPECT_EQ(cut.pieces, c.pieces);
    EXPECT_EQ(cut.piece_bytes, c.piece_bytes);
    EXPECT_EQ(cut.last_piece_bytes, c.last_piece_bytes);
    EXPECT_EQ(legacy_pages_per_message({}, legacy_page_stride_bytes(cut.piece_bytes), kLegacyHopChannels,
                                       "all_gather", fabric.erisc_l1_map()),
              c.pages_per_message);
  }
}

// A worker holds at most kMaxSlices slice records (N/2 + 1 on a ring, N on a line). Past that the
// kernel's own argument check refused the group as "sender args rejected at runtime arg 10:
// BAD_ARGS" (session 19: torus:16x16, ring:128); validate now names the limit and what runs.
TEST(AllGatherLegacyBuilder, GroupsPastTheKernelsSliceLimitAreRefusedNamingIt) {
  const auto params = [](const topo::Topology& t, CclTopology shape) {
    const auto n = static_cast<std::uint32_t>(t.chips().size());
    return legacy_params(t, shape, TensorSpec{{1, 1, 32, 32 * n}});
  };
  const auto expect_refused = [&](const std::string& system, CclTopology shape, const std::string& part) {
    const topo::Topology t = topo::load_system(system);
    try {
      ag::validate(params(t, shape), t);
      ADD_FAILURE() << system << " was accepted";
    } catch (const CclParamsError& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  const topo::Topology ring127 = topo::load_system("ring:127");
  EXPECT_NO_THROW(ag::validate(params(ring127, CclTopology::Ring), ring127));
  expect_refused("ring:128", CclTopology::Ring,
                 "all_gather: legacy mode on a ring of 128 chips: a worker would hold 65 slices and the legacy "
                 "all-gather kernel takes at most 64 (N/2 + 1 on a ring: its input, its own slice and the N/2 - 1 it "
                 "relays), so a legacy ring gathers over at most 127 chips; run it in fabric mode (--mode fabric) or "
                 "on fewer chips (--chips)");  // ring:N has no mesh axis to run along
  // A 2-D mesh's axis is fewer chips than the whole: --cluster-axis is named there.
  expect_refused("torus:16x16", CclTopology::Ring, "on fewer chips (--cluster-axis, --chips)");
  const topo::Topology ring64 = topo::load_system("ring:64");
  EXPECT_NO_THROW(ag::validate(params(ring64, CclTopology::Line), ring64));
  expect_refused("ring:65", CclTopology::Line, "a legacy line gathers over at most 64 chips");
}

TEST(AllGatherLegacyBuilder, MessageSizing) {
  const LegacyEdmOptions defaults;
  // Larger pages, fewer per message; fewer buffers, more per message.
  EXPECT_GT(legacy_pages_per_message(defaults, 1088, 2, "t"), legacy_pages_per_message(defaults, 2048, 2, "t"));
  EXPECT_GT(legacy_pages_per_message({LegacyTermination::MessageCount, 1, 0}, 2048, 2, "t"),
            legacy_pages_per_message(defaults, 2048, 2, "t"));
  EXPECT_EQ(legacy_page_stride_bytes(1088), 1088u);
  EXPECT_EQ(legacy_page_stride_bytes(100), 128u);
  EXPECT_THROW(legacy_pages_per_message({LegacyTermination::MessageCount, 0, 0}, 2048, 2, "t"), CclParamsError);
  EXPECT_THROW(legacy_pages_per_message({LegacyTermination::MessageCount, 2, 100}, 2048, 2, "t"), CclParamsError);
}

}  // namespace
}  // namespace cclmesh::runtime::ccl
