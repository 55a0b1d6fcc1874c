#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "topologies/builtin_systems.hpp"
#include "topologies/errors.hpp"
#include "topologies/topology.hpp"
#include "topologies/topology_graph.hpp"

namespace cclmesh::topo {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Chip wormhole_chip(ChipId id) {
  Chip chip;
  chip.id = id;
  chip.arch = Arch::Wormhole;
  return chip;
}

EthLink link(ChipId a, std::int32_t ca, ChipId b, std::int32_t cb) {
  return EthLink{
      {a, ca}, {b, cb}, kWormholeTraits.link_rate_bytes_per_s, kWormholeTraits.link_latency_ps};
}

Topology triangle() {
  return Topology(
      "triangle", {wormhole_chip(2), wormhole_chip(0), wormhole_chip(1)},
      {link(1, 3, 0, 2), link(0, 0, 1, 0), link(0, 1, 1, 1), link(1, 4, 2, 4), link(2, 5, 0, 5)});
}

std::string message_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no InputError";
}

TEST(Topology, NormalisesChipsLinksAndEdges) {
  const Topology t = triangle();
  EXPECT_THAT(t.chip_ids(), ElementsAre(0, 1, 2));
  ASSERT_EQ(t.links().size(), 5u);
  // Lower chip first, grouped by pair, ordered by the lower chip's channel.
  EXPECT_EQ(t.links()[0].a, (EthEndpoint{0, 0}));
  EXPECT_EQ(t.links()[2].a, (EthEndpoint{0, 2}));
  EXPECT_EQ(t.links()[2].b, (EthEndpoint{1, 3}));
  ASSERT_EQ(t.edges().size(), 3u);
  EXPECT_EQ(t.edges()[0].a, 0);
  EXPECT_EQ(t.edges()[0].b, 1);
  EXPECT_EQ(t.edges()[0].multiplicity(), 3u);
  EXPECT_EQ(t.links_between(1, 0), 3u);
  EXPECT_EQ(t.links_between(1, 2), 1u);
  EXPECT_EQ(boost::num_vertices(t.graph().adjacency), 3u);
  EXPECT_EQ(boost::num_edges(t.graph().adjacency), 3u);
}

TEST(Topology, GraphListsNeighboursInAscendingId) {
  for (const Topology& t : {triangle(), build_tg(), build_t3k()}) {
    for (std::size_t v = 0; v < t.chip_count(); ++v) {
      std::vector<ChipId> order;
      for (auto [it, end] = boost::adjacent_vertices(v, t.graph().adjacency); it != end; ++it) {
        order.push_back(t.chips()[*it].id);
      }
      EXPECT_TRUE(std::is_sorted(order.begin(), order.end()))
          << t.name() << " chip " << t.chips()[v].id;
    }
  }
}

TEST(Topology, Lookups) {
  const Topology t = triangle();
  EXPECT_TRUE(t.has_chip(2));
  EXPECT_FALSE(t.has_chip(3));
  EXPECT_EQ(t.chip_index(2), 2u);
  EXPECT_THAT(t.neighbours(0), ElementsAre(1, 2));
  EXPECT_EQ(t.peer_of({1, 3}), (EthEndpoint{0, 2}));
  EXPECT_EQ(t.peer_of({0, 2}), (EthEndpoint{1, 3}));
  EXPECT_FALSE(t.link_at({0, 15}).has_value());
  EXPECT_FALSE(t.link_at({7, 0}).has_value());
  EXPECT_THROW((void)t.peer_of({0, 15}), InputError);
  EXPECT_THAT(message_of([&] { (void)t.chip(9); }), HasSubstr("no chip 9"));
  EXPECT_FALSE(t.edge_between(0, 7).has_value());
  EXPECT_FALSE(t.chip_at(MeshCoord{0, 0, 0}).has_value());
}

TEST(Topology, EqualityIsStructural) {
  EXPECT_EQ(triangle(), triangle());
  EXPECT_NE(triangle(), triangle().renamed("other"));
  EXPECT_EQ(triangle().renamed("other").name(), "other");
  const Topology fewer("triangle", {wormhole_chip(0), wormhole_chip(1), wormhole_chip(2)},
                       {link(0, 0, 1, 0)});
  EXPECT_NE(triangle(), fewer);
}

TEST(Topology, MeshCoordinates) {
  Chip a = wormhole_chip(0);
  a.mesh_coord = MeshCoord{0, 1, 0};
  Chip b = wormhole_chip(1);
  b.mesh_coord = MeshCoord{0, 0, 0};
  const Topology t("pair", {a, b}, {link(0, 0, 1, 0)}, MeshShape::mesh(1, 2));
  EXPECT_EQ(t.chip_at(MeshCoord{0, 1, 0}), 0);
  EXPECT_EQ(t.chip_at(MeshCoord{0, 0, 0}), 1);
  EXPECT_FALSE(t.chip_at(MeshCoord{0, 2, 0}).has_value());
}

TEST(Topology, RejectsBrokenInvariantsWithAMessage) {
  EXPECT_THAT(message_of([] {
                Topology("t", {wormhole_chip(0), wormhole_chip(0)}, {});
              }),
              HasSubstr("chip 0 is listed twice"));
  EXPECT_THAT(message_of([] {
                Chip a = wormhole_chip(0);
                Chip b = wormhole_chip(1);
                a.pci_device = 3;
                b.pci_device = 3;
                Topology("t", {b, a}, {});
              }),
              HasSubstr("chips 0 and 1 are both PCI device 3; expected each PCI device index on one chip"));
  EXPECT_THAT(message_of([] { Topology("t", {wormhole_chip(0)}, {link(0, 0, 5, 0)}); }),
              HasSubstr("chip 5 does not exist"));
  EXPECT_THAT(message_of([] {
                Topology("t", {wormhole_chip(0), wormhole_chip(1)}, {link(0, 16, 1, 0)});
              }),
              HasSubstr("channel 16 does not exist on wormhole_b0 chip 0; expected 0..15"));
  EXPECT_THAT(message_of([] {
                Topology("t", {wormhole_chip(0), wormhole_chip(1), wormhole_chip(2)},
                         {link(0, 3, 1, 0), link(0, 3, 2, 0)});
              }),
              HasSubstr("channel 0.ch3 is used by two links"));
  EXPECT_THAT(message_of([] { Topology("t", {wormhole_chip(0)}, {link(0, 0, 0, 1)}); }),
              HasSubstr("joins chip 0 to itself"));
  EXPECT_THAT(message_of([] {
                Chip c = wormhole_chip(0);
                c.mesh_coord = MeshCoord{0, 0, 0};
                Topology("t", {c}, {});
              }),
              HasSubstr("has no mesh shape"));
  EXPECT_THAT(message_of([] {
                Chip a = wormhole_chip(0);
                Chip b = wormhole_chip(1);
                a.mesh_coord = b.mesh_coord = MeshCoord{0, 0, 0};
                Topology("t", {a, b}, {}, MeshShape::mesh(1, 2));
              }),
              HasSubstr("share mesh coordinate (0, 0)"));
  EXPECT_THAT(message_of([] {
                Chip a = wormhole_chip(0);
                a.mesh_coord = MeshCoord{0, 5, 0};
                Topology("t", {a}, {}, MeshShape::mesh(1, 2));
              }),
              HasSubstr("outside the 1x2 mesh"));
  EXPECT_THAT(message_of([] {
                EthLink l = link(0, 0, 1, 0);
                l.rate_bytes_per_s = 0;
                Topology("t", {wormhole_chip(0), wormhole_chip(1)}, {l});
              }),
              HasSubstr("expected > 0"));
}

TEST(Topology, BlackholeHasFourteenChannels) {
  Chip a = wormhole_chip(0);
  a.arch = Arch::Blackhole;
  Chip b = wormhole_chip(1);
  b.arch = Arch::Blackhole;
  EXPECT_NO_THROW(Topology("bh", {a, b}, {link(0, 13, 1, 13)}));
  EXPECT_THROW(Topology("bh", {a, b}, {link(0, 14, 1, 13)}), InputError);
}

TEST(Topology, EmptyTopology) {
  const Topology empty;
  EXPECT_EQ(empty.chip_count(), 0u);
  EXPECT_TRUE(empty.links().empty());
  EXPECT_EQ(empty.name(), "empty");
}

TEST(Topology, EndpointToString) { EXPECT_EQ(to_string(EthEndpoint{3, 14}), "3.ch14"); }

}  // namespace
}  // namespace cclmesh::topo
