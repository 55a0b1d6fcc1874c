#include <gtest/gtest.h>

#include "topologies/builtin_systems.hpp"
#include "topologies/parametric.hpp"
#include "topologies/usable_links.hpp"

namespace cclmesh::topo {
namespace {

TEST(UsableLinks, ReproducesThePublishedRuleOfThumb) {
  // REFERENCE 3.1 / 3.3: N300 and T3K 1 link; WH Galaxy 4; Blackhole 2.
  EXPECT_EQ(usable_links(build_n300(), find_system_line(build_n300())), 1);
  EXPECT_EQ(usable_links(build_t3k(), find_system_ring(build_t3k())), 1);
  EXPECT_EQ(usable_links(build_t3k(), find_axis_lines(build_t3k(), 1).front()), 1);
  EXPECT_EQ(usable_links(build_galaxy(), find_axis_lines(build_galaxy(), 0).front()), 4);
  EXPECT_EQ(usable_links(build_tg(), find_axis_lines(build_tg(), 1).front()), 3);
  EXPECT_EQ(usable_links(build_p300(), find_system_line(build_p300())), 2);
  EXPECT_EQ(usable_links(build_bh_galaxy(), find_system_ring(build_bh_galaxy())), 2);
}

TEST(UsableLinks, Edges) {
  EXPECT_EQ(dispatch_reserved_links(build_t3k()), 1);
  EXPECT_EQ(dispatch_reserved_links(build_galaxy()), 0);
  EXPECT_EQ(usable_links(build_n150(), find_system_line(build_n150())), 0);  // no hops
}

}  // namespace
}  // namespace cclmesh::topo
