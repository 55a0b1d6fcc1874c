#include "topologies/deadlock.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/graph/depth_first_search.hpp>
#include <limits>
#include <set>

#include "topologies/errors.hpp"

namespace cclmesh::topo {
namespace {

using Graph = ChannelDependencyGraph::Graph;
using Vertex = boost::graph_traits<Graph>::vertex_descriptor;
using Edge = boost::graph_traits<Graph>::edge_descriptor;

ChannelKey key_of(const RouteHop& hop) {
  return ChannelKey{hop.from, hop.to, hop.plane, hop.virtual_channel};
}

// Records DFS tree parents and the first back edge, which closes a cycle.
class CycleRecorder : public boost::default_dfs_visitor {
 public:
  CycleRecorder(std::vector<Vertex>* parent, std::optional<Edge>* back_edge)
      : parent_(parent), back_edge_(back_edge) {}
  void tree_edge(const Edge& e, const Graph& g) const {
    (*parent_)[boost::target(e, g)] = boost::source(e, g);
  }
  void back_edge(const Edge& e, const Graph&) const {
    if (!back_edge_->has_value()) *back_edge_ = e;
  }

 private:
  std::vector<Vertex>* parent_;
  std::optional<Edge>* back_edge_;
};

}  // namespace

std::string to_string(const ChannelKey& channel) {
  return fmt::format("{}->{} plane {} vc {}", channel.from, channel.to, channel.plane,
                     channel.virtual_channel);
}

ChannelDependencyGraph::ChannelDependencyGraph(std::span<const Route> routes) {
  std::set<ChannelKey> channels;
  std::set<std::pair<ChannelKey, ChannelKey>> dependencies;
  for (const Route& route : routes) {
    for (std::size_t i = 0; i < route.hops.size(); ++i) {
      channels.insert(key_of(route.hops[i]));
      if (i == 0) continue;
      CCLMESH_TOPO_CHECK(
          route.hops[i - 1].to == route.hops[i].from,
          fmt::format("route {}->{} is contiguous at hop {}", route.source, route.destination, i));
      dependencies.emplace(key_of(route.hops[i - 1]), key_of(route.hops[i]));
    }
  }
  channels_.assign(channels.begin(), channels.end());
  // Vertices added in place: assigning a fresh Graph instantiates Boost's copy, which trips
  // GCC 12's -Wmaybe-uninitialized inside Boost.
  for (std::size_t i = 0; i < channels_.size(); ++i) boost::add_vertex(graph_);
  const auto index = [this](const ChannelKey& key) {
    return static_cast<Vertex>(std::lower_bound(channels_.begin(), channels_.end(), key) -
                               channels_.begin());
  };
  for (const auto& [from, to] : dependencies) boost::add_edge(index(from), index(to), graph_);
}

std::optional<std::vector<ChannelKey>> ChannelDependencyGraph::find_cycle() const {
  if (channels_.empty()) return std::nullopt;
  std::vector<Vertex> parent(channels_.size(), std::numeric_limits<Vertex>::max());
  std::optional<Edge> back_edge;
  std::vector<boost::default_color_type> colors(channels_.size());
  boost::depth_first_search(
      graph_, CycleRecorder(&parent, &back_edge),
      boost::make_iterator_property_map(colors.begin(), boost::get(boost::vertex_index, graph_)));
  if (!back_edge) return std::nullopt;
  // The back edge u -> v closes the tree path v -> ... -> u.
  const Vertex u = boost::source(*back_edge, graph_);
  const Vertex v = boost::target(*back_edge, graph_);
  std::vector<ChannelKey> cycle;
  for (Vertex w = u; w != v; w = parent[w]) {
    CCLMESH_TOPO_CHECK(w != std::numeric_limits<Vertex>::max(), "back edge target is an ancestor");
    cycle.push_back(channels_[w]);
  }
  cycle.push_back(channels_[v]);
  std::reverse(cycle.begin(), cycle.end());
  return cycle;
}

std::string DeadlockReport::describe() const {
  if (deadlock_free) {
    return fmt::format("deadlock-free: {} channels, {} dependencies, no cycle", channel_count,
                       dependency_count);
  }
  std::string text = fmt::format("dependency cycle of {} channels: ", cycle.size());
  for (const ChannelKey& channel : cycle) text += to_string(channel) + " -> ";
  return text + to_string(cycle.front());
}

DeadlockReport check_deadlock_freedom(std::span<const Route> routes) {
  const ChannelDependencyGraph graph(routes);
  DeadlockReport report;
  report.channel_count = graph.channels().size();
  report.dependency_count = graph.dependency_count();
  if (auto cycle = graph.find_cycle()) {
    report.deadlock_free = false;
    report.cycle = std::move(*cycle);
  }
  return report;
}

}  // namespace cclmesh::topo
