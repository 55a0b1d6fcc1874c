#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "test_paths.hpp"
#include "topologies/builtin_systems.hpp"
#include "topologies/topology_yaml.hpp"

namespace cclmesh::topo {
namespace {

using ::testing::ElementsAre;

// The channel pairs of an edge as (channel on a, channel on b), a and b as given.
std::set<std::pair<std::int32_t, std::int32_t>> channels(const Topology& t, ChipId a, ChipId b) {
  std::set<std::pair<std::int32_t, std::int32_t>> result;
  for (const EthLink& link : t.links()) {
    if (link.a.chip == a && link.b.chip == b) result.emplace(link.a.channel, link.b.channel);
    if (link.a.chip == b && link.b.chip == a) result.emplace(link.b.channel, link.a.channel);
  }
  return result;
}

using Pairs = std::set<std::pair<std::int32_t, std::int32_t>>;

TEST(BuiltinSystems, N150) {
  const Topology t = build_n150();
  ASSERT_EQ(t.chip_count(), 1u);
  EXPECT_EQ(t.chip(0).arch, Arch::Wormhole);
  EXPECT_EQ(t.chip(0).board, BoardType::N150);
  EXPECT_TRUE(t.chip(0).mmio());
  EXPECT_TRUE(t.links().empty());
  EXPECT_EQ(t.mesh_shape(), MeshShape::mesh(1, 1));
}

TEST(BuiltinSystems, N300MatchesReference32) {
  const Topology t = build_n300();
  ASSERT_EQ(t.chip_count(), 2u);
  EXPECT_TRUE(t.chip(0).mmio());
  EXPECT_FALSE(t.chip(1).mmio());
  EXPECT_EQ(channels(t, 0, 1), (Pairs{{8, 0}, {9, 1}}));
  EXPECT_EQ(t.links().size(), 2u);
  EXPECT_EQ(t.mesh_shape(), MeshShape::mesh(1, 2));
  EXPECT_EQ(t.chip(0).board_id, t.chip(1).board_id);
}

TEST(BuiltinSystems, T3kMatchesReference33) {
  const Topology t = build_t3k();
  ASSERT_EQ(t.chip_count(), 8u);
  EXPECT_EQ(t.links().size(), 20u);
  EXPECT_EQ(t.edges().size(), 10u);
  for (const NeighbourEdge& edge : t.edges()) EXPECT_EQ(edge.multiplicity(), 2u);
  for (const auto& [l, r] : {std::pair{0, 4}, std::pair{1, 5}, std::pair{2, 6}, std::pair{3, 7}}) {
    EXPECT_EQ(channels(t, l, r), (Pairs{{8, 0}, {9, 1}})) << l << "-" << r;
    EXPECT_EQ(t.chip(l).board_id, t.chip(r).board_id);
  }
  EXPECT_EQ(channels(t, 0, 1), (Pairs{{14, 14}, {15, 15}}));
  EXPECT_EQ(channels(t, 2, 3), (Pairs{{14, 14}, {15, 15}}));
  EXPECT_EQ(channels(t, 1, 3), (Pairs{{0, 0}, {1, 1}}));
  EXPECT_EQ(channels(t, 0, 2), (Pairs{{6, 6}, {7, 7}}));
  EXPECT_EQ(channels(t, 4, 5), (Pairs{{6, 6}, {7, 7}}));
  EXPECT_EQ(channels(t, 6, 7), (Pairs{{6, 6}, {7, 7}}));
  // MMIO chips 0-3 with PCI indices 0->0, 1->1, 2->3, 3->2.
  EXPECT_EQ(t.chip(0).pci_device, 0);
  EXPECT_EQ(t.chip(1).pci_device, 1);
  EXPECT_EQ(t.chip(2).pci_device, 3);
  EXPECT_EQ(t.chip(3).pci_device, 2);
  for (ChipId id = 4; id < 8; ++id) EXPECT_FALSE(t.chip(id).mmio());
  // The 2x4 layout: y=0: 4 0 2 6, y=1: 5 1 3 7.
  EXPECT_EQ(t.mesh_shape(), MeshShape::mesh(2, 4));
  const std::vector<std::vector<ChipId>> layout{{4, 0, 2, 6}, {5, 1, 3, 7}};
  for (std::int32_t row = 0; row < 2; ++row) {
    for (std::int32_t col = 0; col < 4; ++col) {
      EXPECT_EQ(t.chip_at(MeshCoord{row, col, 0}),
                layout[static_cast<std::size_t>(row)][static_cast<std::size_t>(col)]);
    }
  }
}

TEST(BuiltinSystems, GalaxyIsA4x8MeshWith4LinksAndTtsimChannelGroups) {
  const Topology t = build_galaxy();
  ASSERT_EQ(t.chip_count(), 32u);
  EXPECT_EQ(t.mesh_shape(), MeshShape::mesh(4, 8));
  EXPECT_EQ(t.edges().size(), 4u * 7 + 3u * 8);
  EXPECT_EQ(t.links().size(), 4 * t.edges().size());
  for (const Chip& chip : t.chips()) {
    EXPECT_TRUE(chip.mmio());
    EXPECT_EQ(chip.board, BoardType::Galaxy);
  }
  // Chip 9 sits at (1, 1): N 0-3 to chip 1, E 4-7 to chip 10, S 8-11 to chip 17, W 12-15 to 8.
  EXPECT_EQ(t.chip_at(MeshCoord{1, 1, 0}), 9);
  EXPECT_EQ(channels(t, 9, 1), (Pairs{{0, 8}, {1, 9}, {2, 10}, {3, 11}}));
  EXPECT_EQ(channels(t, 9, 10), (Pairs{{4, 12}, {5, 13}, {6, 14}, {7, 15}}));
  EXPECT_EQ(channels(t, 9, 17), (Pairs{{8, 0}, {9, 1}, {10, 2}, {11, 3}}));
  EXPECT_EQ(channels(t, 9, 8), (Pairs{{12, 4}, {13, 5}, {14, 6}, {15, 7}}));
}

TEST(BuiltinSystems, TgIsAGalaxyPlusFourGatewayN150s) {
  const Topology t = build_tg();
  ASSERT_EQ(t.chip_count(), 36u);
  EXPECT_EQ(t.links().size(), 4u * 52 + 8);
  for (ChipId id = 0; id < 32; ++id) {
    EXPECT_FALSE(t.chip(id).mmio()) << id;
    EXPECT_TRUE(t.chip(id).mesh_coord.has_value());
  }
  for (ChipId g = 0; g < 4; ++g) {
    const Chip& gateway = t.chip(32 + g);
    EXPECT_EQ(gateway.board, BoardType::N150);
    EXPECT_EQ(gateway.pci_device, g);
    EXPECT_FALSE(gateway.mesh_coord.has_value());
    EXPECT_THAT(t.neighbours(32 + g), ElementsAre(2 * g, 2 * g + 1));
    EXPECT_EQ(channels(t, 32 + g, 2 * g), (Pairs{{0, 0}}));
    EXPECT_EQ(channels(t, 32 + g, 2 * g + 1), (Pairs{{1, 0}}));
  }
}

TEST(BuiltinSystems, Blackhole) {
  const Topology p150 = build_p150();
  ASSERT_EQ(p150.chip_count(), 1u);
  EXPECT_EQ(p150.chip(0).arch, Arch::Blackhole);
  EXPECT_EQ(p150.chip(0).board, BoardType::P150);

  const Topology p300 = build_p300();
  ASSERT_EQ(p300.chip_count(), 2u);
  EXPECT_EQ(p300.links_between(0, 1), 2u);
  EXPECT_EQ(p300.links()[0].rate_bytes_per_s, 25'000'000'000);
  EXPECT_TRUE(p300.chip(1).mmio());

  const Topology galaxy = build_bh_galaxy();
  ASSERT_EQ(galaxy.chip_count(), 32u);
  EXPECT_EQ(galaxy.links().size(), 2u * 52);
  for (const NeighbourEdge& edge : galaxy.edges()) EXPECT_EQ(edge.multiplicity(), 2u);
  for (const Chip& chip : galaxy.chips()) EXPECT_EQ(chip.arch, Arch::Blackhole);
}

TEST(BuiltinSystems, NamesAndLookup) {
  EXPECT_THAT(builtin_system_names(),
              ElementsAre("n150", "n300", "t3k", "tg", "galaxy", "p150", "p300", "bh_galaxy"));
  for (const auto& name : builtin_system_names()) {
    const auto t = build_builtin_system(name);
    ASSERT_TRUE(t.has_value()) << name;
    EXPECT_EQ(t->name(), name);
  }
  EXPECT_FALSE(build_builtin_system("t3000").has_value());
}

TEST(BuiltinSystems, EachBuilderEqualsItsYamlFile) {
  for (const auto& name : builtin_system_names()) {
    const Topology built = *build_builtin_system(name);
    const Topology loaded = load_topology_file(test::builtin_yaml(name));
    EXPECT_EQ(built, loaded) << name << ": topologies/systems/" << name
                             << ".yaml differs from its builder";
  }
}

}  // namespace
}  // namespace cclmesh::topo
