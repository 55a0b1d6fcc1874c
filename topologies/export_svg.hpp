#pragma once
// A self-contained SVG picture of a topology: chips at their mesh positions (depth layers side
// by side; chips off the mesh, such as TG's gateways, in a row above the chips they link to;
// a circle when there is no mesh), one line per neighbour edge whose width and label give the
// number of links, wraparound edges drawn as arcs, MMIO chips with a heavier border.

#include <string>

#include "topologies/topology.hpp"

namespace cclmesh::topo {

std::string to_svg(const Topology& topology);

}  // namespace cclmesh::topo
