// REFERENCE 8's representative test matrix, one entry per row and per variant inside a row
// (layout, dtype, memory, shape), on the simulated system the row names or a stated stand-in.
// Each entry either
//   - runs with real data, every chip's output compared bit for bit with the op's host
//     reference (ccl_runners.hpp),
//   - runs in timing-only mode (tensors too large for real data on one host: DRAM holds no
//     bytes), checking the op completes and the links carried at least the data, or
//   - is refused: validate() (or the buffer allocator, for memory the model has not, or the
//     device placing the workload, for CBs that do not fit beside the buffers) rejects it with
//     the specific message, so the matrix documents and tests what the model cannot run.
// bfp8_b sums are bit for bit too, with no tolerance: the host reference unpacks, adds in fp32
// and packs back with the reduce kernel's own functions (kernels/reduce/bfp8_math.hpp), in the
// order the device adds.
// Shape conventions are REFERENCE 8's: all-gather rows give the gathered output shape (the
// per-chip input is that divided by N along dim), reduce-scatter rows the per-chip output
// (input = output x N along dim), all-reduce rows the tensor. The sharded all-gather rows
// 15-17 are the exception: their shard specs only fit the shapes as per-chip inputs, which is
// how tt-metal's run_all_gather_sharded uses them (output shard = input shard x N along dim).
//
// Entries slower than ~2 s of wall time here are instantiated as Slow/..., the rest as
// Fast/...; ctest runs them as two entries of this executable (tests/integration/ccl/
// CMakeLists.txt), the slow one labelled slow. docs/test_matrix.md has the table.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <ostream>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/device/buffer_layout.hpp"
#include "tests/integration/ccl/ccl_runners.hpp"
#include "tests/integration/ccl/legacy_runner.hpp"
#include "topologies/system_loader.hpp"

namespace cclmesh::ccltest {
namespace {

namespace ag = runtime::ccl::all_gather;
namespace rs = runtime::ccl::reduce_scatter;
namespace ar = runtime::ccl::all_reduce;
using runtime::CoreRange;
using runtime::FabricScope;
using runtime::ShardOrientation;
using runtime::TensorMemoryLayout;

// The simulated systems and fabrics the rows run on.
enum class System : std::uint8_t {
  N300Line,          // N300's 2 chips as a line (a 2-chip ring must run as a line, REFERENCE 3.2)
  T3kRing,           // T3K's 8-chip ring 4-0-2-6-7-3-1-5 (REFERENCE 3.3), 1 link
  T3kLine,           // T3K's 8-chip line (the ring less one edge), 1 link
  T3kFourLine,       // the first 4 chips of the T3K's line, 1 link
  T3kSquareRing,     // the T3K's MMIO square 0-1-3-2 as a 4-chip ring, 1 link
  T3kAxes,           // the T3K on the per-axis fabric (FABRIC_1D: a line per mesh row and column)
  GalaxyBlockRing2,  // stand-in for a 4-chip ring on 2 links: the Galaxy's 2x2 block 0-1-9-8
  GalaxyBlockLine2,  // stand-in for a 4-chip line on 2 links: the same block as a line
  TgAxes3,           // TG on the per-axis fabric, 3 routing planes (TG's usable links)
  TgAxes2,           // TG on the per-axis fabric, 2 routing planes
  // Legacy EDM mode (no persistent fabric, per-op EDMs on every link): the T3K's MMIO square
  // 0-1-3-2, whose hops carry no dispatch tunnel, so 2 links (runtime/ccl/common/legacy_links.hpp)
  // as in the legacy-era tests the rows come from.
  T3kSquareRingLegacy,
  T3kSquareLineLegacy,
};

bool legacy(System s) { return s == System::T3kSquareRingLegacy || s == System::T3kSquareLineLegacy; }

// Why each system: what it is and, for stand-ins, why the named system cannot run the row.
const char* describe(System s) {
  switch (s) {
    case System::N300Line: return "n300, 2-chip line";
    case System::T3kRing: return "t3k, 8-chip ring";
    case System::T3kLine: return "t3k, 8-chip line";
    case System::T3kFourLine: return "t3k, 4-chip line (first 4 chips of the system line)";
    case System::T3kSquareRing: return "t3k, 4-chip ring on the MMIO square 0-1-3-2";
    case System::T3kAxes: return "t3k, per-axis fabric (a line per row and column)";
    case System::GalaxyBlockRing2:
      return "galaxy 2x2 block 0-1-9-8 as a ring, 2 links (stand-in: the T3K's usable links are 1)";
    case System::GalaxyBlockLine2:
      return "galaxy 2x2 block 0-1-9-8 as a line, 2 links (stand-in: the T3K's usable links are 1)";
    case System::TgAxes3: return "tg, per-axis fabric, 3 links";
    case System::TgAxes2: return "tg, per-axis fabric, 2 links";
    case System::T3kSquareRingLegacy: return "t3k, MMIO square 0-1-3-2 as a ring, legacy EDM mode, 2 links";
    case System::T3kSquareLineLegacy: return "t3k, MMIO square 0-1-3-2 as a line, legacy EDM mode, 2 links";
  }
  return "?";
}

runtime::FabricOptions fabric(FabricMode mode, FabricScope scope = FabricScope::System, std::uint32_t links = 1,
                              std::vector<ChipId> chip_order = {}) {
  runtime::FabricOptions f;
  f.mode = mode;
  f.scope = scope;
  f.num_links = links;
  f.chip_order = std::move(chip_order);
  return f;
}

topo::Topology topology_of(System s) {
  switch (s) {
    case System::N300Line: return topo::build_n300();
    case System::T3kRing:
    case System::T3kLine:
    case System::T3kFourLine:
    case System::T3kSquareRing:
    case System::T3kSquareRingLegacy:
    case System::T3kSquareLineLegacy:
    case System::T3kAxes: return topo::build_t3k();
    case System::GalaxyBlockRing2:
    case System::GalaxyBlockLine2: return topo::build_galaxy();
    case System::TgAxes3:
    case System::TgAxes2: return topo::load_system("tg");
  }
  return topo::build_n150();
}

// The Galaxy's chips are row-major positions of its 4x8 mesh: 0, 1 on row 0 and 9, 8 below.
const std::vector<ChipId> kGalaxyBlock{0, 1, 9, 8};
// REFERENCE 3.3: "4-chip rings are the 2x2 squares, e.g. the MMIO square 0-1-3-2-0".
const std::vector<ChipId> kT3kMmioSquare{0, 1, 3, 2};

runtime::FabricOptions fabric_of(System s, const topo::Topology& t) {
  switch (s) {
    case System::N300Line:
    case System::T3kLine: return fabric(FabricMode::Line);
    case System::T3kRing: return fabric(FabricMode::Ring);
    case System::T3kFourLine: {
      const std::vector<ChipId> line = to_runtime(topo::find_system_line(t).chips);
      return fabric(FabricMode::Line, FabricScope::System, 1, std::vector<ChipId>(line.begin(), line.begin() + 4));
    }
    case System::T3kSquareRing: return fabric(FabricMode::Ring, FabricScope::System, 1, kT3kMmioSquare);
    case System::T3kAxes: return fabric(FabricMode::Line, FabricScope::Axes);
    case System::GalaxyBlockRing2: return fabric(FabricMode::Ring, FabricScope::System, 2, kGalaxyBlock);
    case System::GalaxyBlockLine2: return fabric(FabricMode::Line, FabricScope::System, 2, kGalaxyBlock);
    case System::TgAxes3: return fabric(FabricMode::Line, FabricScope::Axes, 3);
    case System::TgAxes2: return fabric(FabricMode::Line, FabricScope::Axes, 2);
    case System::T3kSquareRingLegacy:
    case System::T3kSquareLineLegacy: return fabric(FabricMode::None);
  }
  return {};
}

enum class Op : std::uint8_t { AllGather, ReduceScatter, AllReduce };
// RefusedByPlacement: the buffers fit, but the op's circular buffers do not fit in the L1 they
// leave free; the device refuses the workload when it places it (std::invalid_argument).
enum class Outcome : std::uint8_t { Verified, TimingOnly, RefusedByValidate, RefusedByBuffer, RefusedByPlacement };

Memory dram() { return Memory{BufferType::Dram, std::nullopt}; }
Memory l1() { return Memory{BufferType::L1, std::nullopt}; }
Memory sharded(BufferType type, TensorMemoryLayout layout, std::vector<CoreRange> grid, std::uint32_t height,
               std::uint32_t width, ShardOrientation orientation = ShardOrientation::RowMajor) {
  return Memory{type, ShardLayout{layout, std::move(grid), height, width, orientation}};
}
CoreRange cores(std::uint32_t x0, std::uint32_t y0, std::uint32_t x1, std::uint32_t y1) {
  return CoreRange{{x0, y0}, {x1, y1}};
}

struct Row {
  int number = 0;
  std::string variant;  // with the number, the test's name: Row09_Bfp8_L1
  Op op = Op::AllGather;
  System system = System::T3kRing;
  CclTopology topology = CclTopology::Ring;
  std::uint32_t n = 8;       // chips per group
  std::size_t groups = 1;    // replicas (cluster_axis groups)
  std::uint32_t links = 1;
  std::optional<int> cluster_axis;  // this model's axis (its Galaxy / TG mesh is 4x8, tt-metal's 8x4)
  std::array<std::uint32_t, 4> shape{};  // as REFERENCE 8 gives it (see the file comment)
  std::uint32_t dim = 3;
  DataType dtype = DataType::Bfloat16;
  Layout layout = Layout::Tile;
  Memory input;
  Memory output;
  // all_reduce: the algorithm asked for, and the one it must resolve to.
  ar::Algorithm algorithm = ar::Algorithm::Auto;
  ar::Algorithm expected_algorithm = ar::Algorithm::ReduceScatterAllGather;
  Outcome outcome = Outcome::Verified;
  std::string refusal;  // a substring of the refusal's message
  bool slow = false;

  std::string name() const { return fmt::format("Row{:02d}_{}", number, variant); }

  Row& with_links(std::uint32_t l) { links = l; return *this; }
  Row& on_axis(int axis, std::size_t replicas) { cluster_axis = axis; groups = replicas; return *this; }
  Row& timing_only() { outcome = Outcome::TimingOnly; slow = true; return *this; }
  Row& refused(Outcome by, std::string message) { outcome = by; refusal = std::move(message); return *this; }
  Row& marked_slow() { slow = true; return *this; }
  Row& algorithms(ar::Algorithm asked, ar::Algorithm expected) {
    algorithm = asked;
    expected_algorithm = expected;
    return *this;
  }
};

Row row(int number, std::string variant, Op op, System system, CclTopology topology, std::uint32_t n,
        std::array<std::uint32_t, 4> shape, std::uint32_t dim, DataType dtype, Layout layout, Memory input,
        Memory output) {
  Row r;
  r.number = number;
  r.variant = std::move(variant);
  r.op = op;
  r.system = system;
  r.topology = topology;
  r.n = n;
  r.shape = shape;
  r.dim = dim;
  r.dtype = dtype;
  r.layout = layout;
  r.input = std::move(input);
  r.output = std::move(output);
  return r;
}

constexpr CclTopology kRing = CclTopology::Ring;
constexpr CclTopology kLine = CclTopology::Line;
constexpr DataType kBf16 = DataType::Bfloat16;
constexpr DataType kBfp8 = DataType::Bfloat8B;
constexpr Layout kTile = Layout::Tile;
constexpr Layout kRm = Layout::RowMajor;
constexpr Op kAg = Op::AllGather;
constexpr Op kRs = Op::ReduceScatter;
constexpr Op kAr = Op::AllReduce;

// The refusals' messages (runtime/ccl/common/collective.cpp, reduce_scatter.cpp, all_reduce.cpp,
// runtime/device/buffer_layout.cpp, sim_mesh_device.cpp).
const char* const kRowMajorBfp8 = "ROW_MAJOR bfp8_b is invalid";
const char* const kL1Full = "do not fit in L1";

using ShapeAndName = std::pair<std::array<std::uint32_t, 4>, std::string>;

std::vector<Row> all_rows() {
  std::vector<Row> rows;
  const auto add = [&rows](Row r) { rows.push_back(std::move(r)); };
  const auto both_memories = [&](int number, std::string prefix, Op op, System system, CclTopology topology,
                                 std::uint32_t n, std::array<std::uint32_t, 4> shape, std::uint32_t dim,
                                 DataType dtype, Layout layout) {
    add(row(number, prefix + "_Dram", op, system, topology, n, shape, dim, dtype, layout, dram(), dram()));
    add(row(number, prefix + "_L1", op, system, topology, n, shape, dim, dtype, layout, l1(), l1()));
  };

  // --- all_gather, legacy tests [AG1] ---------------------------------------------------------
  add(row(1, "Tile_Bf16_Dram", kAg, System::T3kRing, kRing, 8, {1, 1, 32, 16384}, 3, kBf16, kTile, dram(), dram()));
  add(row(2, "Tile_Bf16_L1", kAg, System::T3kRing, kRing, 8, {8, 1, 256, 32}, 0, kBf16, kTile, l1(), l1()));
  add(row(2, "Rm_Bf16_L1", kAg, System::T3kRing, kRing, 8, {8, 1, 256, 32}, 0, kBf16, kRm, l1(), l1()));
  add(row(3, "Tile_Bf16_L1", kAg, System::GalaxyBlockRing2, kRing, 4, {1, 1, 32, 32768}, 3, kBf16, kTile, l1(), l1())
          .with_links(2));
  add(row(3, "Rm_Bf16_L1", kAg, System::GalaxyBlockRing2, kRing, 4, {1, 1, 32, 32768}, 3, kBf16, kRm, l1(), l1())
          .with_links(2));
  add(row(4, "Rm_Bf16_Dram", kAg, System::GalaxyBlockRing2, kRing, 4, {4, 1, 33, 256}, 0, kBf16, kRm, dram(), dram())
          .with_links(2));
  // Rows 3 and 4 as the legacy-era tests ran them: legacy EDM mode on a T3K 4-chip ring, 2 links.
  add(row(3, "Legacy_Tile_Bf16_L1", kAg, System::T3kSquareRingLegacy, kRing, 4, {1, 1, 32, 32768}, 3, kBf16, kTile,
          l1(), l1())
          .with_links(2));
  // ROW_MAJOR along dim 3: each chip's 16 KiB rows are one piece of the output's 64 KiB rows.
  add(row(3, "Legacy_Rm_Bf16_L1", kAg, System::T3kSquareRingLegacy, kRing, 4, {1, 1, 32, 32768}, 3, kBf16, kRm, l1(),
          l1())
          .with_links(2));
  add(row(4, "Legacy_Rm_Bf16_Dram", kAg, System::T3kSquareRingLegacy, kRing, 4, {4, 1, 33, 256}, 0, kBf16, kRm, dram(),
          dram())
          .with_links(2));
  for (DataType dtype : {kBf16, kBfp8}) {
    const std::string d = dtype == kBf16 ? "Bf16" : "Bfp8";
    add(row(6, "Legacy_Tile_" + d + "_Dram", kAg, System::T3kSquareLineLegacy, kLine, 4, {1, 4, 32, 3584}, 1, dtype,
            kTile, dram(), dram())
            .with_links(2));
  }
  for (DataType dtype : {kBf16, kBfp8}) {
    const std::string d = dtype == kBf16 ? "Bf16" : "Bfp8";
    add(row(5, "Tile_" + d + "_Dram", kAg, System::T3kLine, kLine, 8, {1, 8, 32, 2048}, 1, dtype, kTile, dram(),
            dram()));
    add(row(6, "Tile_" + d + "_Dram", kAg, System::GalaxyBlockLine2, kLine, 4, {1, 4, 32, 3584}, 1, dtype, kTile,
            dram(), dram())
            .with_links(2));
  }
  for (Layout layout : {kTile, kRm}) {
    for (DataType dtype : {kBf16, kBfp8}) {
      const std::string v = fmt::format("{}_{}", layout == kTile ? "Tile" : "Rm", dtype == kBf16 ? "Bf16" : "Bfp8");
      for (const bool in_l1 : {false, true}) {
        Row r = row(7, v + (in_l1 ? "_L1" : "_Dram"), kAg, System::T3kLine, kLine, 8, {8, 8, 256, 384}, 1, dtype,
                    layout, in_l1 ? l1() : dram(), in_l1 ? l1() : dram());
        if (layout == kRm && dtype == kBfp8) r.refused(Outcome::RefusedByValidate, kRowMajorBfp8);
        add(r);
      }
    }
  }
  // Row 8: 96-element (192 B) rows per chip, written as pieces of the 768 B output rows.
  both_memories(8, "Rm_Bf16", kAg, System::T3kFourLine, kLine, 4, {8, 5, 13, 384}, 3, kBf16, kRm);
  for (DataType dtype : {kBf16, kBfp8}) {
    const std::string d = dtype == kBf16 ? "Bf16" : "Bfp8";
    both_memories(9, "Tile_" + d, kAg, System::T3kRing, kRing, 8, {1, 1, 32, 32768}, 3, dtype, kTile);
    add(row(10, "Tile_" + d + "_Dram", kAg, System::T3kRing, kRing, 8, {1, 1, 2048, 8192}, 3, dtype, kTile, dram(),
            dram()));
    add(row(11, "Tile_" + d + "_Dram", kAg, System::T3kRing, kRing, 8, {8, 8, 1024, 4096}, 1, dtype, kTile, dram(),
            dram())
            .timing_only());
  }
  add(row(12, "Tile_Bf16_Dram", kAg, System::T3kRing, kRing, 8, {1, 1, 8192, 32}, 2, kBf16, kTile, dram(), dram()));
  add(row(13, "Rm_Bf16_Dram", kAg, System::T3kRing, kRing, 8, {1, 1, 256, 1024}, 2, kBf16, kRm, dram(), dram()));
  add(row(14, "Tile_Bf16_Dram", kAg, System::T3kRing, kRing, 8, {1, 1, 32768, 32768}, 3, kBf16, kTile, dram(),
          dram())
          .timing_only());
  // Rows 15-17: per-chip input shapes and shard specs; the output shard is the input's x 8 along dim 3.
  const CoreRange grid8x4 = cores(0, 0, 7, 3);
  add(row(15, "Tile_Bf16_L1WidthSharded", kAg, System::T3kRing, kRing, 8, {1, 1, 32, 1024 * 8}, 3, kBf16, kTile,
          sharded(BufferType::L1, TensorMemoryLayout::WidthSharded, {grid8x4}, 32, 32),
          sharded(BufferType::L1, TensorMemoryLayout::WidthSharded, {grid8x4}, 32, 32 * 8)));
  add(row(16, "Tile_Bf16_L1HeightShardedColMajor", kAg, System::T3kRing, kRing, 8, {1, 1, 4096, 32 * 8}, 3, kBf16,
          kTile,
          sharded(BufferType::L1, TensorMemoryLayout::HeightSharded, {grid8x4}, 128, 32, ShardOrientation::ColMajor),
          sharded(BufferType::L1, TensorMemoryLayout::HeightSharded, {grid8x4}, 128, 32 * 8,
                  ShardOrientation::ColMajor)));
  add(row(17, "Tile_Bf16_L1BlockSharded", kAg, System::T3kRing, kRing, 8, {1, 1, 512, 512 * 8}, 3, kBf16, kTile,
          sharded(BufferType::L1, TensorMemoryLayout::BlockSharded, {grid8x4}, 128, 64),
          sharded(BufferType::L1, TensorMemoryLayout::BlockSharded, {grid8x4}, 128, 64 * 8)));

  // --- all_gather_async on the persistent fabric [AG2], [AG3] ---------------------------------------
  for (DataType dtype : {kBf16, kBfp8}) {
    const std::string d = dtype == kBf16 ? "Bf16" : "Bfp8";
    add(row(18, "Tile_" + d + "_Dram", kAg, System::T3kFourLine, kLine, 4, {1, 1, 64, 512}, 3, dtype, kTile, dram(),
            dram()));
    for (const bool in_l1 : {false, true}) {
      const Memory m = in_l1 ? l1() : dram();
      const std::string v = "Tile_" + d + (in_l1 ? "_L1" : "_Dram");
      add(row(19, v, kAg, System::T3kAxes, kLine, 4, {1, 1, 32, 65536}, 3, dtype, kTile, m, m).on_axis(1, 2));
      add(row(20, v, kAg, System::T3kAxes, kLine, 4, {1, 4, 32, 6656}, 1, dtype, kTile, m, m).on_axis(1, 2));
    }
  }
  add(row(21, "Tile_Bf16_Dram", kAg, System::T3kAxes, kLine, 2, {1, 2, 32, 2304}, 1, kBf16, kTile, dram(), dram())
          .on_axis(0, 4));
  for (DataType dtype : {kBf16, kBfp8}) {
    const std::string d = dtype == kBf16 ? "Bf16" : "Bfp8";
    // Row 22: in (32,32) on cores (0,0)-(0,3); the output shard is the input's x 2 on the same cores.
    add(row(22, "Tile_" + d + "_L1WidthSharded", kAg, System::N300Line, kLine, 2, {1, 1, 32, 256}, 3, dtype, kTile,
            sharded(BufferType::L1, TensorMemoryLayout::WidthSharded, {cores(0, 0, 0, 3)}, 32, 32),
            sharded(BufferType::L1, TensorMemoryLayout::WidthSharded, {cores(0, 0, 0, 3)}, 32, 64)));
    // Row 23: resharding, in (32,32) on (0,0)-(5,4), out (32,160) on (0,0)-(3,5).
    add(row(23, "Tile_" + d + "_L1WidthSharded", kAg, System::T3kFourLine, kLine, 4, {1, 1, 32, 3840}, 3, dtype,
            kTile, sharded(BufferType::L1, TensorMemoryLayout::WidthSharded, {cores(0, 0, 5, 4)}, 32, 32),
            sharded(BufferType::L1, TensorMemoryLayout::WidthSharded, {cores(0, 0, 3, 5)}, 32, 160)));
  }
  for (const bool ring : {true, false}) {
    const System system = ring ? System::T3kRing : System::T3kLine;
    const CclTopology topology = ring ? kRing : kLine;
    const std::string t = ring ? "Ring" : "Line";
    // Row 24: one element per chip, padded to a whole tile; all_broadcast + concat (REFERENCE 7.6).
    add(row(24, t + "_1x1x1x8_Dim3", kAg, system, topology, 8, {1, 1, 1, 8}, 3, kBf16, kTile, dram(), dram()));
    add(row(24, t + "_1x1x8x1_Dim2", kAg, system, topology, 8, {1, 1, 8, 1}, 2, kBf16, kTile, dram(), dram()));
    // Row 25: DRAM height sharded, in (64,128) -> out (64,1024) on 6 cores, which are DRAM banks
    // 0-5 (one shard per bank); the same shards in L1 also run.
    add(row(25, t + "_Tile_Bf16_DramHeightSharded", kAg, system, topology, 8, {1, 1, 384, 1024}, 3, kBf16, kTile,
            sharded(BufferType::Dram, TensorMemoryLayout::HeightSharded, {cores(0, 0, 5, 0)}, 64, 128),
            sharded(BufferType::Dram, TensorMemoryLayout::HeightSharded, {cores(0, 0, 5, 0)}, 64, 1024)));
    add(row(25, t + "_Tile_Bf16_L1HeightShardedStandIn", kAg, system, topology, 8, {1, 1, 384, 1024}, 3, kBf16,
            kTile, sharded(BufferType::L1, TensorMemoryLayout::HeightSharded, {cores(0, 0, 5, 0)}, 64, 128),
            sharded(BufferType::L1, TensorMemoryLayout::HeightSharded, {cores(0, 0, 5, 0)}, 64, 1024)));
  }

  // --- reduce_scatter [RS1]: shapes are per-chip outputs ------------------------------------------
  for (DataType dtype : {kBf16, kBfp8}) {
    const std::string d = dtype == kBf16 ? "Bf16" : "Bfp8";
    for (const bool in_l1 : {false, true}) {
      const Memory m = in_l1 ? l1() : dram();
      const std::string v = "Tile_" + d + (in_l1 ? "_L1" : "_Dram");
      Row r26 = row(26, v, kRs, System::T3kRing, kRing, 8, {1, 8, 1024, 1024}, 3, dtype, kTile, m, m);
      Row r27 = row(27, v, kRs, System::T3kRing, kRing, 8, {1, 1, 32, 256}, 3, dtype, kTile, m, m);
      Row r28 = row(28, v, kRs, System::T3kRing, kRing, 8, {1, 1, 128, 8192}, 3, dtype, kTile, m, m);
      if (in_l1) {
        // bf16: a 128 MiB input. bfp8: 68 MiB of input, 8.5 MiB of output and the half-way ring's
        // 17 MiB of partials (Auto's choice since session 33). With the chain, which has no
        // partials' buffer, the bfp8 buffers fit the chip's L1 banks but left no room below them
        // for the op's circular buffers (refused by placement, "above the L1 buffers").
        r26.refused(Outcome::RefusedByBuffer, kL1Full);
      } else {
        r26.timing_only();
      }
      add(r26);
      add(r27);
      add(r28);
    }
  }
  add(row(29, "Tile_Bf16_Dram", kRs, System::T3kLine, kLine, 8, {1, 2, 224, 256}, 3, kBf16, kTile, dram(), dram()));
  add(row(30, "Tile_Bf16_Dram", kRs, System::GalaxyBlockLine2, kLine, 4, {1, 1, 32, 1280}, 1, kBf16, kTile, dram(),
          dram())
          .with_links(2));
  add(row(30, "Legacy_Tile_Bf16_Dram", kRs, System::T3kSquareLineLegacy, kLine, 4, {1, 1, 32, 1280}, 1, kBf16, kTile,
          dram(), dram())
          .with_links(2));
  for (DataType dtype : {kBf16, kBfp8}) {
    // Row 31: out (1,1,32,4096) shard (32,128) on 8x4; the input shard is the output's x 8.
    Row r = row(31, dtype == kBf16 ? "Tile_Bf16_L1WidthSharded" : "Tile_Bfp8_L1WidthSharded", kRs, System::T3kRing,
                kRing, 8, {1, 1, 32, 4096}, 3, dtype, kTile,
                sharded(BufferType::L1, TensorMemoryLayout::WidthSharded, {grid8x4}, 32, 128 * 8),
                sharded(BufferType::L1, TensorMemoryLayout::WidthSharded, {grid8x4}, 32, 128));
    add(r);
  }
  // Row 32: out (1,1,32,1280) shard (32,128) on 10 cores; in (32,160) on 8x5.
  add(row(32, "Tile_Bf16_L1WidthSharded", kRs, System::GalaxyBlockLine2, kLine, 4, {1, 1, 32, 1280}, 3, kBf16, kTile,
          sharded(BufferType::L1, TensorMemoryLayout::WidthSharded, {cores(0, 0, 7, 4)}, 32, 160),
          sharded(BufferType::L1, TensorMemoryLayout::WidthSharded, {cores(0, 0, 7, 0), cores(0, 1, 1, 1)}, 32, 128))
          .with_links(2));
  add(row(32, "Legacy_Tile_Bf16_L1WidthSharded", kRs, System::T3kSquareLineLegacy, kLine, 4, {1, 1, 32, 1280}, 3, kBf16,
          kTile, sharded(BufferType::L1, TensorMemoryLayout::WidthSharded, {cores(0, 0, 7, 4)}, 32, 160),
          sharded(BufferType::L1, TensorMemoryLayout::WidthSharded, {cores(0, 0, 7, 0), cores(0, 1, 1, 1)}, 32, 128))
          .with_links(2));

  // --- all_reduce [AR1] ------------------------------------------------------------------------
  add(row(33, "Tile_Bf16_Dram", kAr, System::T3kSquareRing, kRing, 4, {1, 1, 32, 4096}, 0, kBf16, kTile, dram(),
          dram()));
  add(row(34, "Tile_Bfp8_L1", kAr, System::T3kSquareRing, kRing, 4, {4, 1, 32, 4096}, 0, kBfp8, kTile, l1(), l1()));
  add(row(35, "Tile_Bfp8_Dram", kAr, System::T3kSquareRing, kRing, 4, {2, 4, 2048, 32}, 0, kBfp8, kTile, dram(),
          dram()));
  // Row 36 on Auto: 1530 tiles on 4 chips do not divide and their sums exceed the one-shot's L1
  // limit, so they fall back to the composite (REFERENCE 7.6); 1024 tiles run reduce_scatter +
  // all_gather; 3 tiles (6 KiB) are under the one-shot's 32 KiB threshold for 3-4 chips
  // (all_reduce.hpp); the same 3 tiles forced to the composite REFERENCE 7.6 names.
  add(row(36, "Shape544x2880_Composite", kAr, System::T3kAxes, kLine, 4, {1, 1, 544, 2880}, 0, kBf16, kTile, dram(),
          dram())
          .on_axis(1, 2)
          .algorithms(ar::Algorithm::Auto, ar::Algorithm::Composite));
  add(row(36, "Shape8x8x128x128", kAr, System::T3kAxes, kLine, 4, {8, 8, 128, 128}, 0, kBf16, kTile, dram(), dram())
          .on_axis(1, 2));
  add(row(36, "Shape96_OneShot", kAr, System::T3kAxes, kLine, 4, {1, 1, 1, 96}, 0, kBf16, kTile, dram(), dram())
          .on_axis(1, 2)
          .algorithms(ar::Algorithm::Auto, ar::Algorithm::OneShot));
  add(row(36, "Shape96_Composite", kAr, System::T3kAxes, kLine, 4, {1, 1, 1, 96}, 0, kBf16, kTile, dram(), dram())
          .on_axis(1, 2)
          .algorithms(ar::Algorithm::Composite, ar::Algorithm::Composite));

  // --- perf rows [PERF] ---------------------------------------------------------------------------
  for (const auto& [shape, label] : std::vector<ShapeAndName>{{{1, 1, 64, 16384}, "Shape1x1x64x16384"},
                                                              {{8, 5, 32, 768}, "Shape8x5x32x768"},
                                                              {{1, 1, 32, 736}, "Shape1x1x32x736"}}) {
    // 736 wide: 368 per chip = 11.5 tiles, so all_broadcast + concat (REFERENCE 7.6).
    add(row(37, label + "_Tile_Bf16_Dram", kAg, System::N300Line, kLine, 2, shape, 3, kBf16, kTile, dram(), dram()));
    add(row(37, label + "_Rm_Bf16_Dram", kAg, System::N300Line, kLine, 2, shape, 3, kBf16, kRm, dram(), dram()));
  }
  for (const auto& [shape, label] : std::vector<ShapeAndName>{
           {{1, 8, 1024, 1024}, "Shape1x8x1024x1024"}, {{1, 4, 2048, 1024}, "Shape1x4x2048x1024"},
           {{1, 1, 32, 256}, "Shape1x1x32x256"}, {{1, 1, 32, 512}, "Shape1x1x32x512"}}) {
    for (const bool ring : {true, false}) {
      Row r = row(38, (ring ? "Ring_" : "Line_") + label, kRs, ring ? System::T3kRing : System::T3kLine,
                  ring ? kRing : kLine, 8, shape, 3, kBf16, kTile, dram(), dram());
      if (shape[2] >= 1024) r.timing_only();  // 128 MiB inputs per chip
      add(r);
    }
  }
  for (DataType dtype : {kBf16, kBfp8}) {
    const std::string d = dtype == kBf16 ? "Bf16" : "Bfp8";
    for (const bool in_l1 : {false, true}) {
      const Memory m = in_l1 ? l1() : dram();
      const std::string mem = in_l1 ? "_L1" : "_Dram";
      // REFERENCE's "TG, axis 1, 8 replicas" of 4 chips: this model's TG mesh is 4x8, so its 8
      // columns of 4 are cluster_axis 0.
      add(row(39, "Shape4x1x32x1280_Dim0_" + d + mem, kAg, System::TgAxes3, kLine, 4, {4, 1, 32, 1280}, 0, dtype,
              kTile, m, m)
              .with_links(3)
              .on_axis(0, 8));
      add(row(39, "Shape1x1x32x65536_Dim3_" + d + mem, kAg, System::TgAxes3, kLine, 4, {1, 1, 32, 65536}, 3, dtype,
              kTile, m, m)
              .with_links(3)
              .on_axis(0, 8));
      add(row(39, "Shape1x4x32x6656_Dim1_" + d + mem, kAg, System::TgAxes3, kLine, 4, {1, 4, 32, 6656}, 1, dtype,
              kTile, m, m)
              .with_links(3)
              .on_axis(0, 8));
      for (const auto& [shape, label] : std::vector<ShapeAndName>{
               {{1, 4, 32, 2304}, "Shape1x4x32x2304"}, {{1, 4, 64, 2304}, "Shape1x4x64x2304"},
               {{1, 4, 64, 6656}, "Shape1x4x64x6656"}}) {
        Row r = row(40, label + "_" + d + mem, kRs, System::TgAxes2, kLine, 4, shape, 1, dtype, kTile, m, m)
                    .with_links(2)
                    .on_axis(0, 8);
        add(r);
      }
    }
  }
  return rows;
}

// Entries slower than ~2 s of wall time on the 2-core development machine (measured, see
// docs/test_matrix.md); timing-only entries are slow by construction.
const std::set<std::string>& measured_slow() {
  static const std::set<std::string> names{
      "Row40_Shape1x4x64x6656_Bf16_Dram",  // 2.6 s
      "Row40_Shape1x4x64x6656_Bf16_L1",    // 2.7 s
      "Row40_Shape1x4x64x6656_Bfp8_Dram",  // 6.5 s under load (bfp8_b unpack / pack on both sides)
      "Row40_Shape1x4x64x6656_Bfp8_L1",    // 6.5 s under load
  };
  return names;
}

std::vector<Row> rows_where(bool slow) {
  std::vector<Row> out;
  for (Row r : all_rows()) {
    if (measured_slow().count(r.name()) != 0) r.slow = true;
    if (r.slow == slow) out.push_back(std::move(r));
  }
  return out;
}

// The per-chip input (all_gather, reduce_scatter) or the tensor (all_reduce) of a row.
TensorSpec tensor_of(const Row& r) {
  TensorSpec t{r.shape, r.dtype, r.layout};
  if (r.op == Op::AllGather) {
    EXPECT_EQ(r.shape[r.dim] % r.n, 0u) << "the gathered shape must split into N inputs";
    t.shape[r.dim] /= r.n;
  } else if (r.op == Op::ReduceScatter) {
    t.shape[r.dim] *= r.n;
  }
  return t;
}

runtime::ccl::GroupSelection groups_of(const Row& r) {
  runtime::ccl::GroupSelection g;
  g.cluster_axis = r.cluster_axis;
  if (legacy(r.system)) g.chips = {kT3kMmioSquare};  // legacy mode has no fabric to take a group from
  return g;
}

runtime::ccl::CclMode mode_of(const Row& r) {
  return legacy(r.system) ? runtime::ccl::CclMode::Legacy : runtime::ccl::CclMode::Fabric;
}

// A row's choices as the Params of an op along a dim (all_gather::Params, reduce_scatter::Params:
// both name their tensor `input`).
template <class Params>
Params dim_op_params(const Row& r, const runtime::FabricOptions& f) {
  Params p;
  p.input = tensor_of(r);
  p.dim = r.dim;
  p.topology = r.topology;
  p.num_links = r.links;
  p.groups = groups_of(r);
  p.mode = mode_of(r);
  p.fabric = f;
  return p;
}

ag::Params gather_params(const Row& r, const runtime::FabricOptions& f) { return dim_op_params<ag::Params>(r, f); }

rs::Params scatter_params(const Row& r, const runtime::FabricOptions& f) { return dim_op_params<rs::Params>(r, f); }

ar::Params reduce_params(const Row& r, const runtime::FabricOptions& f) {
  ar::Params p;
  p.tensor = tensor_of(r);
  p.topology = r.topology;
  p.num_links = r.links;
  p.groups = groups_of(r);
  p.mode = mode_of(r);
  p.fabric = f;
  p.algorithm = r.algorithm;
  return p;
}

template <class Error, class F>
void expect_refusal(const Row& r, F&& f) {
  try {
    f();
    ADD_FAILURE() << r.name() << " was not refused; expected \"" << r.refusal << "\"";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(r.refusal), std::string::npos)
        << r.name() << " refused for another reason: " << e.what();
  }
}

RunOutcome run_row(const Row& r, sim::device::SimMeshDevice& device) {
  const runtime::FabricOptions& f = device.options().fabric;
  switch (r.op) {
    case Op::AllGather: return run_all_gather(device, gather_params(r, f), r.input, r.output);
    case Op::ReduceScatter: return run_reduce_scatter(device, scatter_params(r, f), r.input, r.output);
    case Op::AllReduce: return run_all_reduce(device, reduce_params(r, f), r.input);
  }
  return {};
}

// The data bytes a group's links must carry at least (packet headers and credits come on top):
// all_gather sends every chip's input to the N - 1 others, and a multicast or relay crosses each
// hop once, so N (N - 1) inputs; reduce_scatter sends N - 1 partials of every one of the N
// output slices, each over at least one hop; all_reduce's reduce_scatter and all_gather of
// T / N slices carry (N - 1) T each (its composite, N (N - 1) T, is more).
std::int64_t least_link_payload(const Row& r, const RunOutcome& o) {
  const std::uint64_t n = r.n;
  std::uint64_t per_group = 0;
  switch (r.op) {
    case Op::AllGather: per_group = n * (n - 1) * o.input_bytes; break;
    case Op::ReduceScatter: per_group = n * (n - 1) * o.output_bytes; break;
    case Op::AllReduce: per_group = 2 * (n - 1) * o.output_bytes; break;
  }
  return static_cast<std::int64_t>(o.groups * per_group);
}

void PrintTo(const Row& r, std::ostream* os) { *os << r.name(); }

class ReferenceMatrix : public ::testing::TestWithParam<Row> {};

TEST_P(ReferenceMatrix, Run) {
  const Row& r = GetParam();
  RecordProperty("system", describe(r.system));
  const topo::Topology topology = topology_of(r.system);
  const runtime::FabricOptions f = fabric_of(r.system, topology);
  if (r.outcome == Outcome::RefusedByValidate) {
    expect_refusal<runtime::ccl::CclParamsError>(r, [&] {
      switch (r.op) {
        case Op::AllGather: ag::validate(gather_params(r, f), topology); break;
        case Op::ReduceScatter: rs::validate(scatter_params(r, f), topology); break;
        case Op::AllReduce: ar::validate(reduce_params(r, f), topology); break;
      }
    });
    return;
  }
  // A placement refusal needs no bytes: timing-only spares writing hundreds of MiB of inputs.
  const sim::DataMode data = r.outcome == Outcome::TimingOnly || r.outcome == Outcome::RefusedByPlacement
                                 ? sim::DataMode::TimingOnly
                                 : sim::DataMode::Functional;
  auto device = make_device(topology, f, data);
  if (r.outcome == Outcome::RefusedByBuffer) {
    expect_refusal<runtime::BufferConfigError>(r, [&] { run_row(r, *device); });
    return;
  }
  if (r.outcome == Outcome::RefusedByPlacement) {
    expect_refusal<std::invalid_argument>(r, [&] { run_row(r, *device); });
    return;
  }
  if (r.op == Op::AllReduce) {
    EXPECT_EQ(ar::to_string(ar::resolved_algorithm(reduce_params(r, f), topology)),
              ar::to_string(r.expected_algorithm));
  }
  const RunOutcome o = run_row(r, *device);
  EXPECT_EQ(o.group_size, r.n);
  EXPECT_EQ(o.groups, r.groups);
  EXPECT_EQ(o.verified, r.outcome == Outcome::Verified);
  EXPECT_GE(o.total_link_payload_bytes(), least_link_payload(r, o));
  if (r.outcome == Outcome::TimingOnly) {
    // Both directions of every hop of the fabric carried data (the ring's and the line's
    // workers send both ways), so no link sat out.
    for (const runtime::FabricLine& line : device->fabric_plan().lines()) {
      const std::size_t hops = line.chips.size() - (line.mode == FabricMode::Ring ? 0 : 1);
      for (std::size_t i = 0; i < hops; ++i) {
        const ChipId a = line.chips[i];
        const ChipId b = line.chips[(i + 1) % line.chips.size()];
        EXPECT_GT(o.link_payload_bytes.at({a, b}), 0) << "hop " << a << "->" << b;
        EXPECT_GT(o.link_payload_bytes.at({b, a}), 0) << "hop " << b << "->" << a;
      }
    }
  }
  if (legacy(r.system)) {
    // Every link of every hop carried its share both ways: each link has its own EDMs and workers.
    expect_every_link_carried(*device, kT3kMmioSquare, r.topology, r.links, 0);
  }
  std::printf("%s: %s, %llu B in / %llu B out per chip, %.2f us simulated, %s\n", r.name().c_str(),
              describe(r.system), static_cast<unsigned long long>(o.input_bytes),
              static_cast<unsigned long long>(o.output_bytes), static_cast<double>(o.kernel_ns) / 1e3,
              o.verified ? "verified bit for bit" : "timing only");
  RecordProperty("simulated_ns", std::to_string(o.kernel_ns));
}

std::string row_name(const ::testing::TestParamInfo<Row>& info) { return info.param.name(); }

INSTANTIATE_TEST_SUITE_P(Fast, ReferenceMatrix, ::testing::ValuesIn(rows_where(false)), row_name);
INSTANTIATE_TEST_SUITE_P(Slow, ReferenceMatrix, ::testing::ValuesIn(rows_where(true)), row_name);

// The table is REFERENCE 8: every one of its 40 rows has an entry, and names are unique.
TEST(ReferenceMatrixTable, EveryRowHasAnEntry) {
  std::set<int> numbers;
  std::set<std::string> names;
  for (const Row& r : all_rows()) {
    numbers.insert(r.number);
    EXPECT_TRUE(names.insert(r.name()).second) << "duplicate " << r.name();
    if (r.outcome == Outcome::RefusedByValidate || r.outcome == Outcome::RefusedByBuffer ||
        r.outcome == Outcome::RefusedByPlacement) {
      EXPECT_FALSE(r.refusal.empty()) << r.name();
    }
  }
  for (int n = 1; n <= 40; ++n) EXPECT_EQ(numbers.count(n), 1u) << "REFERENCE 8 row " << n << " has no entry";
  for (const std::string& slow : measured_slow()) EXPECT_EQ(names.count(slow), 1u) << "unknown slow entry " << slow;
}

}  // namespace
}  // namespace cclmesh::ccltest
