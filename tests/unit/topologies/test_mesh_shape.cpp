#include <gtest/gtest.h>

#include "topologies/errors.hpp"
#include "topologies/mesh_shape.hpp"

namespace cclmesh::topo {
namespace {

TEST(MeshShape, MeshAndTorusFactories) {
  const MeshShape mesh = MeshShape::mesh(2, 4);
  EXPECT_EQ(mesh.rank(), 2);
  EXPECT_EQ(mesh.extent(0), 2);
  EXPECT_EQ(mesh.extent(1), 4);
  EXPECT_EQ(mesh.extent(2), 1);
  EXPECT_FALSE(mesh.wraps(0));
  EXPECT_EQ(mesh.chip_count(), 8);
  EXPECT_EQ(mesh.to_string(), "2x4");

  const MeshShape torus = MeshShape::torus(8, 8);
  EXPECT_TRUE(torus.wraps(0));
  EXPECT_TRUE(torus.wraps(1));
  EXPECT_EQ(torus.to_string(), "8x8 torus");
}

TEST(MeshShape, WrapOnShortDimensionIsDropped) {
  // A wraparound on 2 chips would join the same pair as the plain link.
  const MeshShape torus = MeshShape::torus(2, 4);
  EXPECT_FALSE(torus.wraps(0));
  EXPECT_TRUE(torus.wraps(1));
  EXPECT_EQ(torus.to_string(), "2x4 (wraps: cols)");
}

TEST(MeshShape, LinearIndexRoundTrip) {
  const std::array<std::int32_t, 3> extents{2, 3, 4};
  const MeshShape shape(extents);
  EXPECT_EQ(shape.chip_count(), 24);
  for (std::int64_t i = 0; i < shape.chip_count(); ++i) {
    EXPECT_EQ(shape.linear_index(shape.coord_at(i)), i);
  }
  EXPECT_EQ(shape.linear_index(MeshCoord{1, 2, 3}), 23);
  EXPECT_TRUE(shape.contains(MeshCoord{1, 2, 3}));
  EXPECT_FALSE(shape.contains(MeshCoord{2, 0, 0}));
  EXPECT_THROW((void)shape.linear_index(MeshCoord{2, 0, 0}), InternalError);
}

TEST(MeshShape, RejectsBadExtents) {
  const std::array<std::int32_t, 2> zero{0, 4};
  EXPECT_THROW(MeshShape{zero}, InputError);
  const std::array<std::int32_t, 4> four{1, 1, 1, 1};
  EXPECT_THROW(MeshShape{four}, InputError);
  const std::array<std::int32_t, 2> huge{100000, 100000};
  EXPECT_THROW(MeshShape{huge}, InputError);
  const std::array<std::int32_t, 2> two{2, 2};
  const std::array<bool, 1> one_wrap{true};
  EXPECT_THROW((MeshShape{two, one_wrap}), InputError);
}

TEST(MeshShape, CoordToString) {
  EXPECT_EQ(mesh_coord_to_string(MeshCoord{1, 2, 0}, 2), "(1, 2)");
  EXPECT_EQ(mesh_coord_to_string(MeshCoord{1, 2, 3}, 3), "(1, 2, 3)");
}

}  // namespace
}  // namespace cclmesh::topo
