#pragma once
// The tensor and memory options of `cclmesh run` (and, but --shape, of `cclmesh sweep`): the
// shape, the op's dim and a sharded memory config, as typed, and their parsing into RunOptions.
// Every bad value is a UsageError naming the option, the value and what is accepted.

#include <CLI/CLI.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "tools/cclmesh/run_options.hpp"

namespace cclmesh::cli {

struct TensorFlags {
  std::string shape;        // --shape (run only)
  std::string shard;        // --shard: height | width | block
  std::string shard_grid;   // --shard-grid CxR
  std::string shard_orientation = "row";
  std::string shard_shape;  // --shard-shape HxW
  std::int64_t dim = -1;    // --dim; -1: not given
};

// --dim and the --shard options (both commands).
void add_memory_options(CLI::App& command, TensorFlags& flags);
// --shape (run).
void add_shape_option(CLI::App& command, TensorFlags& flags);

// Fills options.shape, .dim and .shard from the flags; throws UsageError on a bad value or a
// --shard-* option without --shard.
void apply_tensor_flags(const TensorFlags& flags, RunOptions& options);

// "W,Z,Y,X" (or with 'x'): 1 to 4 positive extents, missing outer ones 1 (tt-metal pads a shape
// to 4D on the left).
std::array<std::uint32_t, 4> parse_shape(std::string_view text, std::string_view option);
// "AxB": two positive integers (a grid's columns x rows, a shard's height x width).
std::array<std::uint32_t, 2> parse_pair(std::string_view text, std::string_view option, std::string_view accepted);

}  // namespace cclmesh::cli
