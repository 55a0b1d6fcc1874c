#include "topologies/detail/mesh_walks.hpp"

#include <algorithm>
#include <array>
#include <utility>

namespace cclmesh::topo::detail {
namespace {

using Cell = std::pair<std::int32_t, std::int32_t>;  // (row, col)

// Hamiltonian cycle of an R x C grid with optional wraps, as cells; nullopt if the rules give
// none.
std::optional<std::vector<Cell>> grid_cycle(std::int32_t rows, std::int32_t cols, bool wrap_rows,
                                            bool wrap_cols) {
  const auto transpose = [](std::vector<Cell> cells) {
    for (auto& [r, c] : cells) std::swap(r, c);
    return cells;
  };
  if (rows == 1 || cols == 1) {
    const std::int32_t n = std::max(rows, cols);
    const bool wraps = rows == 1 ? wrap_cols : wrap_rows;
    if (n < 3 || !wraps) return std::nullopt;
    std::vector<Cell> cells;
    for (std::int32_t i = 0; i < n; ++i) cells.push_back(rows == 1 ? Cell{0, i} : Cell{i, 0});
    return cells;
  }
  if (rows % 2 == 0) {
    std::vector<Cell> cells;
    for (std::int32_t c = 0; c < cols; ++c) cells.emplace_back(0, c);
    for (std::int32_t r = 1; r < rows; ++r) {
      if (r % 2 == 1) {
        for (std::int32_t c = cols - 1; c >= 1; --c) cells.emplace_back(r, c);
      } else {
        for (std::int32_t c = 1; c < cols; ++c) cells.emplace_back(r, c);
      }
    }
    for (std::int32_t r = rows - 1; r >= 1; --r) cells.emplace_back(r, 0);
    return cells;
  }
  if (cols % 2 == 0) {
    auto cells = grid_cycle(cols, rows, wrap_cols, wrap_rows);
    if (!cells) return std::nullopt;
    return transpose(std::move(*cells));
  }
  if (wrap_cols) {
    std::vector<Cell> cells;
    for (std::int32_t r = 0; r < rows; ++r) cells.emplace_back(r, 0);
    for (std::int32_t k = 0; k < rows; ++k) {
      const std::int32_t r = rows - 1 - k;
      if (k % 2 == 0) {
        for (std::int32_t c = 1; c < cols; ++c) cells.emplace_back(r, c);
      } else {
        for (std::int32_t c = cols - 1; c >= 1; --c) cells.emplace_back(r, c);
      }
    }
    return cells;  // ends at (0, cols-1), which wraps to (0, 0)
  }
  if (wrap_rows) {
    auto cells = grid_cycle(cols, rows, wrap_cols, wrap_rows);
    if (!cells) return std::nullopt;
    return transpose(std::move(*cells));
  }
  return std::nullopt;
}

MeshCoord coord2(const Cell& cell) { return MeshCoord{cell.first, cell.second, 0}; }

}  // namespace

std::vector<MeshCoord> mesh_snake(const MeshShape& shape) {
  const auto rows = shape.extent(0);
  const auto cols = shape.extent(1);
  const auto depth = shape.extent(2);
  std::vector<MeshCoord> layer;
  for (std::int32_t r = 0; r < rows; ++r) {
    for (std::int32_t i = 0; i < cols; ++i) {
      layer.push_back(MeshCoord{r, r % 2 == 0 ? i : cols - 1 - i, 0});
    }
  }
  std::vector<MeshCoord> result;
  result.reserve(layer.size() * static_cast<std::size_t>(depth));
  for (std::int32_t d = 0; d < depth; ++d) {
    for (std::size_t i = 0; i < layer.size(); ++i) {
      MeshCoord c = d % 2 == 0 ? layer[i] : layer[layer.size() - 1 - i];
      c[2] = d;
      result.push_back(c);
    }
  }
  return result;
}

std::optional<std::vector<MeshCoord>> mesh_cycle(const MeshShape& shape) {
  if (shape.chip_count() < 3) return std::nullopt;
  if (shape.extent(2) == 1) {
    const auto cells = grid_cycle(shape.extent(0), shape.extent(1), shape.wraps(0), shape.wraps(1));
    if (!cells) return std::nullopt;
    std::vector<MeshCoord> result;
    for (const auto& cell : *cells) result.push_back(coord2(cell));
    return result;
  }
  // 3D: pick two dimensions as the layer, whose ring becomes one cyclic dimension.
  constexpr std::array<std::array<int, 3>, 3> kSplits{{{0, 1, 2}, {1, 2, 0}, {0, 2, 1}}};
  for (const auto& [a, b, outer] : kSplits) {
    const auto layer = grid_cycle(shape.extent(a), shape.extent(b), shape.wraps(a), shape.wraps(b));
    if (!layer) continue;
    const auto n = static_cast<std::int32_t>(layer->size());
    const auto combined = grid_cycle(shape.extent(outer), n, shape.wraps(outer), true);
    if (!combined) continue;
    std::vector<MeshCoord> result;
    for (const auto& [i, j] : *combined) {
      MeshCoord c{0, 0, 0};
      c[static_cast<std::size_t>(a)] = (*layer)[static_cast<std::size_t>(j)].first;
      c[static_cast<std::size_t>(b)] = (*layer)[static_cast<std::size_t>(j)].second;
      c[static_cast<std::size_t>(outer)] = i;
      result.push_back(c);
    }
    return result;
  }
  return std::nullopt;
}

}  // namespace cclmesh::topo::detail
