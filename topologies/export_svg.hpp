#pragma once
// A self-contained SVG picture of a topology: chips at their mesh positions (depth layers side
// by side; chips off the mesh, such as TG's gateways, in a row above the chips they link to;
// a circle when there is no mesh), one line per neighbour edge whose width and label give the
// number of links, wraparound edges drawn as arcs, MMIO chips with a heavier border.

#include <map>
#include <string>
#include <utility>

#include "topologies/topology.hpp"

namespace cclmesh::topo {

std::string to_svg(const Topology& topology);

// One direction of a neighbour edge, for drawings of what ran on it (cclmesh run --report).
struct EdgeLane {
  std::string colour;   // an SVG colour, e.g. "#d73027"
  std::string label;    // short text beside the lane, e.g. "63%"
  std::string tooltip;  // the lane's <title>
};
struct EdgeLanes {
  EdgeLane a_to_b;  // a < b as in NeighbourEdge
  EdgeLane b_to_a;
};
using EdgeLaneMap = std::map<std::pair<ChipId, ChipId>, EdgeLanes>;

// The same picture, with every edge found in `lanes` (key {a, b}, a < b) drawn as two lanes
// side by side, one per direction, each on the right-hand side of its direction of travel.
std::string to_svg(const Topology& topology, const EdgeLaneMap& lanes);

}  // namespace cclmesh::topo
