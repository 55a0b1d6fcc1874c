#pragma once
// "Is this the same machine?": two topologies are isomorphic when a bijection between their
// chips maps neighbour edges onto neighbour edges with the same number of links and chips onto
// chips of the same architecture. Channels, rates, boards and names are ignored: the tt-umd T3K
// descriptor and the built-in t3k are the same 2x4 mesh whatever their channel numbering.

#include <optional>
#include <unordered_map>

#include "topologies/topology.hpp"

namespace cclmesh::topo {

// The chip of b matched to each chip of a, or nullopt when there is none. Uses Boost's VF2.
std::optional<std::unordered_map<ChipId, ChipId>> find_isomorphism(const Topology& a,
                                                                   const Topology& b);

bool is_isomorphic(const Topology& a, const Topology& b);

}  // namespace cclmesh::topo
