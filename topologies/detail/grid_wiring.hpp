#pragma once
// Deterministic wiring of a mesh or torus: the rule shared by the parametric systems and the
// built-in Galaxies, so that `galaxy` and `mesh:4x8/4` carry the same channels.
//
// Each neighbour direction owns a block of L consecutive channels, in compass order N (-row),
// E (+col), S (+row), W (-col), U (-depth), D (+depth), skipping the directions of dimensions
// of extent 1. A 4x8 mesh with L = 4 thus uses N 0-3, E 4-7, S 8-11, W 12-15, the channel
// groups of ttsim's wh_x32 table (REFERENCE 3.4). Link k of an edge pairs the k-th channel of
// one chip's block with the k-th channel of the facing block on the other chip.

#include <cstdint>
#include <vector>

#include "topologies/arch.hpp"
#include "topologies/chip.hpp"
#include "topologies/link.hpp"
#include "topologies/mesh_shape.hpp"

namespace cclmesh::topo::detail {

// Number of channel blocks the shape needs (directions with a neighbour dimension).
std::int32_t grid_direction_count(const MeshShape& shape);

// The most links per neighbour the arch's channels allow on this shape.
std::int32_t grid_max_links_per_neighbour(const MeshShape& shape, Arch arch);

// Links of the mesh/torus. chip_at_index[i] is the chip at linear index i of the shape.
// Throws InputError when L links per neighbour do not fit in the arch's channels.
std::vector<EthLink> wire_grid(const MeshShape& shape, const std::vector<ChipId>& chip_at_index,
                               Arch arch, std::int32_t links_per_neighbour);

// The channel a chip uses for link k towards direction `dim`, `positive`.
std::int32_t grid_channel(const MeshShape& shape, int dim, bool positive, std::int32_t k,
                          std::int32_t links_per_neighbour);

}  // namespace cclmesh::topo::detail
