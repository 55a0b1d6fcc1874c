#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

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
using ::testing::Not;

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

// Every chip placed at `coords` faulted away (without_chip keeps the shape).
Topology without_positions(Topology t, const std::vector<MeshCoord>& coords) {
  for (const MeshCoord& coord : coords) {
    const std::optional<ChipId> chip = t.chip_at(coord);
    EXPECT_TRUE(chip.has_value()) << coord[0] << "," << coord[1];
    if (chip) t = without_chip(t, *chip);
  }
  return t;
}

// Session 20: a mesh whose whole last column (or row) is faulted away keeps its shape, which
// the chips left span no longer; to_yaml lists the positions without a chip under mesh.empty,
// so the saved file loads back as the same system (before, the shape check refused it).
TEST(TopologyYaml, AMeshWithItsLastColumnOrRowFaultedAwayRoundTrips) {
  const Topology no_last_column = without_positions(build_t3k(), {{0, 3, 0}, {1, 3, 0}});
  const std::string text = to_yaml(no_last_column);
  EXPECT_THAT(text, HasSubstr("mesh: {shape: [2, 4], wraps: [false, false], empty: [[0, 3], [1, 3]]}")) << text;
  EXPECT_EQ(round_trip(no_last_column), no_last_column);
  const Topology mesh = build_parametric(parse_parametric_spec("mesh:3x3"));
  const Topology no_last_row = without_positions(mesh, {{2, 0, 0}, {2, 1, 0}, {2, 2, 0}});
  EXPECT_EQ(round_trip(no_last_row), no_last_row);
  // A hole inside the span is listed too (it loaded back before as well).
  const Topology hole = without_positions(mesh, {{1, 1, 0}});
  EXPECT_THAT(to_yaml(hole), HasSubstr("empty: [[1, 1]]"));
  EXPECT_EQ(round_trip(hole), hole);
  // A full mesh lists none.
  EXPECT_THAT(to_yaml(mesh), Not(HasSubstr("empty")));
}

std::string own_yaml_error(const std::string& text) {
  try {
    (void)parse_topology_yaml(text, "own.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(TopologyYaml, AnEmptyPositionMustBeOfTheShapeAndHoldNoChip) {
  const std::string chips = R"(
chips:
  - {id: 0, arch: wh, mesh_coord: [0, 0], eth: {0: [1, 0]}}
  - {id: 1, arch: wh, mesh_coord: [0, 1], eth: {0: [0, 0]}}
)";
  const std::string head = "format: cclmesh-topology\nversion: 1\n";
  EXPECT_EQ(own_yaml_error(head + "mesh: {shape: [1, 3], empty: [[0, 2]]}" + chips), "no error");
  EXPECT_THAT(own_yaml_error(head + "mesh: {shape: [1, 3], empty: [[0, 1]]}" + chips),
              HasSubstr("own.yaml:3: mesh.empty[0]: (0, 1) holds chip 1; expected a position of the shape without a "
                        "chip"));
  EXPECT_THAT(own_yaml_error(head + "mesh: {shape: [1, 3], empty: [[0, 3]]}" + chips),
              HasSubstr("own.yaml:3: mesh.empty[0]"));
  EXPECT_THAT(own_yaml_error(head + "mesh: {shape: [2, 3], empty: [[0, 2]]}" + chips),
              HasSubstr("mesh.shape: [2, 3], but the mesh_coords of its 2 placed chips (of 2) span [1, 3]"));
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
