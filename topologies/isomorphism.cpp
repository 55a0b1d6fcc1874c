#include "topologies/isomorphism.hpp"

#include <boost/graph/vf2_sub_graph_iso.hpp>

#include "topologies/topology_graph.hpp"

namespace cclmesh::topo {
namespace {

using Graph = Topology::Graph::Adjacency;
using Vertex = boost::graph_traits<Graph>::vertex_descriptor;
using Edge = boost::graph_traits<Graph>::edge_descriptor;

struct SameMultiplicity {
  const Topology* a;
  const Topology* b;
  bool operator()(const Edge& ea, const Edge& eb) const {
    const auto index_a = boost::get(boost::edge_index, a->graph().adjacency, ea);
    const auto index_b = boost::get(boost::edge_index, b->graph().adjacency, eb);
    return a->edges()[index_a].multiplicity() == b->edges()[index_b].multiplicity();
  }
};

struct SameArch {
  const Topology* a;
  const Topology* b;
  bool operator()(Vertex va, Vertex vb) const { return a->chips()[va].arch == b->chips()[vb].arch; }
};

// Keeps the first mapping VF2 finds and stops the search.
struct FirstMapping {
  const Topology* a;
  const Topology* b;
  std::unordered_map<ChipId, ChipId>* mapping;
  template <typename MapAToB, typename MapBToA>
  bool operator()(MapAToB a_to_b, MapBToA /*b_to_a*/) const {
    for (std::size_t v = 0; v < a->chip_count(); ++v) {
      (*mapping)[a->chips()[v].id] = b->chips()[boost::get(a_to_b, v)].id;
    }
    return false;
  }
};

}  // namespace

std::optional<std::unordered_map<ChipId, ChipId>> find_isomorphism(const Topology& a,
                                                                   const Topology& b) {
  if (a.chip_count() != b.chip_count() || a.edges().size() != b.edges().size() ||
      a.links().size() != b.links().size()) {
    return std::nullopt;
  }
  std::unordered_map<ChipId, ChipId> mapping;
  if (a.chip_count() == 0) return mapping;
  const bool found = boost::vf2_graph_iso(
      a.graph().adjacency, b.graph().adjacency, FirstMapping{&a, &b, &mapping},
      boost::get(boost::vertex_index, a.graph().adjacency), boost::get(boost::vertex_index, b.graph().adjacency),
      boost::vertex_order_by_mult(a.graph().adjacency), SameMultiplicity{&a, &b}, SameArch{&a, &b});
  if (!found) return std::nullopt;
  return mapping;
}

bool is_isomorphic(const Topology& a, const Topology& b) {
  return find_isomorphism(a, b).has_value();
}

}  // namespace cclmesh::topo
