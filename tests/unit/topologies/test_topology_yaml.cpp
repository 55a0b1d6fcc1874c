#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "test_paths.hpp"
#include "topologies/builtin_systems.hpp"
#include "topologies/cluster_descriptor.hpp"
#include "topologies/errors.hpp"
#include "topologies/faults.hpp"
#include "topologies/parametric.hpp"
#include "topologies/topology_yaml.hpp"

namespace cclmesh::topo {
namespace {

using ::testing::HasSubstr;

Topology round_trip(const Topology& t) { return parse_topology_yaml(to_yaml(t), "<round trip>"); }

TEST(TopologyYaml, BuiltinsRoundTrip) {
  for (const auto& name : builtin_system_names()) {
    const Topology t = *build_builtin_system(name);
    EXPECT_EQ(round_trip(t), t) << name;
  }
}

TEST(TopologyYaml, ParametricAndLoadedSystemsRoundTrip) {
  for (const char* spec : {"mesh:3x5/2@bh", "torus:4x4x2/2", "ring:7/1"}) {
    const Topology t = build_parametric(parse_parametric_spec(spec));
    EXPECT_EQ(round_trip(t), t) << spec;
  }
  for (const char* file : {"t3k_cluster_desc.yaml", "blackhole_4xP150.yaml",
                           "wormhole_2xN300_unconnected.yaml", "wormhole_N300.yaml"}) {
    const Topology t = load_cluster_descriptor(test::cluster_descriptor(file));
    EXPECT_EQ(round_trip(t), t) << file;
  }
}

TEST(TopologyYaml, FaultedSystemRoundTripsWithItsSlowLink) {
  const Topology slow = with_link_rate_scaled(without_chip(build_t3k(), 7), {0, 8}, 0.5);
  const std::string text = to_yaml(slow);
  EXPECT_THAT(text, HasSubstr("rate_bytes_per_s: 6250000000"));
  EXPECT_EQ(round_trip(slow), slow);
}

TEST(TopologyYaml, SaveAndLoadFile) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("cclmesh_topology_yaml_test_" + std::to_string(::getpid()) + ".yaml");
  const Topology t = build_tg();
  save_topology(t, path);
  EXPECT_EQ(load_topology_file(path), t);
  std::filesystem::remove(path);
  EXPECT_FALSE(std::filesystem::exists(path.string() + ".tmp"));
}

TEST(TopologyYaml, SaveToAnUnwritablePlaceIsInputError) {
  EXPECT_THROW(save_topology(build_n150(), "/nonexistent-dir/x.yaml"), InputError);
}

TEST(TopologyYaml, HandWrittenMinimalFile) {
  const Topology t = parse_topology_yaml(R"(
format: cclmesh-topology
version: 1
chips:
  - {id: 0, arch: bh, eth: {0: [1, 0]}}
  - {id: 1, arch: blackhole, eth: {0: [0, 0]}}
)",
                                         "pair.yaml");
  EXPECT_EQ(t.name(), "unnamed");
  EXPECT_EQ(t.links().size(), 1u);
  EXPECT_EQ(t.links()[0].rate_bytes_per_s, kBlackholeTraits.link_rate_bytes_per_s);
  EXPECT_FALSE(t.mesh_shape().has_value());
}

}  // namespace
}  // namespace cclmesh::topo
