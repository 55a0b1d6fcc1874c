#include "topologies/mesh_inference.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <boost/graph/connected_components.hpp>
#include <cmath>
#include <vector>

#include "topologies/errors.hpp"
#include "topologies/topology_graph.hpp"

namespace cclmesh::topo {
namespace {

// Enough for every real machine and for regular meshes of thousands of chips, whose placement
// needs about one step per chip; irregular graphs that would need more are not meshes anyway.
constexpr std::int64_t kPlacementStepBudget = 2'000'000;
constexpr std::size_t kMaxChipsToInfer = 1024;

std::vector<std::int64_t> grid_neighbours(const MeshShape& shape, std::int64_t position) {
  std::vector<std::int64_t> result;
  const MeshCoord here = shape.coord_at(position);
  for (int dim = 0; dim < shape.rank(); ++dim) {
    const auto extent = shape.extent(dim);
    for (const int step : {-1, 1}) {
      MeshCoord there = here;
      auto& c = there[static_cast<std::size_t>(dim)];
      c += step;
      if (c < 0 || c >= extent) {
        if (!shape.wraps(dim)) continue;
        c = (c + extent) % extent;
      }
      const auto index = shape.linear_index(there);
      if (index != position && std::find(result.begin(), result.end(), index) == result.end()) {
        result.push_back(index);
      }
    }
  }
  return result;
}

class PlacementSearch {
 public:
  PlacementSearch(const Topology& topology, const MeshShape& shape, bool exact)
      : topology_(topology), shape_(shape), exact_(exact) {}

  std::optional<std::vector<std::size_t>> run() {
    const auto positions = static_cast<std::size_t>(shape_.chip_count());
    if (positions != topology_.chip_count()) return std::nullopt;
    back_neighbours_.resize(positions);
    grid_degree_.resize(positions);
    std::size_t grid_edges = 0;
    for (std::size_t p = 0; p < positions; ++p) {
      const auto all = grid_neighbours(shape_, static_cast<std::int64_t>(p));
      grid_degree_[p] = all.size();
      grid_edges += all.size();
      for (const auto q : all) {
        if (static_cast<std::size_t>(q) < p)
          back_neighbours_[p].push_back(static_cast<std::size_t>(q));
      }
    }
    if (exact_ && grid_edges / 2 != topology_.edges().size()) return std::nullopt;

    placed_.assign(positions, kNone);
    position_of_.assign(positions, kNone);
    std::vector<std::vector<std::size_t>> candidates(positions);
    std::vector<std::size_t> next(positions, 0);
    std::size_t depth = 0;
    candidates[0] = candidates_for(0);
    std::int64_t steps = 0;
    while (true) {
      if (++steps > kPlacementStepBudget) return std::nullopt;
      if (next[depth] >= candidates[depth].size()) {
        unplace(depth);
        if (depth == 0) return std::nullopt;
        --depth;
        continue;
      }
      place(depth, candidates[depth][next[depth]++]);
      if (depth + 1 == positions) return placed_;
      ++depth;
      candidates[depth] = candidates_for(depth);
      next[depth] = 0;
    }
  }

 private:
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);

  bool adjacent(std::size_t u, std::size_t v) const {
    return topology_.edge_between(topology_.chips()[u].id, topology_.chips()[v].id).has_value();
  }

  std::size_t degree(std::size_t v) const { return boost::degree(v, topology_.graph().adjacency); }

  bool fits(std::size_t position, std::size_t vertex) const {
    if (position_of_[vertex] != kNone) return false;
    if (exact_ && degree(vertex) != grid_degree_[position]) return false;
    for (const auto q : back_neighbours_[position]) {
      if (!adjacent(placed_[q], vertex)) return false;
    }
    if (!exact_) return true;
    // Exact: every placed neighbour must be one of its grid neighbours.
    for (auto [it, end] = boost::adjacent_vertices(vertex, topology_.graph().adjacency); it != end; ++it) {
      const auto at = position_of_[*it];
      if (at == kNone) continue;
      const auto& back = back_neighbours_[position];
      if (std::find(back.begin(), back.end(), at) == back.end()) return false;
    }
    return true;
  }

  std::vector<std::size_t> candidates_for(std::size_t position) const {
    std::vector<std::size_t> pool;
    if (back_neighbours_[position].empty()) {
      // Least connected first: corners and line ends, where a mesh walk starts.
      pool.resize(topology_.chip_count());
      for (std::size_t v = 0; v < pool.size(); ++v) pool[v] = v;
      std::stable_sort(pool.begin(), pool.end(),
                       [this](std::size_t a, std::size_t b) { return degree(a) < degree(b); });
    } else {
      const auto anchor = placed_[back_neighbours_[position].front()];
      for (auto [it, end] = boost::adjacent_vertices(anchor, topology_.graph().adjacency); it != end; ++it) {
        pool.push_back(*it);
      }
      std::sort(pool.begin(), pool.end());  // vertices are in chip-id order
    }
    std::vector<std::size_t> result;
    for (const auto v : pool) {
      if (fits(position, v)) result.push_back(v);
    }
    return result;
  }

  void place(std::size_t position, std::size_t vertex) {
    if (placed_[position] != kNone) unplace(position);
    placed_[position] = vertex;
    position_of_[vertex] = position;
  }

  void unplace(std::size_t position) {
    if (placed_[position] == kNone) return;
    position_of_[placed_[position]] = kNone;
    placed_[position] = kNone;
  }

  const Topology& topology_;
  const MeshShape& shape_;
  bool exact_;
  std::vector<std::vector<std::size_t>> back_neighbours_;
  std::vector<std::size_t> grid_degree_;
  std::vector<std::size_t> placed_;       // position -> vertex
  std::vector<std::size_t> position_of_;  // vertex -> position
};

bool connected(const Topology& topology) {
  if (topology.chip_count() <= 1) return true;
  std::vector<int> component(topology.chip_count());
  return boost::connected_components(topology.graph().adjacency, component.data()) == 1;
}

}  // namespace

std::optional<std::unordered_map<ChipId, MeshCoord>> find_mesh_placement(const Topology& topology,
                                                                         const MeshShape& shape,
                                                                         bool exact) {
  if (topology.chip_count() == 0 || !connected(topology)) return std::nullopt;
  const auto placed = PlacementSearch(topology, shape, exact).run();
  if (!placed) return std::nullopt;
  std::unordered_map<ChipId, MeshCoord> coords;
  for (std::size_t p = 0; p < placed->size(); ++p) {
    coords.emplace(topology.chips()[(*placed)[p]].id, shape.coord_at(static_cast<std::int64_t>(p)));
  }
  return coords;
}

Topology with_mesh_shape(const Topology& topology, const MeshShape& shape) {
  const auto coords = find_mesh_placement(topology, shape, false);
  if (!coords) {
    throw EmbeddingError(fmt::format(
        "topology '{}': its {} chips do not form a {} mesh; expected {} chips whose links join "
        "every pair of mesh neighbours",
        topology.name(), topology.chip_count(), shape.to_string(), shape.chip_count()));
  }
  std::vector<Chip> chips(topology.chips().begin(), topology.chips().end());
  for (Chip& chip : chips) chip.mesh_coord = coords->at(chip.id);
  return Topology(topology.name(), std::move(chips),
                  std::vector<EthLink>(topology.links().begin(), topology.links().end()), shape);
}

std::optional<MeshShape> infer_mesh_shape(const Topology& topology) {
  const auto n = topology.chip_count();
  if (n == 0 || n > kMaxChipsToInfer) return std::nullopt;
  const auto squarest = static_cast<std::int32_t>(std::sqrt(static_cast<double>(n)));
  for (std::int32_t rows = squarest; rows >= 1; --rows) {
    if (n % static_cast<std::size_t>(rows) != 0) continue;
    const auto cols = static_cast<std::int32_t>(n / static_cast<std::size_t>(rows));
    const std::array<std::int32_t, 2> extents{rows, cols};
    for (const auto& wraps : {std::array<bool, 2>{false, false}, std::array<bool, 2>{false, true},
                              std::array<bool, 2>{true, false}, std::array<bool, 2>{true, true}}) {
      if ((wraps[0] && rows <= 2) || (wraps[1] && cols <= 2)) continue;
      const MeshShape shape(extents, wraps);
      if (find_mesh_placement(topology, shape, true)) return shape;
    }
  }
  return std::nullopt;
}

Topology with_inferred_mesh_shape(const Topology& topology) {
  const auto shape = infer_mesh_shape(topology);
  if (!shape) return topology;
  const auto coords = find_mesh_placement(topology, *shape, true);
  CCLMESH_TOPO_CHECK(coords.has_value(), "an inferred shape has a placement");
  std::vector<Chip> chips(topology.chips().begin(), topology.chips().end());
  for (Chip& chip : chips) chip.mesh_coord = coords->at(chip.id);
  return Topology(topology.name(), std::move(chips),
                  std::vector<EthLink>(topology.links().begin(), topology.links().end()), *shape);
}

}  // namespace cclmesh::topo
