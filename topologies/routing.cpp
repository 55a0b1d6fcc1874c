#include "topologies/routing.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/connected_components.hpp>
#include <limits>

#include "topologies/errors.hpp"
#include "topologies/topology_graph.hpp"

namespace cclmesh::topo {
namespace {

// Records hop counts and BFS-tree parents.
class DistanceRecorder : public boost::default_bfs_visitor {
 public:
  DistanceRecorder(std::vector<std::int32_t>* distance, std::vector<std::size_t>* parents)
      : distance_(distance), parents_(parents) {}
  template <typename Edge, typename Graph>
  void tree_edge(const Edge& e, const Graph& g) const {
    const auto from = boost::source(e, g);
    const auto to = boost::target(e, g);
    (*distance_)[to] = (*distance_)[from] + 1;
    if (parents_ != nullptr) (*parents_)[to] = from;
  }

 private:
  std::vector<std::int32_t>* distance_;
  std::vector<std::size_t>* parents_;
};

// Boost's BFS over chip indices. Topology's graph lists neighbours in ascending chip id, so
// among equally short paths the one through lower ids is found: deterministic.
std::vector<std::int32_t> bfs(const Topology& topology, std::size_t source,
                              std::vector<std::size_t>* parents) {
  const auto n = topology.chip_count();
  std::vector<std::int32_t> distance(n, -1);
  if (parents != nullptr) parents->assign(n, std::numeric_limits<std::size_t>::max());
  distance[source] = 0;
  std::vector<boost::default_color_type> colors(n);
  boost::breadth_first_search(
      topology.graph().adjacency, source,
      boost::visitor(DistanceRecorder(&distance, parents))
          .color_map(boost::make_iterator_property_map(
              colors.begin(), boost::get(boost::vertex_index, topology.graph().adjacency))));
  return distance;
}

std::vector<RouteHop> hops_along(const std::vector<ChipId>& chips, std::int32_t plane) {
  std::vector<RouteHop> hops;
  for (std::size_t i = 0; i + 1 < chips.size(); ++i) {
    hops.push_back(RouteHop{chips[i], chips[i + 1], plane, 0});
  }
  return hops;
}

// Hops between grid neighbours along one dimension (the short way round where it wraps).
bool grid_neighbours(const MeshShape& shape, const MeshCoord& a, const MeshCoord& b) {
  int differing = 0;
  for (int dim = 0; dim < shape.rank(); ++dim) {
    const auto d = static_cast<std::size_t>(dim);
    if (a[d] == b[d]) continue;
    ++differing;
    const std::int32_t step = std::abs(a[d] - b[d]);
    if (step != 1 && !(shape.wraps(dim) && step == shape.extent(dim) - 1)) return false;
  }
  return differing == 1;
}

// The diameter of a whole mesh or torus, when the topology is exactly one (every position a
// chip, its neighbour edges exactly the grid's): the sum over dimensions of the farthest hop
// count along it. Otherwise (a fault removed an edge, a gateway, no shape) nullopt, and the
// caller runs a BFS from every chip, which is quadratic: 2.5 s for torus:128x128's `topo`.
std::optional<std::int32_t> whole_grid_diameter(const Topology& topology) {
  const auto& shape = topology.mesh_shape();
  if (!shape || static_cast<std::int64_t>(topology.chip_count()) != shape->chip_count()) return std::nullopt;
  for (const Chip& chip : topology.chips()) {
    if (!chip.mesh_coord) return std::nullopt;
  }
  std::int64_t grid_edges = 0;
  std::int32_t farthest = 0;
  for (int dim = 0; dim < shape->rank(); ++dim) {
    const std::int64_t extent = shape->extent(dim);
    const std::int64_t lines = shape->chip_count() / extent;
    grid_edges += lines * (shape->wraps(dim) ? extent : extent - 1);
    farthest += static_cast<std::int32_t>(shape->wraps(dim) ? extent / 2 : extent - 1);
  }
  if (static_cast<std::int64_t>(topology.edges().size()) != grid_edges) return std::nullopt;
  for (const NeighbourEdge& edge : topology.edges()) {
    if (!grid_neighbours(*shape, *topology.chip(edge.a).mesh_coord, *topology.chip(edge.b).mesh_coord)) {
      return std::nullopt;
    }
  }
  return farthest;
}

}  // namespace

std::vector<std::int32_t> hop_distances(const Topology& topology, ChipId from) {
  return bfs(topology, topology.chip_index(from), nullptr);
}

std::optional<std::int32_t> diameter(const Topology& topology) {
  if (const auto grid = whole_grid_diameter(topology)) return grid;
  std::int32_t longest = 0;
  for (std::size_t v = 0; v < topology.chip_count(); ++v) {
    for (const auto d : bfs(topology, v, nullptr)) {
      if (d < 0) return std::nullopt;
      longest = std::max(longest, d);
    }
  }
  return longest;
}

std::vector<std::vector<ChipId>> connected_components(const Topology& topology) {
  std::vector<int> component(topology.chip_count());
  const auto count = topology.chip_count() == 0
                         ? 0
                         : boost::connected_components(topology.graph().adjacency, component.data());
  std::vector<std::vector<ChipId>> result(static_cast<std::size_t>(count));
  for (std::size_t v = 0; v < component.size(); ++v) {
    result[static_cast<std::size_t>(component[v])].push_back(topology.chips()[v].id);
  }
  std::sort(result.begin(), result.end());
  return result;
}

std::vector<ChipId> shortest_path(const Topology& topology, ChipId from, ChipId to) {
  const auto source = topology.chip_index(from);
  const auto target = topology.chip_index(to);
  std::vector<std::size_t> parents;
  const auto distance = bfs(topology, source, &parents);
  if (distance[target] < 0) {
    throw EmbeddingError(
        fmt::format("topology '{}': no path from chip {} to chip {}: they are "
                    "not connected",
                    topology.name(), from, to));
  }
  std::vector<ChipId> path;
  for (auto v = target; v != source; v = parents[v]) path.push_back(topology.chips()[v].id);
  path.push_back(from);
  std::reverse(path.begin(), path.end());
  return path;
}

Route shortest_route(const Topology& topology, ChipId from, ChipId to) {
  return Route{from, to, hops_along(shortest_path(topology, from, to), 0)};
}

Route dimension_order_route(const Topology& topology, ChipId from, ChipId to,
                            const DimensionOrderOptions& options) {
  const auto& shape = topology.mesh_shape();
  if (!shape) {
    throw InputError(
        fmt::format("topology '{}' has no mesh shape; dimension-order routing needs "
                    "one",
                    topology.name()));
  }
  const auto coord_of = [&](ChipId id) {
    const auto& coord = topology.chip(id).mesh_coord;
    if (!coord) {
      throw InputError(
          fmt::format("topology '{}': chip {} has no mesh coordinate; "
                      "dimension-order routing needs one",
                      topology.name(), id));
    }
    return *coord;
  };
  MeshCoord here = coord_of(from);
  const MeshCoord target = coord_of(to);
  Route route{from, to, {}};
  ChipId current = from;
  for (const int dim : options.order) {
    if (dim < 0 || dim >= kMaxMeshRank) {
      throw InputError(
          fmt::format("dimension order names dimension {}; expected 0..{}", dim, kMaxMeshRank - 1));
    }
    const auto d = static_cast<std::size_t>(dim);
    const auto extent = shape->extent(dim);
    std::int32_t delta = target[d] - here[d];
    if (shape->wraps(dim)) {
      // Shorter way round; a tie goes the positive way.
      if (delta > extent / 2) delta -= extent;
      if (delta < -extent / 2 || (extent % 2 == 0 && delta == -extent / 2)) delta += extent;
    }
    std::int32_t vc = 0;
    const std::int32_t step = delta > 0 ? 1 : -1;
    for (std::int32_t moved = 0; moved != delta; moved += step) {
      const std::int32_t next = here[d] + step;
      const bool wrapping = next < 0 || next >= extent;
      here[d] = (next + extent) % extent;
      const auto chip = topology.chip_at(here);
      if (!chip || topology.links_between(current, *chip) == 0) {
        throw EmbeddingError(fmt::format(
            "topology '{}': the dimension-order route {}->{} needs a link from chip {} to mesh "
            "position {}, which has {}",
            topology.name(), from, to, current, mesh_coord_to_string(here, shape->rank()),
            chip ? fmt::format("chip {} but no link to it", *chip) : std::string("no chip")));
      }
      if (wrapping && options.dateline_on_wrap) vc = 1;
      route.hops.push_back(RouteHop{current, *chip, options.plane, vc});
      current = *chip;
    }
  }
  CCLMESH_TOPO_CHECK(current == to,
                     fmt::format("dimension-order route {}->{} ends at {}", from, to, current));
  return route;
}

Route ring_route(const Embedding& ring, std::size_t from_position, std::size_t hop_count,
                 RingDirection direction, std::int32_t plane) {
  const std::size_t n = ring.chips.size();
  CCLMESH_TOPO_CHECK(
      ring.kind == EmbeddingKind::Ring && from_position < n,
      fmt::format("ring route from position {} of a {}-chip ring", from_position, n));
  Route route;
  route.source = ring.chips[from_position];
  std::size_t position = from_position;
  for (std::size_t h = 0; h < hop_count; ++h) {
    const std::size_t next =
        direction == RingDirection::Forward ? (position + 1) % n : (position + n - 1) % n;
    route.hops.push_back(RouteHop{ring.chips[position], ring.chips[next], plane, 0});
    position = next;
  }
  route.destination = ring.chips[position];
  return route;
}

std::vector<Route> ring_all_to_all_routes(const Embedding& ring, RingDirection direction,
                                          std::int32_t plane) {
  std::vector<Route> routes;
  for (std::size_t i = 0; i < ring.chips.size(); ++i) {
    routes.push_back(ring_route(ring, i, ring.chips.size() - 1, direction, plane));
  }
  return routes;
}

Route with_dateline(Route route, ChipId dateline_from, ChipId dateline_to) {
  bool crossed = false;
  for (RouteHop& hop : route.hops) {
    crossed = crossed || (hop.from == dateline_from && hop.to == dateline_to);
    if (crossed) hop.virtual_channel = 1;
  }
  return route;
}

std::vector<Route> with_dateline(std::vector<Route> routes, ChipId dateline_from,
                                 ChipId dateline_to) {
  for (Route& route : routes) route = with_dateline(std::move(route), dateline_from, dateline_to);
  return routes;
}

}  // namespace cclmesh::topo
