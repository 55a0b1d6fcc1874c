#include <gtest/gtest.h>

#include "test_paths.hpp"
#include "topologies/builtin_systems.hpp"
#include "topologies/cluster_descriptor.hpp"
#include "topologies/faults.hpp"
#include "topologies/isomorphism.hpp"
#include "topologies/mesh_inference.hpp"
#include "topologies/parametric.hpp"

namespace cclmesh::topo {
namespace {

TEST(Isomorphism, T3kDescriptorMatchesBuiltin) {
  const Topology umd = load_cluster_descriptor(test::cluster_descriptor("t3k_cluster_desc.yaml"));
  const Topology builtin = build_t3k();
  const auto mapping = find_isomorphism(umd, builtin);
  ASSERT_TRUE(mapping.has_value());
  EXPECT_EQ(mapping->size(), 8u);
  for (const NeighbourEdge& edge : umd.edges()) {
    EXPECT_EQ(builtin.links_between(mapping->at(edge.a), mapping->at(edge.b)), edge.multiplicity());
  }
}

TEST(Isomorphism, IgnoresChannelsAndIdsButNotMultiplicityOrArch) {
  // The built-in t3k is a 2x4 mesh with 2 links per neighbour, whatever its channels.
  EXPECT_TRUE(is_isomorphic(build_t3k(), build_parametric(parse_parametric_spec("mesh:2x4/2"))));
  EXPECT_FALSE(is_isomorphic(build_t3k(), build_parametric(parse_parametric_spec("mesh:2x4/1"))));
  EXPECT_FALSE(
      is_isomorphic(build_t3k(), build_parametric(parse_parametric_spec("mesh:2x4/2@bh"))));
  EXPECT_FALSE(is_isomorphic(build_t3k(), build_parametric(parse_parametric_spec("ring:8/2"))));
  // One slow link does not change the shape; one missing link does.
  EXPECT_TRUE(is_isomorphic(build_t3k(), with_link_rate_scaled(build_t3k(), {0, 8}, 0.5)));
  EXPECT_FALSE(is_isomorphic(build_t3k(), without_link(build_t3k(), {0, 8})));
  EXPECT_TRUE(is_isomorphic(build_n150(), build_p150()) == false);
}

TEST(Isomorphism, TransposedMeshIsTheSameGraph) {
  EXPECT_TRUE(is_isomorphic(build_parametric(parse_parametric_spec("mesh:4x8/4")),
                            build_parametric(parse_parametric_spec("mesh:8x4/4"))));
}

}  // namespace
}  // namespace cclmesh::topo
