#include "topologies/mesh_shape.hpp"

#include <fmt/format.h>

#include "topologies/errors.hpp"

namespace cclmesh::topo {

MeshShape::MeshShape(std::span<const std::int32_t> extents, std::span<const bool> wraps) {
  if (extents.empty() || extents.size() > static_cast<std::size_t>(kMaxMeshRank)) {
    throw InputError(fmt::format("mesh shape: {} dimensions given; expected 1 to {}",
                                 extents.size(), kMaxMeshRank));
  }
  if (!wraps.empty() && wraps.size() != extents.size()) {
    throw InputError(
        fmt::format("mesh shape: {} wrap flags for {} dimensions; expected one per "
                    "dimension",
                    wraps.size(), extents.size()));
  }
  rank_ = static_cast<int>(extents.size());
  std::int64_t count = 1;
  for (int d = 0; d < rank_; ++d) {
    const std::int32_t extent = extents[static_cast<std::size_t>(d)];
    if (extent < 1) {
      throw InputError(
          fmt::format("mesh shape: dimension {} has extent {}; expected >= 1", d, extent));
    }
    count *= extent;
    if (count > kMaxMeshChips) {
      throw InputError(
          fmt::format("mesh shape: more than {} chips; expected at most that many", kMaxMeshChips));
    }
    extents_[static_cast<std::size_t>(d)] = extent;
    wraps_[static_cast<std::size_t>(d)] =
        !wraps.empty() && wraps[static_cast<std::size_t>(d)] && extent > 2;
  }
}

MeshShape MeshShape::mesh(std::int32_t rows, std::int32_t cols) {
  const std::array<std::int32_t, 2> extents{rows, cols};
  return MeshShape(extents);
}

MeshShape MeshShape::torus(std::int32_t rows, std::int32_t cols) {
  const std::array<std::int32_t, 2> extents{rows, cols};
  const std::array<bool, 2> wraps{true, true};
  return MeshShape(extents, wraps);
}

std::int32_t MeshShape::extent(int dim) const {
  CCLMESH_TOPO_CHECK(dim >= 0 && dim < kMaxMeshRank, fmt::format("dimension {}", dim));
  return dim < rank_ ? extents_[static_cast<std::size_t>(dim)] : 1;
}

bool MeshShape::wraps(int dim) const {
  CCLMESH_TOPO_CHECK(dim >= 0 && dim < kMaxMeshRank, fmt::format("dimension {}", dim));
  return dim < rank_ && wraps_[static_cast<std::size_t>(dim)];
}

std::int64_t MeshShape::chip_count() const {
  std::int64_t count = 1;
  for (int d = 0; d < rank_; ++d) count *= extents_[static_cast<std::size_t>(d)];
  return count;
}

bool MeshShape::contains(const MeshCoord& coord) const {
  for (int d = 0; d < kMaxMeshRank; ++d) {
    const auto c = coord[static_cast<std::size_t>(d)];
    if (c < 0 || c >= extent(d)) return false;
  }
  return true;
}

std::int64_t MeshShape::linear_index(const MeshCoord& coord) const {
  CCLMESH_TOPO_CHECK(contains(coord), fmt::format("coordinate {} outside {}",
                                                  mesh_coord_to_string(coord, rank_), to_string()));
  std::int64_t index = 0;
  for (int d = 0; d < rank_; ++d) index = index * extent(d) + coord[static_cast<std::size_t>(d)];
  return index;
}

MeshCoord MeshShape::coord_at(std::int64_t linear_index) const {
  CCLMESH_TOPO_CHECK(linear_index >= 0 && linear_index < chip_count(),
                     fmt::format("index {} outside {}", linear_index, to_string()));
  MeshCoord coord{0, 0, 0};
  for (int d = rank_ - 1; d >= 0; --d) {
    coord[static_cast<std::size_t>(d)] = static_cast<std::int32_t>(linear_index % extent(d));
    linear_index /= extent(d);
  }
  return coord;
}

std::string MeshShape::to_string() const {
  std::string text = std::to_string(extents_[0]);
  for (int d = 1; d < rank_; ++d) text += fmt::format("x{}", extents_[static_cast<std::size_t>(d)]);
  bool all_wrap = true;
  bool any_wrap = false;
  for (int d = 0; d < rank_; ++d) {
    all_wrap = all_wrap && wraps(d);
    any_wrap = any_wrap || wraps(d);
  }
  if (all_wrap) return text + " torus";
  if (!any_wrap) return text;
  static constexpr std::array<std::string_view, kMaxMeshRank> kDimNames{"rows", "cols", "depth"};
  std::string wrapped;
  for (int d = 0; d < rank_; ++d) {
    if (!wraps(d)) continue;
    if (!wrapped.empty()) wrapped += ", ";
    wrapped += kDimNames[static_cast<std::size_t>(d)];
  }
  return fmt::format("{} (wraps: {})", text, wrapped);
}

std::string mesh_coord_to_string(const MeshCoord& coord, int rank) {
  std::string text = "(" + std::to_string(coord[0]);
  for (int d = 1; d < rank; ++d) text += fmt::format(", {}", coord[static_cast<std::size_t>(d)]);
  return text + ")";
}

}  // namespace cclmesh::topo
