// The per-axis fabric (tt-metal's FABRIC_1D: a line per mesh row and column) and routing planes
// (num_links routers per hop end, each on its own link): where the routers sit, that no two share
// an ethernet core, which line a route or a group takes, and the per-system link limit.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "runtime/ccl/common/ccl_common.hpp"
#include "runtime/ccl/common/collective.hpp"
#include "runtime/fabric/fabric_plan.hpp"
#include "topologies/builtin_systems.hpp"
#include "topologies/embedding.hpp"
#include "topologies/errors.hpp"
#include "topologies/system_loader.hpp"

namespace cclmesh::runtime {
namespace {

FabricOptions per_axis(FabricMode mode, std::uint32_t links = 1) {
  FabricOptions o;
  o.mode = mode;
  o.scope = FabricScope::Axes;
  o.num_links = links;
  return o;
}

// Routers per chip, and every (chip, channel) used once.
std::map<ChipId, std::size_t> routers_per_chip(const FabricPlan& plan) {
  std::map<ChipId, std::size_t> count;
  std::set<std::pair<ChipId, std::uint32_t>> cores;
  for (const FabricRouterSite& site : plan.routers()) {
    ++count[site.chip];
    EXPECT_TRUE(cores.insert({site.chip, site.channel}).second) << "chip " << site.chip << " channel " << site.channel;
  }
  return count;
}

TEST(FabricPlanAxes, GalaxyHasALinePerRowAndColumnAndUpToFourRoutersPerChip) {
  const topo::Topology galaxy = topo::build_galaxy();  // 4x8 mesh, chips row-major
  const FabricPlan plan(galaxy, per_axis(FabricMode::Line));
  ASSERT_EQ(plan.lines().size(), 4u + 8u);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(plan.lines()[i].axis, 1);
    EXPECT_EQ(plan.lines()[i].mode, FabricMode::Line);
    ASSERT_EQ(plan.lines()[i].chips.size(), 8u);
    for (std::uint32_t c = 0; c < 8; ++c) EXPECT_EQ(plan.lines()[i].chips[c], i * 8 + c);
  }
  for (std::size_t i = 4; i < 12; ++i) {
    EXPECT_EQ(plan.lines()[i].axis, 0);
    EXPECT_EQ(plan.lines()[i].chips, (std::vector<ChipId>{static_cast<ChipId>(i - 4), static_cast<ChipId>(i + 4),
                                                          static_cast<ChipId>(i + 12), static_cast<ChipId>(i + 20)}));
  }
  // 4 rows x 7 hops + 8 columns x 3 hops, two routers per hop.
  EXPECT_EQ(plan.routers().size(), 2u * (4 * 7 + 8 * 3));
  const std::map<ChipId, std::size_t> count = routers_per_chip(plan);
  EXPECT_EQ(count.at(0), 2u);   // corner: E on its row, S on its column
  EXPECT_EQ(count.at(3), 3u);   // top edge: W, E, S
  EXPECT_EQ(count.at(10), 4u);  // interior: W, E, N, S
  // Each router's downstream is the other router of its own line on the same chip.
  const FabricRouterSite* east = plan.router(FabricPort{1, 0}, 10, true);
  const FabricRouterSite* west = plan.router(FabricPort{1, 0}, 10, false);
  const FabricRouterSite* south = plan.router(FabricPort{4 + 2, 0}, 10, true);
  ASSERT_NE(east, nullptr);
  ASSERT_NE(west, nullptr);
  ASSERT_NE(south, nullptr);
  EXPECT_EQ(east->peer, 11u);
  EXPECT_EQ(west->peer, 9u);
  EXPECT_EQ(south->peer, 18u);
  EXPECT_EQ(east->config.downstream_noc_x, west->noc0.x);
  EXPECT_EQ(east->config.downstream_noc_y, west->noc0.y);
  EXPECT_EQ(plan.router_on_channel(10, south->channel), south);
  EXPECT_EQ(plan.router_at(10, south->noc0.x, south->noc0.y), south);
}

TEST(FabricPlanAxes, TgGatewaysGetNoRoutersAndGalaxyChipsGetThreeUsablePlanes) {
  const topo::Topology tg = topo::build_tg();
  const FabricPlan plan(tg, per_axis(FabricMode::Line, 3));
  const std::map<ChipId, std::size_t> count = routers_per_chip(plan);
  for (ChipId gateway = 32; gateway < 36; ++gateway) EXPECT_EQ(count.count(gateway), 0u) << gateway;
  EXPECT_FALSE(plan.contains(32));
  EXPECT_EQ(count.at(10), 4u * 3u);  // 4 neighbours x 3 planes
  // Plane k of a hop runs on the hop's k-th link: 3 distinct channels on each end.
  for (std::uint32_t line = 0; line < plan.lines().size(); ++line) {
    std::set<std::uint32_t> channels;
    for (std::uint32_t k = 0; k < 3; ++k) {
      const FabricRouterSite* site = plan.router(FabricPort{line, k}, plan.lines()[line].chips[0], true);
      ASSERT_NE(site, nullptr);
      EXPECT_EQ(site->link, k);
      channels.insert(site->channel);
    }
    EXPECT_EQ(channels.size(), 3u) << plan.lines()[line].to_string();
  }
  // TG's Galaxy chips are tunnelled through the gateways: dispatch keeps a plane (REFERENCE 3.3).
  EXPECT_THROW(FabricPlan(tg, per_axis(FabricMode::Line, 4)), FabricPlanError);
  EXPECT_NO_THROW(FabricPlan(topo::build_galaxy(), per_axis(FabricMode::Line, 4)));
}

TEST(FabricPlanAxes, RoutesTakeTheLineHoldingBothChips) {
  const FabricPlan plan(topo::build_galaxy(), per_axis(FabricMode::Line));
  const FabricRoute along_row = plan.route(9, 13);
  EXPECT_EQ(plan.lines()[along_row.line].axis, 1);
  EXPECT_TRUE(along_row.forward);
  EXPECT_EQ(along_row.hops, 4u);
  const FabricRoute up_column = plan.route(25, 1);
  EXPECT_EQ(plan.lines()[up_column.line].axis, 0);
  EXPECT_FALSE(up_column.forward);
  EXPECT_EQ(up_column.hops, 3u);
  EXPECT_THROW(plan.route(0, 9), FabricPlanError);  // a turn: no 1D line holds both
  EXPECT_EQ(plan.line_containing({8, 9, 10}), std::optional<std::uint32_t>(1));
  EXPECT_FALSE(plan.line_containing({0, 9}).has_value());
  // The single-line view names why it does not apply.
  EXPECT_THROW(plan.chips(), FabricPlanError);
  EXPECT_THROW(plan.worker_connection(9, true, 1, 2, 3), FabricPlanError);
  const api::FabricConnectionConfig c = plan.worker_connection(FabricPort{along_row.line, 0}, 9, true, 1, 2, 3);
  EXPECT_EQ(c.edm_noc_x, plan.router(FabricPort{along_row.line, 0}, 9, true)->noc0.x);
}

TEST(FabricPlanAxes, GroupsMapOntoTheirOwnLine) {
  const topo::Topology galaxy = topo::build_galaxy();
  const FabricPlan plan(galaxy, per_axis(FabricMode::Line));
  const std::vector<std::vector<ChipId>> columns = ccl::resolve_groups({0, {}}, galaxy, plan);
  ASSERT_EQ(columns.size(), 8u);
  for (const auto& column : columns) {
    const ccl::FabricGroup g = ccl::map_group_onto_fabric(plan, column, ccl::CclTopology::Line, "test");
    EXPECT_EQ(plan.lines()[g.fabric_line].chips, column);
    EXPECT_TRUE(g.up_is_forward);
  }
  EXPECT_THROW(ccl::map_group_onto_fabric(plan, columns[0], ccl::CclTopology::Ring, "test"), ccl::CclParamsError);
  EXPECT_THROW(ccl::map_group_onto_fabric(plan, {0, 1, 9}, ccl::CclTopology::Line, "test"), ccl::CclParamsError);
  // No cluster_axis and no chips: a per-axis fabric has no single group to default to.
  EXPECT_THROW(ccl::resolve_groups({}, galaxy, plan), ccl::CclParamsError);
}

TEST(FabricPlanAxes, TorusAxesAreRingsAndMeshAxesLines) {
  const FabricPlan torus(topo::load_system("torus:4x4"), per_axis(FabricMode::Ring));
  ASSERT_EQ(torus.lines().size(), 8u);
  for (const FabricLine& line : torus.lines()) EXPECT_EQ(line.mode, FabricMode::Ring) << line.to_string();
  for (const FabricRouterSite& site : torus.routers()) EXPECT_TRUE(site.config.bubble_flow_control);
  const FabricPlan mesh(topo::build_galaxy(), per_axis(FabricMode::Ring));
  for (const FabricLine& line : mesh.lines()) EXPECT_EQ(line.mode, FabricMode::Line) << line.to_string();
  for (const FabricRouterSite& site : mesh.routers()) {
    EXPECT_EQ(site.config.topology, kernels::fabric_router::kTopologyLine);
  }
}

// A link down from the start on a per-axis fabric (session 20): a torus row or column with one
// down link on it runs as a line from the chip after it round to the chip before it (a ring
// minus one edge is a line), in Ring and Line mode; a mesh line with one, or a ring with two, is
// cut and cannot run. Groups off the down link keep their ring.
TEST(FabricPlanAxes, ARingWithOneDownLinkRunsAsALineFromTheChipAfterIt) {
  const topo::Topology torus = topo::load_system("torus:4x4");
  const topo::Topology mesh = topo::load_system("mesh:4x4");
  using Edges = std::vector<std::pair<ChipId, ChipId>>;
  const std::vector<ChipId> row0{0, 1, 2, 3};

  const GroupRun untouched = group_run(torus, row0, true, Edges{{4, 5}});
  EXPECT_TRUE(untouched.runs());
  EXPECT_TRUE(untouched.ring);
  EXPECT_EQ(untouched.chips, row0);
  EXPECT_FALSE(untouched.opened_at);

  const GroupRun opened = group_run(torus, row0, true, Edges{{1, 0}});  // either order
  EXPECT_TRUE(opened.runs());
  EXPECT_FALSE(opened.ring);
  EXPECT_EQ(opened.chips, (std::vector<ChipId>{1, 2, 3, 0}));
  ASSERT_TRUE(opened.opened_at);
  EXPECT_EQ(*opened.opened_at, (std::pair<ChipId, ChipId>{0, 1}));
  // The closing link down: the line in coordinate order.
  EXPECT_EQ(group_run(torus, row0, true, Edges{{3, 0}}).chips, row0);
  // Line mode uses the closing link to go around a down one; a down closing link is not on it.
  EXPECT_EQ(group_run(torus, row0, false, Edges{{1, 2}}).chips, (std::vector<ChipId>{2, 3, 0, 1}));
  EXPECT_FALSE(group_run(torus, row0, false, Edges{{3, 0}}).opened_at);

  const GroupRun two = group_run(torus, row0, true, Edges{{0, 1}, {2, 3}});
  EXPECT_FALSE(two.runs());
  EXPECT_EQ(two.cut_by, (Edges{{0, 1}, {2, 3}}));
  const GroupRun cut = group_run(mesh, row0, true, Edges{{0, 1}});
  EXPECT_FALSE(cut.runs());
  EXPECT_EQ(cut.cut_by, (Edges{{0, 1}}));

  // The plan: row 0 a line 1-2-3-0 (opened at 0-1), every other row and column a ring. An op's
  // axis-1 groups keep their ranks in coordinate order; row 0 runs as a line by position along
  // 1-2-3-0, each position holding the rank of its chip (1, 2, 3, 0), so that data placed by rank
  // does not depend on which link is down; the others run as rings, positions their ranks.
  FabricOptions o = per_axis(FabricMode::Ring);
  o.down_edges = {{0, 1}};
  const FabricPlan plan(torus, o);
  ASSERT_EQ(plan.lines().size(), 8u);
  std::size_t lines = 0;
  for (const FabricLine& line : plan.lines()) {
    if (line.mode == FabricMode::Ring) continue;
    ++lines;
    EXPECT_EQ(line.chips, (std::vector<ChipId>{1, 2, 3, 0}));
    EXPECT_EQ(line.axis, 1);
  }
  EXPECT_EQ(lines, 1u);
  const auto rows = ccl::resolve_groups(ccl::GroupSelection{1, {}}, torus, plan);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0], row0);
  const auto rotated = ccl::groups_by_shape(ccl::GroupSelection{1, {}}, torus, o, ccl::CclTopology::Ring);
  ASSERT_EQ(rotated.size(), 2u);
  EXPECT_EQ(rotated[1].shape, ccl::CclTopology::Line);
  EXPECT_EQ(rotated[1].groups.chips, (std::vector<std::vector<ChipId>>{row0}));
  const ccl::FabricGroup line0 = ccl::map_group_onto_fabric(plan, row0, ccl::CclTopology::Line, "test");
  EXPECT_EQ(line0.chips, (std::vector<ChipId>{1, 2, 3, 0}));
  EXPECT_EQ(line0.ranks, (std::vector<std::uint32_t>{1, 2, 3, 0}));
  EXPECT_TRUE(line0.up_is_forward);
  EXPECT_FALSE(line0.positions_are_ranks());
  EXPECT_EQ(line0.position_of(0), 3u);
  EXPECT_EQ(line0.by_position(std::vector<char>{'a', 'b', 'c', 'd'}), (std::vector<char>{'b', 'c', 'd', 'a'}));
  // Rank 0 (chip 0) reaches the others downward only: it is the line's far end.
  EXPECT_EQ(line0.reach_up(3), 0u);
  EXPECT_EQ(line0.reach_down(3), 3u);
  // The same chips in the other rank order run the line the other way round.
  const ccl::FabricGroup reversed =
      ccl::map_group_onto_fabric(plan, std::vector<ChipId>{3, 2, 1, 0}, ccl::CclTopology::Line, "test");
  EXPECT_EQ(reversed.chips, (std::vector<ChipId>{0, 3, 2, 1}));
  EXPECT_EQ(reversed.ranks, (std::vector<std::uint32_t>{3, 0, 1, 2}));
  EXPECT_FALSE(reversed.up_is_forward);
  const ccl::FabricGroup row1 = ccl::map_group_onto_fabric(plan, rows[1], ccl::CclTopology::Ring, "test");
  EXPECT_EQ(row1.chips, rows[1]);
  EXPECT_TRUE(row1.positions_are_ranks());
  // Line mode: row 0 opened at 1-2 runs 2-3-0-1 over its closing link; ranks stay 0..3.
  FabricOptions line_mode = per_axis(FabricMode::Line);
  line_mode.down_edges = {{1, 2}};
  const FabricPlan line_plan(torus, line_mode);
  const ccl::FabricGroup opened_line = ccl::map_group_onto_fabric(line_plan, row0, ccl::CclTopology::Line, "test");
  EXPECT_EQ(opened_line.chips, (std::vector<ChipId>{2, 3, 0, 1}));
  EXPECT_EQ(opened_line.ranks, (std::vector<std::uint32_t>{2, 3, 0, 1}));
  // Opened at its closing link 3-0 the line keeps the coordinate order: ranks 0, 1, 2, 3.
  FabricOptions closing = o;
  closing.down_edges = {{3, 0}};
  const FabricPlan closing_plan(torus, closing);
  const auto groups = ccl::resolve_groups(ccl::GroupSelection{1, {}}, torus, closing_plan);
  ASSERT_EQ(groups.size(), 4u);
  EXPECT_EQ(groups[0], (std::vector<ChipId>{0, 1, 2, 3}));
  EXPECT_EQ(groups[1], (std::vector<ChipId>{4, 5, 6, 7}));
  EXPECT_EQ(ccl::group_runs_as(closing_plan, groups[0], ccl::CclTopology::Ring), ccl::CclTopology::Line);
  EXPECT_EQ(ccl::group_runs_as(closing_plan, groups[1], ccl::CclTopology::Ring), ccl::CclTopology::Ring);
  const auto shaped = ccl::groups_by_shape(ccl::GroupSelection{1, {}}, torus, closing, ccl::CclTopology::Ring);
  ASSERT_EQ(shaped.size(), 2u);
  EXPECT_EQ(shaped[0].shape, ccl::CclTopology::Ring);
  EXPECT_EQ(shaped[0].groups.chips.size(), 3u);
  EXPECT_EQ(shaped[1].shape, ccl::CclTopology::Line);
  EXPECT_EQ(shaped[1].groups.chips, (std::vector<std::vector<ChipId>>{{0, 1, 2, 3}}));
  // Along the columns no group is opened: the op runs as asked, one part.
  EXPECT_EQ(ccl::groups_by_shape(ccl::GroupSelection{0, {}}, torus, o, ccl::CclTopology::Ring).size(), 1u);
  // A cut group has no fabric.
  o.down_edges = {{0, 1}, {2, 3}};
  EXPECT_THROW(FabricPlan(torus, o), FabricPlanError);
}

TEST(FabricPlanPlanes, SystemLineWithTwoPlanesUsesTwoLinksOfEveryHop) {
  const topo::Topology two_links = topo::load_system("mesh:1x4/2");
  FabricOptions o;
  o.mode = FabricMode::Line;
  o.num_links = 2;
  const FabricPlan plan(two_links, o);
  ASSERT_EQ(plan.routers().size(), 2u * 2u * 3u);
  routers_per_chip(plan);  // no ethernet core twice
  const topo::Embedding line = topo::find_system_line(two_links, 2);
  for (const topo::Hop& hop : line.hops) {
    for (std::uint32_t k = 0; k < 2; ++k) {
      const FabricRouterSite* fwd = plan.router(FabricPort{0, k}, static_cast<ChipId>(hop.from), true);
      ASSERT_NE(fwd, nullptr);
      EXPECT_EQ(fwd->channel, static_cast<std::uint32_t>(hop.links[k].from_channel));
      // Planes never exchange traffic: the downstream is the same plane's other router.
      const FabricRouterSite* other = plan.router(FabricPort{0, k}, static_cast<ChipId>(hop.from), false);
      if (other != nullptr) {
        EXPECT_EQ(fwd->config.downstream_noc_x, other->noc0.x);
      }
    }
  }
  // T3K keeps a plane for dispatch (REFERENCE 3.3): usable num_links is 1.
  FabricOptions t3k = o;
  t3k.mode = FabricMode::Ring;
  EXPECT_THROW(FabricPlan(topo::build_t3k(), t3k), FabricPlanError);
  o.num_links = 3;  // more than the edge has
  EXPECT_THROW(FabricPlan(two_links, o), topo::EmbeddingError);
}

}  // namespace
}  // namespace cclmesh::runtime
