#pragma once
// Placing chips on a logical mesh. tt-umd descriptors of Blackhole systems carry no chip
// coordinates, and a user may want to view a machine as a different shape (a T3K as 1x8), so
// the mesh a topology forms is found from its graph by a bounded backtracking search.

#include <optional>
#include <unordered_map>

#include "topologies/mesh_shape.hpp"
#include "topologies/topology.hpp"

namespace cclmesh::topo {

// A placement of every chip on `shape` such that chips at neighbouring mesh positions (wrap
// included where the shape wraps) are neighbours in the topology. With `exact`, the topology
// has no other neighbour edges. nullopt when there is none, or when the search gives up (it is
// bounded, so that a large irregular graph cannot stall a load). Deterministic: position
// (0, 0) tries the least connected chips first, every other position the smallest fitting id.
std::optional<std::unordered_map<ChipId, MeshCoord>> find_mesh_placement(const Topology& topology,
                                                                         const MeshShape& shape,
                                                                         bool exact);

// The topology with `shape` and coordinates from find_mesh_placement (not exact: extra links
// are allowed). Throws EmbeddingError when the chips do not form that shape.
Topology with_mesh_shape(const Topology& topology, const MeshShape& shape);

// The 2D shape the chips form exactly, trying R x C with R <= C from the squarest down to
// 1 x N, and for each a mesh before a torus; nullopt when none fits.
std::optional<MeshShape> infer_mesh_shape(const Topology& topology);

// The topology with an inferred shape and coordinates, or unchanged when none fits.
Topology with_inferred_mesh_shape(const Topology& topology);

}  // namespace cclmesh::topo
