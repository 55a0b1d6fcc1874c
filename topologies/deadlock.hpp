#pragma once
// Deadlock freedom of a routing, by the channel dependency graph (Dally & Seitz): a channel is
// one direction of one link on one virtual channel; a route that holds channel c and then asks
// for channel d adds the dependency c -> d. Routing is deadlock-free when this graph is acyclic;
// otherwise the cycle found is where buffers can fill up and wait on each other for ever
// (REFERENCE 6.7, 11.1).

#include <boost/graph/adjacency_list.hpp>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "topologies/routing.hpp"

namespace cclmesh::topo {

struct ChannelKey {
  ChipId from = 0;
  ChipId to = 0;
  std::int32_t plane = 0;
  std::int32_t virtual_channel = 0;
  auto operator<=>(const ChannelKey&) const = default;
};

// "0->1 plane 0 vc 0"
std::string to_string(const ChannelKey& channel);

class ChannelDependencyGraph {
 public:
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;

  explicit ChannelDependencyGraph(std::span<const Route> routes);

  // Sorted; vertex i of graph() is channels()[i].
  std::span<const ChannelKey> channels() const { return channels_; }
  const Graph& graph() const { return graph_; }
  std::size_t dependency_count() const { return boost::num_edges(graph_); }

  // A dependency cycle c0 -> c1 -> ... -> ck -> c0 (c0 not repeated), or nullopt when acyclic.
  std::optional<std::vector<ChannelKey>> find_cycle() const;

 private:
  std::vector<ChannelKey> channels_;
  Graph graph_;
};

struct DeadlockReport {
  bool deadlock_free = true;
  std::vector<ChannelKey> cycle;  // empty when deadlock_free
  std::size_t channel_count = 0;
  std::size_t dependency_count = 0;

  // "deadlock-free: 16 channels, 24 dependencies" or "dependency cycle of 8 channels:
  // 0->1 plane 0 vc 0 -> 1->2 plane 0 vc 0 -> ... -> 0->1 plane 0 vc 0".
  std::string describe() const;
};

DeadlockReport check_deadlock_freedom(std::span<const Route> routes);

}  // namespace cclmesh::topo
