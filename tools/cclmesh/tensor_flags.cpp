#include "tools/cclmesh/tensor_flags.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <charconv>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "tools/cclmesh/cli_error.hpp"
#include "tools/cclmesh/whole_number_option.hpp"

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

// A non-negative integer below `limit`, or nullopt.
std::optional<std::uint32_t> below(std::string_view field, std::uint32_t limit) {
  std::uint32_t value = 0;
  const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (field.empty() || error != std::errc{} || end != field.data() + field.size() || value >= limit) {
    return std::nullopt;
  }
  return value;
}

constexpr std::uint32_t kMaxGridSide = 64;  // past any chip's worker grid or DRAM banks; the device checks its own
constexpr const char* kGridAccepted =
    "a core grid; expected CxR (C cores along x by R along y from (0,0), each 1..64, e.g. 8x4) or core ranges "
    "X0,Y0-X1,Y1 joined by '+' (coordinates 0..63, X0<=X1, Y0<=Y1, not overlapping, e.g. 0,0-7,0+0,1-1,1)";

}  // namespace

std::vector<CoreRangeRequest> parse_grid(std::string_view text, std::string_view option) {
  const auto refuse = [&] { return UsageError(fmt::format("{}: '{}' is not {}", option, text, kGridAccepted)); };
  if (text.find(',') == std::string_view::npos) {
    const auto grid = parse_pair(text, option, kGridAccepted);
    if (grid[0] > kMaxGridSide || grid[1] > kMaxGridSide) throw refuse();
    return {CoreRangeRequest{0, 0, grid[0] - 1, grid[1] - 1}};
  }
  std::vector<CoreRangeRequest> ranges;
  for (const std::string_view range : split(text, "+")) {
    const std::vector<std::string_view> corners = split(range, "-");
    if (corners.size() != 2) throw refuse();
    std::array<std::uint32_t, 4> xy{};
    for (std::size_t c = 0; c < 2; ++c) {
      const std::vector<std::string_view> coordinates = split(corners[c], ",");
      if (coordinates.size() != 2) throw refuse();
      for (std::size_t i = 0; i < 2; ++i) {
        const std::optional<std::uint32_t> value = below(coordinates[i], kMaxGridSide);
        if (!value) throw refuse();
        xy[2 * c + i] = *value;
      }
    }
    const CoreRangeRequest r{xy[0], xy[1], xy[2], xy[3]};
    if (r.x0 > r.x1 || r.y0 > r.y1) throw refuse();
    for (const CoreRangeRequest& other : ranges) {
      if (r.x0 <= other.x1 && other.x0 <= r.x1 && r.y0 <= other.y1 && other.y0 <= r.y1) throw refuse();
    }
    ranges.push_back(r);
  }
  return ranges;
}

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
                     "(tiles padded), count = its elements, per chip where nccl-tests counts per rank (all_gather, "
                     "reduce_scatter, all_to_all: S / n)");
}

void add_memory_options(CLI::App& command, TensorFlags& flags) {
  command.add_option("--dim", flags.dim,
                     "all_gather / reduce_scatter / all_to_all: the dim to gather, scatter or exchange along, 0..3 "
                     "(default 3; 2 for a ROW_MAJOR tensor from --size, whose pages are rows); other ops refuse it")
      ->transform(whole_number_in(0, 3));
  command.add_option("--shard", flags.shard,
                     "shard the input buffer and, unless --out-shard* says otherwise, the output buffer (of --memory "
                     "l1 or dram) instead of interleaving them: height, width or block (tt-metal's "
                     "TensorMemoryLayout); needs --shard-grid")
      ->check(CLI::IsMember({"height", "width", "block"}));
  command.add_option("--shard-grid", flags.shard_grid,
                     "the input's (and output's) shard grid: CxR, C cores along x by R along y from core (0,0) (DRAM: "
                     "C banks, R 1), or core ranges X0,Y0-X1,Y1 joined by '+' (e.g. 0,0-7,0+0,1-1,1)");
  command.add_option("--shard-orientation", flags.shard_orientation,
                     "the input's (and output's) shard order: row (row-major core order) or col (column-major)")
      ->check(CLI::IsMember({"row", "col"}))
      ->capture_default_str();
  command.add_option("--shard-shape", flags.shard_shape,
                     "the per-chip input's shard HxW in elements (TILE: multiples of 32); the output's is it times N "
                     "along --dim (all_gather) or divided by N (reduce_scatter); default: each buffer's shard "
                     "derived as tt-metal does: height H/cores x W, width H x W/cores, block (H/R) x (W/C) (col: "
                     "H/C x W/R), H = W*Z*Y rows, tiles rounded up");
  command.add_option("--out-shard", flags.out_shard,
                     "the output buffer's layout when it differs from the input's: interleaved, height, width or "
                     "block (default: --shard's); the input stays as --shard says (interleaved without it)")
      ->check(CLI::IsMember({"interleaved", "height", "width", "block"}));
  command.add_option("--out-shard-grid", flags.out_shard_grid,
                     "the output buffer's shard grid, as --shard-grid (default: --shard-grid's)");
  command.add_option("--out-shard-orientation", flags.out_shard_orientation,
                     "the output buffer's shard order, row or col (default: --shard-orientation's)")
      ->check(CLI::IsMember({"row", "col"}));
  command.add_option("--out-shard-shape", flags.out_shard_shape,
                     "the output buffer's shard HxW in elements (default: derived from the output tensor and its "
                     "grid; with no --out-shard* option at all, --shard-shape scaled along --dim)");
}

namespace {

std::array<std::uint32_t, 2> parse_shard_shape(const std::string& text, const char* option) {
  return parse_pair(text, option, "a shard shape; expected HxW in elements, both positive (e.g. 32x32)");
}

// --out-shard*: the output's memory when any of them is given, each unset one the input's.
std::optional<OutputMemoryRequest> output_memory_of(const TensorFlags& flags, const std::optional<ShardRequest>& input) {
  const bool any = !flags.out_shard.empty() || !flags.out_shard_grid.empty() || !flags.out_shard_orientation.empty() ||
                   !flags.out_shard_shape.empty();
  if (!any) return std::nullopt;
  if (flags.out_shard == "interleaved") {
    for (const auto& [value, option] : {std::pair{&flags.out_shard_grid, "--out-shard-grid"},
                                        std::pair{&flags.out_shard_orientation, "--out-shard-orientation"},
                                        std::pair{&flags.out_shard_shape, "--out-shard-shape"}}) {
      if (value->empty()) continue;
      throw UsageError(fmt::format("{}: '{}' given with --out-shard interleaved, whose output has no shards; leave "
                                   "it out or shard the output (--out-shard height|width|block)",
                                   option, *value));
    }
    return OutputMemoryRequest{};
  }
  ShardRequest shard;
  if (!flags.out_shard.empty()) {
    shard.layout = flags.out_shard;
  } else if (input) {
    shard.layout = input->layout;
  } else {
    const auto [option, given] = !flags.out_shard_grid.empty()
                                     ? std::pair{"--out-shard-grid", &flags.out_shard_grid}
                                 : !flags.out_shard_orientation.empty()
                                     ? std::pair{"--out-shard-orientation", &flags.out_shard_orientation}
                                     : std::pair{"--out-shard-shape", &flags.out_shard_shape};
    throw UsageError(fmt::format("{}: '{}' given without --out-shard or --shard, so the output has no shard layout; "
                                 "add --out-shard height|width|block",
                                 option, *given));
  }
  if (!flags.out_shard_grid.empty()) {
    shard.grid = parse_grid(flags.out_shard_grid, "--out-shard-grid");
  } else if (input) {
    shard.grid = input->grid;
  } else {
    throw UsageError(fmt::format("--out-shard: '{}' needs --out-shard-grid (or --shard-grid), the cores (DRAM: banks "
                                 "x 1) to shard the output over",
                                 flags.out_shard));
  }
  shard.orientation = !flags.out_shard_orientation.empty() ? flags.out_shard_orientation
                      : input                               ? input->orientation
                                                            : "row";
  if (!flags.out_shard_shape.empty()) shard.shape = parse_shard_shape(flags.out_shard_shape, "--out-shard-shape");
  return OutputMemoryRequest{shard};
}

}  // namespace

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
    options.output_memory = output_memory_of(flags, std::nullopt);
    return;
  }
  if (flags.shard_grid.empty()) {
    throw UsageError(fmt::format("--shard: '{}' needs --shard-grid CxR, the cores (DRAM: banks x 1) to shard over",
                                 flags.shard));
  }
  ShardRequest shard;
  shard.layout = flags.shard;
  shard.grid = parse_grid(flags.shard_grid, "--shard-grid");
  shard.orientation = flags.shard_orientation;
  if (!flags.shard_shape.empty()) shard.shape = parse_shard_shape(flags.shard_shape, "--shard-shape");
  options.shard = shard;
  options.output_memory = output_memory_of(flags, shard);
}

}  // namespace cclmesh::cli
