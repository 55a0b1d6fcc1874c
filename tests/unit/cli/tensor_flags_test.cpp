// `cclmesh run --shape/--dim/--shard`: the flags' parsing (shapes padded to 4D on the left,
// grids and shard shapes, every bad value a UsageError naming the option and the value), and
// run_collective with them: the shard each buffer got (derived as tt-metal does, or from
// --shard-shape), the tensor and dim recorded, data bit for bit.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <string>

#include "tools/cclmesh/cli_error.hpp"
#include "tools/cclmesh/op_runner.hpp"
#include "tools/cclmesh/result_table.hpp"
#include "tools/cclmesh/tensor_flags.hpp"

namespace cclmesh::cli {
namespace {

using ::testing::HasSubstr;
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
  EXPECT_EQ(options.shard->grid_columns, 8u);
  EXPECT_EQ(options.shard->grid_rows, 4u);
  EXPECT_EQ(options.shard->orientation, "col");
  EXPECT_EQ(options.shard->shape, (Pair{32, 32}));
  EXPECT_EQ(options.dim, 2u);
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
  s.grid_columns = columns;
  s.grid_rows = rows;
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
  EXPECT_EQ(r.count, 32u * 8192u);
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

}  // namespace
}  // namespace cclmesh::cli
