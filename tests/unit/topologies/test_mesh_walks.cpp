#include <gtest/gtest.h>

#include <cstdlib>
#include <set>

#include "topologies/detail/mesh_walks.hpp"

namespace cclmesh::topo::detail {
namespace {

// Mesh neighbours, wraparound included where the shape wraps.
bool neighbours(const MeshShape& shape, const MeshCoord& a, const MeshCoord& b) {
  int differing = 0;
  bool ok = true;
  for (int d = 0; d < kMaxMeshRank; ++d) {
    const auto i = static_cast<std::size_t>(d);
    if (a[i] == b[i]) continue;
    ++differing;
    const auto gap = std::abs(a[i] - b[i]);
    ok = ok && (gap == 1 || (shape.wraps(d) && gap == shape.extent(d) - 1));
  }
  return differing == 1 && ok;
}

void expect_walk(const MeshShape& shape, const std::vector<MeshCoord>& walk, bool cycle) {
  ASSERT_EQ(static_cast<std::int64_t>(walk.size()), shape.chip_count()) << shape.to_string();
  std::set<MeshCoord> seen(walk.begin(), walk.end());
  EXPECT_EQ(seen.size(), walk.size());
  for (std::size_t i = 0; i + 1 < walk.size(); ++i) {
    EXPECT_TRUE(neighbours(shape, walk[i], walk[i + 1])) << shape.to_string() << " step " << i;
  }
  if (cycle) {
    EXPECT_TRUE(neighbours(shape, walk.back(), walk.front())) << shape.to_string();
  }
}

MeshShape shape_of(std::vector<std::int32_t> extents, std::vector<int> wraps) {
  std::array<bool, 3> flags{false, false, false};
  for (std::size_t d = 0; d < wraps.size(); ++d) flags[d] = wraps[d] != 0;
  return MeshShape(extents, std::span<const bool>(flags.data(), extents.size()));
}

TEST(MeshWalks, T3kPerimeterOrder) {
  const auto cycle = mesh_cycle(MeshShape::mesh(2, 4));
  ASSERT_TRUE(cycle.has_value());
  const std::vector<MeshCoord> expected{{0, 0, 0}, {0, 1, 0}, {0, 2, 0}, {0, 3, 0},
                                        {1, 3, 0}, {1, 2, 0}, {1, 1, 0}, {1, 0, 0}};
  EXPECT_EQ(*cycle, expected);
  EXPECT_EQ(mesh_snake(MeshShape::mesh(2, 4)), expected);
}

TEST(MeshWalks, CyclesWhereTheRulesGiveOne) {
  for (const auto& shape :
       {MeshShape::mesh(2, 2), MeshShape::mesh(4, 8), MeshShape::mesh(3, 4), MeshShape::mesh(5, 2),
        MeshShape::torus(3, 3), MeshShape::torus(5, 7), shape_of({3, 5}, {0, 1}),
        shape_of({5, 3}, {1, 0}), shape_of({1, 7}, {0, 1}), shape_of({2, 3, 4}, {0, 0, 0}),
        shape_of({3, 3, 3}, {1, 1, 1}), shape_of({3, 3, 2}, {0, 0, 0}),
        shape_of({3, 5, 7}, {0, 1, 0})}) {
    const auto cycle = mesh_cycle(shape);
    ASSERT_TRUE(cycle.has_value()) << shape.to_string();
    expect_walk(shape, *cycle, true);
  }
}

TEST(MeshWalks, NoCycleWhereNoneExists) {
  EXPECT_FALSE(mesh_cycle(MeshShape::mesh(3, 3)).has_value());
  EXPECT_FALSE(mesh_cycle(MeshShape::mesh(1, 8)).has_value());
  EXPECT_FALSE(mesh_cycle(MeshShape::mesh(1, 2)).has_value());
  EXPECT_FALSE(mesh_cycle(shape_of({3, 3, 3}, {0, 0, 0})).has_value());
}

TEST(MeshWalks, SnakesEverywhere) {
  for (const auto& shape :
       {MeshShape::mesh(1, 1), MeshShape::mesh(1, 5), MeshShape::mesh(3, 3), MeshShape::mesh(4, 8),
        shape_of({3, 3, 3}, {0, 0, 0}), shape_of({2, 3, 4}, {0, 0, 0})}) {
    expect_walk(shape, mesh_snake(shape), false);
  }
}

}  // namespace
}  // namespace cclmesh::topo::detail
