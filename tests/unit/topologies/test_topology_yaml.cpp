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

using ::testing::AllOf;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

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

// `text` with its first `from` replaced by `to`.
std::string edited(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

std::string yaml_error(const std::string& text, const std::string& source) {
  try {
    (void)parse_topology_yaml(text, source);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

// Session 32: a T3K file edited to `wraps: [false, true]` loaded, `topo` printed `mesh 2x4
// (wraps: cols)` and runs were the plain T3K's: the T3K has no link closing a row. A wrap no
// link closes is refused naming the file, the field and the chip pairs that are not linked.
TEST(TopologyYaml, AWrapNoLinkClosesIsRefused) {
  const std::string t3k = to_yaml(build_t3k());
  const std::string cols = edited(t3k, "wraps: [false, false]", "wraps: [false, true]");
  EXPECT_EQ(yaml_error(cols, "t3k_cols.yaml"),
            "t3k_cols.yaml:6: mesh.wraps: dimension 1 (cols) wraps, but no link closes it: chip 4 (0, 0) - chip 6 "
            "(0, 3), chip 5 (1, 0) - chip 7 (1, 3) are not linked; expected a link between the two end chips of a "
            "line of that dimension, or false for it");
  // A dimension of 2 cannot wrap (its ends are already neighbours): dropped, as before.
  const std::string rows = edited(t3k, "wraps: [false, false]", "wraps: [true, false]");
  EXPECT_EQ(parse_topology_yaml(rows, "t3k_rows.yaml"), build_t3k());
  // A mesh of many lines names the first four.
  const std::string mesh = to_yaml(build_parametric(parse_parametric_spec("mesh:6x3")));
  EXPECT_THAT(yaml_error(edited(mesh, "wraps: [false, false]", "wraps: [true, false]"), "mesh.yaml"),
              HasSubstr("dimension 0 (rows) wraps, but no link closes it: chip 0 (0, 0) - chip 15 (5, 0), chip 1 "
                        "(0, 1) - chip 16 (5, 1), chip 2 (0, 2) - chip 17 (5, 2) are not linked;"));
}

// A torus keeps its wraps through a save when some of its closing links are gone (without_edge,
// without_chip): those are a torus with links down, not a claim no link backs.
TEST(TopologyYaml, ATorusWithSomeClosingLinksGoneRoundTrips) {
  const Topology torus = build_parametric(parse_parametric_spec("torus:4x4"));
  EXPECT_EQ(round_trip(torus), torus);
  const Topology no_row_closing = without_edge(torus, 0, 3);
  EXPECT_EQ(round_trip(no_row_closing), no_row_closing);
  const Topology no_corner = without_chip(torus, 0);
  EXPECT_EQ(round_trip(no_corner), no_corner);
  const Topology torus_3d = build_parametric(parse_parametric_spec("torus:3x3x3/1"));
  EXPECT_EQ(round_trip(torus_3d), torus_3d);
}

// Session 32: `chips: []` loaded and `topo` printed `chips 0`.
TEST(TopologyYaml, AFileWithoutChipsIsRefused) {
  EXPECT_EQ(yaml_error("format: cclmesh-topology\nversion: 1\nchips: []\n", "none.yaml"),
            "none.yaml:3: chips: no chips; expected at least one chip");
  EXPECT_THAT(yaml_error("format: cclmesh-topology\nversion: 1\nchips:\n", "none.yaml"),
              AllOf(StartsWith("none.yaml:"), EndsWith(": chips: no chips; expected at least one chip")));
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
