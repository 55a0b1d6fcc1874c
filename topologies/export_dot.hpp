#pragma once
// Graphviz export: one node per chip (labelled with id, arch, board, MMIO), one edge per
// neighbour edge, its label and pen width showing the number of links. Chips with a mesh
// coordinate get a pinned position (pos="x,y!"), so `neato -n` draws the mesh as laid out.

#include <string>

#include "topologies/topology.hpp"

namespace cclmesh::topo {

std::string to_dot(const Topology& topology);

}  // namespace cclmesh::topo
