// Architecture files and SoC descriptors: values as REFERENCE gives them, and loud errors.
#include "sim/model/arch_params.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "runtime/device/l1_map.hpp"
#include "sim/engine/engine.hpp"
#include "sim/model/chip.hpp"
#include "sim/model/sim_fault.hpp"
#include "tests/unit/sim/sim_test_util.hpp"

namespace cclmesh::sim {
namespace {
using namespace literals;

std::filesystem::path write_temp(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / ("cclmesh_sim_" + name);
  std::ofstream(path) << text;
  return path;
}

TEST(ArchParams, WormholeMatchesReference) {
  const ArchParams& p = testing::wormhole()->params;
  EXPECT_EQ(p.arch, ChipArch::WormholeB0);
  EXPECT_EQ(p.clock_hz, 1'000'000'000);
  EXPECT_EQ(p.noc.link_rate.bytes_per_second(), 30'000'000'000);
  EXPECT_EQ(p.noc.tensix_niu.inject.bytes_per_second(), 28'100'000'000);
  EXPECT_EQ(p.noc.eth_niu.absorb.bytes_per_second(), 24'000'000'000);
  EXPECT_EQ(p.noc.dram_niu.inject.bytes_per_second(), 23'200'000'000);
  EXPECT_EQ(p.noc.max_packet_payload_bytes, 8192u);
  EXPECT_EQ(p.noc.flit_bytes, 32);
  EXPECT_EQ(p.noc.router_hop, 9_ns);
  EXPECT_EQ(p.noc.niu_to_router, 5_ns);
  EXPECT_EQ(p.l1.tensix_bytes, 1'499'136u);
  EXPECT_EQ(p.l1.erisc_bytes, 262'144u);
  // The device contract's ERISC map (its unreserved region runs to the end of L1) assumes this L1.
  EXPECT_EQ(p.l1.erisc_bytes, cclmesh::runtime::kEriscL1Bytes);
  EXPECT_EQ(p.dram.channels, 6);
  EXPECT_EQ(p.dram.bank_count(), 12);
  EXPECT_EQ(p.dram.bank_bytes(), std::uint64_t{1} << 30);
  EXPECT_EQ(p.eth.line_rate.bytes_per_second(), 12'500'000'000);
  EXPECT_EQ(p.eth.max_frame_bytes, 1500u);
  EXPECT_EQ(p.eth.frame_overhead_bytes, 50u);
  EXPECT_EQ(p.eth.tx_issue, 59_ns);
  EXPECT_EQ(p.eth.rx_handle, 21_ns);
  EXPECT_EQ(p.eth.one_way_latency, 500_ns);
}

TEST(ArchParams, BlackholeMatchesReference) {
  const ArchParams& p = testing::blackhole()->params;
  EXPECT_EQ(p.clock_hz, 1'350'000'000);
  EXPECT_EQ(p.noc.link_rate.bytes_per_second(), 82'215'000'000);  // 60.9 B/c at 1.35 GHz
  EXPECT_EQ(p.noc.dram_niu.inject.bytes_per_second(), 72'900'000'000);
  EXPECT_EQ(p.noc.max_packet_payload_bytes, 16384u);
  EXPECT_EQ(p.noc.router_hop, SimTime::from_ps(7'408));  // 10 cycles at 1.35 GHz, rounded up
  EXPECT_EQ(p.dram.channels, 8);
  EXPECT_EQ(p.dram.bank_count(), 8);
  EXPECT_EQ(p.eth.line_rate.bytes_per_second(), 25'000'000'000);
  EXPECT_EQ(p.l1.tensix_bytes, 1'572'864u);
}

TEST(SocDescriptor, WormholeLayout) {
  const SocDescriptor& soc = testing::wormhole()->soc;
  EXPECT_EQ(soc.grid_x, 10);
  EXPECT_EQ(soc.grid_y, 12);
  EXPECT_EQ(soc.tensix.size(), 80u);
  ASSERT_EQ(soc.eth.size(), 16u);
  EXPECT_EQ(soc.eth[0], (CoreCoord{9, 0}));  // REFERENCE 1.4 channel table
  EXPECT_EQ(soc.eth[8], (CoreCoord{9, 6}));
  EXPECT_EQ(soc.eth[15], (CoreCoord{4, 6}));
  ASSERT_EQ(soc.dram.size(), 6u);
  EXPECT_EQ(soc.dram[0], (std::vector<CoreCoord>{{0, 0}, {0, 1}, {0, 11}}));
  EXPECT_EQ(soc.noc0_x_to_noc1_x[0], 9);
  const auto tiles = soc.tile_map();
  EXPECT_EQ(tiles[static_cast<std::size_t>(2 * 10 + 0)], TileKind::RouterOnly);
  EXPECT_EQ(tiles[static_cast<std::size_t>(10 * 10 + 0)], TileKind::Arc);
  EXPECT_EQ(tiles[static_cast<std::size_t>(3 * 10 + 0)], TileKind::Pcie);
}

TEST(SocDescriptor, BlackholeLayout) {
  const SocDescriptor& soc = testing::blackhole()->soc;
  EXPECT_EQ(soc.grid_x, 17);
  EXPECT_EQ(soc.tensix.size(), 140u);
  ASSERT_EQ(soc.eth.size(), 14u);
  EXPECT_EQ(soc.eth[1], (CoreCoord{16, 1}));
  EXPECT_EQ(soc.l2cpu.size(), 4u);
}

TEST(SocDescriptor, BadFilesNameTheFieldAndValue) {
  const auto missing = write_temp("soc_missing.yaml", "grid: {x_size: 2, y_size: 2}\narch_name: WORMHOLE_B0\n");
  try {
    load_soc_descriptor(missing);
    FAIL();
  } catch (const ModelConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("missing key 'functional_workers'"), std::string::npos) << e.what();
  }
  const auto outside = write_temp("soc_outside.yaml",
                                  "grid: {x_size: 2, y_size: 2}\narch_name: WORMHOLE_B0\nfunctional_workers: [1-1, 2-0]\n"
                                  "eth: []\ndram: [[0-0]]\nnoc0_x_to_noc1_x: [1, 0]\nnoc0_y_to_noc1_y: [1, 0]\n"
                                  "worker_l1_size: 16\neth_l1_size: 16\ndram_bank_size: 16\n");
  try {
    load_soc_descriptor(outside);
    FAIL();
  } catch (const ModelConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("functional_workers[1]: core 2-0 is outside the 2x2 grid"), std::string::npos)
        << e.what();
  }
  const auto twice = write_temp("soc_twice.yaml",
                                "grid: {x_size: 2, y_size: 2}\narch_name: WORMHOLE_B0\nfunctional_workers: [1-1]\n"
                                "eth: [1-1]\ndram: [[0-0]]\nnoc0_x_to_noc1_x: [1, 0]\nnoc0_y_to_noc1_y: [1, 0]\n"
                                "worker_l1_size: 16\neth_l1_size: 16\ndram_bank_size: 16\n");
  try {
    load_soc_descriptor(twice);
    FAIL();
  } catch (const ModelConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("core 1-1 is listed in both 'functional_workers' and 'eth'"),
              std::string::npos)
        << e.what();
  }
}

TEST(ArchParams, BadArchFilesNameTheField) {
  const auto bad = write_temp("arch_bad.yaml", "arch: wormhole_b0\nsoc_descriptor: x.yaml\nclock_hz: -5\n");
  try {
    load_arch_params(bad);
    FAIL();
  } catch (const ModelConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("field 'clock_hz' = -5 must be at least 1"), std::string::npos) << e.what();
  }
  // A clock whose edges recur only every millisecond would hold every launch back by up to that.
  const auto odd_clock =
      write_temp("arch_odd_clock.yaml", "arch: wormhole_b0\nsoc_descriptor: x.yaml\nclock_hz: 1234567000\n");
  try {
    load_arch_params(odd_clock);
    FAIL();
  } catch (const ModelConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("field 'clock_hz' = 1234567000: its cycle edges fall on the same picosecond "
                                         "only every 1000000000 ps"),
              std::string::npos)
        << e.what();
  }
  const auto arch = write_temp("arch_unknown.yaml", "arch: quasar\n");
  EXPECT_THROW(load_arch_params(arch), ModelConfigError);
}

TEST(ArchParams, ArchFileAndSocDescriptorMustAgree) {
  // Blackhole parameters against the Wormhole SoC descriptor.
  std::ifstream in(builtin_arch_file(ChipArch::Blackhole));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  text.replace(text.find("blackhole_140_arch.yaml"), std::string("blackhole_140_arch.yaml").size(),
               "wormhole_b0_8x10.yaml");
  const auto mixed = write_temp("arch_mixed.yaml", text);
  try {
    load_arch_spec(mixed, builtin_soc_descriptor_dir());
    FAIL();
  } catch (const ModelConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("l1.tensix_bytes = 1572864"), std::string::npos) << e.what();
  }
}

TEST(Chip, HarvestedRowsRemoveTensixCores) {
  Engine engine;
  ChipOptions options;
  options.harvested_tensix_rows = {11, 1};
  Chip chip(engine, 0, testing::wormhole(), options);
  EXPECT_EQ(chip.tensix_cores().size(), 64u);
  EXPECT_EQ(chip.tile({1, 1}), TileKind::None);
  EXPECT_EQ(chip.tensix_cores().front(), (CoreCoord{1, 2}));
  EXPECT_THROW(chip.l1({1, 1}), AccessError);
  EXPECT_EQ(chip.l1({9, 0}).id().kind, MemoryKind::EriscL1);
  EXPECT_EQ(chip.eth_at({9, 6})->channel(), 8);
}

}  // namespace
}  // namespace cclmesh::sim
