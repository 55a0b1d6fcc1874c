#include "tools/cclmesh/buffer_placement.hpp"

#include <fmt/format.h>

#include <limits>

#include "tools/cclmesh/cli_error.hpp"

namespace cclmesh::cli::detail {

runtime::TensorMemoryLayout memory_layout_of(const ShardRequest& shard) {
  if (shard.layout == "height") return runtime::TensorMemoryLayout::HeightSharded;
  if (shard.layout == "width") return runtime::TensorMemoryLayout::WidthSharded;
  return runtime::TensorMemoryLayout::BlockSharded;
}

std::uint32_t ceil_div(std::uint64_t a, std::uint64_t b) {
  const std::uint64_t q = (a + b - 1) / b;
  if (q > std::numeric_limits<std::uint32_t>::max()) {
    throw UsageError(fmt::format("--shard: a shard of {} pages does not fit a 32-bit shard spec; use a larger "
                                 "--shard-grid or a smaller tensor",
                                 q));
  }
  return static_cast<std::uint32_t>(q);
}

std::optional<std::array<std::uint32_t, 2>> output_shard_of(const RunOptions& options, std::uint32_t dim,
                                                            std::uint32_t n, OutputAlongDim along_dim) {
  if (options.output_memory) {
    const std::optional<ShardRequest>& out = options.output_memory->shard;
    return out ? out->shape : std::nullopt;
  }
  if (!options.shard || !options.shard->shape) return std::nullopt;
  std::array<std::uint32_t, 2> shard = *options.shard->shape;
  std::uint32_t& along = shard[dim == 3 ? 1 : 0];
  if (along_dim == OutputAlongDim::Gathered) {
    along *= n;
  } else if (along_dim == OutputAlongDim::Scattered) {
    if (along % n != 0) {
      throw UsageError(fmt::format("--shard-shape: {}x{} does not split over {} chips along dim {}; reduce_scatter's "
                                   "output shard is the input's divided by N there",
                                   shard[0], shard[1], n, dim));
    }
    along /= n;
  }
  return shard;
}

}  // namespace cclmesh::cli::detail
