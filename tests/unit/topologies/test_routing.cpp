#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "test_paths.hpp"
#include "topologies/builtin_systems.hpp"
#include "topologies/cluster_descriptor.hpp"
#include "topologies/errors.hpp"
#include "topologies/faults.hpp"
#include "topologies/parametric.hpp"
#include "topologies/routing.hpp"

namespace cclmesh::topo {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Topology spec(const char* text) { return build_parametric(parse_parametric_spec(text)); }

std::vector<ChipId> chips_of(const Route& route) {
  std::vector<ChipId> chips{route.source};
  for (const RouteHop& hop : route.hops) chips.push_back(hop.to);
  return chips;
}

TEST(Routing, ShortestPathsAndDiameter) {
  const Topology t = build_t3k();
  // Ties go to lower ids: 4 -> 0 -> 1 -> 3 -> 7 rather than through 5 or 2.
  EXPECT_THAT(shortest_path(t, 4, 7), ElementsAre(4, 0, 1, 3, 7));
  EXPECT_THAT(shortest_path(t, 2, 2), ElementsAre(2));
  EXPECT_EQ(diameter(t), 4);
  EXPECT_EQ(diameter(build_galaxy()), 3 + 7);
  EXPECT_EQ(diameter(spec("torus:8x8/1")), 8);
  EXPECT_EQ(diameter(build_n150()), 0);
  const auto distances = hop_distances(t, 4);
  EXPECT_EQ(distances[t.chip_index(6)], 3);
  const Route route = shortest_route(t, 4, 7);
  EXPECT_EQ(route.hops.size(), 4u);
  EXPECT_EQ(route.hops[0], (RouteHop{4, 0, 0, 0}));
}

// The longest of the shortest paths from every chip: the definition, by BFS.
std::int32_t longest_shortest_path(const Topology& t) {
  std::int32_t longest = 0;
  for (const Chip& chip : t.chips()) {
    for (const std::int32_t d : hop_distances(t, chip.id)) longest = std::max(longest, d);
  }
  return longest;
}

// Review (session 11): a whole mesh or torus takes its diameter from the shape (topo on
// torus:128x128 spent 2.5 s in a BFS from every chip); anything else still runs the BFS.
TEST(Routing, WholeGridDiameterEqualsTheBfsOne) {
  for (const char* text : {"mesh:4x5/1", "torus:5x6/1", "torus:3x4x5/1", "mesh:2x3x4/1", "torus:2x7/2", "ring:9/1",
                           "mesh:1x6/1", "torus:3x3/1", "torus:2x2x2/1"}) {
    const Topology t = spec(text);
    EXPECT_EQ(diameter(t), longest_shortest_path(t)) << text;
  }
  // One edge gone: no longer the whole grid, so the BFS answers (the torus's wrap 0-7 removed
  // makes row 0 a line).
  const Topology faulted = without_edge(spec("torus:8x8/1"), 0, 7);
  EXPECT_EQ(diameter(faulted), longest_shortest_path(faulted));
  const Topology galaxy = build_galaxy();
  EXPECT_EQ(diameter(galaxy), longest_shortest_path(galaxy));
  const Topology tg = build_tg();  // gateways off the mesh
  EXPECT_EQ(diameter(tg), longest_shortest_path(tg));
}

TEST(Routing, DisconnectedSystems) {
  const Topology t =
      load_cluster_descriptor(test::cluster_descriptor("wormhole_2xN300_unconnected.yaml"));
  EXPECT_FALSE(diameter(t).has_value());
  EXPECT_THAT(connected_components(t), ElementsAre(ElementsAre(0, 1), ElementsAre(2, 3)));
  EXPECT_THROW((void)shortest_path(t, 0, 3), EmbeddingError);
  EXPECT_EQ(hop_distances(t, 0)[t.chip_index(3)], -1);
}

TEST(Routing, DimensionOrderOnAMeshGoesXThenY) {
  const Topology t = build_galaxy();  // 4x8, chip id = row * 8 + col
  const Route route = dimension_order_route(t, 0, 8 * 2 + 3);
  EXPECT_THAT(chips_of(route), ElementsAre(0, 1, 2, 3, 11, 19));
  DimensionOrderOptions y_first;
  y_first.order = {0, 1};
  EXPECT_THAT(chips_of(dimension_order_route(t, 0, 19, y_first)),
              ElementsAre(0, 8, 16, 17, 18, 19));
  EXPECT_TRUE(dimension_order_route(t, 5, 5).hops.empty());
}

TEST(Routing, DimensionOrderOnATorusTakesTheShortWayAndMarksTheDateline) {
  const Topology t = spec("torus:1x8/1");  // a ring of 8 as a 1x8 torus
  EXPECT_THAT(chips_of(dimension_order_route(t, 1, 7)), ElementsAre(1, 0, 7));
  EXPECT_THAT(chips_of(dimension_order_route(t, 6, 1)), ElementsAre(6, 7, 0, 1));
  // A tie (4 hops either way) goes the positive way.
  EXPECT_THAT(chips_of(dimension_order_route(t, 2, 6)), ElementsAre(2, 3, 4, 5, 6));
  DimensionOrderOptions dateline;
  dateline.dateline_on_wrap = true;
  const Route route = dimension_order_route(t, 6, 1, dateline);
  ASSERT_EQ(route.hops.size(), 3u);
  EXPECT_EQ(route.hops[0].virtual_channel, 0);  // 6 -> 7
  EXPECT_EQ(route.hops[1].virtual_channel, 1);  // 7 -> 0 crosses the wrap
  EXPECT_EQ(route.hops[2].virtual_channel, 1);
}

TEST(Routing, DimensionOrderReportsMissingLinks) {
  const Topology t = without_chip(build_galaxy(), 2);
  try {
    (void)dimension_order_route(t, 0, 4);
    FAIL() << "routed through a removed chip";
  } catch (const EmbeddingError& e) {
    EXPECT_THAT(e.what(), HasSubstr("needs a link from chip 1 to mesh position (0, 2), which has "
                                    "no chip"));
  }
  EXPECT_THROW((void)dimension_order_route(build_tg(), 32, 0), InputError);  // gateway: no coord
  EXPECT_THROW((void)dimension_order_route(Topology(), 0, 0), InputError);
}

TEST(Routing, RingRoutesAndDatelines) {
  Embedding ring;
  ring.kind = EmbeddingKind::Ring;
  ring.chips = {4, 0, 2, 6};
  const Route forward = ring_route(ring, 3, 2, RingDirection::Forward);
  EXPECT_EQ(forward.source, 6);
  EXPECT_EQ(forward.destination, 0);
  EXPECT_THAT(chips_of(forward), ElementsAre(6, 4, 0));
  const Route backward = ring_route(ring, 0, 3, RingDirection::Backward);
  EXPECT_THAT(chips_of(backward), ElementsAre(4, 6, 2, 0));
  const auto routes = ring_all_to_all_routes(ring, RingDirection::Forward);
  ASSERT_EQ(routes.size(), 4u);
  for (const Route& route : routes) EXPECT_EQ(route.hops.size(), 3u);
  const Route marked = with_dateline(forward, 6, 4);
  EXPECT_EQ(marked.hops[0].virtual_channel, 1);
  EXPECT_EQ(marked.hops[1].virtual_channel, 1);
  EXPECT_EQ(with_dateline(forward, 4, 0).hops[0].virtual_channel, 0);
}

}  // namespace
}  // namespace cclmesh::topo
