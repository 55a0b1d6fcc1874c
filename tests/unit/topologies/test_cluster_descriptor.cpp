#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "test_paths.hpp"
#include "topologies/builtin_systems.hpp"
#include "topologies/cluster_descriptor.hpp"
#include "topologies/embedding.hpp"
#include "topologies/errors.hpp"
#include "topologies/isomorphism.hpp"

namespace cclmesh::topo {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Pairs = std::set<std::pair<std::int32_t, std::int32_t>>;

Pairs channels(const Topology& t, ChipId a, ChipId b) {
  Pairs result;
  for (const EthLink& link : t.links()) {
    if (link.a.chip == a && link.b.chip == b) result.emplace(link.a.channel, link.b.channel);
    if (link.a.chip == b && link.b.chip == a) result.emplace(link.b.channel, link.a.channel);
  }
  return result;
}

Topology load(const std::string& file) {
  return load_cluster_descriptor(test::cluster_descriptor(file));
}

TEST(ClusterDescriptor, WormholeN150) {
  const Topology t = load("wormhole_N150.yaml");
  EXPECT_EQ(t.name(), "wormhole_N150");
  ASSERT_EQ(t.chip_count(), 1u);
  EXPECT_EQ(t.chip(0).arch, Arch::Wormhole);
  EXPECT_EQ(t.chip(0).board, BoardType::N150);
  EXPECT_EQ(t.chip(0).pci_device, 0);
  EXPECT_EQ(t.chip(0).harvesting.tensix_mask, 64u);
  EXPECT_TRUE(t.links().empty());
  EXPECT_EQ(t.mesh_shape(), MeshShape::mesh(1, 1));
}

TEST(ClusterDescriptor, WormholeN300FlowStyle) {
  const Topology t = load("wormhole_N300.yaml");
  ASSERT_EQ(t.chip_count(), 2u);
  EXPECT_EQ(t.chip(0).arch, Arch::Wormhole);  // "Wormhole" alias
  EXPECT_TRUE(t.chip(0).mmio());
  EXPECT_FALSE(t.chip(1).mmio());
  EXPECT_EQ(t.links().size(), 2u);
  EXPECT_EQ(channels(t, 0, 1), (Pairs{{8, 0}, {9, 1}}));
  EXPECT_EQ(t.chip(0).board, BoardType::N300);
  EXPECT_EQ(t.chip(0).board_id, 72058994491072686u);
  EXPECT_EQ(t.chip(1).harvesting.tensix_mask, 5u);
  EXPECT_EQ(t.mesh_shape(), MeshShape::mesh(1, 2));
  EXPECT_EQ(t.chip_at(MeshCoord{0, 1, 0}), 1);
  EXPECT_EQ(t.links()[0].rate_bytes_per_s, 12'500'000'000);
}

TEST(ClusterDescriptor, T3kIsTheBuiltin2x4Mesh) {
  const Topology t = load("t3k_cluster_desc.yaml");
  ASSERT_EQ(t.chip_count(), 8u);
  EXPECT_EQ(t.links().size(), 20u);
  EXPECT_EQ(t.edges().size(), 10u);
  for (const NeighbourEdge& edge : t.edges()) EXPECT_EQ(edge.multiplicity(), 2u);
  EXPECT_EQ(t.mesh_shape(), MeshShape::mesh(2, 4));
  EXPECT_EQ(t.chip(2).pci_device, 3);
  EXPECT_EQ(t.chip(3).pci_device, 2);
  EXPECT_FALSE(t.chip(4).mmio());
  EXPECT_EQ(t.chip(4).board_id, t.chip(0).board_id);
  EXPECT_EQ(t.chip(0).harvesting.tensix_mask, 544u);

  const Topology builtin = build_t3k();
  EXPECT_TRUE(is_isomorphic(t, builtin));
  // Same tt-umd numbering, so the same links and mesh positions, not just the same shape.
  EXPECT_EQ(std::vector<EthLink>(t.links().begin(), t.links().end()),
            std::vector<EthLink>(builtin.links().begin(), builtin.links().end()));
  for (const Chip& chip : t.chips()) {
    EXPECT_EQ(chip.mesh_coord, builtin.chip(chip.id).mesh_coord) << "chip " << chip.id;
  }
  // REFERENCE 3.3: the unique 8-chip ring is the perimeter.
  EXPECT_EQ(find_system_ring(t).to_string(), "4-0-2-6-7-3-1-5-4");
}

TEST(ClusterDescriptor, TwoByTwoN300) {
  const Topology t = load("2x2_n300_cluster_desc.yaml");
  ASSERT_EQ(t.chip_count(), 4u);
  EXPECT_EQ(t.links().size(), 8u);
  EXPECT_EQ(channels(t, 0, 1), (Pairs{{14, 14}, {15, 15}}));
  EXPECT_EQ(channels(t, 1, 2), (Pairs{{0, 0}, {1, 1}}));
  EXPECT_EQ(channels(t, 2, 3), (Pairs{{14, 14}, {15, 15}}));
  EXPECT_EQ(channels(t, 0, 3), (Pairs{{6, 6}, {7, 7}}));
  EXPECT_TRUE(t.chip(0).mmio());
  EXPECT_FALSE(t.chip(1).mmio());
  EXPECT_EQ(t.chip(2).pci_device, 2);
  EXPECT_EQ(t.chip(1).board_id, t.chip(0).board_id);  // board [1, 0]
  EXPECT_EQ(t.chip(2).board_id, t.chip(3).board_id);
  // (x, y) = 0:(1,0) 1:(1,1) 2:(2,1) 3:(2,0): a 2x2 mesh, mesh coordinate (y, x - 1).
  EXPECT_EQ(t.mesh_shape(), MeshShape::mesh(2, 2));
  EXPECT_EQ(t.chip(0).mesh_coord, (MeshCoord{0, 0, 0}));
  EXPECT_EQ(t.chip(1).mesh_coord, (MeshCoord{1, 0, 0}));
  EXPECT_EQ(t.chip(2).mesh_coord, (MeshCoord{1, 1, 0}));
  EXPECT_EQ(t.chip(3).mesh_coord, (MeshCoord{0, 1, 0}));
  // The ring 0-1-2-3-0 (in one direction or the other).
  const Embedding ring = find_system_ring(t, 2);
  EXPECT_EQ(ring.to_string(), "0-3-2-1-0");
}

TEST(ClusterDescriptor, TwoUnconnectedN300s) {
  const Topology t = load("wormhole_2xN300_unconnected.yaml");
  ASSERT_EQ(t.chip_count(), 4u);
  EXPECT_EQ(t.edges().size(), 2u);
  EXPECT_EQ(channels(t, 0, 1), (Pairs{{14, 14}, {15, 15}}));
  EXPECT_EQ(channels(t, 2, 3), (Pairs{{14, 14}, {15, 15}}));
  EXPECT_EQ(t.links_between(1, 2), 0u);
  EXPECT_FALSE(t.mesh_shape().has_value());  // the 2x2 positions are not linked as a grid
  for (const Chip& chip : t.chips()) EXPECT_FALSE(chip.mesh_coord.has_value());
  try {
    (void)find_system_ring(t);
    FAIL() << "a ring across two unconnected pairs";
  } catch (const EmbeddingError& e) {
    EXPECT_THAT(e.what(), HasSubstr("not connected: {0,1} and {2,3} share no link"));
  }
}

TEST(ClusterDescriptor, BlackholeP150) {
  const Topology t = load("blackhole_P150.yaml");
  ASSERT_EQ(t.chip_count(), 1u);
  EXPECT_EQ(t.chip(0).arch, Arch::Blackhole);
  EXPECT_EQ(t.chip(0).board, BoardType::P150);
  EXPECT_EQ(t.chip(0).pci_device, 0);
  EXPECT_EQ(t.chip(0).harvesting.eth_mask, 288u);
  EXPECT_TRUE(t.links().empty());
  EXPECT_EQ(t.mesh_shape(), MeshShape::mesh(1, 1));  // inferred, `chips: {}`
}

TEST(ClusterDescriptor, FourBlackholeP150s) {
  const Topology t = load("blackhole_4xP150.yaml");
  ASSERT_EQ(t.chip_count(), 4u);
  EXPECT_EQ(t.links().size(), 16u);
  EXPECT_EQ(t.edges().size(), 4u);
  EXPECT_EQ(channels(t, 0, 2), (Pairs{{4, 4}, {5, 5}, {6, 6}, {7, 7}}));
  EXPECT_EQ(channels(t, 0, 3), (Pairs{{8, 8}, {9, 9}, {10, 10}, {11, 11}}));
  EXPECT_EQ(channels(t, 1, 3), (Pairs{{4, 4}, {5, 5}, {6, 6}, {7, 7}}));
  EXPECT_EQ(channels(t, 1, 2), (Pairs{{8, 8}, {9, 9}, {10, 10}, {11, 11}}));
  std::set<std::uint64_t> boards;
  for (const Chip& chip : t.chips()) {
    EXPECT_EQ(chip.arch, Arch::Blackhole);
    EXPECT_EQ(chip.board, BoardType::P150);
    EXPECT_TRUE(chip.mmio());
    boards.insert(*chip.board_id);
  }
  EXPECT_EQ(boards.size(), 4u);
  EXPECT_EQ(t.chip(0).pci_device, 1);
  EXPECT_EQ(t.chip(3).pci_device, 0);
  EXPECT_EQ(t.links()[0].rate_bytes_per_s, 25'000'000'000);
  // No coordinates in the file: the 2x2 shape is inferred from the graph.
  EXPECT_EQ(t.mesh_shape(), MeshShape::mesh(2, 2));
  EXPECT_EQ(find_system_ring(t, 4).to_string(), "0-2-1-3-0");
}

TEST(ClusterDescriptor, BareIntMmioListAndDuplicateLinks) {
  // Older files list MMIO chips as bare ids; some list every link from both sides.
  const std::string text = R"(
arch: {0: wormhole_b0, 1: wormhole_b0}
chips: {0: [0, 0, 0, 0], 1: [1, 0, 0, 0]}
ethernet_connections:
  - [{chip: 0, chan: 8}, {chip: 1, chan: 0}]
  - [{chip: 1, chan: 0}, {chip: 0, chan: 8}, {routing_enabled: true}]
chips_with_mmio: [0]
harvesting: {0: {noc_translation: true, harvest_mask: 0}, 1: {noc_translation: true, harvest_mask: 0}}
boards: [[{board_id: 1}, {board_type: n300}, {chips: [0, 1]}]]
)";
  const Topology t = parse_cluster_descriptor(text, "<string>", "pair");
  EXPECT_EQ(t.links().size(), 1u);
  EXPECT_EQ(t.chip(0).pci_device, 0);
  EXPECT_FALSE(t.chip(1).mmio());
}

TEST(ClusterDescriptor, EveryEcosystemFileLoads) {
  for (const auto& entry :
       std::filesystem::directory_iterator(test::shared_file("cluster_descriptors"))) {
    EXPECT_NO_THROW((void)load_cluster_descriptor(entry.path())) << entry.path();
  }
}

}  // namespace
}  // namespace cclmesh::topo
