// Every kind of bad input the loaders accept from users gives an InputError whose one-line
// message names the file (and line), the entry and the problem; none crashes.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "test_paths.hpp"
#include "topologies/cluster_descriptor.hpp"
#include "topologies/errors.hpp"
#include "topologies/parametric.hpp"
#include "topologies/system_loader.hpp"
#include "topologies/topology_yaml.hpp"

namespace cclmesh::topo {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

std::string load_error(const std::string& spec) {
  try {
    (void)load_system(spec);
  } catch (const InputError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("wrong exception type: ") + e.what();
  }
  return "no error";
}

struct Case {
  const char* file;
  const char* where;  // file-relative location and entry
  const char* problem;
};

class BadInputFile : public ::testing::TestWithParam<Case> {};

TEST_P(BadInputFile, NamesFileEntryAndProblem) {
  const Case& c = GetParam();
  const std::string path = test::fixture(c.file).string();
  const std::string message = load_error(path);
  EXPECT_THAT(message, StartsWith(path + ":")) << message;
  EXPECT_THAT(message, HasSubstr(c.where)) << message;
  EXPECT_THAT(message, HasSubstr(c.problem)) << message;
  EXPECT_THAT(message, Not(HasSubstr("\n")));
}

INSTANTIATE_TEST_SUITE_P(
    Loaders, BadInputFile,
    ::testing::Values(
        Case{"malformed.yaml", ":2:", "malformed YAML"},
        Case{"unknown_arch.yaml", ":3: arch[1]",
             "unknown architecture 'quasar'; expected wormhole_b0, Wormhole, wh, blackhole or bh"},
        Case{"link_missing_chip.yaml", ":4: ethernet_connections[1]",
             "chip 9 does not exist; expected a chip listed under arch (0, 1)"},
        Case{"link_missing_channel.yaml", ":5: ethernet_connections[1]",
             "channel 14 does not exist on chip 1 (blackhole); expected 0..13"},
        Case{"channel_used_twice.yaml", ":4: ethernet_connections[1]",
             "channel 0.ch8 is already used by ethernet_connections[0] (0.ch8 <-> 1.ch0)"},
        Case{"asymmetric_link.yaml", ":8: chips[0].eth[8]",
             "asymmetric link: 0.ch8 -> 1.ch0, but 1.ch0 -> 0.ch9"},
        Case{"one_sided_link.yaml", ":5: chips[0].eth[8]",
             "asymmetric link: 0.ch8 -> 1.ch0, but chip 1 lists no eth 0"},
        Case{"own_channel_used_twice.yaml", "chips[1].eth[3]",
             "channel 2.ch0 is used twice: 0.ch8 -> 2.ch0 and 1.ch3 -> 2.ch0"},
        Case{"own_unknown_arch.yaml", ":5: chips[0].arch", "unknown architecture 'quasar'"},
        Case{"own_missing_chip.yaml", ":5: chips[0].eth[8]", "chip 7 does not exist"},
        Case{"own_missing_channel.yaml", ":5: chips[0].eth[16]",
             "channel 16 does not exist on chip 0 (wormhole_b0); expected 0..15"},
        Case{"neither_format.yaml", ":1: top level", "neither a tt-umd cluster descriptor"},
        // Session 19: a mesh shape larger than its chips' coordinates (loaded as "mesh 3x4" before).
        Case{"own_mesh_3x4_eight_chips.yaml", ":6: mesh.shape",
             "[3, 4], but the mesh_coords of its 8 placed chips (of 8) span [2, 4]; expected the shape the chips fill"},
        Case{"own_mesh_no_coords.yaml", ":4: mesh.shape", "[1, 2], but none of the 2 chips has a mesh_coord"},
        Case{"own_mesh_chip_twice.yaml", "topology 'mesh_chip_twice'",
             "chips 0 and 1 share mesh coordinate (0, 0); expected one chip per coordinate"}));

std::string umd_error(const std::string& text) {
  try {
    (void)parse_cluster_descriptor(text, "cluster.yaml", "cluster");
  } catch (const InputError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("wrong exception type: ") + e.what();
  }
  return "no error";
}

std::string own_error(const std::string& text) {
  try {
    (void)parse_topology_yaml(text, "own.yaml");
  } catch (const InputError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("wrong exception type: ") + e.what();
  }
  return "no error";
}

TEST(BadInput, ClusterDescriptorShapes) {
  EXPECT_THAT(umd_error(""),
              HasSubstr("cluster.yaml: top level: got an empty value; expected a map"));
  EXPECT_THAT(umd_error("- 1\n- 2\n"), HasSubstr("top level: got a list; expected a map"));
  EXPECT_THAT(umd_error("ethernet_connections: []\n"), HasSubstr("missing key 'arch'"));
  EXPECT_THAT(umd_error("arch: {0: wh}\n"), HasSubstr("missing key 'ethernet_connections'"));
  EXPECT_THAT(umd_error("arch: {x: wh}\nethernet_connections: []\n"),
              HasSubstr("cluster.yaml:1: arch: got 'x'; expected an integer"));
  EXPECT_THAT(umd_error("arch: {0: wh}\nethernet_connections: [[{chip: 0, chan: 1.5}, {chip: 0, "
                        "chan: 2}]]\n"),
              HasSubstr("ethernet_connections[0]: got '1.5'; expected an integer"));
  EXPECT_THAT(umd_error("arch: {0: wh}\nethernet_connections: [[{chip: 0, chan: -1}, {chip: 0, "
                        "chan: 2}]]\n"),
              HasSubstr("got '-1'"));
  EXPECT_THAT(umd_error("arch: {0: wh, 1: wh}\nethernet_connections: [[{chip: 0, chan: 1}, "
                        "{chip: 0, chan: 2}]]\n"),
              HasSubstr("joins chip 0 to itself"));
  EXPECT_THAT(umd_error("arch: {0: wh, 1: wh}\nethernet_connections: [[{chip: 0, chan: 1}]]\n"),
              HasSubstr("ethernet_connections[0]: 1 items; expected 2 endpoints"));
  EXPECT_THAT(umd_error("arch: {0: wh, 1: wh}\nethernet_connections: [[{chip: 0, port: 1}, "
                        "{chip: 1, chan: 1}]]\n"),
              HasSubstr("unknown key 'port'; expected one of chip, chan"));
  EXPECT_THAT(umd_error("arch: {0: wh}\nchips: {0: [1, 2]}\nethernet_connections: []\n"),
              HasSubstr("chips[0]: 2 numbers; expected 4: (x, y, rack, shelf)"));
  EXPECT_THAT(umd_error("arch: {0: wh}\nethernet_connections: []\nchips_with_mmio: [5: 0]\n"),
              HasSubstr("chips_with_mmio[0]: chip 5 does not exist"));
  EXPECT_THAT(umd_error("arch: {0: wh}\nethernet_connections: []\nboards: [[{board_type: "
                        "n999}, {chips: [0]}]]\n"),
              HasSubstr("boards[0].board_type: unknown board type 'n999'"));
  EXPECT_THAT(umd_error("arch: {0: wh}\nethernet_connections: []\nboards: [[{chips: [0]}], "
                        "[{chips: [0]}]]\n"),
              HasSubstr("chip 0 is already on boards[0]"));
  EXPECT_THAT(umd_error("arch: {0: wh}\nethernet_connections: []\nharvesting: {0: {mask: 1}}\n"),
              HasSubstr("harvesting[0]: unknown key 'mask'"));
  EXPECT_THAT(umd_error("arch: {0: wh, 0: bh}\nethernet_connections: []\n"),
              HasSubstr("arch[0]: chip listed twice"));
}

TEST(BadInput, OwnFormatShapes) {
  EXPECT_THAT(own_error("format: something-else\nversion: 1\nchips: []\n"),
              HasSubstr("own.yaml:1: format: got 'something-else'; expected 'cclmesh-topology'"));
  EXPECT_THAT(own_error("format: cclmesh-topology\nversion: 2\nchips: []\n"),
              HasSubstr("version: got '2'; expected an integer in 1..1"));
  EXPECT_THAT(own_error("format: cclmesh-topology\nversion: 1\nchips: []\nextra: 1\n"),
              HasSubstr("top level: unknown key 'extra'"));
  EXPECT_THAT(own_error("format: cclmesh-topology\nversion: 1\nchips:\n  - {id: 0, arch: wh}\n  - "
                        "{id: 0, arch: wh}\n"),
              HasSubstr("own.yaml:5: chips[1].id: chip 0 is listed twice"));
  EXPECT_THAT(own_error("format: cclmesh-topology\nversion: 1\nchips:\n  - {id: 0, arch: wh, "
                        "mesh_coord: [0, 0]}\n"),
              HasSubstr("chips[0].mesh_coord: a mesh coordinate needs a top-level `mesh` shape"));
  EXPECT_THAT(
      own_error("format: cclmesh-topology\nversion: 1\nmesh: {shape: [1, 2]}\nchips:\n  - "
                "{id: 0, arch: wh, mesh_coord: [0, 0]}\n  - {id: 1, arch: wh, mesh_coord: "
                "[0, 0]}\n"),
      HasSubstr("own.yaml: topology 'unnamed': chips 0 and 1 share mesh coordinate (0, 0)"));
  EXPECT_THAT(own_error("format: cclmesh-topology\nversion: 1\nmesh: {shape: [1, 2]}\nchips:\n  - "
                        "{id: 0, arch: wh, mesh_coord: [0, 2]}\n"),
              HasSubstr("chips[0].mesh_coord: got '2'; expected an integer in 0..1"));
  EXPECT_THAT(own_error("format: cclmesh-topology\nversion: 1\nmesh: {shape: [0, 2]}\nchips: []\n"),
              HasSubstr("mesh.shape: got '0'"));
  EXPECT_THAT(own_error("format: cclmesh-topology\nversion: 1\nchips:\n  - {id: 0, arch: wh, eth: "
                        "{1: [0, 2]}}\n  - {id: 1, arch: wh}\n"),
              HasSubstr("0.ch1 -> 0.ch2 joins chip 0 to itself"));
  EXPECT_THAT(own_error("format: cclmesh-topology\nversion: 1\nchips:\n  - {id: 0, arch: wh, eth: "
                        "{1: [1]}}\n"),
              HasSubstr("chips[0].eth[1]: got a list; expected [peer chip, peer channel]"));
  EXPECT_THAT(own_error("format: cclmesh-topology\nversion: 1\nchips:\n  - {id: 0, arch: wh, eth: "
                        "{1: {peer: [1, 1], rate_bytes_per_s: 5000000000}}}\n  - {id: 1, arch: wh, eth: {1: "
                        "[0, 1]}}\n"),
              HasSubstr("different rate or latency on each end"));
  EXPECT_THAT(own_error("format: cclmesh-topology\nversion: 1\nchips:\n  - {id: 0, arch: wh, eth: "
                        "{1: [1, 1], 1: [1, 2]}}\n"),
              HasSubstr("chips[0].eth[1]: channel 1 of chip 0 is listed twice"));
}

// Session 28's bug bash: a file's links took any positive rate and any latency (1 B/s ran a
// 64 KiB op for 36 000 simulated seconds; 0 ps was refused only by the simulated device, not
// naming the file), and a Tensix harvest mask naming rows the chip does not have passed `topo`
// and failed in `run` naming neither file nor field. Each is now refused as the file is read,
// in --link-rate's and --link-latency's ranges and in the chip's rows (columns on Blackhole).
TEST(BadInput, LinksAndHarvestMasksOutOfRangeAreRefusedAsTheFileIsRead) {
  const auto own_link = [](const std::string& fields) {
    return own_error("format: cclmesh-topology\nversion: 1\nchips:\n  - {id: 0, arch: wh, eth: {1: {peer: [1, 1], " +
                     fields + "}}}\n  - {id: 1, arch: wh, eth: {1: {peer: [0, 1], " + fields + "}}}\n");
  };
  EXPECT_THAT(own_link("rate_bytes_per_s: 1"),
              HasSubstr("own.yaml:4: chips[0].eth[1].rate_bytes_per_s: got '1'; expected an integer in "
                        "100000000..1000000000000"));
  EXPECT_THAT(own_link("latency_ps: 0"),
              HasSubstr("chips[0].eth[1].latency_ps: got '0'; expected an integer in 200000..1000000000"));
  EXPECT_THAT(own_link("latency_ps: 100000000000"), HasSubstr("chips[0].eth[1].latency_ps: got '100000000000'"));
  // The ends of the ranges are accepted.
  EXPECT_EQ(own_link("rate_bytes_per_s: 100000000, latency_ps: 1000000000"), "no error");
  EXPECT_EQ(own_link("rate_bytes_per_s: 1000000000000, latency_ps: 200000"), "no error");

  EXPECT_THAT(own_error("format: cclmesh-topology\nversion: 1\nchips:\n  - {id: 0, arch: wh, harvesting: "
                        "{tensix: 1025}}\n"),
              HasSubstr("chips[0].harvesting.tensix: 0x401 sets bit 10, but a wormhole_b0 chip has 10 Tensix rows "
                        "(bits 0-9); expected a mask below 0x400"));
  EXPECT_EQ(own_error("format: cclmesh-topology\nversion: 1\nchips:\n  - {id: 0, arch: wh, harvesting: "
                      "{tensix: 513}}\n"),
            "no error");
  EXPECT_THAT(own_error("format: cclmesh-topology\nversion: 1\nchips:\n  - {id: 0, arch: bh, harvesting: "
                        "{tensix: 16384}}\n"),
              HasSubstr("0x4000 sets bit 14, but a blackhole chip has 14 Tensix columns (bits 0-13)"));
  EXPECT_THAT(umd_error("arch: {0: wh}\nethernet_connections: []\nharvesting: {0: {harvest_mask: 2048}}\n"),
              HasSubstr("harvesting[0].harvest_mask: 0x800 sets bit 11, but a wormhole_b0 chip has 10 Tensix rows"));
}

// Session 44's bug bash: a chip whose harvest mask names every Tensix row loaded, and every op
// then refused it naming neither file nor field ("4 worker cores from (0,0) do not fit the 8x0
// worker grid"); two chips given one PCI device index, or one chip listed twice under
// chips_with_mmio (which left the chip that had the second index unattached), loaded too.
TEST(BadInput, AHarvestMaskOfEveryRowAndAPciDeviceOnTwoChipsAreRefused) {
  EXPECT_THAT(own_error("format: cclmesh-topology\nversion: 1\nchips:\n  - {id: 0, arch: wh, harvesting: "
                        "{tensix: 1023}}\n"),
              HasSubstr("own.yaml:4: chips[0].harvesting.tensix: 0x3ff harvests every one of a wormhole_b0 chip's 10 "
                        "Tensix rows; expected a mask that leaves at least one"));
  EXPECT_EQ(own_error("format: cclmesh-topology\nversion: 1\nchips:\n  - {id: 0, arch: wh, harvesting: "
                      "{tensix: 511}}\n"),
            "no error");
  EXPECT_THAT(own_error("format: cclmesh-topology\nversion: 1\nchips:\n  - {id: 0, arch: bh, harvesting: "
                        "{tensix: 16383}}\n"),
              HasSubstr("0x3fff harvests every one of a blackhole chip's 14 Tensix columns"));
  EXPECT_THAT(umd_error("arch: {0: wh}\nethernet_connections: []\nharvesting: {0: {harvest_mask: 1023}}\n"),
              HasSubstr("harvesting[0].harvest_mask: 0x3ff harvests every one"));

  EXPECT_THAT(own_error("format: cclmesh-topology\nversion: 1\nchips:\n  - {id: 0, arch: wh, pci_device: 0}\n"
                        "  - {id: 1, arch: wh, pci_device: 0}\n"),
              HasSubstr("own.yaml:5: chips[1].pci_device: chip 1 is PCI device 0, as chip 0 is; expected each PCI "
                        "device index on one chip"));
  EXPECT_THAT(umd_error("arch: {0: wh, 1: wh, 2: wh}\nethernet_connections: []\nchips_with_mmio: [0: 0, 2: 0]\n"),
              HasSubstr("cluster.yaml:3: chips_with_mmio[1]: chip 2 is PCI device 0, as chip 0 is"));
  EXPECT_THAT(umd_error("arch: {0: wh, 1: wh, 2: wh}\nethernet_connections: []\nchips_with_mmio: [0: 0, 0: 2]\n"),
              HasSubstr("chips_with_mmio[1]: chip 0 is listed twice (PCI devices 0 and 2); expected each chip once"));
  EXPECT_THAT(umd_error("arch: {0: wh, 1: wh}\nethernet_connections: []\nchips_with_mmio: [1, 1]\n"),
              HasSubstr("chips_with_mmio[1]: chip 1 is listed twice"));
  EXPECT_EQ(umd_error("arch: {0: wh, 1: wh}\nethernet_connections: []\nchips_with_mmio: [0: 1, 1: 0]\n"),
            "no error");
}

TEST(BadInput, FilesThatCannotBeRead) {
  EXPECT_THAT(load_error("/nonexistent/cluster.yaml"),
              HasSubstr("system '/nonexistent/cluster.yaml'"));
  try {
    (void)load_topology_any_format(test::fixture("").string());
    FAIL() << "loaded a directory";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("is a directory; expected a YAML file"));
  }
  EXPECT_THROW((void)load_cluster_descriptor("/nonexistent/cluster.yaml"), InputError);
  EXPECT_THROW((void)load_topology_file("/nonexistent/own.yaml"), InputError);
}

// Review (session 10): what a user passes to --system by mistake is named as such.
TEST(BadInput, MistakenFilesAreNamed) {
  // A directory said "not a built-in system, not a parametric spec and no such file".
  const std::string directory = test::fixture("").string();
  EXPECT_THAT(load_error(directory), HasSubstr("is a directory; expected a YAML file"));
  EXPECT_THAT(load_error(directory), Not(HasSubstr("no such file")));
  // tt-umd's other YAML, a SoC descriptor (one chip's cores), said "neither a tt-umd cluster
  // descriptor (no 'arch' or 'ethernet_connections' key) nor an own-format file".
  const std::string soc = test::shared_file("soc_descriptors/wormhole_b0_8x10.yaml").string();
  EXPECT_THAT(load_error(soc), HasSubstr(soc));
  EXPECT_THAT(load_error(soc), HasSubstr("a tt-umd SoC descriptor (one chip's cores"));
  EXPECT_THAT(load_error(soc), HasSubstr("expected a cluster descriptor"));
}

// Bug bash (session 28): a value quoted in a message is cut at 60 bytes, with its length, and
// keeps to one line. `--system big.txt` (200000 lines of numbers: one YAML scalar) quoted all
// 1.3 MB of it in "top level: got '1 2 3 ...'; expected a map".
TEST(BadInput, LongValuesAreQuotedShort) {
  std::string numbers;
  for (int i = 1; i <= 200000; ++i) numbers += std::to_string(i) + "\n";
  const std::filesystem::path file = std::filesystem::temp_directory_path() /
                                     ("cclmesh_numbers_" + std::to_string(::getpid()) + ".txt");
  { std::ofstream(file) << numbers; }
  const std::string error = load_error(file.string());
  std::filesystem::remove(file);
  EXPECT_THAT(error, HasSubstr("top level: got '1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 ...' "
                               "(1288894 bytes); expected a map"));
  EXPECT_LT(error.size(), 400u);
  const std::string long_arch(5000, 'a');
  const std::string arch_error =
      own_error("format: cclmesh-topology\nversion: 1\nchips:\n  - {id: 0, arch: " + long_arch + "}\n");
  EXPECT_THAT(arch_error, HasSubstr("unknown architecture '" + std::string(60, 'a') + "...' (5000 bytes)"));
  EXPECT_LT(arch_error.size(), 400u);
  EXPECT_THAT(own_error("format: \"two\\nlines\"\nversion: 1\nchips: []\n"), HasSubstr("got 'two lines'"));
  // Short values are quoted whole, as before.
  EXPECT_THAT(own_error("format: cclmesh-topology\nversion: 1\nchips:\n  - {id: 0, arch: grayskull}\n"),
              HasSubstr("unknown architecture 'grayskull'; expected"));
}

// Review (session 10): `topo --system mesh:1000x1000` (a typo for 10x10) ran for over ten
// minutes on a million chips; a parametric spec is refused past kMaxParametricChips, naming it.
TEST(BadInput, ParametricSystemsPastTheChipLimitAreRefused) {
  EXPECT_NO_THROW((void)parse_parametric_spec("mesh:128x128"));
  for (const char* spec : {"mesh:1000x1000", "torus:129x128", "ring:16385", "mesh:64x64x8"}) {
    try {
      (void)parse_parametric_spec(spec);
      ADD_FAILURE() << spec << " was accepted";
    } catch (const InputError& e) {
      EXPECT_THAT(e.what(), HasSubstr(std::string("system spec '") + spec + "'"));
      EXPECT_THAT(e.what(), HasSubstr("expected at most 16384 chips"));
    }
  }
}

}  // namespace
}  // namespace cclmesh::topo
