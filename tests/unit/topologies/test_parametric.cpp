#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "topologies/builtin_systems.hpp"
#include "topologies/errors.hpp"
#include "topologies/parametric.hpp"

namespace cclmesh::topo {
namespace {

using ::testing::HasSubstr;

std::string message_of(std::string_view spec) {
  try {
    (void)parse_parametric_spec(spec);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no InputError";
}

TEST(Parametric, ParsesEveryForm) {
  const auto mesh = parse_parametric_spec("mesh:2x4");
  EXPECT_EQ(mesh.shape, MeshShape::mesh(2, 4));
  EXPECT_EQ(mesh.arch, Arch::Wormhole);
  EXPECT_EQ(mesh.links_per_neighbour, 4);  // Wormhole's links per direction
  EXPECT_EQ(mesh.to_string(), "mesh:2x4/4@wh");

  const auto torus = parse_parametric_spec("torus:8x8/3@bh");
  EXPECT_EQ(torus.shape, MeshShape::torus(8, 8));
  EXPECT_EQ(torus.arch, Arch::Blackhole);
  EXPECT_EQ(torus.links_per_neighbour, 3);
  EXPECT_EQ(torus.to_string(), "torus:8x8/3@bh");
}

TEST(Parametric, RejectsMoreLinksThanTheChannelsAllow) {
  // 4 directions x 4 links need 16 ethernet channels; a Blackhole chip has 14.
  EXPECT_THAT(message_of("torus:8x8/4@bh"),
              HasSubstr("4 links per neighbour need 16 channels per chip but blackhole has 14"));
  EXPECT_NO_THROW((void)parse_parametric_spec("torus:8x8/4@wh"));
}

TEST(Parametric, DefaultsAndCaps) {
  EXPECT_EQ(parse_parametric_spec("torus:8x8@bh").links_per_neighbour, 2);
  EXPECT_EQ(parse_parametric_spec("torus:4x4x4").links_per_neighbour, 2);  // 16 / 6 directions
  EXPECT_EQ(parse_parametric_spec("ring:8").links_per_neighbour, 4);
  EXPECT_EQ(parse_parametric_spec("ring:8/8").links_per_neighbour, 8);
  const auto ring = parse_parametric_spec("ring:8/1");
  EXPECT_EQ(ring.shape.extent(0), 1);
  EXPECT_EQ(ring.shape.extent(1), 8);
  EXPECT_TRUE(ring.shape.wraps(1));
  EXPECT_EQ(ring.to_string(), "ring:8/1@wh");
  const auto cube = parse_parametric_spec("torus:2x3x4/1");
  EXPECT_EQ(cube.shape.rank(), 3);
  EXPECT_EQ(cube.to_string(), "torus:2x3x4/1@wh");
}

// A dimension of 2 cannot wrap (its wrap would be the edge already there), so the shape of
// torus:2x2x2 is a mesh's; the name is still the kind written (it said mesh:2x2x2, and ring:2
// said mesh:1x2).
TEST(Parametric, NamesTheKindWrittenWhereADimensionOfTwoCannotWrap) {
  const auto cube = parse_parametric_spec("torus:2x2x2/1");
  EXPECT_EQ(cube.shape.wraps(0), false);
  EXPECT_EQ(cube.to_string(), "torus:2x2x2/1@wh");
  EXPECT_EQ(build_parametric(cube).name(), "torus:2x2x2/1@wh");
  EXPECT_EQ(parse_parametric_spec("torus:2x2@bh").to_string(), "torus:2x2/2@bh");
  EXPECT_EQ(parse_parametric_spec("ring:2/1").to_string(), "ring:2/1@wh");
  EXPECT_EQ(parse_parametric_spec("mesh:3x3/1").to_string(), "mesh:3x3/1@wh");
  EXPECT_EQ(parse_parametric_spec("torus:3x2/1").to_string(), "torus:3x2/1@wh");
}

TEST(Parametric, RejectsBadSpecsWithTheReason) {
  EXPECT_THAT(message_of("mesh:2x"), HasSubstr("size '' is not a positive integer"));
  EXPECT_THAT(message_of("mesh:0x4"), HasSubstr("size '0'"));
  EXPECT_THAT(message_of("mesh:8"), HasSubstr("a mesh needs 2 or 3 sizes, got 1"));
  EXPECT_THAT(message_of("ring:2x2"), HasSubstr("a ring needs 1 size"));
  EXPECT_THAT(message_of("cube:2x2"), HasSubstr("unknown kind 'cube'"));
  EXPECT_THAT(message_of("torus:8x8@quasar"), HasSubstr("unknown architecture 'quasar'"));
  EXPECT_THAT(message_of("torus:8x8/5"), HasSubstr("5 links per neighbour need 20 channels"));
  EXPECT_THAT(message_of("torus:8x8/x"), HasSubstr("links per neighbour 'x'"));
  EXPECT_THAT(message_of("mesh:2000x2000"), HasSubstr("more than"));
  EXPECT_THAT(message_of("mesh:2x4"), HasSubstr("no InputError"));
  EXPECT_THAT(message_of("mesh 2x4"), HasSubstr("expected mesh:RxC"));
}

TEST(Parametric, LooksParametric) {
  EXPECT_TRUE(looks_parametric("mesh:2x2"));
  EXPECT_TRUE(looks_parametric("torus:2x2"));
  EXPECT_TRUE(looks_parametric("ring:4"));
  EXPECT_FALSE(looks_parametric("t3k"));
  EXPECT_FALSE(looks_parametric("./mesh.yaml"));
}

TEST(Parametric, MeshWiring) {
  const Topology t = build_parametric(parse_parametric_spec("mesh:3x4/2"));
  EXPECT_EQ(t.name(), "mesh:3x4/2@wh");
  EXPECT_EQ(t.chip_count(), 12u);
  EXPECT_EQ(t.edges().size(), 3u * 3 + 2u * 4);
  EXPECT_EQ(t.links().size(), 2 * t.edges().size());
  EXPECT_EQ(t.chip_at(MeshCoord{1, 2, 0}), 6);  // row-major ids
  for (const Chip& chip : t.chips()) EXPECT_TRUE(chip.mmio());
}

TEST(Parametric, TorusAndRingWiring) {
  const Topology torus = build_parametric(parse_parametric_spec("torus:4x4/1@bh"));
  EXPECT_EQ(torus.edges().size(), 32u);
  for (const Chip& chip : torus.chips()) EXPECT_EQ(torus.neighbours(chip.id).size(), 4u);
  EXPECT_EQ(torus.links_between(0, 3), 1u);   // column wrap
  EXPECT_EQ(torus.links_between(0, 12), 1u);  // row wrap
  EXPECT_EQ(torus.links()[0].rate_bytes_per_s, 25'000'000'000);

  const Topology ring = build_parametric(parse_parametric_spec("ring:6/2"));
  EXPECT_EQ(ring.edges().size(), 6u);
  EXPECT_EQ(ring.links_between(5, 0), 2u);

  const Topology cube = build_parametric(parse_parametric_spec("torus:3x3x3/2"));
  EXPECT_EQ(cube.edges().size(), 81u);
  for (const Chip& chip : cube.chips()) EXPECT_EQ(cube.neighbours(chip.id).size(), 6u);
}

TEST(Parametric, GalaxyEqualsItsParametricMesh) {
  const Topology galaxy = build_galaxy();
  const Topology mesh = build_parametric(parse_parametric_spec("mesh:4x8/4@wh"));
  EXPECT_EQ(std::vector<EthLink>(galaxy.links().begin(), galaxy.links().end()),
            std::vector<EthLink>(mesh.links().begin(), mesh.links().end()));
}

TEST(Parametric, ThousandsOfChipsBuild) {
  // Behaviour only (no timing): a 64x64 torus with 4 links per neighbour.
  const Topology t = build_parametric(parse_parametric_spec("torus:64x64/4"));
  EXPECT_EQ(t.chip_count(), 4096u);
  EXPECT_EQ(t.edges().size(), 8192u);
  EXPECT_EQ(t.links().size(), 32768u);
}

}  // namespace
}  // namespace cclmesh::topo
