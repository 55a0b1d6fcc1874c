#pragma once
// The tensor and memory options of `cclmesh run` (and, but --shape, of `cclmesh sweep`): the
// shape, the op's dim and a sharded memory config, as typed, and their parsing into RunOptions.
// Every bad value is a UsageError naming the option, the value and what is accepted.

#include "tools/cclmesh/cli11_fwd.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tools/cclmesh/run_options.hpp"

namespace cclmesh::cli {

struct TensorFlags {
  std::string shape;        // --shape (run only)
  std::string shard;        // --shard: height | width | block
  std::string shard_grid;   // --shard-grid CxR
  std::string shard_orientation = "row";
  std::string shard_shape;  // --shard-shape HxW
  // The output's own memory layout (--out-shard interleaved|height|width|block and its grid,
  // orientation and shard shape); each "" inherits the input's.
  std::string out_shard;
  std::string out_shard_grid;
  std::string out_shard_orientation;
  std::string out_shard_shape;
  std::int64_t dim = -1;    // --dim; -1: not given
};

// --dim and the --shard options (both commands).
void add_memory_options(CLI::App& command, TensorFlags& flags);
// --shape (run).
void add_shape_option(CLI::App& command, TensorFlags& flags);

// Fills options.shape, .dim, .shard and .output_memory from the flags; throws UsageError on a bad
// value, a --shard-* option without --shard, or an --out-shard-* option with nothing to shard.
void apply_tensor_flags(const TensorFlags& flags, RunOptions& options);

// "W,Z,Y,X" (or with 'x'): 1 to 4 positive extents, missing outer ones 1 (tt-metal pads a shape
// to 4D on the left).
std::array<std::uint32_t, 4> parse_shape(std::string_view text, std::string_view option);
// A shard grid: "CxR" (C cores along x by R along y from (0,0)) or core ranges
// "X0,Y0-X1,Y1[+X0,Y0-X1,Y1...]" (tt-metal's CoreRangeSet), each side at most 64 cores.
std::vector<CoreRangeRequest> parse_grid(std::string_view text, std::string_view option);
// "AxB": two positive integers (a grid's columns x rows, a shard's height x width).
std::array<std::uint32_t, 2> parse_pair(std::string_view text, std::string_view option, std::string_view accepted);

}  // namespace cclmesh::cli
