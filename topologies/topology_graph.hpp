#pragma once
// A Topology's chips and neighbour edges as a boost graph, for the graph algorithms (routing,
// embedding, isomorphism, DOT export). Apart from topology.hpp because boost/graph costs about
// a second of compile time in every object that includes it, and topology.hpp is in ~200 of
// them while only those few algorithms walk the graph (docs/performance.md, "Build time").

#include <boost/graph/adjacency_list.hpp>
#include <cstddef>

#include "topologies/topology.hpp"

namespace cclmesh::topo {

struct Topology::Graph {
  // Vertex i is chips()[i]; the edge property is the index into edges(). One graph edge per
  // neighbour edge, whatever its multiplicity. Each vertex lists its neighbours in ascending
  // chip id (edges are added in sorted order), which makes graph searches deterministic.
  using Adjacency =
      boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, boost::no_property,
                            boost::property<boost::edge_index_t, std::size_t>>;
  Adjacency adjacency;
};

}  // namespace cclmesh::topo
