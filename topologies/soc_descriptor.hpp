#pragma once
// The SoC descriptor of a chip (REFERENCE 3.8): its NoC grid and where every kind of core sits,
// so that the chip models take coordinates and memory sizes from the tt-umd file instead of
// hard-coding them. Coordinates are NoC0 physical (x, y).

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "topologies/arch.hpp"

namespace cclmesh::topo {

struct NocCoord {
  std::int32_t x = 0;
  std::int32_t y = 0;
  auto operator<=>(const NocCoord&) const = default;
};

struct SocDescriptor {
  Arch arch = Arch::Wormhole;
  std::int32_t grid_x_size = 0;
  std::int32_t grid_y_size = 0;

  std::vector<NocCoord> tensix;             // `functional_workers`, in file order
  std::vector<NocCoord> eth;                // in logical channel order (REFERENCE 1.4)
  std::vector<std::vector<NocCoord>> dram;  // per channel, the endpoints that reach it
  std::vector<NocCoord> arc;
  std::vector<NocCoord> pcie;
  std::vector<NocCoord> router_only;
  std::vector<NocCoord> security;  // Blackhole only
  std::vector<NocCoord> l2cpu;     // Blackhole only

  std::vector<std::int32_t> noc0_x_to_noc1_x;
  std::vector<std::int32_t> noc0_y_to_noc1_y;

  std::int64_t worker_l1_size_bytes = 0;
  std::int64_t eth_l1_size_bytes = 0;
  std::int64_t dram_bank_size_bytes = 0;

  // The same core in NoC1 coordinates (the mirror maps).
  NocCoord to_noc1(NocCoord noc0) const;
  // The NoC0 coordinate of ethernet channel `channel`; throws InputError when out of range.
  NocCoord eth_core(std::int32_t channel) const;

  bool operator==(const SocDescriptor&) const = default;
};

// Throws InputError naming the file, the entry and the problem: malformed YAML, an unknown
// arch_name, a coordinate that is not "x-y" or lies outside the grid, mirror maps whose length
// is not the grid size, a missing required key (grid, functional_workers, eth, dram,
// noc0_x_to_noc1_x, noc0_y_to_noc1_y, worker_l1_size, eth_l1_size, dram_bank_size, arch_name).
SocDescriptor load_soc_descriptor(const std::filesystem::path& path);
SocDescriptor parse_soc_descriptor(std::string_view yaml_text, const std::string& source);

// The tt-umd SoC descriptor of an architecture in the shared ecosystem folder
// (data_paths.hpp): wormhole_b0_8x10.yaml or blackhole_140_arch.yaml.
std::filesystem::path default_soc_descriptor_path(Arch arch);

}  // namespace cclmesh::topo
