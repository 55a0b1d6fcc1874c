// all_reduce of ROW_MAJOR rows wider than a fabric payload (8192 B rows of a 4096-wide bf16
// tensor against the 4352 B default payload; 4384 B rows in 137 pieces of 32 B; 4400 B rows in 2208 + 2192 B):
// every algorithm moves them in pieces (row_pieces.hpp) and sums them bit for bit as
// reference_outputs() does (the pieces are whole elements and the sum is element-wise, so the
// order of additions is that of whole rows: no tolerance). N300, T3K ring and line; bf16 and fp32;
// DRAM and L1; reduce_scatter + all_gather (its halves along dim 2 with q pieces a row), the
// composite and the one-shot; the ring's three reduce_scatter halves and the line's wrap; Galaxy
// columns by cluster_axis; legacy mode's composite; Auto on rows that do not divide by the chips.
// Legacy mode's rows wider than an EDM buffer (session 40; refused before): rs-ag and the
// composite on N300 and the T3K ring and line, bf16 and fp32, and a wide row that is not a
// multiple of 32 B (its last piece shorter; refused in all_reduce's name until session 40).
// And the refusal of a wide row at a payload that holds no 32 B-aligned piece, in all_reduce's name.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "runtime/ccl/all_reduce/all_reduce.hpp"
#include "runtime/ccl/common/ccl_common.hpp"
#include "tests/integration/ccl/ccl_runners.hpp"
#include "tests/integration/ccl/wide_rows_case.hpp"
#include "tests/integration/ccl/legacy_runner.hpp"
#include "topologies/system_loader.hpp"

namespace cclmesh::ccltest {
namespace {

namespace ar = runtime::ccl::all_reduce;

struct WideCase : WideRowCase {
  ar::Algorithm algorithm = ar::Algorithm::ReduceScatterAllGather;
};

const char* algorithm_name(ar::Algorithm a) {
  switch (a) {
    case ar::Algorithm::ReduceScatterAllGather:
      return "rsag";
    case ar::Algorithm::Composite:
      return "composite";
    case ar::Algorithm::OneShot:
      return "oneshot";
    case ar::Algorithm::Auto:
      break;
  }
  return "auto";
}

void PrintTo(const WideCase& c, std::ostream* os) {
  PrintTo(static_cast<const WideRowCase&>(c), os);
  *os << "_" << algorithm_name(c.algorithm);
}

std::vector<WideCase> cases() {
  std::vector<WideCase> all;
  for (const WideRowCase& base : wide_row_cases()) {
    for (const ar::Algorithm algorithm :
         {ar::Algorithm::ReduceScatterAllGather, ar::Algorithm::Composite, ar::Algorithm::OneShot}) {
      all.push_back({base, algorithm});
    }
  }
  return all;
}

class WideRowsAllReduce : public ::testing::TestWithParam<WideCase> {};

// 8 rows: they divide by 2 and by 8 chips, so every algorithm can run.
TEST_P(WideRowsAllReduce, EveryChipHoldsTheSumBitForBit) {
  const WideCase& c = GetParam();
  auto device = make_device(system_of(c), fabric_mode_for(c.shape));
  ar::Params p;
  p.tensor = wide_rows(c.dtype, c.row_bytes, 8);
  ASSERT_GT(runtime::ccl::page_size_bytes(p.tensor), device->options().fabric.max_payload_bytes);
  p.topology = c.shape;
  p.algorithm = c.algorithm;
  const RunOutcome out = run_all_reduce(*device, p, Memory{c.memory, std::nullopt});
  EXPECT_TRUE(out.verified);
  EXPECT_EQ(out.group_size, std::string(c.system) == "t3k" ? 8u : 2u);
  EXPECT_GT(out.kernel_ns, 0u);
}

INSTANTIATE_TEST_SUITE_P(Algorithms, WideRowsAllReduce, ::testing::ValuesIn(cases()),
                         wide_row_case_name<WideCase>);

// reduce_scatter + all_gather with each reduce_scatter half a ring can run (the one-shot ring, the
// chain, the half-way ring) and a line's wrap, 8192 B rows on the T3K.
TEST(WideRowsAllReduceMore, EveryReduceScatterHalf) {
  auto ring = make_device(topo::build_t3k(), FabricMode::Ring);
  for (const auto rs : {runtime::ccl::reduce_scatter::RingAlgorithm::OneShot,
                        runtime::ccl::reduce_scatter::RingAlgorithm::Chain,
                        runtime::ccl::reduce_scatter::RingAlgorithm::HalfWay}) {
    SCOPED_TRACE(static_cast<int>(rs));
    ar::Params p;
    p.tensor = wide_rows(DataType::Bfloat16, 8192, 16);
    p.algorithm = ar::Algorithm::ReduceScatterAllGather;
    p.rs_ring_algorithm = rs;
    EXPECT_TRUE(run_all_reduce(*ring, p, Memory{}).verified);
  }
  auto line = make_device(topo::build_t3k(), FabricMode::Line);
  ar::Params p;
  p.tensor = wide_rows(DataType::Float32, 8192, 16);
  p.topology = CclTopology::Line;
  p.algorithm = ar::Algorithm::ReduceScatterAllGather;
  p.rs_line_algorithm = runtime::ccl::reduce_scatter::LineAlgorithm::Wrap;
  EXPECT_TRUE(run_all_reduce(*line, p, Memory{}).verified);
}

// Auto on rows that do not divide by the 8 chips (the one-shot, its sums in L1) and on rows that
// do and are past the one-shot's bytes (reduce_scatter + all_gather), 4384 B and 8192 B rows.
TEST(WideRowsAllReduceMore, AutoWhetherOrNotTheRowsDivide) {
  auto device = make_device(topo::build_t3k(), FabricMode::Ring);
  ar::Params p;
  p.tensor = wide_rows(DataType::Bfloat16, 4384, 3);
  p.fabric = device->options().fabric;
  EXPECT_EQ(ar::resolved_algorithm(p, device->topology()), ar::Algorithm::OneShot);
  EXPECT_TRUE(run_all_reduce(*device, p, Memory{}).verified);
  p.tensor = wide_rows(DataType::Bfloat16, 8192, 32);
  EXPECT_EQ(ar::resolved_algorithm(p, device->topology()), ar::Algorithm::ReduceScatterAllGather);
  EXPECT_TRUE(run_all_reduce(*device, p, Memory{}).verified);
}

// Every Galaxy column at once (cluster_axis 0, per-axis line fabric on 2 links), each algorithm.
TEST(WideRowsAllReduceMore, GalaxyColumnsByClusterAxis) {
  auto galaxy = make_device(topo::build_galaxy(), fabric_of(FabricMode::Line, runtime::FabricScope::Axes, 2));
  for (const ar::Algorithm algorithm :
       {ar::Algorithm::ReduceScatterAllGather, ar::Algorithm::Composite, ar::Algorithm::OneShot}) {
    SCOPED_TRACE(algorithm_name(algorithm));
    ar::Params p;
    p.tensor = wide_rows(DataType::Bfloat16, 8192, 8);
    p.topology = CclTopology::Line;
    p.num_links = 2;
    p.groups.cluster_axis = 0;
    p.algorithm = algorithm;
    const RunOutcome out = run_all_reduce(*galaxy, p, Memory{});
    EXPECT_TRUE(out.verified);
    EXPECT_EQ(out.groups, topo::axis_groups(galaxy->topology(), 0).size());
    EXPECT_EQ(out.group_size, topo::axis_groups(galaxy->topology(), 0).front().size());
  }
}

// Legacy EDM mode's composite: its local sum is the fabric mode's, in pieces (its legacy gather
// takes the 8192 B rows in its EDM buffers whole).
TEST(WideRowsAllReduceMore, LegacyComposite) {
  auto device = legacy_device(topo::build_t3k());
  ar::Params p;
  p.tensor = wide_rows(DataType::Bfloat16, 8192, 8);
  p.mode = runtime::ccl::CclMode::Legacy;
  p.algorithm = ar::Algorithm::Composite;
  EXPECT_TRUE(run_all_reduce(*device, p, Memory{}).verified);
}

// Legacy mode's rows wider than an EDM buffer (65536 B: 38080 B at the defaults): its halves move
// them along dim 2 (rs-ag) or dim 0 (the composite's gather) in 2 pieces of 32768 B, bit for bit.
TEST(WideRowsAllReduceMore, LegacyRowsWiderThanAnEdmBuffer) {
  for (const DataType dtype : {DataType::Bfloat16, DataType::Float32}) {
    SCOPED_TRACE(static_cast<int>(dtype));
    auto ring = legacy_device(topo::build_t3k());
    run_legacy_all_reduce(*ring, CclTopology::Ring, wide_rows(dtype, 65536, 16));
    auto line = legacy_device(topo::build_t3k());
    run_legacy_all_reduce(*line, CclTopology::Line, wide_rows(dtype, 65536, 8));
    auto n300 = legacy_device(topo::build_n300());
    run_legacy_all_reduce(*n300, CclTopology::Line, wide_rows(dtype, 65536, 2));
  }
  for (const CclTopology shape : {CclTopology::Ring, CclTopology::Line}) {
    auto device = legacy_device(topo::build_t3k());
    ar::Params p;
    p.tensor = wide_rows(DataType::Bfloat16, 65536, 3);
    p.topology = shape;
    p.mode = runtime::ccl::CclMode::Legacy;
    p.algorithm = ar::Algorithm::Composite;
    EXPECT_TRUE(run_all_reduce(*device, p, Memory{}).verified);
  }
}

// A row wider than an EDM buffer that is not a multiple of 32 B: its halves cut it into 32 B-aligned
// pieces with a shorter last one (38114 B: 19072 + 19042 B; 38116 B: 19072 + 19044 B), rs-ag and
// the composite, bit for bit (session 40; refused in all_reduce's name before).
TEST(WideRowsAllReduceMore, LegacyWideRowNotAMultipleOf32Bytes) {
  for (const DataType dtype : {DataType::Bfloat16, DataType::Float32}) {
    SCOPED_TRACE(static_cast<int>(dtype));
    const std::uint32_t row_bytes = dtype == DataType::Float32 ? 38116 : 38114;
    auto ring = legacy_device(topo::build_t3k());
    run_legacy_all_reduce(*ring, CclTopology::Ring, wide_rows(dtype, row_bytes, 16));
    auto n300 = legacy_device(topo::build_n300());
    run_legacy_all_reduce(*n300, CclTopology::Line, wide_rows(dtype, row_bytes, 2));
  }
  for (const CclTopology shape : {CclTopology::Ring, CclTopology::Line}) {
    auto device = legacy_device(topo::build_t3k());
    ar::Params p;
    p.tensor = wide_rows(DataType::Bfloat16, 38114, 3);
    p.topology = shape;
    p.mode = runtime::ccl::CclMode::Legacy;
    p.algorithm = ar::Algorithm::Composite;
    EXPECT_TRUE(run_all_reduce(*device, p, Memory{}).verified);
  }
}

// Only ROW_MAJOR rows are cut (as reduce cuts them): a TILE page above the payload stays whole and
// is refused as before session 35. In legacy mode --fabric-payload sizes only the composite's local
// sum, and that sum cut bfp8_b tiles (1088 B, shared exponents) into 544 B pieces the reduce kernel
// cannot take: the simulated op faulted (BAD_ARGS) instead of being refused.
TEST(WideRowsAllReduceRefusal, LegacyCompositeDoesNotCutTiles) {
  auto device = legacy_device(topo::build_t3k());
  for (const auto& [dtype, payload] : {std::pair{DataType::Bfloat8B, 1024u}, std::pair{DataType::Float32, 2048u}}) {
    SCOPED_TRACE(payload);
    ar::Params p;
    p.tensor = TensorSpec{{1, 1, 32, 1024}, dtype, Layout::Tile};
    p.mode = runtime::ccl::CclMode::Legacy;
    p.algorithm = ar::Algorithm::Composite;
    p.fabric.max_payload_bytes = payload;
    const runtime::BufferConfig config = buffer_config(p.tensor, Memory{});
    p.input_buffer = device->create_buffer(config);
    p.output_buffer = device->create_buffer(config);
    p.intermediate_buffer = device->create_buffer(buffer_config(ar::intermediate_spec(p, device->topology()), Memory{}));
    try {
      ar::build(p, device->topology());
      ADD_FAILURE() << "all_reduce cut " << runtime::ccl::page_size_bytes(p.tensor) << " B tiles";
    } catch (const runtime::ccl::PageExceedsPacketError& e) {
      EXPECT_EQ(e.page_size_bytes(), runtime::ccl::page_size_bytes(p.tensor));
    }
  }
}

// What all_reduce says of 4400 B rows at a 16 B payload, whichever call meets them first.
constexpr const char* kPayloadBelowAPieceRefusal =
    "all_reduce: a 4400 B page (a ROW_MAJOR row) is wider than the 16 B fabric payload, which holds no 32 "
    "B-aligned piece of it; expected a payload of at least 32 B";

// A row wider than the payload moves in 32 B-aligned pieces (a shorter last one when the row is
// not a multiple of 32 B, session 36); a payload under 32 B holds no such piece, and the row is
// refused in all_reduce's name whatever the algorithm (not by the half that meets it first).
TEST(WideRowsAllReduceRefusal, APayloadThatHoldsNoAlignedPiece) {
  auto device = make_device(topo::build_t3k(), FabricMode::Ring);
  for (const ar::Algorithm algorithm : {ar::Algorithm::Auto, ar::Algorithm::ReduceScatterAllGather,
                                        ar::Algorithm::Composite, ar::Algorithm::OneShot}) {
    SCOPED_TRACE(algorithm_name(algorithm));
    ar::Params p;
    p.fabric = device->options().fabric;
    p.fabric.max_payload_bytes = 16;
    p.tensor = TensorSpec{{1, 1, 8, 2200}, DataType::Bfloat16, Layout::RowMajor};  // 4400 B rows
    p.algorithm = algorithm;
    const runtime::BufferConfig config = buffer_config(p.tensor, Memory{});
    p.input_buffer = device->create_buffer(config);
    p.output_buffer = device->create_buffer(config);
    p.intermediate_buffer = device->create_buffer(config);
    try {
      ar::validate(p, device->topology());
      ADD_FAILURE() << "all_reduce took 4400 B rows at a 16 B payload";
    } catch (const runtime::ccl::CclParamsError& e) {
      EXPECT_EQ(std::string(e.what()), kPayloadBelowAPieceRefusal);
    }
  }
}

// A caller sizes the op's buffers and semaphores (semaphore_cores, the intermediates' specs) before
// build(), as cclmesh run does; those calls reach into the halves too and must refuse such a row in
// all_reduce's name as validate() does (on a line, semaphore_cores said "reduce_scatter: ...").
TEST(WideRowsAllReduceRefusal, BeforeBuildTooInAllReducesName) {
  const std::string refusal = kPayloadBelowAPieceRefusal;
  const std::pair<topo::Topology, FabricMode> systems[] = {{topo::build_n300(), FabricMode::Line},
                                                           {topo::build_t3k(), FabricMode::Line},
                                                           {topo::build_t3k(), FabricMode::Ring}};
  for (const auto& [system, mode] : systems) {
    auto device = make_device(system, mode);
    for (const ar::Algorithm algorithm : {ar::Algorithm::Auto, ar::Algorithm::ReduceScatterAllGather,
                                          ar::Algorithm::Composite, ar::Algorithm::OneShot}) {
      SCOPED_TRACE(std::to_string(system.chip_count()) + " chips, " + algorithm_name(algorithm) +
                   (mode == FabricMode::Ring ? ", ring" : ", line"));
      ar::Params p;
      p.fabric = device->options().fabric;
      p.fabric.max_payload_bytes = 16;
      p.topology = mode == FabricMode::Ring ? CclTopology::Ring : CclTopology::Line;
      p.tensor = TensorSpec{{1, 1, 8, 2200}, DataType::Bfloat16, Layout::RowMajor};  // 4400 B rows
      p.algorithm = algorithm;
      const runtime::BufferConfig config = buffer_config(p.tensor, Memory{});
      p.input_buffer = device->create_buffer(config);
      p.output_buffer = device->create_buffer(config);
      p.intermediate_buffer = device->create_buffer(config);
      const topo::Topology& t = device->topology();
      // semaphore_cores reaches a half in every algorithm, so it refuses; the others reach one in
      // some algorithms only, and then must refuse as all_reduce.
      try {
        ar::semaphore_cores(p, t);
        ADD_FAILURE() << "semaphore_cores took 4400 B rows at a 16 B payload";
      } catch (const runtime::ccl::CclParamsError& e) {
        EXPECT_EQ(std::string(e.what()), refusal);
      }
      const auto refused_as_all_reduce = [&](const char* call, const auto& f) {
        try {
          f();
        } catch (const runtime::ccl::CclParamsError& e) {
          EXPECT_EQ(std::string(e.what()), refusal) << call;
        }
      };
      refused_as_all_reduce("needs_rs_intermediate", [&] { ar::needs_rs_intermediate(p, t); });
      refused_as_all_reduce("rs_intermediate_spec", [&] { ar::rs_intermediate_spec(p, t); });
      refused_as_all_reduce("intermediate_spec", [&] { ar::intermediate_spec(p, t); });
      refused_as_all_reduce("halves_choices", [&] { ar::halves_choices(p, t); });
      refused_as_all_reduce("composite_gather_choices", [&] { ar::composite_gather_choices(p, t); });
    }
  }
}

}  // namespace
}  // namespace cclmesh::ccltest
