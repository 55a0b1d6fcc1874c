#pragma once
// Where the op's input and output buffers go: --memory, interleaved or sharded as --shard and
// --out-shard ask, each refusal naming the option.

#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "runtime/ccl/common/collective.hpp"
#include "runtime/device/buffer_layout.hpp"
#include "runtime/device/types.hpp"
#include "tools/cclmesh/cli_error.hpp"
#include "tools/cclmesh/run_options.hpp"

namespace cclmesh::cli::detail {

namespace ccl = runtime::ccl;

// --shard's layout as the device's.
runtime::TensorMemoryLayout memory_layout_of(const ShardRequest& shard);

// a / b rounded up, a shard's extent in pages; UsageError (--shard) past 32 bits.
std::uint32_t ceil_div(std::uint64_t a, std::uint64_t b);

// Where the op's input and output buffers live: --memory, interleaved or sharded over
// --shard-grid (the input, and the output unless --out-shard* gives its own). A shard is
// (height, width) in pages: TILE pages are 32x32 tiles, a ROW_MAJOR page is a whole row, so a
// ROW_MAJOR tensor shards by rows only.
class BufferPlacement {
 public:
  BufferPlacement(const RunOptions& options, runtime::BufferType type) : options_(options), type_(type) {
    const std::optional<ShardRequest>& out = output_request();
    for (const auto& [request, option] : {std::pair{&options.shard, "--shard"}, std::pair{&out, "--out-shard"}}) {
      if (*request && options.layout == "row_major" && (*request)->layout != "height") {
        throw UsageError(fmt::format("{}: '{}' cuts rows, and a ROW_MAJOR page is a whole row; expected {} height "
                                     "with --layout row_major",
                                     option, (*request)->layout, option));
      }
    }
  }

  runtime::BufferType type() const { return type_; }

  // The output's shard request: --out-shard*'s, else the input's.
  const std::optional<ShardRequest>& output_request() const {
    return options_.output_memory ? options_.output_memory->shard : options_.shard;
  }

  // Interleaved, in --memory: intermediates and the tensors of an unsharded run.
  runtime::BufferConfig interleaved(const ccl::TensorSpec& t) const { return ccl::interleaved_buffer_config(t, type_); }

  // The config of the op's input (`request` = --shard's) or output (output_request()), `what`
  // ("input" or "output") naming it. `explicit_shard`: the shard asked for this tensor, in
  // elements; unset: derived from the tensor and the grid. `option`: "--shard" or "--out-shard",
  // whose -shape / -grid a refusal names.
  runtime::BufferConfig of(const ccl::TensorSpec& t, const char* what, const std::optional<ShardRequest>& request,
                           const std::optional<std::array<std::uint32_t, 2>>& explicit_shard, const char* option,
                           std::array<std::uint32_t, 2>* shard_elements = nullptr) const {
    if (!request) return interleaved(t);
    const ShardRequest& s = *request;
    const api::Shape4D pages = ccl::shape_in_pages(t);
    const bool tile = t.layout == ccl::Layout::Tile;
    std::array<std::uint32_t, 2> shard{};  // pages
    if (explicit_shard) {
      const auto [h, w] = *explicit_shard;
      if (tile && (h % 32 != 0 || w % 32 != 0)) {
        throw UsageError(fmt::format("{}-shape: {}x{} is not whole 32x32 tiles; a TILE shard's height and width "
                                     "are multiples of 32",
                                     option, h, w));
      }
      if (!tile && w != t.shape[3]) {
        throw UsageError(fmt::format("{}-shape: {}x{} cuts a ROW_MAJOR row of {} elements; a ROW_MAJOR shard "
                                     "holds whole rows (expected width {})",
                                     option, h, w, t.shape[3], t.shape[3]));
      }
      shard = tile ? std::array<std::uint32_t, 2>{h / 32, w / 32} : std::array<std::uint32_t, 2>{h, 1};
    } else {
      shard = derived_shard(s, pages, option);
    }
    if (shard_elements != nullptr) *shard_elements = in_elements(t, shard);
    runtime::ShardSpec spec;
    for (const CoreRangeRequest& r : s.grid) spec.grid.push_back(runtime::CoreRange{{r.x0, r.y0}, {r.x1, r.y1}});
    spec.shard_height_pages = shard[0];
    spec.shard_width_pages = shard[1];
    spec.tensor_width_pages = pages.x;
    spec.orientation =
        s.orientation == "row" ? runtime::ShardOrientation::RowMajor : runtime::ShardOrientation::ColMajor;
    const runtime::BufferConfig config{type_, ccl::size_bytes(t), ccl::page_size_bytes(t), memory_layout_of(s), spec};
    if (explicit_shard) require_shard_holds(config, t, what, s, *explicit_shard, option);
    return config;
  }

 private:
  // A shard (height, width) in pages, in elements: TILE pages are 32x32, a ROW_MAJOR page a row.
  static std::array<std::uint32_t, 2> in_elements(const ccl::TensorSpec& t, std::array<std::uint32_t, 2> shard) {
    return t.layout == ccl::Layout::Tile ? std::array<std::uint32_t, 2>{shard[0] * 32, shard[1] * 32}
                                         : std::array<std::uint32_t, 2>{shard[0], t.shape[3]};
  }

  // The shard tt-metal derives for the layout from the tensor (in pages) and the grid: the
  // smallest that holds the tensor there.
  static std::array<std::uint32_t, 2> derived_shard(const ShardRequest& s, const api::Shape4D& pages,
                                                    const char* option) {
    const std::uint64_t height_pages = std::uint64_t{pages.w} * pages.z * pages.y;
    const std::uint64_t cores = s.cores();
    const bool row = s.orientation == "row";
    if (s.layout == "height") return {ceil_div(height_pages, cores), pages.x};
    if (s.layout == "width") return {ceil_div(height_pages, 1), ceil_div(pages.x, cores)};
    // Block: the tensor's rows split over the grid's rows and its width over the columns
    // (column-major orientation: the other way round), tt-metal's block sharding, which needs
    // the grid to be one rectangle.
    if (s.grid.size() != 1) {
      throw UsageError(fmt::format("{}-grid: '{}' is {} core ranges; block sharding splits the tensor over one "
                                   "rectangle's rows and columns, expected one range",
                                   option, s.grid_text(), s.grid.size()));
    }
    const std::uint32_t columns = s.grid.front().x1 - s.grid.front().x0 + 1;
    const std::uint32_t rows = s.grid.front().y1 - s.grid.front().y0 + 1;
    return {ceil_div(height_pages, row ? rows : columns), ceil_div(pages.x, row ? columns : rows)};
  }

  // An explicit shard must hold the tensor on its grid. The layout is checked on a worker grid
  // past any chip's (the device checks its own cores and banks, naming them), so what fails
  // here is the shard's shape, refused in the elements it was given in.
  static void require_shard_holds(runtime::BufferConfig config, const ccl::TensorSpec& t, const char* what,
                                  const ShardRequest& s, std::array<std::uint32_t, 2> asked, const char* option) {
    config.type = runtime::BufferType::L1;
    try {
      const runtime::BufferLayout layout(config, 0, runtime::CoreCoord{64, 64}, 64);
      return;
    } catch (const runtime::BufferConfigError&) {
    }
    const std::uint32_t width = in_elements(t, {1, ccl::shape_in_pages(t).x})[1];
    std::string expected;
    if (s.layout == "block" && s.grid.size() != 1) {
      expected = "shards that cover it";
    } else {
      const std::array<std::uint32_t, 2> least = in_elements(t, derived_shard(s, ccl::shape_in_pages(t), option));
      expected = s.layout == "height" ? fmt::format("width {} (whole rows) and height at least {}", width, least[0])
                                      : fmt::format("at least {}x{}", least[0], least[1]);
    }
    throw UsageError(fmt::format("{}-shape: {}x{}{} on {} ({} cores) does not hold the {} [{}] {}-sharded; expected {}",
                                 option, asked[0], asked[1],
                                 std::string_view(option) == "--shard" && std::string_view(what) == "output"
                                     ? " (the output's, from --shard-shape)"
                                     : "",
                                 s.grid_text(), s.cores(), what, fmt::join(t.shape, ","), s.layout, expected));
  }

  const RunOptions& options_;
  runtime::BufferType type_;
};

// The output's explicit shard: --out-shard-shape's when --out-shard* is given (unset: derived from
// the output and its grid); else --shard-shape, the per-chip input's, following the op's tensor
// along dim: N times larger (all_gather), N times smaller (reduce_scatter), else the same. Dims
// 0..2 are the shard's rows, dim 3 its width (tt-metal's run_all_gather_sharded: output shard =
// input shard x N along dim 3).
enum class OutputAlongDim : std::uint8_t { Same, Gathered, Scattered };

std::optional<std::array<std::uint32_t, 2>> output_shard_of(const RunOptions& options, std::uint32_t dim,
                                                            std::uint32_t n, OutputAlongDim along_dim);

}  // namespace cclmesh::cli::detail
