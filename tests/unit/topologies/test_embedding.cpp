#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "topologies/builtin_systems.hpp"
#include "topologies/embedding.hpp"
#include "topologies/errors.hpp"
#include "topologies/faults.hpp"
#include "topologies/parametric.hpp"

namespace cclmesh::topo {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Topology spec(const char* text) { return build_parametric(parse_parametric_spec(text)); }

// Every chip once, every hop a neighbour edge with the embedding's links on it.
void expect_valid(const Topology& t, const Embedding& e, std::span<const ChipId> chips) {
  EXPECT_EQ(std::set<ChipId>(e.chips.begin(), e.chips.end()),
            std::set<ChipId>(chips.begin(), chips.end()));
  EXPECT_EQ(e.chips.size(), chips.size());
  const std::size_t hops = e.kind == EmbeddingKind::Ring ? e.chips.size() : e.chips.size() - 1;
  ASSERT_EQ(e.hops.size(), hops);
  for (std::size_t i = 0; i < hops; ++i) {
    const Hop& hop = e.hops[i];
    EXPECT_EQ(hop.from, e.chips[i]);
    EXPECT_EQ(hop.to, e.chips[(i + 1) % e.chips.size()]);
    ASSERT_EQ(hop.links.size(), static_cast<std::size_t>(e.num_links));
    for (const HopLink& link : hop.links) {
      EXPECT_EQ(t.peer_of({hop.from, link.from_channel}), (EthEndpoint{hop.to, link.to_channel}));
    }
  }
}

std::string embedding_error(const std::function<void()>& action) {
  try {
    action();
  } catch (const EmbeddingError& e) {
    return e.what();
  }
  return "no EmbeddingError";
}

TEST(Embedding, T3kRingIsItsPerimeterWithTheDescriptorChannels) {
  const Topology t = build_t3k();
  const Embedding ring = find_system_ring(t, 2);
  EXPECT_EQ(ring.kind, EmbeddingKind::Ring);
  EXPECT_EQ(ring.to_string(), "4-0-2-6-7-3-1-5-4");
  expect_valid(t, ring, t.chip_ids());
  // Hop 4 -> 0 uses 4.ch0 -> 0.ch8 and 4.ch1 -> 0.ch9 (REFERENCE 3.3), sorted by channel.
  EXPECT_EQ(ring.hops[0].links[0].from_channel, 0);
  EXPECT_EQ(ring.hops[0].links[0].to_channel, 8);
  EXPECT_EQ(ring.hops[0].links[1].from_channel, 1);
  EXPECT_EQ(ring.hops[0].links[1].to_channel, 9);
  // Closing hop 5 -> 4 on channels 6, 7.
  EXPECT_EQ(ring.hops.back().from, 5);
  EXPECT_EQ(ring.hops.back().to, 4);
  EXPECT_EQ(ring.hops.back().links[0].from_channel, 6);
}

TEST(Embedding, T3kLineIsTheRingMinusItsClosingEdge) {
  const Topology t = build_t3k();
  const Embedding line = find_system_line(t);
  EXPECT_EQ(line.to_string(), "4-0-2-6-7-3-1-5");
  expect_valid(t, line, t.chip_ids());
  // Which of the two links is link 0: the lower channel on the lower chip id.
  EXPECT_EQ(line.hops[0].links[0].from_channel, 0);
  EXPECT_EQ(line.hops[0].links[0].to_channel, 8);
}

TEST(Embedding, T3kHasOnlyTwoLinksPerHop) {
  EXPECT_THAT(embedding_error([] { (void)find_system_ring(build_t3k(), 3); }),
              HasSubstr("using only neighbour edges with at least 3 links"));
}

TEST(Embedding, T3kMmioSquareRing) {
  const Topology t = build_t3k();
  const std::vector<ChipId> square{0, 1, 2, 3};
  const Embedding ring = find_ring(t, square, 2);
  expect_valid(t, ring, square);
  EXPECT_EQ(ring.to_string(), "0-1-3-2-0");
}

TEST(Embedding, T3kAxes) {
  const Topology t = build_t3k();
  EXPECT_THAT(axis_groups(t, 1), ElementsAre(ElementsAre(4, 0, 2, 6), ElementsAre(5, 1, 3, 7)));
  EXPECT_THAT(axis_groups(t, 0), ElementsAre(ElementsAre(4, 5), ElementsAre(0, 1),
                                             ElementsAre(2, 3), ElementsAre(6, 7)));
  const auto lines = find_axis_lines(t, 1, 2);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].to_string(), "4-0-2-6");
  EXPECT_EQ(lines[1].to_string(), "5-1-3-7");
  // The 4-chip sub-lines have no closing link (REFERENCE 11.15).
  EXPECT_THAT(embedding_error([&] { (void)find_axis_rings(t, 1); }),
              HasSubstr("chips 4,0,2,6 form a line with no link closing 6->4"));
  EXPECT_THAT(embedding_error([&] { (void)find_axis_rings(t, 0); }),
              HasSubstr("a ring needs at least 3 chips, got 2"));
}

TEST(Embedding, LineOfThreeHasNoRing) {
  const Topology t = spec("mesh:1x3/1");
  const std::vector<ChipId> chips{2, 0, 1};
  EXPECT_THAT(embedding_error([&] { (void)find_ring(t, chips); }),
              HasSubstr("no ring through chips 0,1,2: chips 0,1,2 form a line with no link "
                        "closing 2->0"));
  EXPECT_EQ(find_line(t, chips).to_string(), "0-1-2");
}

TEST(Embedding, GalaxyRowsAndColumns) {
  const Topology t = build_galaxy();
  const Embedding ring = find_system_ring(t, 4);
  expect_valid(t, ring, t.chip_ids());
  EXPECT_EQ(find_axis_lines(t, 1, 4).size(), 4u);  // 4 rows of 8
  const auto columns = find_axis_lines(t, 0, 4);
  ASSERT_EQ(columns.size(), 8u);
  EXPECT_EQ(columns[3].to_string(), "3-11-19-27");
  EXPECT_THROW((void)find_axis_rings(t, 1), EmbeddingError);  // no wraparound
  EXPECT_THROW((void)find_system_ring(t, 5), EmbeddingError);
}

TEST(Embedding, TgRingThroughTheGateways) {
  const Topology t = build_tg();
  const Embedding ring = find_system_ring(t);
  expect_valid(t, ring, t.chip_ids());
  const Embedding line = find_system_line(t);
  expect_valid(t, line, t.chip_ids());
  // Axis groups cover the Galaxy only; gateways have no mesh coordinate.
  const auto rows = axis_groups(t, 1);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_THAT(rows[0], ElementsAre(0, 1, 2, 3, 4, 5, 6, 7));
}

TEST(Embedding, TorusRingsOnEveryAxis) {
  const Topology t = spec("torus:8x8/4");
  const auto rings = find_axis_rings(t, 0, 4);
  ASSERT_EQ(rings.size(), 8u);
  EXPECT_EQ(rings[0].to_string(), "0-8-16-24-32-40-48-56-0");
  expect_valid(t, find_system_ring(t, 4), t.chip_ids());
}

TEST(Embedding, OddGridsNeedWraparound) {
  const Topology mesh = spec("mesh:3x3/1");
  EXPECT_THAT(embedding_error([&] { (void)find_system_ring(mesh); }),
              HasSubstr("two sides of 5 and 4"));
  expect_valid(mesh, find_system_line(mesh), mesh.chip_ids());
  for (const char* text : {"torus:3x3/1", "torus:3x5/1", "torus:3x3x3/1", "torus:2x3x5/1",
                           "mesh:2x3x3/1", "ring:5/1"}) {
    const Topology t = spec(text);
    expect_valid(t, find_system_ring(t), t.chip_ids());
    expect_valid(t, find_system_line(t), t.chip_ids());
  }
  EXPECT_THROW((void)find_system_ring(spec("mesh:3x3x3/1")), EmbeddingError);
}

TEST(Embedding, ThousandsOfChips) {
  const Topology t = spec("torus:64x64/2");
  const Embedding ring = find_system_ring(t, 2);
  EXPECT_EQ(ring.chips.size(), 4096u);
  EXPECT_EQ(find_axis_rings(t, 1, 2).size(), 64u);
}

TEST(Embedding, FaultsAreWorkedAroundOrExplained) {
  const Topology galaxy = build_galaxy();
  // An interior link missing: the construction fails, the search finds another ring.
  const Topology interior = without_edge(galaxy, 9, 10);
  expect_valid(interior, find_system_ring(interior), interior.chip_ids());
  // A corner losing one of its two edges cannot be on a ring.
  EXPECT_THAT(embedding_error([&] { (void)find_system_ring(without_edge(galaxy, 0, 1)); }),
              HasSubstr("chip 0 has a single neighbour (8) among the chips; a ring needs two"));
  // A removed chip: the remaining 31 chips are an odd count on a bipartite grid.
  EXPECT_THAT(embedding_error([&] { (void)find_system_ring(without_chip(galaxy, 9)); }),
              HasSubstr("two sides of"));
  // Columns 0-1 hang on the single edge 1-2: chip 1 would be passed twice.
  const Topology bridged = without_edge(without_edge(without_edge(galaxy, 9, 10), 17, 18), 25, 26);
  EXPECT_THAT(embedding_error([&] { (void)find_system_ring(bridged); }),
              HasSubstr("chip 1 is the only connection between chips 0,8,9,16,17,24,25 and the "
                        "others"));
  expect_valid(bridged, find_system_line(bridged), bridged.chip_ids());
  const Topology slowed = without_link(build_t3k(), {0, 8});
  EXPECT_THAT(embedding_error([&] { (void)find_system_ring(slowed, 2); }),
              HasSubstr("at least 2 links"));
}

TEST(Embedding, BadChipSets) {
  const Topology t = build_t3k();
  const std::vector<ChipId> none;
  const std::vector<ChipId> unknown{0, 9};
  const std::vector<ChipId> twice{0, 1, 0};
  const std::vector<ChipId> ok{0, 1};
  EXPECT_THROW((void)find_line(t, none), InputError);
  EXPECT_THROW((void)find_line(t, unknown), InputError);
  EXPECT_THROW((void)find_line(t, twice), InputError);
  EXPECT_THROW((void)find_line(t, ok, 0), InputError);
  EXPECT_THROW((void)axis_groups(t, 2), InputError);
  EXPECT_THROW((void)axis_groups(Topology(), 0), InputError);  // no mesh shape
}

}  // namespace
}  // namespace cclmesh::topo
