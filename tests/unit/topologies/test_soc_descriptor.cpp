#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test_paths.hpp"
#include "topologies/errors.hpp"
#include "topologies/soc_descriptor.hpp"

namespace cclmesh::topo {
namespace {

using ::testing::HasSubstr;

TEST(SocDescriptor, WormholeB0) {
  const SocDescriptor soc =
      load_soc_descriptor(test::shared_file("soc_descriptors/wormhole_b0_8x10.yaml"));
  EXPECT_EQ(soc.arch, Arch::Wormhole);
  EXPECT_EQ(soc.grid_x_size, 10);
  EXPECT_EQ(soc.grid_y_size, 12);
  EXPECT_EQ(soc.tensix.size(), 80u);
  EXPECT_EQ(soc.tensix.front(), (NocCoord{1, 1}));
  EXPECT_EQ(soc.tensix.back(), (NocCoord{9, 11}));
  // REFERENCE 1.4: channel order 9-0, 1-0, 8-0, 2-0, ..., 4-6.
  ASSERT_EQ(soc.eth.size(), 16u);
  EXPECT_EQ(soc.eth_core(0), (NocCoord{9, 0}));
  EXPECT_EQ(soc.eth_core(1), (NocCoord{1, 0}));
  EXPECT_EQ(soc.eth_core(8), (NocCoord{9, 6}));
  EXPECT_EQ(soc.eth_core(15), (NocCoord{4, 6}));
  EXPECT_THROW((void)soc.eth_core(16), InputError);
  ASSERT_EQ(soc.dram.size(), 6u);
  for (const auto& channel : soc.dram) EXPECT_EQ(channel.size(), 3u);
  EXPECT_EQ(soc.dram[1][1], (NocCoord{0, 6}));
  EXPECT_EQ(soc.arc, (std::vector<NocCoord>{{0, 10}}));
  EXPECT_EQ(soc.pcie, (std::vector<NocCoord>{{0, 3}}));
  EXPECT_EQ(soc.router_only.size(), 4u);
  EXPECT_TRUE(soc.security.empty());
  EXPECT_EQ(soc.worker_l1_size_bytes, 1'499'136);
  EXPECT_EQ(soc.eth_l1_size_bytes, 262'144);
  EXPECT_EQ(soc.dram_bank_size_bytes, 2'147'483'648);
  // NoC1 mirrors NoC0 (REFERENCE 1.2): x1 = 9 - x0, y1 = 11 - y0.
  EXPECT_EQ(soc.to_noc1(NocCoord{1, 1}), (NocCoord{8, 10}));
  EXPECT_EQ(soc.to_noc1(NocCoord{0, 0}), (NocCoord{9, 11}));
  // The channel counts the topology checks links against agree with the SoC descriptor.
  EXPECT_EQ(static_cast<std::int32_t>(soc.eth.size()), kWormholeTraits.eth_channel_count);
}

TEST(SocDescriptor, Blackhole) {
  const SocDescriptor soc =
      load_soc_descriptor(test::shared_file("soc_descriptors/blackhole_140_arch.yaml"));
  EXPECT_EQ(soc.arch, Arch::Blackhole);
  EXPECT_EQ(soc.grid_x_size, 17);
  EXPECT_EQ(soc.grid_y_size, 12);
  EXPECT_EQ(soc.tensix.size(), 140u);
  ASSERT_EQ(soc.eth.size(), 14u);
  // REFERENCE 2: channel order x = 1, 16, 2, 15, ... at y = 1.
  EXPECT_EQ(soc.eth_core(0), (NocCoord{1, 1}));
  EXPECT_EQ(soc.eth_core(1), (NocCoord{16, 1}));
  EXPECT_EQ(soc.eth_core(13), (NocCoord{10, 1}));
  EXPECT_EQ(soc.dram.size(), 8u);
  EXPECT_EQ(soc.security, (std::vector<NocCoord>{{8, 2}}));
  EXPECT_EQ(soc.l2cpu.size(), 4u);
  EXPECT_EQ(soc.pcie.size(), 2u);
  EXPECT_EQ(soc.worker_l1_size_bytes, 1'572'864);
  EXPECT_EQ(soc.dram_bank_size_bytes, 4'294'967'296);
  EXPECT_EQ(soc.to_noc1(NocCoord{16, 11}), (NocCoord{0, 0}));
  EXPECT_EQ(static_cast<std::int32_t>(soc.eth.size()), kBlackholeTraits.eth_channel_count);
}

TEST(SocDescriptor, DefaultPathsPointAtTheSharedFiles) {
  EXPECT_EQ(load_soc_descriptor(default_soc_descriptor_path(Arch::Wormhole)).arch, Arch::Wormhole);
  EXPECT_EQ(load_soc_descriptor(default_soc_descriptor_path(Arch::Blackhole)).arch,
            Arch::Blackhole);
}

std::string message_of(const std::string& text) {
  try {
    (void)parse_soc_descriptor(text, "soc.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no InputError";
}

const char* const kMinimal = R"(grid: {x_size: 3, y_size: 2}
functional_workers: [1-1]
eth: [0-0, 2-0]
dram: [[1-0]]
noc0_x_to_noc1_x: [2, 1, 0]
noc0_y_to_noc1_y: [1, 0]
worker_l1_size: 1024
eth_l1_size: 512
dram_bank_size: 4096
arch_name: WORMHOLE_B0
)";

TEST(SocDescriptor, MinimalFileAndItsErrors) {
  const SocDescriptor soc = parse_soc_descriptor(kMinimal, "soc.yaml");
  EXPECT_EQ(soc.eth.size(), 2u);
  EXPECT_TRUE(soc.arc.empty());

  std::string bad = kMinimal;
  EXPECT_THAT(message_of(std::string(bad).replace(bad.find("2-0"), 3, "5-0")),
              HasSubstr("soc.yaml:3: eth[1]: core 5-0 is outside the 3x2 grid"));
  EXPECT_THAT(message_of(std::string(bad).replace(bad.find("2-0"), 3, "2_0")),
              HasSubstr("eth[1]: core '2_0'; expected NoC0 coordinates \"x-y\""));
  EXPECT_THAT(message_of(std::string(bad).replace(bad.find("WORMHOLE_B0"), 11, "QUASAR")),
              HasSubstr("arch_name: unknown architecture 'QUASAR'"));
  EXPECT_THAT(message_of(std::string(bad).replace(bad.find("[2, 1, 0]"), 9, "[1, 0]")),
              HasSubstr("noc0_x_to_noc1_x: 2 entries; expected 3"));
  EXPECT_THAT(message_of(std::string(bad).replace(bad.find("eth_l1_size: 512"), 16, "")),
              HasSubstr("missing key 'eth_l1_size'"));
  EXPECT_THAT(message_of("grid: [1, 2"), HasSubstr("soc.yaml:1:"));
  EXPECT_THAT(message_of("grid: [1, 2"), HasSubstr("malformed YAML"));
}

}  // namespace
}  // namespace cclmesh::topo
