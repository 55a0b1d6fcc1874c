#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "topologies/builtin_systems.hpp"
#include "topologies/embedding.hpp"
#include "topologies/errors.hpp"
#include "topologies/mesh_inference.hpp"
#include "topologies/parametric.hpp"

namespace cclmesh::topo {
namespace {

using ::testing::HasSubstr;

// The same chips and links with every coordinate and the shape dropped.
Topology without_mesh(const Topology& t) {
  std::vector<Chip> chips(t.chips().begin(), t.chips().end());
  for (Chip& chip : chips) chip.mesh_coord.reset();
  return Topology(t.name(), std::move(chips),
                  std::vector<EthLink>(t.links().begin(), t.links().end()));
}

TEST(MeshInference, T3kGraphIsA2x4Mesh) {
  const Topology bare = without_mesh(build_t3k());
  EXPECT_EQ(infer_mesh_shape(bare), MeshShape::mesh(2, 4));
  const Topology inferred = with_inferred_mesh_shape(bare);
  // Smallest fitting id first: corner 4 at (0, 0), which is the built-in layout.
  EXPECT_EQ(inferred, build_t3k());
}

TEST(MeshInference, TorusAndRing) {
  EXPECT_EQ(infer_mesh_shape(without_mesh(build_parametric(parse_parametric_spec("torus:4x4/1")))),
            MeshShape::torus(4, 4));
  const auto ring =
      infer_mesh_shape(without_mesh(build_parametric(parse_parametric_spec("ring:6"))));
  ASSERT_TRUE(ring.has_value());
  EXPECT_EQ(ring->to_string(), "1x6 (wraps: cols)");
}

TEST(MeshInference, NoShapeForIrregularGraphs) {
  // TG: 32 mesh chips plus 4 gateways.
  EXPECT_FALSE(infer_mesh_shape(without_mesh(build_tg())).has_value());
  EXPECT_EQ(with_inferred_mesh_shape(without_mesh(build_tg())), without_mesh(build_tg()));
}

TEST(MeshInference, ExplicitShapeOnTheT3k) {
  // The T3K viewed as the 1x8 line of the CCL benchmarks (REFERENCE 3.3): its snake.
  const std::array<std::int32_t, 2> one_by_eight{1, 8};
  const Topology line = with_mesh_shape(build_t3k(), MeshShape(one_by_eight));
  EXPECT_EQ(line.mesh_shape()->to_string(), "1x8");
  std::vector<ChipId> order;
  for (std::int32_t col = 0; col < 8; ++col) order.push_back(*line.chip_at(MeshCoord{0, col, 0}));
  EXPECT_EQ(find_line(line, order).to_string(), "4-0-2-6-7-3-1-5");
}

TEST(MeshInference, ExplicitShapeThatDoesNotFit) {
  try {
    (void)with_mesh_shape(build_t3k(), MeshShape::mesh(1, 4));
    FAIL() << "an 8-chip system as a 1x4 mesh";
  } catch (const EmbeddingError& e) {
    EXPECT_THAT(e.what(), HasSubstr("its 8 chips do not form a 1x4 mesh"));
  }
  EXPECT_THROW((void)with_mesh_shape(build_t3k(), MeshShape::torus(2, 4)), EmbeddingError);
}

}  // namespace
}  // namespace cclmesh::topo
