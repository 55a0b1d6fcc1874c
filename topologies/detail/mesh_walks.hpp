#pragma once
// Lines and rings through every position of a mesh or torus, constructed rather than searched,
// so that they cost O(chips) on systems of thousands of chips.
//
// Line: the boustrophedon snake (row 0 left to right, row 1 right to left, ...; in 3D the
// layers alternate direction). On a 2-row mesh it is the ring minus its closing edge.
// Ring, on R x C:
//   - R even: along row 0, snake back through columns 1..C-1 of rows 1..R-1, return up
//     column 0. On the T3K's 2x4 this is its perimeter 4-0-2-6-7-3-1-5 (REFERENCE 3.3).
//   - C even: the same, transposed.
//   - R, C both odd: a plain grid has no ring (it is bipartite with an odd number of chips);
//     with wraparound columns: down column 0, snake through columns 1..C-1 from the bottom row
//     up, close across the wrap of row 0. Transposed for wraparound rows.
//   - 1 x N: a ring only with wraparound and N >= 3.
// In 3D, a ring of one layer (two dimensions) is treated as one cyclic dimension and combined
// with the third by the 2D rule.

#include <optional>
#include <vector>

#include "topologies/mesh_shape.hpp"

namespace cclmesh::topo::detail {

std::vector<MeshCoord> mesh_snake(const MeshShape& shape);

// nullopt when the rules above give no ring.
std::optional<std::vector<MeshCoord>> mesh_cycle(const MeshShape& shape);

}  // namespace cclmesh::topo::detail
