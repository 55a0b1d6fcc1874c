#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test_paths.hpp"
#include "topologies/builtin_systems.hpp"
#include "topologies/cluster_descriptor.hpp"
#include "topologies/faults.hpp"
#include "topologies/mesh_inference.hpp"
#include "topologies/parametric.hpp"
#include "topologies/summary.hpp"

namespace cclmesh::topo {
namespace {

using ::testing::HasSubstr;

TEST(Summary, T3k) {
  const TopologySummary s = summarize(build_t3k());
  EXPECT_EQ(s.name, "t3k");
  EXPECT_EQ(s.chips, 8u);
  EXPECT_EQ(s.links, 20u);
  EXPECT_EQ(s.edges, 10u);
  EXPECT_EQ(s.mmio_chips, 4u);
  EXPECT_EQ(s.diameter, 4);
  EXPECT_EQ(s.components, 1u);
  // Cutting the 2x4 between columns 1 and 2 crosses 2 edges of 2 links.
  EXPECT_EQ(s.bisection_links, 4u);
  EXPECT_THAT(s.bisection_method, HasSubstr("cols 2|2"));
  EXPECT_TRUE(s.ring);
  EXPECT_EQ(s.ring_detail, "4-0-2-6-7-3-1-5-4");
  EXPECT_EQ(s.mesh_shape, "2x4");
}

TEST(Summary, JsonHasTheCliFields) {
  const nlohmann::json json = to_json(summarize(build_t3k()));
  EXPECT_EQ(json.at("chips"), 8);
  EXPECT_EQ(json.at("links"), 20);
  EXPECT_EQ(json.at("edges"), 10);
  EXPECT_EQ(json.at("diameter"), 4);
  EXPECT_EQ(json.at("ring"), true);
  EXPECT_EQ(json.at("bisection_links"), 4);
  EXPECT_EQ(json.at("arch"), nlohmann::json::array({"wormhole_b0"}));

  const nlohmann::json split = to_json(summarize(
      load_cluster_descriptor(test::cluster_descriptor("wormhole_2xN300_unconnected.yaml"))));
  EXPECT_TRUE(split.at("diameter").is_null());
  EXPECT_EQ(split.at("ring"), false);
  EXPECT_EQ(split.at("components"), 2);
  EXPECT_THAT(split.at("ring_detail").get<std::string>(), HasSubstr("not connected"));
}

TEST(Summary, BisectionOfMeshesToriAndGraphsWithoutShape) {
  EXPECT_EQ(summarize(build_galaxy()).bisection_links, 4u * 4);  // 4 rows x 4 links
  EXPECT_EQ(summarize(build_parametric(parse_parametric_spec("torus:8x8/1"))).bisection_links,
            16u);  // 8 rows, twice (wrap)
  EXPECT_EQ(summarize(build_n150()).bisection_links, 0u);
  // TG: the gateways join the side they link to, so the cut stays the Galaxy's.
  EXPECT_EQ(summarize(build_tg()).bisection_links, 16u);
  // Without a shape: exact for small systems (the 4xP150 square: 2 edges of 4 links).
  std::vector<Chip> chips;
  const Topology square =
      load_cluster_descriptor(test::cluster_descriptor("blackhole_4xP150.yaml"));
  for (Chip chip : square.chips()) {
    chip.mesh_coord.reset();
    chips.push_back(chip);
  }
  const Topology bare("bare", chips,
                      std::vector<EthLink>(square.links().begin(), square.links().end()));
  const Bisection exact = bisection_links(bare);
  EXPECT_EQ(exact.links, 8u);
  EXPECT_THAT(exact.method, HasSubstr("exact"));
}

TEST(Summary, RingAnswersForEverySystem) {
  EXPECT_FALSE(summarize(build_n150()).ring);
  EXPECT_FALSE(summarize(build_n300()).ring);
  EXPECT_TRUE(summarize(build_tg()).ring);
  EXPECT_TRUE(summarize(build_galaxy()).ring);
  EXPECT_FALSE(summarize(without_chip(build_galaxy(), 9)).ring);
}

TEST(Summary, Text) {
  const std::string text = to_text(summarize(build_t3k()));
  EXPECT_THAT(text, HasSubstr("chips      8 (4 MMIO-attached), wormhole_b0"));
  EXPECT_THAT(text, HasSubstr("diameter   4 hops"));
  EXPECT_THAT(text, HasSubstr("ring       yes: 4-0-2-6-7-3-1-5-4"));
}

}  // namespace
}  // namespace cclmesh::topo
