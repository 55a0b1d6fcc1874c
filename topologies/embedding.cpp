#include "topologies/embedding.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/graph/biconnected_components.hpp>
#include <iterator>
#include <optional>
#include <set>
#include <unordered_map>

#include "topologies/detail/hamiltonian.hpp"
#include "topologies/detail/mesh_walks.hpp"
#include "topologies/errors.hpp"
#include "topologies/topology_graph.hpp"

namespace cclmesh::topo {
namespace {

using detail::LocalAdjacency;
using detail::SearchOutcome;

// The search costs about 3n per step on small graphs, so the step budget shrinks with n to
// keep a failed search under about a second.
std::int64_t search_budget(std::size_t n) {
  constexpr std::int64_t kWork = 50'000'000;
  return std::clamp<std::int64_t>(kWork / static_cast<std::int64_t>(std::max<std::size_t>(n, 1)),
                                  10'000, detail::kDefaultHamiltonianBudget);
}

std::string_view kind_name(EmbeddingKind kind) {
  return kind == EmbeddingKind::Ring ? "ring" : "line";
}

// The chip set, sorted by id; local index i is ids[i].
struct ChipSet {
  std::vector<ChipId> ids;
  std::unordered_map<ChipId, std::size_t> local;
};

ChipSet make_chip_set(const Topology& topology, std::span<const ChipId> chips,
                      std::int32_t num_links) {
  if (num_links < 1) {
    throw InputError(fmt::format("topology '{}': {} links per hop requested; expected >= 1",
                                 topology.name(), num_links));
  }
  if (chips.empty()) {
    throw InputError(
        fmt::format("topology '{}': empty chip set; expected at least one chip", topology.name()));
  }
  ChipSet set;
  set.ids.assign(chips.begin(), chips.end());
  std::sort(set.ids.begin(), set.ids.end());
  for (std::size_t i = 0; i < set.ids.size(); ++i) {
    if (!topology.has_chip(set.ids[i])) {
      throw InputError(
          fmt::format("topology '{}': chip {} does not exist; expected one of its "
                      "chips",
                      topology.name(), set.ids[i]));
    }
    if (!set.local.emplace(set.ids[i], i).second) {
      throw InputError(
          fmt::format("topology '{}': chip {} is listed twice; expected each chip "
                      "once",
                      topology.name(), set.ids[i]));
    }
  }
  return set;
}

LocalAdjacency local_adjacency(const Topology& topology, const ChipSet& set,
                               std::int32_t min_links) {
  LocalAdjacency adjacency(set.ids.size());
  for (std::size_t i = 0; i < set.ids.size(); ++i) {
    const auto vertex = topology.chip_index(set.ids[i]);
    for (auto [it, end] = boost::adjacent_vertices(vertex, topology.graph().adjacency); it != end; ++it) {
      const ChipId peer = topology.chips()[*it].id;
      const auto found = set.local.find(peer);
      if (found == set.local.end()) continue;
      if (topology.links_between(set.ids[i], peer) < static_cast<std::size_t>(min_links)) continue;
      adjacency[i].push_back(found->second);
    }
    std::sort(adjacency[i].begin(), adjacency[i].end());
  }
  return adjacency;
}

bool hops_exist(const Topology& topology, const std::vector<ChipId>& order, EmbeddingKind kind,
                std::int32_t num_links) {
  const auto enough = [&](ChipId a, ChipId b) {
    return topology.links_between(a, b) >= static_cast<std::size_t>(num_links);
  };
  for (std::size_t i = 0; i + 1 < order.size(); ++i) {
    if (!enough(order[i], order[i + 1])) return false;
  }
  return kind == EmbeddingKind::Line || enough(order.back(), order.front());
}

// Lines and rings from mesh coordinates: the whole mesh, or chips along one dimension.
std::optional<std::vector<ChipId>> structured_order(const Topology& topology, const ChipSet& set,
                                                    EmbeddingKind kind) {
  const auto& shape = topology.mesh_shape();
  if (!shape) return std::nullopt;
  for (const ChipId id : set.ids) {
    if (!topology.chip(id).mesh_coord) return std::nullopt;
  }
  std::vector<ChipId> order;
  if (static_cast<std::int64_t>(set.ids.size()) == shape->chip_count()) {
    std::vector<MeshCoord> walk;
    if (kind == EmbeddingKind::Line) {
      walk = detail::mesh_snake(*shape);
    } else if (auto cycle = detail::mesh_cycle(*shape)) {
      walk = std::move(*cycle);
    } else {
      return std::nullopt;
    }
    for (const MeshCoord& c : walk) order.push_back(*topology.chip_at(c));
    return order;
  }
  const MeshCoord first = *topology.chip(set.ids.front()).mesh_coord;
  int varying = -1;
  for (const ChipId id : set.ids) {
    const MeshCoord c = *topology.chip(id).mesh_coord;
    for (int d = 0; d < kMaxMeshRank; ++d) {
      if (c[static_cast<std::size_t>(d)] == first[static_cast<std::size_t>(d)]) continue;
      if (varying != -1 && varying != d) return std::nullopt;
      varying = d;
    }
  }
  order = set.ids;
  if (varying >= 0) {
    std::sort(order.begin(), order.end(), [&](ChipId a, ChipId b) {
      return (*topology.chip(a).mesh_coord)[static_cast<std::size_t>(varying)] <
             (*topology.chip(b).mesh_coord)[static_cast<std::size_t>(varying)];
    });
  }
  return order;
}

std::vector<ChipId> to_chips(const ChipSet& set, const std::vector<std::size_t>& local_order) {
  std::vector<ChipId> order;
  for (const auto v : local_order) order.push_back(set.ids[v]);
  return order;
}

std::vector<std::vector<std::size_t>> components(const LocalAdjacency& adjacency) {
  std::vector<std::vector<std::size_t>> result;
  std::vector<char> seen(adjacency.size(), 0);
  for (std::size_t s = 0; s < adjacency.size(); ++s) {
    if (seen[s]) continue;
    std::vector<std::size_t> component;
    std::vector<std::size_t> stack{s};
    seen[s] = 1;
    while (!stack.empty()) {
      const auto v = stack.back();
      stack.pop_back();
      component.push_back(v);
      for (const auto w : adjacency[v]) {
        if (!seen[w]) {
          seen[w] = 1;
          stack.push_back(w);
        }
      }
    }
    std::sort(component.begin(), component.end());
    result.push_back(std::move(component));
  }
  return result;
}

// A ring enters and leaves every chip once, so it cannot pass a chip whose removal splits the
// others (an articulation point): it would have to go through it twice.
std::optional<std::string> articulation_reason(const LocalAdjacency& adjacency,
                                               const ChipSet& set) {
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS>;
  Graph graph(adjacency.size());
  for (std::size_t v = 0; v < adjacency.size(); ++v) {
    for (const auto w : adjacency[v]) {
      if (v < w) boost::add_edge(v, w, graph);
    }
  }
  std::vector<std::size_t> points;
  boost::articulation_points(graph, std::back_inserter(points));
  if (points.empty()) return std::nullopt;
  const auto cut = *std::min_element(points.begin(), points.end());
  // The smallest group the cut chip separates from the rest, to name it.
  LocalAdjacency without_cut = adjacency;
  without_cut[cut].clear();
  for (auto& neighbours : without_cut) {
    neighbours.erase(std::remove(neighbours.begin(), neighbours.end(), cut), neighbours.end());
  }
  auto parts = components(without_cut);
  parts.erase(
      std::remove_if(parts.begin(), parts.end(),
                     [cut](const auto& part) { return part.size() == 1 && part[0] == cut; }),
      parts.end());
  const auto smallest = std::min_element(
      parts.begin(), parts.end(), [](const auto& a, const auto& b) { return a.size() < b.size(); });
  return fmt::format(
      "chip {} is the only connection between chips {} and the others; a ring "
      "would pass through it twice",
      set.ids[cut], chip_list_to_string(to_chips(set, *smallest)));
}

// Why no line / ring can exist, from cheap structural facts; nullopt when none applies.
std::optional<std::string> structural_reason(const LocalAdjacency& adjacency, const ChipSet& set,
                                             EmbeddingKind kind) {
  const std::size_t n = adjacency.size();
  const auto parts = components(adjacency);
  if (parts.size() > 1) {
    std::string groups;
    for (std::size_t i = 0; i < parts.size() && i < 4; ++i) {
      groups += fmt::format("{}{{{}}}", i == 0 ? "" : " and ",
                            chip_list_to_string(to_chips(set, parts[i])));
    }
    if (parts.size() > 4) groups += fmt::format(" and {} more groups", parts.size() - 4);
    return fmt::format("the chips are not connected: {} share no link", groups);
  }
  std::vector<std::size_t> ends;
  std::size_t max_degree = 0;
  for (std::size_t v = 0; v < n; ++v) {
    if (adjacency[v].size() <= 1) ends.push_back(v);
    max_degree = std::max(max_degree, adjacency[v].size());
  }
  if (kind == EmbeddingKind::Ring && ends.size() == 2 && max_degree <= 2) {
    // A path graph: walk it from its lower end.
    std::vector<std::size_t> walk{ends.front()};
    std::size_t previous = n;
    while (walk.size() < n) {
      const auto v = walk.back();
      const auto next =
          adjacency[v].front() != previous ? adjacency[v].front() : adjacency[v].back();
      previous = v;
      walk.push_back(next);
    }
    const auto chips = to_chips(set, walk);
    return fmt::format("chips {} form a line with no link closing {}->{}",
                       chip_list_to_string(chips), chips.back(), chips.front());
  }
  if (kind == EmbeddingKind::Ring && !ends.empty()) {
    const auto v = ends.front();
    return fmt::format("chip {} has a single neighbour ({}) among the chips; a ring needs two",
                       set.ids[v], set.ids[adjacency[v].front()]);
  }
  if (kind == EmbeddingKind::Line && ends.size() > 2) {
    return fmt::format(
        "chips {} each have a single neighbour among the chips; a line has only "
        "two ends",
        chip_list_to_string(to_chips(set, ends)));
  }
  if (kind == EmbeddingKind::Ring) {
    if (auto why = articulation_reason(adjacency, set)) return why;
  }
  // Two-colouring: a ring alternates sides, so it needs equal sides; a line, sides within one.
  std::vector<int> side(n, -1);
  side[0] = 0;
  std::vector<std::size_t> queue{0};
  for (std::size_t head = 0; head < queue.size(); ++head) {
    const auto v = queue[head];
    for (const auto w : adjacency[v]) {
      if (side[w] == -1) {
        side[w] = 1 - side[v];
        queue.push_back(w);
      } else if (side[w] == side[v]) {
        return std::nullopt;  // not bipartite: no conclusion
      }
    }
  }
  const auto first_side = static_cast<std::size_t>(std::count(side.begin(), side.end(), 0));
  const auto other_side = n - first_side;
  const auto imbalance =
      first_side > other_side ? first_side - other_side : other_side - first_side;
  if ((kind == EmbeddingKind::Ring && imbalance != 0) || imbalance > 1) {
    return fmt::format(
        "the chips split into two sides of {} and {} with links only between the "
        "sides (as in a grid), and a {} alternates sides, so it needs {}",
        first_side, other_side, kind_name(kind),
        kind == EmbeddingKind::Ring ? "equal sides" : "sides within one chip");
  }
  return std::nullopt;
}

Embedding make_embedding(const Topology& topology, std::vector<ChipId> order, EmbeddingKind kind,
                         std::int32_t num_links) {
  Embedding embedding;
  embedding.kind = kind;
  embedding.num_links = num_links;
  embedding.chips = std::move(order);
  const std::size_t n = embedding.chips.size();
  const std::size_t hop_count = kind == EmbeddingKind::Ring ? n : n - 1;
  for (std::size_t i = 0; i < hop_count; ++i) {
    Hop hop;
    hop.from = embedding.chips[i];
    hop.to = embedding.chips[(i + 1) % n];
    const auto edge = topology.edge_between(hop.from, hop.to);
    CCLMESH_TOPO_CHECK(edge.has_value(), fmt::format("hop {}->{} is an edge", hop.from, hop.to));
    const NeighbourEdge& e = topology.edges()[*edge];
    CCLMESH_TOPO_CHECK(e.multiplicity() >= static_cast<std::size_t>(num_links),
                       fmt::format("hop {}->{} has {} links", hop.from, hop.to, num_links));
    for (std::int32_t k = 0; k < num_links; ++k) {
      const auto index = e.links[static_cast<std::size_t>(k)];
      const EthLink& link = topology.links()[index];
      const bool forward = link.a.chip == hop.from;
      hop.links.push_back(HopLink{forward ? link.a.channel : link.b.channel,
                                  forward ? link.b.channel : link.a.channel, index});
    }
    embedding.hops.push_back(std::move(hop));
  }
  return embedding;
}

Embedding find_embedding(const Topology& topology, std::span<const ChipId> chips,
                         EmbeddingKind kind, std::int32_t num_links) {
  const ChipSet set = make_chip_set(topology, chips, num_links);
  const auto fail = [&](const std::string& why) -> Embedding {
    throw EmbeddingError(
        fmt::format("topology '{}': no {} through chips {}{}: {}", topology.name(), kind_name(kind),
                    chip_list_to_string(set.ids),
                    num_links > 1 ? fmt::format(" with {} links per hop", num_links) : "", why));
  };
  // One chip has neither ring nor line: "use a line" and the 2-chip note misled there (`topo` of
  // an N150 or P150 descriptor; new-user pass, session 41).
  if (kind == EmbeddingKind::Ring && set.ids.size() < 2) {
    return fail(fmt::format("a ring needs at least 3 chips, got {}", set.ids.size()));
  }
  if (kind == EmbeddingKind::Ring && set.ids.size() < 3) {
    return fail(
        fmt::format("a ring needs at least 3 chips, got {} (a 2-chip ring does not work, "
                    "tt-metal issue #12770); use a line",
                    set.ids.size()));
  }
  if (auto order = structured_order(topology, set, kind);
      order && hops_exist(topology, *order, kind, num_links)) {
    return make_embedding(topology, std::move(*order), kind, num_links);
  }
  const LocalAdjacency any_links = local_adjacency(topology, set, 1);
  if (auto why = structural_reason(any_links, set, kind)) return fail(*why);
  const LocalAdjacency enough_links =
      num_links == 1 ? any_links : local_adjacency(topology, set, num_links);
  if (num_links > 1) {
    if (auto why = structural_reason(enough_links, set, kind)) {
      return fail(
          fmt::format("using only neighbour edges with at least {} links, {}", num_links, *why));
    }
  }
  const auto budget = search_budget(set.ids.size());
  const auto search = [&](const LocalAdjacency& adjacency) {
    return kind == EmbeddingKind::Ring ? detail::find_hamiltonian_cycle(adjacency, budget)
                                       : detail::find_hamiltonian_path(adjacency, budget);
  };
  const auto result = search(enough_links);
  if (result.outcome == SearchOutcome::Found) {
    return make_embedding(topology, to_chips(set, result.order), kind, num_links);
  }
  if (result.outcome == SearchOutcome::GaveUp) {
    return fail(
        fmt::format("none found within the search budget of {} steps (the chips may "
                    "still have one)",
                    budget));
  }
  if (num_links > 1) {
    const auto relaxed = search(any_links);
    if (relaxed.outcome == SearchOutcome::Found) {
      const auto order = to_chips(set, relaxed.order);
      for (std::size_t i = 0; i < order.size(); ++i) {
        const ChipId a = order[i];
        const ChipId b = order[(i + 1) % order.size()];
        const auto links = topology.links_between(a, b);
        if (links < static_cast<std::size_t>(num_links)) {
          return fail(
              fmt::format("the {} {} has hop {}->{} with only {} link{}, and no {} uses "
                          "only hops with at least {}",
                          kind_name(kind), chip_list_to_string(order), a, b, links,
                          links == 1 ? "" : "s", kind_name(kind), num_links));
        }
      }
    }
  }
  return fail(fmt::format("none exists (exhaustive search, {} steps)", result.steps));
}

}  // namespace

std::string Embedding::to_string() const {
  std::string text;
  for (const ChipId chip : chips) text += fmt::format("{}{}", text.empty() ? "" : "-", chip);
  if (kind == EmbeddingKind::Ring && !chips.empty()) text += fmt::format("-{}", chips.front());
  return text;
}

Embedding find_line(const Topology& topology, std::span<const ChipId> chips,
                    std::int32_t num_links) {
  return find_embedding(topology, chips, EmbeddingKind::Line, num_links);
}

Embedding find_ring(const Topology& topology, std::span<const ChipId> chips,
                    std::int32_t num_links) {
  return find_embedding(topology, chips, EmbeddingKind::Ring, num_links);
}

Embedding find_system_line(const Topology& topology, std::int32_t num_links) {
  return find_line(topology, topology.chip_ids(), num_links);
}

Embedding find_system_ring(const Topology& topology, std::int32_t num_links) {
  return find_ring(topology, topology.chip_ids(), num_links);
}

std::vector<std::vector<ChipId>> axis_groups(const Topology& topology, int cluster_axis) {
  const auto& shape = topology.mesh_shape();
  if (!shape) {
    throw InputError(fmt::format("topology '{}' has no mesh shape; cluster_axis {} needs one",
                                 topology.name(), cluster_axis));
  }
  if (cluster_axis < 0 || cluster_axis >= shape->rank()) {
    throw InputError(fmt::format("topology '{}': cluster_axis {} on the {} mesh; expected 0..{}",
                                 topology.name(), cluster_axis, shape->to_string(),
                                 shape->rank() - 1));
  }
  std::vector<std::vector<ChipId>> groups;
  for (std::int64_t index = 0; index < shape->chip_count(); ++index) {
    const MeshCoord start = shape->coord_at(index);
    if (start[static_cast<std::size_t>(cluster_axis)] != 0) continue;
    std::vector<ChipId> group;
    for (std::int32_t i = 0; i < shape->extent(cluster_axis); ++i) {
      MeshCoord c = start;
      c[static_cast<std::size_t>(cluster_axis)] = i;
      if (const auto chip = topology.chip_at(c)) group.push_back(*chip);
    }
    if (!group.empty()) groups.push_back(std::move(group));
  }
  return groups;
}

std::vector<Embedding> find_axis_lines(const Topology& topology, int cluster_axis,
                                       std::int32_t num_links) {
  std::vector<Embedding> lines;
  for (const auto& group : axis_groups(topology, cluster_axis)) {
    lines.push_back(find_line(topology, group, num_links));
  }
  return lines;
}

std::vector<Embedding> find_axis_rings(const Topology& topology, int cluster_axis,
                                       std::int32_t num_links) {
  std::vector<Embedding> rings;
  for (const auto& group : axis_groups(topology, cluster_axis)) {
    rings.push_back(find_ring(topology, group, num_links));
  }
  return rings;
}

std::string chip_list_to_string(std::span<const ChipId> chips) {
  constexpr std::size_t kShown = 8;
  std::string text;
  const auto append = [&text](ChipId chip) {
    text += fmt::format("{}{}", text.empty() ? "" : ",", chip);
  };
  if (chips.size() <= 2 * kShown) {
    for (const ChipId chip : chips) append(chip);
    return text;
  }
  for (std::size_t i = 0; i < kShown; ++i) append(chips[i]);
  text += ",...";
  for (std::size_t i = chips.size() - kShown; i < chips.size(); ++i) append(chips[i]);
  return text + fmt::format(" ({} chips)", chips.size());
}

}  // namespace cclmesh::topo
