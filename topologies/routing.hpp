#pragma once
// Routes between chips: shortest paths, dimension-order routes on meshes and tori, and routes
// along a ring embedding. A route is the list of hops a packet takes, each on a routing plane
// (which of the edge's parallel links, REFERENCE 3.5) and a virtual channel, which is what the
// channel dependency graph (deadlock.hpp) is built from.

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "topologies/embedding.hpp"
#include "topologies/topology.hpp"

namespace cclmesh::topo {

struct RouteHop {
  ChipId from = 0;
  ChipId to = 0;
  std::int32_t plane = 0;  // link index within the neighbour edge
  std::int32_t virtual_channel = 0;
  bool operator==(const RouteHop&) const = default;
};

struct Route {
  ChipId source = 0;
  ChipId destination = 0;
  std::vector<RouteHop> hops;
  bool operator==(const Route&) const = default;
};

// BFS hop counts from `from` to every chip, by chip index (Topology::chip_index); -1 where
// unreachable.
std::vector<std::int32_t> hop_distances(const Topology& topology, ChipId from);

// Longest shortest path over all pairs; nullopt when the topology is disconnected, 0 for one
// chip. All-pairs BFS: O(chips * links), fine for thousands of chips.
std::optional<std::int32_t> diameter(const Topology& topology);

// Connected components, each sorted by id, ordered by their smallest id.
std::vector<std::vector<ChipId>> connected_components(const Topology& topology);

// A shortest path as chips, from and to included; ties broken towards lower chip ids, so the
// result is deterministic. Throws EmbeddingError when `to` is unreachable.
std::vector<ChipId> shortest_path(const Topology& topology, ChipId from, ChipId to);
Route shortest_route(const Topology& topology, ChipId from, ChipId to);

struct DimensionOrderOptions {
  // Dimensions in the order they are corrected. Default: X (cols, dim 1) then Y (rows, dim 0)
  // then depth, as the fabric's inter-mesh routing (REFERENCE 3.5).
  std::vector<int> order{1, 0, 2};
  // Switch to virtual channel 1 when a packet crosses a wraparound link, back to 0 when it
  // turns into the next dimension: the dateline placement of PR #20165 for a torus
  // (REFERENCE 6.7).
  bool dateline_on_wrap = false;
  std::int32_t plane = 0;
};

// Dimension-order route on the topology's mesh: in each dimension, the shorter way round on a
// wrapping dimension (ties go the positive way), else straight. Throws InputError when the
// topology has no mesh shape or a chip has no coordinate, and EmbeddingError when a hop it
// needs has no link (e.g. a removed chip or link).
Route dimension_order_route(const Topology& topology, ChipId from, ChipId to,
                            const DimensionOrderOptions& options = {});

enum class RingDirection { Forward, Backward };

// hop_count hops along a ring embedding from chips[from_position], on virtual channel 0.
Route ring_route(const Embedding& ring, std::size_t from_position, std::size_t hop_count,
                 RingDirection direction, std::int32_t plane = 0);

// Every chip of the ring sending to all the others one way round (an all-gather's traffic):
// one route of chips.size() - 1 hops from each chip; shorter transfers are prefixes of these.
std::vector<Route> ring_all_to_all_routes(const Embedding& ring, RingDirection direction,
                                          std::int32_t plane = 0);

// The route with every hop from the first crossing of dateline_from -> dateline_to onwards
// moved to virtual channel 1: the global dateline of PR #19101 (REFERENCE 6.7).
Route with_dateline(Route route, ChipId dateline_from, ChipId dateline_to);
std::vector<Route> with_dateline(std::vector<Route> routes, ChipId dateline_from,
                                 ChipId dateline_to);

}  // namespace cclmesh::topo
