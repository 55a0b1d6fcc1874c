// legacy_groups.hpp: the groups a legacy op runs, laid around the links down from the start as the
// fabric lays a row or column (runtime::group_run): chips by position, ranks by position, and the
// shape each runs as; and groups_by_shape's split of a legacy op's groups (FabricMode::None).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runtime/ccl/common/ccl_common.hpp"
#include "runtime/ccl/common/collective.hpp"
#include "runtime/ccl/common/legacy_groups.hpp"
#include "topologies/builtin_systems.hpp"
#include "topologies/system_loader.hpp"

namespace cclmesh::runtime::ccl {
namespace {

using ::testing::HasSubstr;
using Chips = std::vector<ChipId>;
using Ranks = std::vector<std::uint32_t>;

// T3K's ring as the embedding search finds it (REFERENCE 3.3).
const Chips kT3kRing{4, 0, 2, 6, 7, 3, 1, 5};

TEST(LegacyGroups, WithoutDownLinksAGroupRunsAsGiven) {
  const topo::Topology t3k = topo::build_t3k();
  const LegacyGroup g = legacy_group(t3k, kT3kRing, CclTopology::Ring, {}, "op");
  EXPECT_EQ(g.shape, CclTopology::Ring);
  EXPECT_EQ(g.chips, kT3kRing);
  EXPECT_EQ(g.ranks, (Ranks{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_FALSE(g.opened_at);
  // A down link off the group's path leaves it a ring.
  EXPECT_EQ(legacy_group(t3k, kT3kRing, CclTopology::Ring, {{0, 1}}, "op").shape, CclTopology::Ring);
}

TEST(LegacyGroups, ARingWithOneDownLinkRunsAsTheLineFromTheChipAfterIt) {
  const topo::Topology t3k = topo::build_t3k();
  // Mid-ring, either order of the pair: the line 2-...-0, positions holding ranks 2..7, 0, 1.
  for (const auto& down : {std::pair<ChipId, ChipId>{0, 2}, std::pair<ChipId, ChipId>{2, 0}}) {
    const LegacyGroup g = legacy_group(t3k, kT3kRing, CclTopology::Ring, {down}, "op");
    EXPECT_EQ(g.shape, CclTopology::Line);
    EXPECT_EQ(g.chips, (Chips{2, 6, 7, 3, 1, 5, 4, 0}));
    EXPECT_EQ(g.ranks, (Ranks{2, 3, 4, 5, 6, 7, 0, 1}));
    EXPECT_EQ(g.opened_at, (std::pair<ChipId, ChipId>{0, 2}));
    EXPECT_EQ(g.chips_by_rank(), kT3kRing);
    EXPECT_EQ(g.rank_at(0), 2u);
  }
  // The closing link: positions are ranks.
  const LegacyGroup closing = legacy_group(t3k, kT3kRing, CclTopology::Ring, {{5, 4}}, "op");
  EXPECT_EQ(closing.shape, CclTopology::Line);
  EXPECT_EQ(closing.chips, kT3kRing);
  EXPECT_EQ(closing.ranks, (Ranks{0, 1, 2, 3, 4, 5, 6, 7}));
}

// Asked as a line, a group that closes runs over its closing link around a down hop (as the
// per-axis line fabric runs it); its closing link down is off its path.
TEST(LegacyGroups, ALineThatClosesRunsRoundADownHop) {
  const topo::Topology torus = topo::load_system("torus:4x4");
  const LegacyGroup opened = legacy_group(torus, {0, 1, 2, 3}, CclTopology::Line, {{1, 2}}, "op");
  EXPECT_EQ(opened.chips, (Chips{2, 3, 0, 1}));
  EXPECT_EQ(opened.ranks, (Ranks{2, 3, 0, 1}));
  const LegacyGroup untouched = legacy_group(torus, {0, 1, 2, 3}, CclTopology::Line, {{3, 0}}, "op");
  EXPECT_EQ(untouched.chips, (Chips{0, 1, 2, 3}));
  EXPECT_FALSE(untouched.opened_at);
}

TEST(LegacyGroups, TwoDownLinksOnARingOrADownHopOnALineThatCannotCloseAreRefusedNamingThem) {
  const topo::Topology t3k = topo::build_t3k();
  try {
    legacy_group(t3k, kT3kRing, CclTopology::Ring, {{0, 2}, {7, 3}}, "all_gather");
    ADD_FAILURE() << "expected a ring with two down links to be refused";
  } catch (const CclParamsError& e) {
    EXPECT_THAT(e.what(), HasSubstr("all_gather: legacy ring 4-0-2-6-7-3-1-5 is cut by the down link(s) 0-2, 7-3: a "
                                    "ring runs as a line around one down link, not two"));
  }
  const topo::Topology mesh = topo::load_system("mesh:4x4");
  try {
    legacy_group(mesh, {0, 1, 2, 3}, CclTopology::Ring, {{1, 2}}, "reduce_scatter");
    ADD_FAILURE() << "expected a mesh row with a down hop to be refused";
  } catch (const CclParamsError& e) {
    EXPECT_THAT(e.what(), HasSubstr("reduce_scatter: legacy ring 0-1-2-3 is cut by the down link(s) 1-2: a line with "
                                    "a down hop has no path through its chips"));
  }
}

TEST(LegacyGroups, EveryGroupOfASelectionIsLaidOnItsOwn) {
  const topo::Topology torus = topo::load_system("torus:4x4");
  GroupSelection rows;
  rows.cluster_axis = 1;
  const std::vector<LegacyGroup> groups = legacy_groups(rows, torus, CclTopology::Ring, {{0, 1}}, "op");
  ASSERT_EQ(groups.size(), 4u);
  EXPECT_EQ(groups[0].shape, CclTopology::Line);
  EXPECT_EQ(groups[0].chips, (Chips{1, 2, 3, 0}));
  for (std::size_t row = 1; row < 4; ++row) EXPECT_EQ(groups[row].shape, CclTopology::Ring);
  // The whole system: the system's own ring (resolve_legacy_groups), opened.
  const std::vector<LegacyGroup> whole = legacy_groups({}, topo::build_t3k(), CclTopology::Ring, {{0, 2}}, "op");
  ASSERT_EQ(whole.size(), 1u);
  EXPECT_EQ(whole[0].chips, (Chips{2, 6, 7, 3, 1, 5, 4, 0}));
}

// Without a fabric (legacy mode), groups_by_shape splits an op's groups by legacy_groups: the
// rings first, then the lines, each in rank order.
TEST(LegacyGroups, GroupsByShapeSplitsALegacyOpsRingsAndLines) {
  const topo::Topology torus = topo::load_system("torus:4x4");
  FabricOptions none;
  none.mode = FabricMode::None;
  none.down_edges = {{1, 0}};
  GroupSelection rows;
  rows.cluster_axis = 1;
  const std::vector<ShapedGroups> shaped = groups_by_shape(rows, torus, none, CclTopology::Ring);
  ASSERT_EQ(shaped.size(), 2u);
  EXPECT_EQ(shaped[0].shape, CclTopology::Ring);
  EXPECT_EQ(shaped[0].groups.chips, (std::vector<Chips>{{4, 5, 6, 7}, {8, 9, 10, 11}, {12, 13, 14, 15}}));
  EXPECT_EQ(shaped[1].shape, CclTopology::Line);
  EXPECT_EQ(shaped[1].groups.chips, (std::vector<Chips>{{0, 1, 2, 3}}));  // rank order, not the line's
  // Every group opened: lines only.
  none.down_edges = {{0, 2}};
  const std::vector<ShapedGroups> whole = groups_by_shape({}, topo::build_t3k(), none, CclTopology::Ring);
  ASSERT_EQ(whole.size(), 1u);
  EXPECT_EQ(whole[0].shape, CclTopology::Line);
  EXPECT_EQ(whole[0].groups.chips, (std::vector<Chips>{kT3kRing}));
}

}  // namespace
}  // namespace cclmesh::runtime::ccl
