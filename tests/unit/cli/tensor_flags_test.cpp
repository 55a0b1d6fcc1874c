// `cclmesh run --shape/--dim/--shard`: the flags' parsing (shapes padded to 4D on the left,
// grids and shard shapes, every bad value a UsageError naming the option and the value), and
// run_collective with them: the shard each buffer got (derived as tt-metal does, or from
// --shard-shape), the tensor and dim recorded, data bit for bit.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runtime/device/mesh_device.hpp"
#include "tests/source_tree.hpp"
#include "tools/cclmesh/cli_error.hpp"
#include "tools/cclmesh/fault_spec.hpp"
#include "tools/cclmesh/op_runner.hpp"
#include "tools/cclmesh/result_table.hpp"
#include "tools/cclmesh/run_option_flags.hpp"
#include "tools/cclmesh/tensor_flags.hpp"

namespace cclmesh::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using Shape = std::array<std::uint32_t, 4>;
using Pair = std::array<std::uint32_t, 2>;

TEST(ParseShape, FourExtentsOrFewerPaddedOnTheLeft) {
  EXPECT_EQ(parse_shape("1,1,32,1024", "--shape"), (Shape{1, 1, 32, 1024}));
  EXPECT_EQ(parse_shape("1x1x32x736", "--shape"), (Shape{1, 1, 32, 736}));
  EXPECT_EQ(parse_shape("544,2880", "--shape"), (Shape{1, 1, 544, 2880}));
  EXPECT_EQ(parse_shape("96", "--shape"), (Shape{1, 1, 1, 96}));
}

void expect_refused(const std::string& text) {
  try {
    parse_shape(text, "--shape");
    FAIL() << "accepted '" << text << "'";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("--shape: '" + text + "'"));
    EXPECT_THAT(e.what(), HasSubstr("W,Z,Y,X"));
  }
}

TEST(ParseShape, RefusesZeroEmptyTooManyAndNonNumbers) {
  for (const char* bad : {"", "1,1,0,32", "1,,32", "1,1,1,32,32", "a,b", "1,1,32,-8", "1,1,32,4294967296", "32,"}) {
    expect_refused(bad);
  }
}

TEST(ParsePair, TwoPositiveIntegersSeparatedByX) {
  EXPECT_EQ(parse_pair("8x4", "--shard-grid", "a grid"), (Pair{8, 4}));
  for (const char* bad : {"8", "8x", "x4", "0x4", "8x4x1", "8,4"}) {
    EXPECT_THROW(parse_pair(bad, "--shard-grid", "a grid"), UsageError) << bad;
  }
}

TEST(ApplyTensorFlags, ShardOptionsNeedShardAndAGrid) {
  RunOptions options;
  TensorFlags flags;
  flags.shard_grid = "8x4";
  EXPECT_THROW(apply_tensor_flags(flags, options), UsageError);  // a grid without --shard
  flags = TensorFlags{};
  flags.shard = "width";
  try {
    apply_tensor_flags(flags, options);
    FAIL() << "--shard without --shard-grid accepted";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("--shard-grid"));
  }
  flags.shard_grid = "65x1";
  EXPECT_THROW(apply_tensor_flags(flags, options), UsageError);
  flags.shard_grid = "8x4";
  flags.shard_shape = "32x32";
  flags.shard_orientation = "col";
  flags.dim = 2;
  apply_tensor_flags(flags, options);
  ASSERT_TRUE(options.shard.has_value());
  EXPECT_EQ(options.shard->layout, "width");
  EXPECT_EQ(options.shard->grid, (std::vector<CoreRangeRequest>{{0, 0, 7, 3}}));
  EXPECT_FALSE(options.output_memory.has_value());  // no --out-shard*: the output follows --shard
  EXPECT_EQ(options.shard->orientation, "col");
  EXPECT_EQ(options.shard->shape, (Pair{32, 32}));
  EXPECT_EQ(options.dim, 2u);
}

TEST(ParseGrid, ARectangleFromTheOriginOrCoreRanges) {
  EXPECT_EQ(parse_grid("8x4", "--shard-grid"), (std::vector<CoreRangeRequest>{{0, 0, 7, 3}}));
  // REFERENCE 8 row 32's output: 10 cores, a row of 8 and 2 below.
  EXPECT_EQ(parse_grid("0,0-7,0+0,1-1,1", "--out-shard-grid"),
            (std::vector<CoreRangeRequest>{{0, 0, 7, 0}, {0, 1, 1, 1}}));
  EXPECT_EQ(parse_grid("2,3-2,3", "--shard-grid"), (std::vector<CoreRangeRequest>{{2, 3, 2, 3}}));
}

TEST(ParseGrid, RefusesReversedOverlappingOversizedAndMalformedRanges) {
  for (const char* bad : {"", "8by4", "0x4", "65x1", "0,0-7", "0,0-7,0+", "7,0-0,0", "0,1-0,0", "0,0-64,0",
                          "0,0-7,0+7,0-7,1", "0,0-3,3+1,1-2,2", "a,0-1,1", "0,0,0-1,1", "-1,0-1,1"}) {
    try {
      parse_grid(bad, "--out-shard-grid");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const UsageError& e) {
      EXPECT_THAT(e.what(), HasSubstr(std::string("--out-shard-grid: '") + bad + "' is not a core grid"));
      EXPECT_THAT(e.what(), HasSubstr("X0,Y0-X1,Y1"));
    }
  }
}

// --out-shard*: unset ones inherit --shard's; without --shard the output needs its own layout
// and grid; interleaved takes no grid, orientation or shape.
TEST(ApplyTensorFlags, OutputShardOptionsInheritTheInputsOrRefuse) {
  TensorFlags flags;
  flags.shard = "width";
  flags.shard_grid = "6x5";
  flags.shard_orientation = "col";
  flags.out_shard_grid = "4x6";
  RunOptions options;
  apply_tensor_flags(flags, options);
  ASSERT_TRUE(options.output_memory.has_value());
  ASSERT_TRUE(options.output_memory->shard.has_value());
  EXPECT_EQ(options.output_memory->shard->layout, "width");
  EXPECT_EQ(options.output_memory->shard->orientation, "col");
  EXPECT_EQ(options.output_memory->shard->grid, (std::vector<CoreRangeRequest>{{0, 0, 3, 5}}));
  EXPECT_FALSE(options.output_memory->shard->shape.has_value());  // derived from the output, not --shard-shape

  flags.out_shard = "interleaved";
  const auto refused = [](const TensorFlags& f, const std::string& needle) {
    RunOptions o;
    try {
      apply_tensor_flags(f, o);
      ADD_FAILURE() << "accepted; expected a refusal naming " << needle;
    } catch (const UsageError& e) {
      EXPECT_THAT(e.what(), HasSubstr(needle));
    }
  };
  refused(flags, "--out-shard-grid: '4x6' given with --out-shard interleaved");
  flags.out_shard_grid.clear();
  options = RunOptions{};
  apply_tensor_flags(flags, options);
  ASSERT_TRUE(options.output_memory.has_value());
  EXPECT_FALSE(options.output_memory->shard.has_value());

  TensorFlags alone;  // no --shard: the input is interleaved
  alone.out_shard_grid = "8x4";
  refused(alone, "--out-shard-grid: '8x4' given without --out-shard or --shard");
  alone.out_shard = "height";
  alone.out_shard_grid.clear();
  refused(alone, "--out-shard: 'height' needs --out-shard-grid");
  alone.out_shard_grid = "8x4";
  alone.out_shard_shape = "32x32x1";
  refused(alone, "--out-shard-shape: '32x32x1' is not a shard shape");
  alone.out_shard_shape = "64x32";
  options = RunOptions{};
  apply_tensor_flags(alone, options);
  EXPECT_FALSE(options.shard.has_value());
  ASSERT_TRUE(options.output_memory && options.output_memory->shard);
  EXPECT_EQ(options.output_memory->shard->orientation, "row");
  EXPECT_EQ(options.output_memory->shard->shape, (Pair{64, 32}));
}

RunOptions shaped(const char* system, CollectiveOp op, Shape shape) {
  RunOptions options;
  options.system = system;
  options.op = op;
  options.shape = shape;
  return options;
}

ShardRequest shard(const char* layout, std::uint32_t columns, std::uint32_t rows, const char* orientation = "row") {
  ShardRequest s;
  s.layout = layout;
  s.grid = {CoreRangeRequest{0, 0, columns - 1, rows - 1}};
  s.orientation = orientation;
  return s;
}

// REFERENCE 8 row 15 (per-chip input (1,1,32,1024), shard (32,32) on 8x4): --shape is the
// gathered output, 8x wider; the derived shards are tt-metal's, the output's 8x the input's.
TEST(RunWithShape, Row15WidthShardedShardsAreDerivedPerBuffer) {
  RunOptions options = shaped("t3k", CollectiveOp::AllGather, {1, 1, 32, 8192});
  options.memory = "l1";
  options.shard = shard("width", 8, 4);
  const RunResult r = run_collective(options);
  ASSERT_TRUE(r.verified.has_value());
  EXPECT_TRUE(*r.verified) << r.mismatch;
  EXPECT_EQ(r.wrong_elements, 0u);
  EXPECT_EQ(r.shape, (Shape{1, 1, 32, 8192}));
  EXPECT_EQ(r.dim, 3u);
  EXPECT_EQ(r.size_bytes, 32u * 8192u * 2u);
  EXPECT_EQ(r.count, 32u * 8192u / 8u);  // nccl-tests: per rank, S = count x type x n
  EXPECT_EQ(r.memory_layout, "width_sharded");
  EXPECT_EQ(r.input_shard, (Pair{32, 32}));
  EXPECT_EQ(r.output_shard, (Pair{32, 256}));
  // --json records the tensor, the dim and the memory config.
  const nlohmann::json j = result_json(r);
  EXPECT_EQ(j["shape"], nlohmann::json({1, 1, 32, 8192}));
  EXPECT_EQ(j["dim"], 3);
  EXPECT_EQ(j["layout"], "tile");
  EXPECT_EQ(j["memory"]["type"], "l1");
  EXPECT_EQ(j["memory"]["layout"], "width_sharded");
  EXPECT_EQ(j["memory"]["grid"], nlohmann::json({8, 4}));
  EXPECT_EQ(j["memory"]["orientation"], "row_major");
  EXPECT_EQ(j["memory"]["input_shard"], nlohmann::json({32, 32}));
  EXPECT_EQ(j["memory"]["output_shard"], nlohmann::json({32, 256}));
}

// An explicit --shard-shape is the input's; reduce_scatter's output shard is it / N along dim 3.
TEST(RunWithShape, ExplicitShardShapeScalesToTheOutput) {
  RunOptions options = shaped("t3k", CollectiveOp::ReduceScatter, {1, 1, 32, 8192});
  options.memory = "l1";
  options.shard = shard("width", 8, 4);
  options.shard->shape = Pair{32, 256};
  const RunResult r = run_collective(options);
  ASSERT_TRUE(r.verified.has_value());
  EXPECT_TRUE(*r.verified) << r.mismatch;
  EXPECT_EQ(r.input_shard, (Pair{32, 256}));
  EXPECT_EQ(r.output_shard, (Pair{32, 32}));
  EXPECT_EQ(r.size_bytes, 32u * 8192u * 2u);  // reduce_scatter's S: the per-chip input
}

// Block sharding splits rows over the grid's rows and the width over its columns; col-major
// orientation the other way round (REFERENCE 8 row 17: (512,512) on 8x4 -> (128,64)).
TEST(RunWithShape, BlockShardFollowsTheOrientation) {
  RunOptions options = shaped("t3k", CollectiveOp::AllGather, {1, 1, 512, 4096});
  options.memory = "l1";
  options.shard = shard("block", 8, 4);
  RunResult r = run_collective(options);
  EXPECT_EQ(r.input_shard, (Pair{128, 64}));
  EXPECT_EQ(r.output_shard, (Pair{128, 512}));
  EXPECT_TRUE(r.verified.value_or(false)) << r.mismatch;
  options.shard = shard("block", 4, 4, "col");
  options.shape = Shape{1, 1, 128, 1024};
  r = run_collective(options);
  EXPECT_EQ(r.input_shard, (Pair{32, 32}));  // 128 rows over 4 columns, 128 wide over 4 rows
  EXPECT_TRUE(r.verified.value_or(false)) << r.mismatch;
}

TEST(RunWithShape, GatheredShapeMustSplitOverTheChips) {
  RunOptions options = shaped("t3k", CollectiveOp::AllGather, {1, 1, 32, 1004});
  try {
    run_collective(options);
    FAIL() << "1004 along dim 3 split over 8 chips accepted";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("--shape: 1,1,32,1004 has 1004 along dim 3"));
  }
}

TEST(RunWithShape, OpsWithoutADimRefuseIt) {
  RunOptions options = shaped("t3k", CollectiveOp::AllReduce, {1, 1, 32, 1024});
  options.dim = 2;
  EXPECT_THROW(run_collective(options), UsageError);
}

// REFERENCE 8 row 23, the reshard: per-chip input (1,1,32,960) width sharded (32,32) on
// (0,0)-(5,4), output (1,1,32,3840) width sharded (32,160) on (0,0)-(3,5), on the first 4 chips
// of the T3K's line. Both shards derived from their own grids; both configs in the note and JSON.
TEST(RunWithOutputShard, Row23ReshardsOntoAnotherGrid) {
  RunOptions options = shaped("t3k", CollectiveOp::AllGather, {1, 1, 32, 3840});
  options.memory = "l1";
  options.chips = {4, 0, 2, 6};
  options.shard = shard("width", 6, 5);
  ShardRequest out = shard("width", 4, 6);
  options.output_memory = OutputMemoryRequest{out};
  const RunResult r = run_collective(options);
  ASSERT_TRUE(r.verified.has_value());
  EXPECT_TRUE(*r.verified) << r.mismatch;
  EXPECT_EQ(r.n_chips, 4u);
  EXPECT_EQ(r.topology, "line");
  EXPECT_EQ(r.fabric, "chips 4-0-2-6");
  EXPECT_EQ(r.input_shard, (Pair{32, 32}));
  EXPECT_EQ(r.output_shard, (Pair{32, 160}));
  EXPECT_THAT(tensor_note(r), HasSubstr("l1 in width_sharded on 6x5 (row-major), shard 32x32; out width_sharded on "
                                        "4x6 (row-major), shard 32x160"));
  const nlohmann::json j = result_json(r);
  EXPECT_EQ(j["memory"]["input"]["cores"], nlohmann::json::parse("[[[0,0],[5,4]]]"));
  EXPECT_EQ(j["memory"]["input"]["shard"], nlohmann::json({32, 32}));
  EXPECT_EQ(j["memory"]["output"]["layout"], "width_sharded");
  EXPECT_EQ(j["memory"]["output"]["cores"], nlohmann::json::parse("[[[0,0],[3,5]]]"));
  EXPECT_EQ(j["memory"]["output"]["shard"], nlohmann::json({32, 160}));
  EXPECT_EQ(j["fabric"], "chips 4-0-2-6");
  EXPECT_EQ(j["chips"], nlohmann::json({4, 0, 2, 6}));
}

// Row 32 on its stand-in (the Galaxy's 2x2 block as a line on 2 links): the input shard given
// (32,160 on 8x5: 32 of the 40 cores), the output's derived on 10 cores in two ranges.
TEST(RunWithOutputShard, Row32OnTheGalaxyBlockWithARangeSetGrid) {
  RunOptions options = shaped("galaxy", CollectiveOp::ReduceScatter, {1, 1, 32, 5120});
  options.memory = "l1";
  options.chips = {0, 1, 9, 8};
  options.topology = "line";
  options.links = 2;
  options.shard = shard("width", 8, 5);
  options.shard->shape = Pair{32, 160};
  ShardRequest out = shard("width", 8, 1);
  out.grid.push_back(CoreRangeRequest{0, 1, 1, 1});
  options.output_memory = OutputMemoryRequest{out};
  const RunResult r = run_collective(options);
  ASSERT_TRUE(r.verified.has_value());
  EXPECT_TRUE(*r.verified) << r.mismatch;
  EXPECT_EQ(r.links, 2u);
  EXPECT_EQ(r.input_shard, (Pair{32, 160}));
  EXPECT_EQ(r.output_shard, (Pair{32, 128}));
  EXPECT_THAT(tensor_note(r), HasSubstr("out width_sharded on 0,0-7,0+0,1-1,1 (row-major), shard 32x128"));
}

// An interleaved input into a sharded output, and a sharded input into an interleaved one.
TEST(RunWithOutputShard, InterleavedOnEitherSide) {
  RunOptions options = shaped("t3k", CollectiveOp::AllGather, {1, 1, 64, 2048});
  options.memory = "l1";
  options.output_memory = OutputMemoryRequest{shard("height", 2, 1)};
  RunResult r = run_collective(options);
  EXPECT_TRUE(r.verified.value_or(false)) << r.mismatch;
  EXPECT_EQ(r.memory_layout, "interleaved");
  EXPECT_EQ(r.output_memory_layout, "height_sharded");
  EXPECT_EQ(r.output_shard, (Pair{32, 2048}));
  options.shard = shard("block", 2, 2);
  options.output_memory = OutputMemoryRequest{};
  r = run_collective(options);
  EXPECT_TRUE(r.verified.value_or(false)) << r.mismatch;
  EXPECT_EQ(r.input_shard, (Pair{32, 128}));
  EXPECT_EQ(r.output_memory_layout, "interleaved");
  EXPECT_THAT(tensor_note(r), HasSubstr("; out interleaved"));
}

TEST(RunWithOutputShard, BlockShardingNeedsOneRectangle) {
  RunOptions options = shaped("t3k", CollectiveOp::AllGather, {1, 1, 64, 2048});
  options.memory = "l1";
  ShardRequest out = shard("block", 2, 1);
  out.grid.push_back(CoreRangeRequest{0, 1, 0, 1});
  options.output_memory = OutputMemoryRequest{out};
  try {
    run_collective(options);
    FAIL() << "block sharding over two ranges accepted";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("--out-shard-grid: '0,0-1,0+0,1-0,1' is 2 core ranges"));
  }
}

// Review (session 9): an explicit shard shape that does not hold its tensor on its grid is
// refused naming the option and the value in elements, not the buffer config's pages ("page 2
// falls outside the shard grid (2 cores of 2x1 pages)", which named neither).
void expect_shard_shape_refused(RunOptions options, const std::string& needle) {
  try {
    run_collective(options);
    ADD_FAILURE() << "accepted; expected a refusal naming " << needle;
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr(needle));
    EXPECT_THAT(e.what(), Not(HasSubstr("pages)")));
  }
}

TEST(RunWithOutputShard, ShardShapesThatDoNotHoldTheTensorNameTheOption) {
  // N300 gathers [1,1,64,256]: each input 64x128, the output 64x256, in L1.
  RunOptions base = shaped("n300", CollectiveOp::AllGather, {1, 1, 64, 256});
  base.memory = "l1";
  RunOptions narrow = base;  // 2 width shards of 32 columns hold 64 of the input's 128
  narrow.shard = shard("width", 2, 1);
  narrow.shard->shape = Pair{64, 32};
  expect_shard_shape_refused(narrow, "--shard-shape: 64x32 on 2x1 (2 cores) does not hold the input [1,1,64,128]");
  RunOptions cut = base;  // height shards hold whole rows: 96 of the output's 256 columns
  cut.output_memory = OutputMemoryRequest{shard("height", 2, 1)};
  cut.output_memory->shard->shape = Pair{32, 96};
  expect_shard_shape_refused(cut, "--out-shard-shape: 32x96 on 2x1 (2 cores) does not hold the output [1,1,64,256]");
  RunOptions small = base;  // 4 block shards of one tile hold 4 of the output's 16
  small.output_memory = OutputMemoryRequest{shard("block", 2, 2)};
  small.output_memory->shard->shape = Pair{32, 32};
  expect_shard_shape_refused(small, "--out-shard-shape: 32x32 on 2x2 (4 cores) does not hold the output [1,1,64,256]");
  RunOptions fits = small;  // a shard larger than needed holds it (partial shards)
  fits.output_memory->shard->shape = Pair{64, 160};
  const RunResult r = run_collective(fits);
  EXPECT_TRUE(r.verified.value_or(false)) << r.mismatch;
}

// Review (session 9): ROW_MAJOR bfp8_b with --shape names the options, as with --size (it said
// "tensor: ROW_MAJOR bfp8_b is invalid", naming no option), for the pair ops and the others.
TEST(RunWithShape, RowMajorBfp8NamesTheOptions) {
  for (const CollectiveOp op : {CollectiveOp::AllGather, CollectiveOp::SendRecv, CollectiveOp::Broadcast}) {
    RunOptions options = shaped("n300", op, {1, 1, 32, 64});
    options.layout = "row_major";
    options.dtype = "bfp8";
    try {
      run_collective(options);
      ADD_FAILURE() << "ROW_MAJOR bfp8_b accepted";
    } catch (const UsageError& e) {
      EXPECT_THAT(e.what(), HasSubstr("--dtype/--layout: tensor: ROW_MAJOR bfp8_b is invalid"));
    }
  }
}

// Review (session 9): a gather that would need the broadcast fallback in legacy mode on the whole
// system is refused with the fallback's own message. Sizing the fallback's broadcast buffers
// resolved fabric groups first, so without --chips the user read "groups: no chips, no
// cluster_axis and no fabric to take the chips from".
TEST(RunWithShape, LegacyModeRefusesTheBroadcastFallbackSayingSo) {
  for (const auto& [system, chips] : {std::pair{"n300", 2u}, std::pair{"t3k", 8u}}) {
    SCOPED_TRACE(system);
    RunOptions options = shaped(system, CollectiveOp::AllGather, {1, 1, 32, 48 * chips});  // 48 per chip
    options.mode = "legacy";
    try {
      run_collective(options);
      ADD_FAILURE() << "a gather of partial tiles accepted in legacy mode";
    } catch (const UsageError& e) {
      EXPECT_THAT(e.what(), HasSubstr("the legacy EDM mode does not have; use fabric mode"));
    }
  }
}

// send_recv and broadcast take --shape, --dtype, --memory and shards like the other ops.
TEST(RunPairOps, ShapedShardedAndOtherDtypes) {
  RunOptions options = shaped("t3k", CollectiveOp::SendRecv, {1, 1, 64, 1024});
  options.memory = "l1";
  options.shard = shard("height", 2, 1);
  options.output_memory = OutputMemoryRequest{shard("width", 8, 1)};
  RunResult r = run_collective(options);
  EXPECT_TRUE(r.verified.value_or(false)) << r.mismatch;
  EXPECT_EQ(r.size_bytes, 64u * 1024u * 2u);
  EXPECT_EQ(r.count, 64u * 1024u);
  EXPECT_EQ(r.input_shard, (Pair{32, 1024}));
  EXPECT_EQ(r.output_shard, (Pair{64, 128}));

  options = shaped("t3k", CollectiveOp::Broadcast, {1, 1, 40, 100});  // padded to 2 x 4 tiles
  options.dtype = "fp32";
  options.topology = "line";
  r = run_collective(options);
  EXPECT_TRUE(r.verified.value_or(false)) << r.mismatch;
  EXPECT_EQ(r.size_bytes, 8u * 4096u);
  EXPECT_EQ(r.count, 40u * 100u);

  options = RunOptions{};
  options.system = "n300";
  options.op = CollectiveOp::SendRecv;
  options.size_bytes = 1088 * 5;
  options.dtype = "bfp8";
  r = run_collective(options);
  EXPECT_TRUE(r.verified.value_or(false)) << r.mismatch;
  EXPECT_EQ(r.size_bytes, 1088u * 5u);
  EXPECT_EQ(r.count, 1024u * 5u);

  options = shaped("t3k", CollectiveOp::Broadcast, {1, 1, 32, 1024});
  options.dim = 3;
  EXPECT_THROW(run_collective(options), UsageError);  // no dim to broadcast along
}

void expect_chips_refused(std::vector<std::uint32_t> chips, const std::string& needle,
                          std::optional<int> cluster_axis = std::nullopt, const std::string& mode = "fabric",
                          const std::string& topology = "auto") {
  RunOptions options;
  options.system = "t3k";
  options.size_bytes = 64 << 10;
  options.chips = std::move(chips);
  options.cluster_axis = cluster_axis;
  options.mode = mode;
  options.topology = topology;
  try {
    run_collective(options);
    ADD_FAILURE() << "accepted; expected a refusal naming " << needle;
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr(needle));
  }
}

TEST(ParseChipList, ChipIdsSeparatedByCommas) {
  EXPECT_EQ(parse_chip_list("0,1,9,8", "--chips"), (std::vector<std::uint32_t>{0, 1, 9, 8}));
  EXPECT_EQ(parse_chip_list("5", "--chips"), (std::vector<std::uint32_t>{5}));
  // Bug bash leftover (session 39): the dash form cclmesh prints chip orders in ("fabric chips in
  // order: 0-4-5-1-3-2-6-7") is the same order; it was refused ("use commas").
  EXPECT_EQ(parse_chip_list("0-4-5-1", "--chips"), (std::vector<std::uint32_t>{0, 4, 5, 1}));
  EXPECT_EQ(parse_chip_list("0-4-5-1-3-2-6-7", "--chips"), (std::vector<std::uint32_t>{0, 4, 5, 1, 3, 2, 6, 7}));
  for (const char* bad : {"", "0,", ",1", "0,,1", "0,one", "-1,2", "0;1", "4294967296", "0-", "-0", "0--1",
                          "0,1-9,8", "0-1,9-8", "-", "0-one"}) {
    try {
      parse_chip_list(bad, "--chips");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const UsageError& e) {
      EXPECT_THAT(e.what(), HasSubstr(std::string("--chips: '") + bad + "' is not a chip list"));
    }
  }
}

TEST(RunOnChips, RefusesUnknownRepeatedTooFewAndNonNeighbouringChips) {
  expect_chips_refused({0, 1, 9}, "--chips: chip 9 is not on t3k");
  expect_chips_refused({0, 1, 0}, "--chips: chip 0 appears twice in '0,1,0'");
  expect_chips_refused({0}, "--chips: '0' is one chip");
  expect_chips_refused({0, 1}, "--chips: '0,1' given with --cluster-axis 0", 0);
  expect_chips_refused({0, 7}, "--chips: '0,7': chips 0 and 7 are not neighbours on t3k");
}

// Review (session 9): chips that do not neighbour are refused naming --chips and the hop in
// both modes, on a line and on a ring's closing hop. Legacy mode said "--links: 1 link(s) asked
// in legacy mode; t3k's ring 0,2,1 allows 1 to 0", naming an option the user had not given.
TEST(RunOnChips, NonNeighboursAreNamedInEitherMode) {
  for (const char* mode : {"fabric", "legacy"}) {
    SCOPED_TRACE(mode);
    expect_chips_refused({0, 2, 1}, "--chips: '0,2,1': chips 2 and 1 are not neighbours on t3k", std::nullopt, mode);
    expect_chips_refused({0, 5}, "--chips: '0,5': chips 0 and 5 are not neighbours on t3k", std::nullopt, mode);
    expect_chips_refused({0, 1, 3}, "--chips: '0,1,3': chips 3 and 0 are not neighbours on t3k", std::nullopt, mode,
                         "ring");
  }
}

// Review (session 9): a link down from the start on a hop of --chips. The whole-system fabric
// is re-embedded around such a link; a --chips order runs as given, so the run is reported as
// the fault (exit 3) naming the hop, in both modes, where it hung at start-up ("the ring
// fabric's start-up cannot complete", "legacy_edm: blocked in noc_semaphore_wait") without
// saying why. A down link off the chips' hops, or a later one, does not stop it.
TEST(RunOnChips, ALinkDownFromTheStartOnTheirHopsIsReported) {
  for (const char* mode : {"fabric", "legacy"}) {
    for (const char* down : {"link-down:1-0", "link-down:8-0"}) {  // a line hop; the ring's closing hop
      SCOPED_TRACE(std::string(mode) + " " + down);
      RunOptions options;
      options.system = "galaxy";
      options.size_bytes = 64 << 10;
      options.chips = {0, 1, 9, 8};
      options.mode = mode;
      add_fault_spec(options.faults, down);
      try {
        run_collective(options);
        ADD_FAILURE() << "ran across a down link";
      } catch (const runtime::DeviceError& e) {
        EXPECT_EQ(e.kind(), runtime::DeviceError::Kind::Fault);
        EXPECT_THAT(e.what(), HasSubstr(std::string("fault ") + down + " at 0 s: hop"));
        EXPECT_THAT(e.what(), HasSubstr("--chips 0,1,9,8"));
      }
    }
    RunOptions off = RunOptions{};
    off.system = "galaxy";
    off.size_bytes = 64 << 10;
    off.chips = {0, 1, 9, 8};
    off.mode = mode;
    add_fault_spec(off.faults, "link-down:2-3");
    const RunResult r = run_collective(off);
    EXPECT_TRUE(r.verified.value_or(false)) << r.mismatch;
  }
}

// Review (session 9): --topology auto makes --chips a ring only where the closing hop has the
// links asked, as the whole-system rule asks for a ring on --links links. A Galaxy whose 0-8
// edge has 3 links, not 4: 0,1,9,8 on 4 links runs as a line (it was made a ring, and the
// fabric plan refused the closing hop); on 3 links it is a ring.
TEST(RunOnChips, AutoRingNeedsTheLinksOnTheClosingHop) {
  std::ifstream in(testing::source_dir() / "topologies/systems/galaxy.yaml");
  std::string yaml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const auto& [from, to] : {std::pair{std::string(", 11: [8, 3]}"), std::string("}")},
                                 std::pair{std::string("3: [0, 11], "), std::string("")}}) {
    const std::size_t at = yaml.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    yaml.replace(at, from.size(), to);
  }
  const std::string path = (std::filesystem::temp_directory_path() / "cclmesh_galaxy_3_links_0_8.yaml").string();
  std::ofstream(path) << yaml;
  RunOptions options;
  options.system = path;
  options.size_bytes = 64 << 10;
  options.chips = {0, 1, 9, 8};
  options.links = 4;
  RunResult r = run_collective(options);
  EXPECT_EQ(r.topology, "line");
  EXPECT_TRUE(r.verified.value_or(false)) << r.mismatch;
  options.links = 3;
  r = run_collective(options);
  EXPECT_EQ(r.topology, "ring");
  EXPECT_TRUE(r.verified.value_or(false)) << r.mismatch;
  std::filesystem::remove(path);
}

// Bug bash, session 44: a 4-ring whose hop 0-1 has 1 link of 2 (ring4_narrow_hop: a dead link, as
// a user edits a saved system to have one), run along its axis on --links 2, was refused as "all_gather:
// num_links 2 is more than the 1 link(s) of hop 0-1 ...", naming no option. Every op now names
// --links and the links the group allows.
TEST(RunAlongAnAxis, LinksAboveAGroupsThinnestHopAreRefusedNamingLinks) {
  const std::string path = (testing::source_dir() / "tests/data/topologies/ring4_narrow_hop.yaml").string();
  for (const CollectiveOp op : {CollectiveOp::AllGather, CollectiveOp::ReduceScatter, CollectiveOp::AllReduce,
                                CollectiveOp::Broadcast, CollectiveOp::AllToAll, CollectiveOp::Reduce,
                                CollectiveOp::AllBroadcast}) {
    RunOptions options;
    options.system = path;
    options.op = op;
    options.size_bytes = 64 << 10;
    options.cluster_axis = 1;
    options.links = 2;
    options.no_data = true;
    try {
      run_collective(options);
      ADD_FAILURE() << to_string(op) << " ran 2 links over a hop of 1";
    } catch (const UsageError& e) {
      EXPECT_THAT(e.what(), ::testing::StartsWith("--links: ")) << to_string(op);
      EXPECT_THAT(e.what(), HasSubstr("num_links 2 is more than the 1 link(s) of hop 0-1")) << to_string(op);
      EXPECT_THAT(e.what(), ::testing::EndsWith("; expected 1 to 1")) << to_string(op);
    }
    options.links = 1;
    EXPECT_NO_THROW(run_collective(options)) << to_string(op);
  }
}

// The T3K's MMIO square in legacy mode: the chips are the group (no fabric to take it from),
// with the 2 links its hops have free of dispatch tunnels.
TEST(RunOnChips, LegacyModeRunsTheChipsAsTheGroup) {
  RunOptions options = shaped("t3k", CollectiveOp::ReduceScatter, {1, 4, 32, 1280});
  options.dim = 1;
  options.chips = {0, 1, 3, 2};
  options.mode = "legacy";
  options.links = 2;
  options.topology = "line";
  const RunResult r = run_collective(options);
  EXPECT_TRUE(r.verified.value_or(false)) << r.mismatch;
  EXPECT_EQ(r.n_chips, 4u);
  EXPECT_EQ(r.links, 2u);
  EXPECT_EQ(r.fabric, "chips 0-1-3-2");
}

}  // namespace
}  // namespace cclmesh::cli
