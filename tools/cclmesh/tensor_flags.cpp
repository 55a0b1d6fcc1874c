#include "tools/cclmesh/tensor_flags.hpp"

#include <fmt/format.h>

#include <charconv>
#include <limits>
#include <vector>

#include "tools/cclmesh/cli_error.hpp"

namespace cclmesh::cli {

namespace {

// Splits on any of `separators`; an empty field stays, so "1,,2" is refused as a bad extent.
std::vector<std::string_view> split(std::string_view text, std::string_view separators) {
  std::vector<std::string_view> fields;
  std::size_t begin = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || separators.find(text[i]) != std::string_view::npos) {
      fields.push_back(text.substr(begin, i - begin));
      begin = i + 1;
    }
  }
  return fields;
}

// A positive 32-bit integer, or nullopt.
std::optional<std::uint32_t> positive(std::string_view field) {
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (error != std::errc{} || end != field.data() + field.size() || value == 0 ||
      value > std::numeric_limits<std::uint32_t>::max()) {
    return std::nullopt;
  }
  return static_cast<std::uint32_t>(value);
}

}  // namespace

std::array<std::uint32_t, 4> parse_shape(std::string_view text, std::string_view option) {
  const std::vector<std::string_view> fields = split(text, ",x");
  const auto refuse = [&] {
    return UsageError(fmt::format("{}: '{}' is not a tensor shape; expected 1 to 4 positive extents W,Z,Y,X in "
                                  "elements, separated by ',' or 'x' (e.g. 1,1,32,1024)",
                                  option, text));
  };
  if (text.empty() || fields.size() > 4) throw refuse();
  std::array<std::uint32_t, 4> shape{1, 1, 1, 1};
  const std::size_t first = 4 - fields.size();
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const std::optional<std::uint32_t> extent = positive(fields[i]);
    if (!extent) throw refuse();
    shape[first + i] = *extent;
  }
  return shape;
}

std::array<std::uint32_t, 2> parse_pair(std::string_view text, std::string_view option, std::string_view accepted) {
  const std::vector<std::string_view> fields = split(text, "x");
  if (fields.size() == 2) {
    const std::optional<std::uint32_t> a = positive(fields[0]);
    const std::optional<std::uint32_t> b = positive(fields[1]);
    if (a && b) return {*a, *b};
  }
  throw UsageError(fmt::format("{}: '{}' is not {}", option, text, accepted));
}

void add_shape_option(CLI::App& command, TensorFlags& flags) {
  command.add_option("--shape", flags.shape,
                     "tensor shape W,Z,Y,X in elements (1 to 4 extents, outer ones 1 if left out), instead of --size: "
                     "the tensor nccl-tests' size measures (tt-metal's T): all_gather's gathered output (each chip's "
                     "input is it split N ways along --dim), reduce_scatter's per-chip input, the tensor of "
                     "all_reduce, reduce and all_to_all, all_broadcast's per-chip input; size = its pages' bytes "
                     "(tiles padded), count = its elements");
}

void add_memory_options(CLI::App& command, TensorFlags& flags) {
  command.add_option("--dim", flags.dim,
                     "all_gather / reduce_scatter / all_to_all: the dim to gather, scatter or exchange along, 0..3 "
                     "(default 3; 2 for a ROW_MAJOR tensor from --size, whose pages are rows); other ops refuse it")
      ->check(CLI::Range(0, 3));
  command.add_option("--shard", flags.shard,
                     "shard the input and output buffers (of --memory l1 or dram) instead of interleaving them: "
                     "height, width or block (tt-metal's TensorMemoryLayout); needs --shard-grid")
      ->check(CLI::IsMember({"height", "width", "block"}));
  command.add_option("--shard-grid", flags.shard_grid,
                     "the shard grid CxR: C cores along x by R along y from core (0,0); DRAM: C banks, R 1");
  command.add_option("--shard-orientation", flags.shard_orientation,
                     "row (shards in row-major core order) or col (column-major)")
      ->check(CLI::IsMember({"row", "col"}))
      ->capture_default_str();
  command.add_option("--shard-shape", flags.shard_shape,
                     "the per-chip input's shard HxW in elements (TILE: multiples of 32); the output's is it times N "
                     "along --dim (all_gather) or divided by N (reduce_scatter); default: each buffer's shard "
                     "derived as tt-metal does: height H/cores x W, width H x W/cores, block (H/R) x (W/C) (col: "
                     "H/C x W/R), H = W*Z*Y rows, tiles rounded up");
}

void apply_tensor_flags(const TensorFlags& flags, RunOptions& options) {
  if (!flags.shape.empty()) options.shape = parse_shape(flags.shape, "--shape");
  if (flags.dim >= 0) options.dim = static_cast<std::uint32_t>(flags.dim);
  if (flags.shard.empty()) {
    const auto unused = [](const std::string& value, const char* option) {
      if (value.empty()) return;
      throw UsageError(fmt::format("{}: '{}' given without --shard; add --shard height|width|block, or leave it out "
                                   "for interleaved buffers",
                                   option, value));
    };
    unused(flags.shard_grid, "--shard-grid");
    unused(flags.shard_shape, "--shard-shape");
    unused(flags.shard_orientation == "row" ? "" : flags.shard_orientation, "--shard-orientation");
    return;
  }
  if (flags.shard_grid.empty()) {
    throw UsageError(fmt::format("--shard: '{}' needs --shard-grid CxR, the cores (DRAM: banks x 1) to shard over",
                                 flags.shard));
  }
  ShardRequest shard;
  shard.layout = flags.shard;
  constexpr std::uint32_t kMaxGridSide = 64;  // past any chip's worker grid or DRAM banks; the device checks its own
  const char* grid_accepted = "a core grid; expected CxR, C cores along x by R along y, each 1..64 (e.g. 8x4)";
  const auto grid = parse_pair(flags.shard_grid, "--shard-grid", grid_accepted);
  if (grid[0] > kMaxGridSide || grid[1] > kMaxGridSide) {
    throw UsageError(fmt::format("--shard-grid: '{}' is not {}", flags.shard_grid, grid_accepted));
  }
  shard.grid_columns = grid[0];
  shard.grid_rows = grid[1];
  shard.orientation = flags.shard_orientation;
  if (!flags.shard_shape.empty()) {
    shard.shape = parse_pair(flags.shard_shape, "--shard-shape",
                             "a shard shape; expected HxW in elements, both positive (e.g. 32x32)");
  }
  options.shard = shard;
}

}  // namespace cclmesh::cli
