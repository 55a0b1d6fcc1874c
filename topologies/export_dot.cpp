#include "topologies/export_dot.hpp"

#include <fmt/format.h>

#include <boost/graph/graphviz.hpp>
#include <sstream>

#include "topologies/topology_graph.hpp"

namespace cclmesh::topo {
namespace {

using Graph = Topology::Graph::Adjacency;
using Vertex = boost::graph_traits<Graph>::vertex_descriptor;
using Edge = boost::graph_traits<Graph>::edge_descriptor;

constexpr double kInchesPerMeshStep = 1.5;

std::string short_arch(Arch arch) { return arch == Arch::Wormhole ? "WH" : "BH"; }

struct ChipWriter {
  const Topology* topology;
  void operator()(std::ostream& out, Vertex v) const {
    const Chip& chip = topology->chips()[v];
    std::string label =
        fmt::format("{}\\n{} {}", chip.id, short_arch(chip.arch), board_type_name(chip.board));
    if (chip.mmio()) label += "\\nMMIO";
    out << fmt::format("[label=\"{}\"", label);
    if (chip.mmio()) out << ", penwidth=2";
    if (chip.mesh_coord) {
      const auto& c = *chip.mesh_coord;
      const auto& shape = *topology->mesh_shape();
      // Depth layers side by side, one empty column apart.
      const double x = (c[1] + c[2] * (shape.extent(1) + 1)) * kInchesPerMeshStep;
      const double y = -c[0] * kInchesPerMeshStep;
      out << fmt::format(", pos=\"{:.2f},{:.2f}!\"", x * 72.0, y * 72.0);
    }
    out << "]";
  }
};

struct EdgeWriter {
  const Topology* topology;
  void operator()(std::ostream& out, const Edge& e) const {
    const auto index = boost::get(boost::edge_index, topology->graph().adjacency, e);
    const auto multiplicity = topology->edges()[index].multiplicity();
    out << fmt::format("[label=\"{}\", penwidth={}]", multiplicity, multiplicity);
  }
};

struct GraphWriter {
  const Topology* topology;
  void operator()(std::ostream& out) const {
    std::string escaped;
    for (const char c : topology->name()) {
      if (c == '"' || c == '\\') escaped += '\\';
      escaped += c;
    }
    out << fmt::format("label=\"{}\";\nnode [shape=box, style=rounded];\n", escaped);
  }
};

}  // namespace

std::string to_dot(const Topology& topology) {
  std::ostringstream out;
  std::vector<ChipId> ids = topology.chip_ids();
  boost::write_graphviz(out, topology.graph().adjacency, ChipWriter{&topology}, EdgeWriter{&topology},
                        GraphWriter{&topology},
                        boost::make_iterator_property_map(
                            ids.begin(), boost::get(boost::vertex_index, topology.graph().adjacency)));
  return out.str();
}

}  // namespace cclmesh::topo
