#include "tools/cclmesh/shard_grid_fit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "runtime/device/core_map.hpp"

namespace cclmesh::cli::detail {

namespace {

// The grid's furthest core along x and along y (not necessarily one of its cores).
runtime::CoreCoord furthest_corner(const ShardRequest& shard) {
  runtime::CoreCoord corner{0, 0};
  for (const CoreRangeRequest& r : shard.grid) {
    corner.x = std::max(corner.x, std::max(r.x0, r.x1));
    corner.y = std::max(corner.y, std::max(r.y0, r.y1));
  }
  return corner;
}

// Why `shard`'s grid is past the chips, or nullopt when they hold it. `memory_typed`: --memory
// was given; otherwise a DRAM grid that L1's worker grid holds says --memory l1
// too, as the default memory is DRAM (new-user pass, session 41: `--shard width --shard-grid 8x4`
// without --memory was refused for the DRAM banks alone).
std::optional<std::string> grid_refusal(const ShardRequest& shard, bool dram, bool memory_typed,
                                        const topo::Topology& topology) {
  const runtime::CoreCoord corner = furthest_corner(shard);
  const runtime::CoreCoord grid = runtime::common_worker_grid(topology);
  if (dram) {
    // As the device's allocator: every chip's banks are the first chip's (collective.cpp checks).
    const std::uint32_t banks = runtime::chip_core_map(topology, topology.chips().front().id).dram_bank_count();
    if (corner.x < banks && corner.y == 0) return std::nullopt;
    const bool fits_l1 = corner.x < grid.x && corner.y < grid.y;
    return fmt::format("'{}' reaches ({},{}), past the chips' {} DRAM banks (a DRAM shard grid is banks x 1, bank x "
                       "at (x,0)); expected a grid within {}x1{}",
                       shard.grid_text(), corner.x, corner.y, banks, banks,
                       !memory_typed && fits_l1 ? ", or --memory l1 for a grid of worker cores (the default is dram)"
                                                : "");
  }
  if (corner.x < grid.x && corner.y < grid.y) return std::nullopt;
  return fmt::format("'{}' reaches core ({},{}), outside the chips' {}x{} worker grid; expected a grid within {}x{}",
                     shard.grid_text(), corner.x, corner.y, grid.x, grid.y, grid.x, grid.y);
}

}  // namespace

std::optional<std::string> shard_grid_past_chips(const RunOptions& options, const topo::Topology& topology) {
  const bool dram = options.memory != "l1";
  if (options.shard) {
    if (auto refusal = grid_refusal(*options.shard, dram, options.memory_given, topology)) {
      return fmt::format("--shard-grid: {}", *refusal);
    }
  }
  if (options.output_memory && options.output_memory->shard) {
    // The input's grid fits (above): an output grid past the chips was --out-shard-grid's.
    if (auto refusal = grid_refusal(*options.output_memory->shard, dram, options.memory_given, topology)) {
      return fmt::format("--out-shard-grid: {}", *refusal);
    }
  }
  return std::nullopt;
}

}  // namespace cclmesh::cli::detail
