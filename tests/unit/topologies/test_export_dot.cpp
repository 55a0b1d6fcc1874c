#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "topologies/builtin_systems.hpp"
#include "topologies/export_dot.hpp"

namespace cclmesh::topo {
namespace {

using ::testing::HasSubstr;

TEST(ExportDot, T3k) {
  const std::string dot = to_dot(build_t3k());
  EXPECT_THAT(dot, HasSubstr("graph G {"));
  EXPECT_THAT(dot, HasSubstr("label=\"t3k\";"));
  EXPECT_THAT(dot, HasSubstr("0[label=\"0\\nWH n300\\nMMIO\", penwidth=2, pos="));
  EXPECT_THAT(dot, HasSubstr("4[label=\"4\\nWH n300\", pos=\"0.00,0.00!\"]"));
  EXPECT_THAT(dot, HasSubstr("0--4 [label=\"2\", penwidth=2]"));
  // One line per neighbour edge.
  std::size_t edges = 0;
  for (std::size_t at = dot.find("--"); at != std::string::npos; at = dot.find("--", at + 2))
    ++edges;
  EXPECT_EQ(edges, 10u);
}

TEST(ExportDot, GatewaysHaveNoPosition) {
  const std::string dot = to_dot(build_tg());
  EXPECT_THAT(dot, HasSubstr("32[label=\"32\\nWH n150\\nMMIO\", penwidth=2]"));
  EXPECT_THAT(dot, HasSubstr("0--32 [label=\"1\", penwidth=1]"));
}

}  // namespace
}  // namespace cclmesh::topo
