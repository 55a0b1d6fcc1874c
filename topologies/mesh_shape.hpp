#pragma once
// The logical mesh a topology's chips are laid out on: 1 to 3 dimensions (rows, cols[, depth]),
// each with or without wraparound links. Dimension 0 is rows, as in TTNN's MeshShape(rows, cols),
// so cluster_axis 0 groups the chips of one column and cluster_axis 1 those of one row.

#include <array>
#include <cstdint>
#include <span>
#include <string>

namespace cclmesh::topo {

inline constexpr int kMaxMeshRank = 3;

// Unused trailing dimensions are 0.
using MeshCoord = std::array<std::int32_t, kMaxMeshRank>;

class MeshShape {
 public:
  MeshShape() = default;  // 1x1, no wraparound

  // Throws InputError for a rank outside 1..3, an extent < 1, a size mismatch between extents
  // and wraps, or more than kMaxMeshChips chips. A wrap on a dimension of extent <= 2 is
  // dropped: the wraparound link would join the same two chips as the plain one.
  explicit MeshShape(std::span<const std::int32_t> extents, std::span<const bool> wraps = {});

  static MeshShape mesh(std::int32_t rows, std::int32_t cols);
  static MeshShape torus(std::int32_t rows, std::int32_t cols);

  int rank() const { return rank_; }
  std::int32_t extent(int dim) const;
  bool wraps(int dim) const;
  std::int64_t chip_count() const;

  bool contains(const MeshCoord& coord) const;
  // Row-major position of coord; throws InternalError when coord is outside the shape.
  std::int64_t linear_index(const MeshCoord& coord) const;
  MeshCoord coord_at(std::int64_t linear_index) const;

  // "2x4", "8x8 torus", "4x8 (wraps: cols)".
  std::string to_string() const;

  bool operator==(const MeshShape&) const = default;

  // Large enough for what-if studies, small enough that a typo cannot exhaust memory.
  static constexpr std::int64_t kMaxMeshChips = 1 << 20;

 private:
  int rank_ = 2;
  std::array<std::int32_t, kMaxMeshRank> extents_{1, 1, 1};
  std::array<bool, kMaxMeshRank> wraps_{false, false, false};
};

// "(0, 1)" or "(0, 1, 2)" for a shape of the given rank.
std::string mesh_coord_to_string(const MeshCoord& coord, int rank);

}  // namespace cclmesh::topo
