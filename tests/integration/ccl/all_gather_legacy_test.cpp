// all_gather in legacy EDM mode end to end on the simulated device with real data: per-op EDMs
// on both ends of every hop, workers relaying neighbour to neighbour (REFERENCE 5, 7.4). N300,
// T3K 4- and 8-chip lines and the 8-chip ring; every dim; TILE and ROW_MAJOR (along the width
// too: 2 and 8 chips, 1 and 2 links, ring and line, height-sharded buffers, rows wider than an
// EDM buffer); bf16 / fp32 / bfp8_b; DRAM, L1 and width-sharded L1; both EDM termination modes; one-buffer channels and
// messages smaller than a slice. Every chip's output is compared bit for bit with the same host
// reference the fabric mode uses (reference::concat). Also: the EDMs are launched with the op,
// report ready after their handshake, and the op's launch cost shows against fabric mode.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <array>

#include "runtime/ccl/all_gather/all_gather.hpp"
#include "runtime/ccl/all_gather/all_gather_legacy.hpp"
#include "sim/model/chip.hpp"
#include "sim/model/noc.hpp"
#include "sim/model/noc_port.hpp"
#include "sim/model/sim_system.hpp"
#include "tests/integration/ccl/legacy_runner.hpp"

namespace cclmesh::ccltest {
namespace {

namespace ag = runtime::ccl::all_gather;
using runtime::BufferConfig;
using runtime::ccl::LegacyTermination;

TEST(AllGatherLegacy, N300EveryDim) {
  for (std::uint32_t dim = 0; dim < 4; ++dim) {
    SCOPED_TRACE(dim);
    auto device = legacy_device(topo::build_n300());
    LegacyCase c;
    c.input = tile({2, 2, 64, 96});
    c.dim = dim;
    c.topology = CclTopology::Line;
    const LegacyRun r = run_legacy_all_gather(*device, c);
    EXPECT_EQ(r.edms, 2u);  // one EDM on each end of the one hop
  }
}

TEST(AllGatherLegacy, T3kRingAndLines) {
  {
    auto device = legacy_device(topo::build_t3k());
    LegacyCase c;
    c.input = tile({1, 1, 64, 256});
    const LegacyRun r = run_legacy_all_gather(*device, c);
    EXPECT_EQ(r.edms, 16u);  // 8 hops, both ends
  }
  {
    auto device = legacy_device(topo::build_t3k());
    LegacyCase c;
    c.input = tile({1, 1, 64, 256});
    c.topology = CclTopology::Line;
    EXPECT_EQ(run_legacy_all_gather(*device, c).edms, 14u);
  }
  {
    auto device = legacy_device(topo::build_t3k());
    LegacyCase c;  // a 4-chip line, dim 2
    const auto line = to_runtime(topo::find_system_line(device->topology()).chips);
    c.groups = {{line[0], line[1], line[2], line[3]}};
    c.input = tile({1, 1, 96, 64});
    c.dim = 2;
    c.topology = CclTopology::Line;
    EXPECT_EQ(run_legacy_all_gather(*device, c).edms, 6u);
  }
}

TEST(AllGatherLegacy, DtypesLayoutsAndMemories) {
  struct Variant {
    TensorSpec input;
    std::uint32_t dim;
    BufferType memory;
  };
  const Variant variants[] = {
      {tile({1, 1, 32, 128}, DataType::Float32), 3, BufferType::Dram},
      {tile({1, 1, 64, 64}, DataType::Bfloat8B), 2, BufferType::Dram},
      {TensorSpec{{1, 1, 16, 96}, DataType::Bfloat16, Layout::RowMajor}, 2, BufferType::Dram},
      {tile({1, 2, 32, 64}), 1, BufferType::L1},
  };
  for (const Variant& v : variants) {
    SCOPED_TRACE(fmt::format("{} {} dim {}", runtime::ccl::to_string(v.input.dtype),
                             runtime::ccl::to_string(v.input.layout), v.dim));
    auto device = legacy_device(topo::build_t3k());
    LegacyCase c;
    c.input = v.input;
    c.dim = v.dim;
    c.memory = v.memory;
    run_legacy_all_gather(*device, c);
  }
}

TEST(AllGatherLegacy, WidthShardedOutput) {
  auto device = legacy_device(topo::build_t3k());
  LegacyCase c;  // out (1,1,32,1024) width sharded, one tile per core on 8x4
  c.input = tile({1, 1, 32, 128});
  const TensorSpec out = tile({1, 1, 32, 1024});
  c.output_config = BufferConfig{BufferType::L1, runtime::ccl::size_bytes(out), runtime::ccl::page_size_bytes(out),
                                 runtime::TensorMemoryLayout::WidthSharded,
                                 runtime::ShardSpec{{runtime::CoreRange{{0, 0}, {7, 3}}}, 1, 1, 32, runtime::ShardOrientation::RowMajor}};
  run_legacy_all_gather(*device, c);
}

// DRAM-sharded buffers: shard core (x, 0) is DRAM bank x (buffer_layout.hpp), so the workers'
// address generators carry bank ids, not worker cores. A width-sharded output over 6 banks on
// the T3K ring, with the input width sharded one tile per bank too; and on a 4-chip line, an
// interleaved input gathered along dim 2 into a height-sharded output over 4 banks.
BufferConfig dram_sharded(const TensorSpec& t, runtime::TensorMemoryLayout layout, std::uint32_t banks,
                          std::uint32_t shard_height_pages, std::uint32_t shard_width_pages) {
  return BufferConfig{BufferType::Dram, runtime::ccl::size_bytes(t), runtime::ccl::page_size_bytes(t), layout,
                      runtime::ShardSpec{{runtime::CoreRange{{0, 0}, {banks - 1, 0}}}, shard_height_pages,
                                         shard_width_pages, runtime::ccl::shape_in_pages(t).x,
                                         runtime::ShardOrientation::RowMajor}};
}

TEST(AllGatherLegacy, DramShardedBuffers) {
  {
    auto device = legacy_device(topo::build_t3k());
    LegacyCase c;
    c.input = tile({1, 1, 32, 192});  // 6 tiles per chip, one per bank; out 48 tiles, 8 per bank
    c.input_config = dram_sharded(c.input, runtime::TensorMemoryLayout::WidthSharded, 6, 1, 1);
    c.output_config = dram_sharded(tile({1, 1, 32, 1536}), runtime::TensorMemoryLayout::WidthSharded, 6, 1, 8);
    run_legacy_all_gather(*device, c);
  }
  {
    auto device = legacy_device(topo::build_t3k());
    LegacyCase c;  // (1,1,64,64) per chip -> (1,1,256,64) = 16 tiles, 2x2 tiles per bank
    const auto line = to_runtime(topo::find_system_line(device->topology()).chips);
    c.groups = {{line[0], line[1], line[2], line[3]}};
    c.input = tile({1, 1, 64, 64});
    c.dim = 2;
    c.topology = CclTopology::Line;
    c.output_config = dram_sharded(tile({1, 1, 256, 64}), runtime::TensorMemoryLayout::HeightSharded, 4, 2, 2);
    run_legacy_all_gather(*device, c);
  }
}

// ROW_MAJOR along dim 3: each chip's rows are its part of every output row (all_gather_legacy.hpp),
// rows an odd number of 32 B wide. 2 and 8 chips, 1 and 2 links, ring and line, DRAM and L1,
// bf16 and fp32; with 2 links every link of every hop carried at least its share of a slice
// both ways.
TensorSpec rows_of(std::array<std::uint32_t, 4> shape, DataType dtype = DataType::Bfloat16) {
  return TensorSpec{shape, dtype, Layout::RowMajor};
}

TEST(AllGatherLegacy, RowMajorAlongTheWidth) {
  struct Variant {
    const char* name;
    topo::Topology system;
    std::vector<ChipId> group;  // empty: the system's ring / line
    CclTopology shape;
    std::uint32_t links;
    TensorSpec input;
    BufferType memory;
    std::uint32_t pages_per_message = 0;
  };
  const topo::Topology t3k = topo::build_t3k();
  const topo::Topology galaxy = topo::build_galaxy();
  const std::vector<ChipId> square{0, 1, 3, 2};  // REFERENCE 3.3's MMIO square: 2 legacy links
  const std::vector<ChipId> t3k_column = to_runtime(topo::axis_groups(t3k, 0).front());
  const std::vector<ChipId> galaxy_row = to_runtime(topo::axis_groups(galaxy, 1).front());
  const Variant variants[] = {
      {"n300 line, 96 B rows", topo::build_n300(), {}, CclTopology::Line, 1, rows_of({1, 1, 5, 48}), BufferType::Dram},
      {"t3k column, 2 links, 160 B rows", t3k, t3k_column, CclTopology::Line, 2, rows_of({1, 2, 3, 80}),
       BufferType::L1},
      {"t3k 8-ring, fp32 224 B rows", t3k, {}, CclTopology::Ring, 1, rows_of({2, 1, 3, 56}, DataType::Float32),
       BufferType::L1},
      {"t3k 8-line, 352 B rows, 3-row messages", t3k, {}, CclTopology::Line, 1, rows_of({1, 1, 7, 176}),
       BufferType::Dram, 3},
      {"t3k square ring, 2 links", t3k, square, CclTopology::Ring, 2, rows_of({1, 1, 9, 48}), BufferType::Dram},
      {"t3k square line, 2 links", t3k, square, CclTopology::Line, 2, rows_of({1, 1, 9, 48}), BufferType::L1},
      {"galaxy row (8 chips), 2 links", galaxy, galaxy_row, CclTopology::Line, 2, rows_of({1, 1, 6, 80}),
       BufferType::Dram},
  };
  for (const Variant& v : variants) {
    SCOPED_TRACE(v.name);
    auto device = legacy_device(v.system);
    LegacyCase c;
    c.input = v.input;
    c.topology = v.shape;
    c.groups = v.group.empty() ? std::vector<std::vector<ChipId>>{} : std::vector<std::vector<ChipId>>{v.group};
    c.num_links = v.links;
    c.memory = v.memory;
    c.legacy.pages_per_message = v.pages_per_message;
    run_legacy_all_gather(*device, c);
    if (v.links > 1) {
      // Every link's share of a slice: its rows, whole (one piece per row here).
      const std::uint32_t rows = v.input.shape[0] * v.input.shape[1] * v.input.shape[2];
      const std::int64_t share = std::int64_t{rows / v.links} * runtime::ccl::page_size_bytes(v.input);
      expect_every_link_carried(*device, v.group, v.shape, v.links, share - 1);
    }
  }
}

// Rows wider than an EDM buffer (64 KiB; a buffer of the 150 KiB region holds 18 bf16 tiles, not
// 19) move in 2 pieces of 32 KiB, each its own page of a message, on one link (N300) and on 2
// (the T3K square as a ring, with one-piece messages: every relay waits per piece).
TEST(AllGatherLegacy, RowMajorRowsWiderThanAnEdmBuffer) {
  {
    auto device = legacy_device(topo::build_n300());
    LegacyCase c;
    c.input = rows_of({1, 1, 3, 32768});
    c.topology = CclTopology::Line;
    run_legacy_all_gather(*device, c);
  }
  {
    auto device = legacy_device(topo::build_t3k());
    LegacyCase c;
    c.input = rows_of({1, 1, 2, 32768});
    c.groups = {{0, 1, 3, 2}};
    c.num_links = 2;
    c.memory = BufferType::L1;
    c.legacy.pages_per_message = 1;
    run_legacy_all_gather(*device, c);
    expect_every_link_carried(*device, {0, 1, 3, 2}, CclTopology::Ring, 2, 2 * 32768 - 1);
  }
}

// Height-sharded buffers (ROW_MAJOR shards whole rows): a sharded input into a sharded output on
// the T3K ring, and an interleaved input into DRAM shards (banks 0-3) on N300.
BufferConfig row_shards(const TensorSpec& t, BufferType type, runtime::CoreRange grid, std::uint32_t rows_per_shard) {
  return BufferConfig{type, runtime::ccl::size_bytes(t), runtime::ccl::page_size_bytes(t),
                      runtime::TensorMemoryLayout::HeightSharded,
                      runtime::ShardSpec{{grid}, rows_per_shard, 1, 1, runtime::ShardOrientation::RowMajor}};
}

TEST(AllGatherLegacy, RowMajorAlongTheWidthShardedBuffers) {
  {
    auto device = legacy_device(topo::build_t3k());
    LegacyCase c;  // 16 rows of 384 B per chip, 4 per core; 3 KiB output rows, 2 per core
    c.input = rows_of({1, 1, 16, 192});
    c.input_config = row_shards(c.input, BufferType::L1, {{0, 2}, {3, 2}}, 4);
    c.output_config = row_shards(rows_of({1, 1, 16, 192 * 8}), BufferType::L1, {{0, 0}, {7, 0}}, 2);
    run_legacy_all_gather(*device, c);
  }
  {
    auto device = legacy_device(topo::build_n300());
    LegacyCase c;  // 32 rows of 128 B per chip; 256 B output rows, 8 per bank
    c.input = rows_of({1, 1, 32, 64});
    c.topology = CclTopology::Line;
    c.output_config = row_shards(rows_of({1, 1, 32, 128}), BufferType::Dram, {{0, 0}, {3, 0}}, 8);
    run_legacy_all_gather(*device, c);
  }
}

// Review (session 9): rows in several pieces where the gather has more than one hop per
// direction and where link runs start mid-row. 64 KiB rows (q = 2) on the T3K 8-line (relays
// through the output at every chip, the ends one-directional), an odd row count; 96 KiB rows
// (q = 3: 48 KiB halves do not fit a buffer) on a 4-chip Galaxy column on 3 links, 2 rows per
// chip, so each link's run is 2 pieces and the middle link's starts at the third piece of the
// first row and ends inside the second; fp32 40 KiB rows (q = 2) on a 3-chip line on 3 links,
// 5 rows into COL_MAJOR height shards of 2 output rows on 3 cores (the last one partial).
TEST(AllGatherLegacy, RowMajorRowPiecesOnLongerLinesAndMidRowLinkRuns) {
  {
    auto device = legacy_device(topo::build_t3k());
    LegacyCase c;
    c.input = rows_of({1, 1, 3, 32768});
    c.topology = CclTopology::Line;
    run_legacy_all_gather(*device, c);
  }
  const topo::Topology galaxy = topo::build_galaxy();
  {
    auto device = legacy_device(galaxy);
    const std::vector<ChipId> column = to_runtime(topo::axis_groups(galaxy, 0).front());
    ASSERT_EQ(column.size(), 4u);
    LegacyCase c;
    c.input = rows_of({1, 1, 2, 49152});
    c.topology = CclTopology::Line;
    c.groups = {column};
    c.num_links = 3;
    run_legacy_all_gather(*device, c);
    // Every link carried its 2 pieces of 32 KiB of every slice both ways.
    expect_every_link_carried(*device, column, CclTopology::Line, 3, 2 * 32768 - 1);
  }
  {
    auto device = legacy_device(galaxy);
    const std::vector<ChipId> column = to_runtime(topo::axis_groups(galaxy, 0).front());
    const std::vector<ChipId> three(column.begin(), column.begin() + 3);
    LegacyCase c;
    c.input = rows_of({1, 1, 5, 10240}, DataType::Float32);
    c.topology = CclTopology::Line;
    c.groups = {three};
    c.num_links = 3;
    BufferConfig out = row_shards(rows_of({1, 1, 5, 30720}, DataType::Float32), BufferType::L1, {{1, 1}, {3, 1}}, 2);
    out.shard->orientation = runtime::ShardOrientation::ColMajor;
    c.output_config = out;
    run_legacy_all_gather(*device, c);
    expect_every_link_carried(*device, three, CclTopology::Line, 3, 3 * 20480 - 1);
  }
}

// Each row piece is its own NoC write, also where the output rows lie back to back in a core's
// L1 (a height-sharded output: 4 rows of 192 B per core, each chip's part the first or second
// 96 B of a row, so no two parts from one chip touch). On N300 the top chip's up-direction
// receiver (link 0's up core, the only kernel on its NoC1) writes the 8 rows that arrive from
// the other chip, one write each, all in one message.
TEST(AllGatherLegacy, EachRowPieceIsItsOwnNocWrite) {
  auto device = legacy_device(topo::build_n300());
  LegacyCase c;
  c.input = rows_of({1, 1, 8, 48});
  c.topology = CclTopology::Line;
  c.output_config = row_shards(rows_of({1, 1, 8, 96}), BufferType::L1, {{2, 2}, {3, 2}}, 4);
  run_legacy_all_gather(*device, c);
  const ChipId top = runtime::ccl::resolve_legacy_groups({}, device->topology(), CclTopology::Line).front().at(1);
  const runtime::Noc0Coord up_core = device->core_map(top).tensix_noc0(runtime::CoreCoord{0, 0});
  const sim::CoreCoord port{static_cast<std::int32_t>(up_core.x), static_cast<std::int32_t>(up_core.y)};
  EXPECT_EQ(device->system().chip(top).noc(sim::NocId::Noc1).port(port).counters().writes_issued, 8u);
}

// Termination by count and by worker signal, one buffer per channel, and messages of one page
// (many messages per slice, every relay waits per message).
TEST(AllGatherLegacy, TerminationModesAndSmallBuffers) {
  for (const LegacyTermination termination : {LegacyTermination::MessageCount, LegacyTermination::WorkerSignal}) {
    for (const std::uint32_t buffers : {1u, 2u}) {
      for (const std::uint32_t pages : {0u, 1u, 3u}) {
        SCOPED_TRACE(fmt::format("{} buffers {} pages {}", runtime::ccl::to_string(termination), buffers, pages));
        auto device = legacy_device(topo::build_t3k());
        LegacyCase c;
        c.input = tile({1, 1, 32, 320});
        c.legacy = {termination, buffers, pages};
        run_legacy_all_gather(*device, c);
      }
    }
  }
}

// The same input gathered in both modes: legacy pays its EDMs' launch and handshake inside the
// op (each EDM reports ready after it), fabric mode's routers were up before the op.
TEST(AllGatherLegacy, LaunchCostAgainstFabricMode) {
  auto device = legacy_device(topo::build_t3k());
  LegacyCase c;
  c.input = tile({1, 1, 64, 256});
  const LegacyRun legacy = run_legacy_all_gather(*device, c);
  const std::uint64_t dispatch_ns = 3500;  // DispatchOptions' default
  // Every EDM is ready only after the dispatch latency and a handshake round trip on its link
  // (> 2 x 500 ns wire to L1, sim_model.md).
  EXPECT_GT(legacy.launch_ns, dispatch_ns + 1000);
  std::printf("legacy all_gather T3K ring 256 KiB: launch %.3f us (last EDM ready), kernel time %.3f us\n",
              static_cast<double>(legacy.launch_ns) / 1e3, static_cast<double>(legacy.kernel_ns) / 1e3);
}

TEST(AllGatherLegacy, RejectsWhatItCannotRun) {
  const topo::Topology t3k = topo::build_t3k();
  ag::Params p;
  p.input = tile({1, 1, 32, 64});
  p.mode = runtime::ccl::CclMode::Legacy;
  const TensorSpec out = ag::output_spec(p, t3k);
  p.input_buffer = runtime::BufferHandle{1, 0x10000, runtime::ccl::interleaved_buffer_config(p.input, BufferType::Dram)};
  p.output_buffer = runtime::BufferHandle{2, 0x20000, runtime::ccl::interleaved_buffer_config(out, BufferType::Dram)};
  EXPECT_NO_THROW(ag::validate(p, t3k));
  const auto expect_error = [&](ag::Params q, const std::string& part) {
    try {
      ag::validate(q, t3k);
      ADD_FAILURE() << "accepted; expected an error containing '" << part << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  ag::Params fabric = p;
  fabric.fabric.mode = FabricMode::Ring;
  expect_error(fabric, "without a persistent fabric");
  ag::Params links = p;
  links.num_links = 2;
  expect_error(links, "num_links 2");
  ag::Params split = p;
  split.bidirectional = ag::BidirectionalMode::SplitTensor;
  expect_error(split, "SPLIT_TENSOR");
  ag::Params huge = p;
  huge.legacy.pages_per_message = 64;
  expect_error(huge, "do not fit");
  ag::Params rows = p;  // ROW_MAJOR along dim 3 in 48 B rows: parts would start at r x 48 B
  rows.input = rows_of({1, 1, 32, 24});
  rows.output_buffer = runtime::BufferHandle{
      2, 0x20000, runtime::ccl::interleaved_buffer_config(ag::output_spec(rows, t3k), BufferType::Dram)};
  rows.input_buffer = runtime::BufferHandle{1, 0x10000, runtime::ccl::interleaved_buffer_config(rows.input, BufferType::Dram)};
  expect_error(rows, "must be a multiple of 32 B");
  ag::Params not_neighbours = p;
  not_neighbours.topology = CclTopology::Line;
  const auto line = to_runtime(topo::find_system_line(t3k).chips);
  not_neighbours.groups.chips = {{line[0], line[2]}};
  expect_error(not_neighbours, "not neighbours");
}

}  // namespace
}  // namespace cclmesh::ccltest
