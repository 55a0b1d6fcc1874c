#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "topologies/builtin_systems.hpp"
#include "topologies/deadlock.hpp"
#include "topologies/embedding.hpp"
#include "topologies/parametric.hpp"
#include "topologies/routing.hpp"

namespace cclmesh::topo {
namespace {

using ::testing::HasSubstr;

Topology spec(const char* text) { return build_parametric(parse_parametric_spec(text)); }

std::vector<Route> all_pairs_dimension_order(const Topology& t,
                                             const DimensionOrderOptions& options) {
  std::vector<Route> routes;
  for (const Chip& a : t.chips()) {
    for (const Chip& b : t.chips()) {
      if (a.id != b.id) routes.push_back(dimension_order_route(t, a.id, b.id, options));
    }
  }
  return routes;
}

TEST(Deadlock, RingWithoutAvoidanceHasTheRingCycle) {
  // REFERENCE 6.7 / 11.1: every router waits on the next one's buffer around the ring.
  const Topology t = build_t3k();
  const Embedding ring = find_system_ring(t);
  const auto routes = ring_all_to_all_routes(ring, RingDirection::Forward);
  const DeadlockReport report = check_deadlock_freedom(routes);
  EXPECT_FALSE(report.deadlock_free);
  ASSERT_EQ(report.cycle.size(), 8u);
  // The cycle is the ring's forward channels, each depending on the next.
  for (std::size_t i = 0; i < report.cycle.size(); ++i) {
    const ChannelKey& here = report.cycle[i];
    const ChannelKey& next = report.cycle[(i + 1) % report.cycle.size()];
    EXPECT_EQ(here.to, next.from);
    EXPECT_EQ(here.virtual_channel, 0);
  }
  EXPECT_THAT(report.describe(), HasSubstr("dependency cycle of 8 channels: "));
  EXPECT_THAT(report.describe(), HasSubstr("4->0 plane 0 vc 0 -> 0->2 plane 0 vc 0"));
}

TEST(Deadlock, DatelineMakesTheRingAcyclic) {
  const Embedding ring = find_system_ring(build_t3k());
  // The dateline on the closing hop 5 -> 4 (PR #19101): packets crossing it move to VC 1.
  const auto routes = with_dateline(ring_all_to_all_routes(ring, RingDirection::Forward), 5, 4);
  const DeadlockReport report = check_deadlock_freedom(routes);
  EXPECT_TRUE(report.deadlock_free) << report.describe();
  EXPECT_TRUE(report.cycle.empty());
  EXPECT_EQ(report.channel_count, 7u + 7u);  // VC 0 never crosses the dateline hop
  EXPECT_THAT(report.describe(), HasSubstr("deadlock-free"));
  // Both directions at once, each with its own dateline, stay acyclic.
  auto both = routes;
  for (auto& route : with_dateline(ring_all_to_all_routes(ring, RingDirection::Backward), 4, 5)) {
    both.push_back(route);
  }
  EXPECT_TRUE(check_deadlock_freedom(both).deadlock_free);
}

TEST(Deadlock, LinesAreDeadlockFree) {
  const Embedding line = find_system_line(build_galaxy());
  std::vector<Route> routes;
  for (std::size_t i = 0; i < line.chips.size(); ++i) {
    for (std::size_t j = 0; j < line.chips.size(); ++j) {
      if (i == j) continue;
      Route route{line.chips[i], line.chips[j], {}};
      const int step = j > i ? 1 : -1;
      for (auto k = static_cast<long>(i); k != static_cast<long>(j); k += step) {
        route.hops.push_back(RouteHop{line.chips[static_cast<std::size_t>(k)],
                                      line.chips[static_cast<std::size_t>(k + step)], 0, 0});
      }
      routes.push_back(route);
    }
  }
  EXPECT_TRUE(check_deadlock_freedom(routes).deadlock_free);
}

TEST(Deadlock, DimensionOrderOnMeshAndTorus) {
  EXPECT_TRUE(
      check_deadlock_freedom(all_pairs_dimension_order(spec("mesh:4x4/1"), {})).deadlock_free);
  const Topology torus = spec("torus:4x4/1");
  const DeadlockReport plain = check_deadlock_freedom(all_pairs_dimension_order(torus, {}));
  EXPECT_FALSE(plain.deadlock_free);
  EXPECT_EQ(plain.cycle.size(), 4u);  // one ring of the torus
  DimensionOrderOptions dateline;
  dateline.dateline_on_wrap = true;
  EXPECT_TRUE(check_deadlock_freedom(all_pairs_dimension_order(torus, dateline)).deadlock_free);
}

TEST(Deadlock, GraphShape) {
  const std::vector<Route> routes{Route{0, 2, {RouteHop{0, 1, 0, 0}, RouteHop{1, 2, 0, 0}}},
                                  Route{1, 0, {RouteHop{1, 0, 1, 0}}}};
  const ChannelDependencyGraph graph(routes);
  EXPECT_EQ(graph.channels().size(), 3u);
  EXPECT_EQ(graph.dependency_count(), 1u);
  EXPECT_FALSE(graph.find_cycle().has_value());
  EXPECT_EQ(to_string(graph.channels()[0]), "0->1 plane 0 vc 0");
  EXPECT_TRUE(check_deadlock_freedom({}).deadlock_free);
}

}  // namespace
}  // namespace cclmesh::topo
