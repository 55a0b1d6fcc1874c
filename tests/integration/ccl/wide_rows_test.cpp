// ROW_MAJOR rows wider than a fabric payload (8192 B rows of a 4096-wide bf16 tensor, a common
// LLM hidden size, against the 4352 B default payload) moved in pieces by the ops that move
// whole pages (broadcast, send_recv, reduce; all_broadcast since session 35): each op on N300
// and T3K (ring and line), bf16 and fp32, DRAM and L1, with the rows of wide_rows_case.hpp,
// compared bit for bit with the host reference; rows that are not a multiple of 32 B (a shorter
// last piece, session 36). Also: Galaxy columns on 2 links and T3K rows height-sharded in L1.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "runtime/ccl/all_broadcast/all_broadcast.hpp"
#include "runtime/ccl/all_gather/all_gather.hpp"
#include "runtime/ccl/broadcast/broadcast.hpp"
#include "runtime/ccl/common/ccl_common.hpp"
#include "runtime/ccl/common/row_pieces.hpp"
#include "runtime/ccl/reduce/reduce.hpp"
#include "runtime/ccl/send_recv/send_recv.hpp"
#include "tests/integration/ccl/ccl_runners.hpp"
#include "tests/integration/ccl/wide_rows_case.hpp"
#include "topologies/system_loader.hpp"

namespace cclmesh::ccltest {
namespace {

namespace bc = runtime::ccl::broadcast;
namespace sr = runtime::ccl::send_recv;
namespace rd = runtime::ccl::reduce;
namespace ab = runtime::ccl::all_broadcast;
namespace ag = runtime::ccl::all_gather;

// 8 rows of `row_bytes`.
TensorSpec eight_wide_rows(const WideRowCase& c) { return wide_rows(c.dtype, c.row_bytes, 8); }

// The Galaxy's first column (cluster_axis 0 group 0), in rank order.
std::vector<ChipId> galaxy_column(const topo::Topology& galaxy) {
  return to_runtime(topo::axis_groups(galaxy, 0).front());
}

class WideRowsE2e : public ::testing::TestWithParam<WideRowCase> {};

TEST_P(WideRowsE2e, BroadcastEveryChipHoldsTheRootsRows) {
  const WideRowCase& c = GetParam();
  auto device = make_device(system_of(c), fabric_mode_for(c.shape));
  const TensorSpec tensor = eight_wide_rows(c);
  ASSERT_GT(runtime::ccl::page_size_bytes(tensor), device->options().fabric.max_payload_bytes);
  bc::Params p;
  p.root = 1;
  const RunOutcome out = run_broadcast(*device, p, buffer_config(tensor, Memory{c.memory, std::nullopt}), c.dtype);
  EXPECT_TRUE(out.verified);
  EXPECT_EQ(out.group_size, std::string(c.system) == "t3k" ? 8u : 2u);
  EXPECT_GT(out.kernel_ns, 0u);
}

// From chip 0 to chip 7 on a T3K (3 hops along its line, 1 round its ring) or to the N300's
// other chip, and to itself (a local copy, which no payload bounds).
TEST_P(WideRowsE2e, SendRecvTheReceiverHoldsTheSendersRows) {
  const WideRowCase& c = GetParam();
  auto device = make_device(system_of(c), fabric_mode_for(c.shape));
  const TensorSpec tensor = eight_wide_rows(c);
  const runtime::BufferConfig config = buffer_config(tensor, Memory{c.memory, std::nullopt});
  sr::Params p;
  p.sender = 0;
  p.receiver = std::string(c.system) == "t3k" ? 7 : 1;
  const RunOutcome out = run_send_recv(*device, p, config, c.dtype);
  EXPECT_TRUE(out.verified);
  EXPECT_GT(out.kernel_ns, 0u);
  // Every byte crossed every hop of the route (with the fabric's own words beside it).
  const runtime::FabricPlan plan(device->topology(), device->options().fabric);
  const std::uint32_t hops = plan.route(0, p.receiver).hops;
  EXPECT_GE(out.total_link_payload_bytes(), static_cast<std::int64_t>(config.size_bytes) * hops);
  p.receiver = 0;
  EXPECT_TRUE(run_send_recv(*device, p, config, c.dtype).verified);
}

// The root's rows are the sum of every chip's, in the chain's order with bf16 rounded after every
// addition (reduce::reference_output), bit for bit; the pieces are whole elements.
TEST_P(WideRowsE2e, ReduceTheRootHoldsTheSumOfEveryChipsRows) {
  const WideRowCase& c = GetParam();
  auto device = make_device(system_of(c), fabric_mode_for(c.shape));
  rd::Params p;
  p.tensor = eight_wide_rows(c);
  p.topology = c.shape;
  p.root = 1;
  const RunOutcome out = run_reduce(*device, p, Memory{c.memory, std::nullopt});
  EXPECT_TRUE(out.verified);
  EXPECT_GT(out.kernel_ns, 0u);
}

// Every chip's rows land in its rank's output buffer on every chip, byte for byte (session 35).
TEST_P(WideRowsE2e, AllBroadcastEveryChipHoldsEveryRanksRows) {
  const WideRowCase& c = GetParam();
  auto device = make_device(system_of(c), fabric_mode_for(c.shape));
  ab::Params p;
  p.input = eight_wide_rows(c);
  p.topology = c.shape;
  const RunOutcome out = run_all_broadcast(*device, p, Memory{c.memory, std::nullopt});
  EXPECT_TRUE(out.verified);
  EXPECT_EQ(out.group_size, std::string(c.system) == "t3k" ? 8u : 2u);
  EXPECT_GT(out.kernel_ns, 0u);
}

INSTANTIATE_TEST_SUITE_P(Ops, WideRowsE2e, ::testing::ValuesIn(wide_row_cases()),
                         wide_row_case_name<WideRowCase>);

// Galaxy columns on the per-axis fabric with 2 links, every column at once: the pieces split
// between the links' workers as pages do, a worker's run starting mid-row where it falls; and a
// T3K's rows height-sharded in L1 (the sharded address generator's pieces). 7 rows of 2 pieces
// each: the second link's run starts mid-row.
TEST(WideRowsMore, GalaxyColumnsTwoLinksAndHeightShardedL1) {
  auto galaxy = make_device(topo::build_galaxy(), fabric_of(FabricMode::Line, runtime::FabricScope::Axes, 2));
  for (const std::uint32_t row_bytes : {8192u, 4384u, 4400u}) {
    SCOPED_TRACE(row_bytes);
    const TensorSpec tensor{{1, 1, 7, row_bytes / 2}, DataType::Bfloat16, Layout::RowMajor};
    const runtime::BufferConfig config = buffer_config(tensor, Memory{});
    bc::Params b;
    b.root = galaxy_column(galaxy->topology()).at(1);
    b.groups.cluster_axis = 0;
    b.num_links = 2;
    EXPECT_TRUE(run_broadcast(*galaxy, b, config, tensor.dtype).verified);
    sr::Params s;
    const std::vector<ChipId> column = galaxy_column(galaxy->topology());
    s.sender = column.at(0);
    s.receiver = column.at(3);
    s.groups.cluster_axis = 0;
    s.num_links = 2;
    EXPECT_TRUE(run_send_recv(*galaxy, s, config, tensor.dtype).verified);
    rd::Params r;
    r.tensor = tensor;
    r.root = 2;
    r.topology = CclTopology::Line;
    r.num_links = 2;
    r.groups.cluster_axis = 0;
    EXPECT_TRUE(run_reduce(*galaxy, r, Memory{}).verified);
    ab::Params a;
    a.input = tensor;
    a.topology = CclTopology::Line;
    a.num_links = 2;
    a.groups.cluster_axis = 0;
    EXPECT_TRUE(run_all_broadcast(*galaxy, a, Memory{}).verified);
  }
  auto t3k = make_device(topo::build_t3k(), FabricMode::Ring);
  const TensorSpec tensor{{1, 1, 64, 2048}, DataType::Float32, Layout::RowMajor};  // 8192 B rows
  const Memory sharded{BufferType::L1,
                       ShardLayout{runtime::TensorMemoryLayout::HeightSharded, {runtime::CoreRange{{0, 0}, {7, 0}}}, 8,
                                   2048}};
  bc::Params b;
  b.root = 2;
  EXPECT_TRUE(run_broadcast(*t3k, b, buffer_config(tensor, sharded), tensor.dtype).verified);
  sr::Params s;
  s.sender = 0;
  s.receiver = 5;
  EXPECT_TRUE(run_send_recv(*t3k, s, buffer_config(tensor, sharded), tensor.dtype).verified);
  rd::Params r;
  r.tensor = tensor;
  r.root = 6;
  EXPECT_TRUE(run_reduce(*t3k, r, sharded).verified);
  // 4400 B rows (not a multiple of 32 B), height-sharded: the sharded generator's shorter last piece.
  const TensorSpec odd{{1, 1, 64, 1100}, DataType::Float32, Layout::RowMajor};
  const Memory odd_sharded{BufferType::L1,
                           ShardLayout{runtime::TensorMemoryLayout::HeightSharded,
                                       {runtime::CoreRange{{0, 0}, {7, 0}}}, 8, 1100}};
  EXPECT_TRUE(run_broadcast(*t3k, b, buffer_config(odd, odd_sharded), odd.dtype).verified);
  r.tensor = odd;
  EXPECT_TRUE(run_reduce(*t3k, r, odd_sharded).verified);
}

// A wide row that is not a multiple of 32 B moves in 32 B-aligned pieces with a shorter last one
// (session 36; refused before): 8200 B rows as 4128 + 4072 B, 8804 B fp32 rows in L1 as 2944 +
// 2944 + 2916 B, bit for bit through every op that moves whole pages.
TEST(WideRowsUnaligned, EveryWholePageOpMovesThemWithAShorterLastPiece) {
  auto n300 = make_device(topo::build_n300(), FabricMode::Line);
  const TensorSpec rows_8200{{1, 1, 4, 4100}, DataType::Bfloat16, Layout::RowMajor};
  bc::Params b;
  b.root = 1;
  EXPECT_TRUE(run_broadcast(*n300, b, buffer_config(rows_8200, Memory{}), rows_8200.dtype).verified);
  const TensorSpec rows_8804{{1, 1, 4, 2201}, DataType::Float32, Layout::RowMajor};
  sr::Params s;
  s.sender = 0;
  s.receiver = 1;
  EXPECT_TRUE(run_send_recv(*n300, s, buffer_config(rows_8804, Memory{BufferType::L1, std::nullopt}),
                            rows_8804.dtype)
                  .verified);
  rd::Params r;
  r.tensor = rows_8200;
  r.root = 0;
  r.topology = CclTopology::Line;
  EXPECT_TRUE(run_reduce(*n300, r, Memory{}).verified);
  auto t3k = make_device(topo::build_t3k(), FabricMode::Ring);
  ab::Params a;
  a.input = rows_8200;
  EXPECT_TRUE(run_all_broadcast(*t3k, a, Memory{}).verified);
}

// A TILE page is never cut (bfp8_b's shared exponents would not survive it): a payload below a
// tile is still refused as before.
TEST(WideRowsRefusal, ReduceKeepsTilesWhole) {
  auto device = make_device(topo::build_n300(), FabricMode::Line);
  rd::Params p;
  p.topology = CclTopology::Line;
  p.fabric = device->options().fabric;
  p.tensor = tile({1, 1, 32, 64});
  p.input_buffer = device->create_buffer(buffer_config(p.tensor, Memory{}));
  p.output_buffer = device->create_buffer(buffer_config(p.tensor, Memory{}));
  p.barrier_semaphore =
      device->create_global_semaphore(rd::semaphore_cores(p, device->topology()), runtime::CoreKind::Tensix, 0);
  p.fabric.max_payload_bytes = 1024;
  EXPECT_THROW(rd::validate(p, device->topology()), runtime::ccl::PageExceedsPacketError);
}

// A copy's pieces fill a payload (FillPayload: the fewest within 6 % of the 4352 B that 32 B
// pieces pack), a reduction's are the fewest that fit (Fewest); a row that fits moves whole.
TEST(WideRowsPieces, CopiesFillAPayloadReductionsTakeTheFewest) {
  using runtime::ccl::fabric_row_pieces;
  using Choice = runtime::ccl::RowPieceChoice;
  const auto pieces = [](std::uint32_t row_bytes, Choice choice) {
    return fabric_row_pieces(row_bytes, 4352, choice, "op", "row");
  };
  EXPECT_EQ(runtime::ccl::fill_payload_packing_floor(4352), 4091u);
  EXPECT_EQ(pieces(4416, Choice::Fewest), 2u);        // 2208 B: one a payload, 2208 B
  EXPECT_EQ(pieces(4416, Choice::FillPayload), 23u);  // 192 B: 22 a payload, 4224 B
  EXPECT_EQ(pieces(4608, Choice::Fewest), 2u);        // 2304 B: 2304 B a payload
  EXPECT_EQ(pieces(4608, Choice::FillPayload), 9u);   // 512 B: 8 a payload, 4096 B
  EXPECT_EQ(pieces(8256, Choice::Fewest), 2u);        // 4128 B, 94.9 % of a payload either way
  EXPECT_EQ(pieces(8256, Choice::FillPayload), 2u);
  EXPECT_EQ(pieces(8192, Choice::FillPayload), 2u);   // 4096 B, 94.1 %: within the 6 %
  EXPECT_EQ(pieces(8832, Choice::Fewest), 3u);        // 2944 B (fp32 2208-wide rows)
  EXPECT_EQ(pieces(8832, Choice::FillPayload), 23u);  // 384 B: 11 a payload, 4224 B
  EXPECT_EQ(pieces(4384, Choice::Fewest), 137u);      // 137 is prime: 32 B pieces either way
  EXPECT_EQ(pieces(4384, Choice::FillPayload), 137u);
  EXPECT_EQ(pieces(2400, Choice::FillPayload), 1u);   // fits: whole, though it packs 2400 B
  const auto copy = runtime::ccl::fabric_pages(4416, 10, 4352, Choice::FillPayload, "op");
  EXPECT_EQ(copy.pieces_per_page, 23u);
  EXPECT_EQ(copy.page_bytes, 192u);
  EXPECT_EQ(copy.count, 230u);
  EXPECT_EQ(copy.last_piece_bytes, 0u);
  // Not a multiple of 32 B: the shorter-last-piece cut, the same for both.
  EXPECT_EQ(runtime::ccl::fabric_pages(4400, 1, 4352, Choice::FillPayload, "op").page_bytes, 2208u);
}

// all_gather along dim 3 cuts a row that fits a payload but not two when it leaves more than
// FillPayload's 6 % of the payload empty (docs/collectives.md, "Rows that fit a payload, all_gather
// along dim 3 (session 39)"); the cut is FillPayload's.
TEST(WideRowsPieces, AllGatherDim3CutsFittingRowsThatGoOneAPacket) {
  using runtime::ccl::fill_payload_pieces_of_fitting_row;
  EXPECT_EQ(fill_payload_pieces_of_fitting_row(3072, 4352), 3u);   // 1024 B: 4 a payload, 4096 B
  EXPECT_EQ(fill_payload_pieces_of_fitting_row(2208, 4352), 23u);  // 96 B: 45 a payload, 4320 B
  EXPECT_EQ(fill_payload_pieces_of_fitting_row(3840, 4352), 8u);   // 480 B: 9 a payload, 4320 B
  EXPECT_EQ(fill_payload_pieces_of_fitting_row(4096, 4352), 1u);   // 94.1 %: whole
  EXPECT_EQ(fill_payload_pieces_of_fitting_row(4352, 4352), 1u);
  EXPECT_EQ(fill_payload_pieces_of_fitting_row(960, 4352), 2u);  // 4 a payload, 88 %: cut; all_gather keeps it whole
}

// Rows that fit a payload but are cut (3072 B bf16 in 3 x 1024 B, 2208 B fp32 in 23 x 96 B), gathered
// along dim 3 into every chip's output rows bit for bit: N300 line and T3K ring (relay and
// multicast), DRAM and L1, 5 rows (the pieces of a packet straddle rows).
TEST(WideRowsMore, AllGatherDim3FittingRowsInPieces) {
  struct System {
    const char* name;
    topo::Topology topology;
    FabricMode fabric;
    CclTopology shape;
  };
  for (const System& s : {System{"n300", topo::build_n300(), FabricMode::Line, CclTopology::Line},
                          System{"t3k ring", topo::build_t3k(), FabricMode::Ring, CclTopology::Ring}}) {
    auto device = make_device(s.topology, s.fabric);
    for (const auto& [dtype, row_bytes] : {std::pair{DataType::Bfloat16, 3072u}, std::pair{DataType::Float32, 2208u}}) {
      for (const BufferType memory : {BufferType::Dram, BufferType::L1}) {
        const std::vector<ag::RingAlgorithm> algorithms =
            s.shape == CclTopology::Ring
                ? std::vector<ag::RingAlgorithm>{ag::RingAlgorithm::Relay, ag::RingAlgorithm::Multicast}
                : std::vector<ag::RingAlgorithm>{ag::RingAlgorithm::Auto};
        for (const ag::RingAlgorithm algorithm : algorithms) {
          SCOPED_TRACE(fmt::format("{} {} B rows {} {}", s.name, row_bytes, memory == BufferType::L1 ? "L1" : "DRAM",
                                   ag::to_string(algorithm)));
          ag::Params p;
          p.input = wide_rows(dtype, row_bytes, 5);
          p.dim = 3;
          p.topology = s.shape;
          p.ring_algorithm = algorithm;
          const Memory m{memory, std::nullopt};
          const RunOutcome out = run_all_gather(*device, p, m, m);
          EXPECT_TRUE(out.verified);
          EXPECT_GT(out.kernel_ns, 0u);
        }
      }
    }
  }
}

// A reduction's pieces: a row of a multiple of 32 B in the fewest equal ones, multiples of 32 B, that fit
// the payload; any other in the fewest that fit, all but the last the same multiple of 32 B (each
// starts 32 B-aligned), the last what is left; a row that fits stays whole.
TEST(WideRowsPieces, FewestAlignedPiecesThatFitAPayload) {
  using runtime::ccl::fabric_pages;
  using Choice = runtime::ccl::RowPieceChoice;
  const auto whole = fabric_pages(4352, 10, 4352, Choice::Fewest, "op");
  EXPECT_EQ(whole.pieces_per_page, 1u);
  EXPECT_EQ(whole.page_bytes, 4352u);
  EXPECT_EQ(whole.count, 10u);
  EXPECT_EQ(whole.last_piece_bytes, 0u);
  const auto halves = fabric_pages(8192, 10, 4352, Choice::Fewest, "op");
  EXPECT_EQ(halves.pieces_per_page, 2u);
  EXPECT_EQ(halves.page_bytes, 4096u);
  EXPECT_EQ(halves.count, 20u);
  EXPECT_EQ(halves.last_piece_bytes, 0u);  // equal
  const auto odd = fabric_pages(4384, 3, 4352, Choice::Fewest, "op");  // 137 x 32 B: 137 is prime
  EXPECT_EQ(odd.pieces_per_page, 137u);
  EXPECT_EQ(odd.page_bytes, 32u);
  EXPECT_EQ(odd.last_piece_bytes, 0u);
  EXPECT_EQ(odd.count, 411u);
  const auto unaligned = fabric_pages(4400, 1, 4352, Choice::Fewest, "op");
  EXPECT_EQ(unaligned.pieces_per_page, 2u);
  EXPECT_EQ(unaligned.page_bytes, 2208u);
  EXPECT_EQ(unaligned.last_piece_bytes, 2192u);
  const auto thirds = fabric_pages(8804, 1, 4352, Choice::Fewest, "op");
  EXPECT_EQ(thirds.pieces_per_page, 3u);
  EXPECT_EQ(thirds.page_bytes, 2944u);
  EXPECT_EQ(thirds.last_piece_bytes, 2916u);
  // A payload that is not a multiple of 32 B: pieces are its 32 B-aligned part (4320 B).
  const auto below = fabric_pages(8640, 1, 4350, Choice::Fewest, "op");
  EXPECT_EQ(below.pieces_per_page, 2u);
  EXPECT_EQ(below.page_bytes, 4320u);
  EXPECT_EQ(below.last_piece_bytes, 0u);
  try {
    fabric_pages(100, 1, 31, Choice::Fewest, "reduce");
    ADD_FAILURE() << "a 31 B payload took a piece";
  } catch (const runtime::ccl::CclParamsError& e) {
    EXPECT_EQ(std::string(e.what()),
              "reduce: a 100 B page (a ROW_MAJOR row) is wider than the 31 B fabric payload, which holds no 32 "
              "B-aligned piece of it; expected a payload of at least 32 B");
  }
}

}  // namespace
}  // namespace cclmesh::ccltest
