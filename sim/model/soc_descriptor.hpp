#pragma once
// A tt-umd SoC descriptor (REFERENCE 3.8) as the hardware models see it: the core layout of one
// chip architecture, in sim/model's coordinate type. The file is read by topologies/
// (topo::load_soc_descriptor); this adds the tile map and the check that no node is claimed
// twice.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "sim/model/core_coord.hpp"

namespace cclmesh::sim {

struct SocDescriptor {
  std::string arch_name;  // "WORMHOLE_B0", "BLACKHOLE"
  std::int32_t grid_x = 0;
  std::int32_t grid_y = 0;
  std::vector<CoreCoord> tensix;  // functional_workers, in file order (row-major)
  std::vector<CoreCoord> eth;     // in channel order: channel c is eth[c] (REFERENCE 1.4)
  // One entry per DRAM channel (controller), each the NoC endpoints that reach it.
  std::vector<std::vector<CoreCoord>> dram;
  std::vector<CoreCoord> arc;
  std::vector<CoreCoord> pcie;
  std::vector<CoreCoord> router_only;
  std::vector<CoreCoord> security;
  std::vector<CoreCoord> l2cpu;
  std::vector<std::int32_t> noc0_x_to_noc1_x;
  std::vector<std::int32_t> noc0_y_to_noc1_y;
  std::uint64_t worker_l1_bytes = 0;
  std::uint64_t eth_l1_bytes = 0;
  std::uint64_t dram_channel_bytes = 0;  // the file's dram_bank_size: one UMD channel

  // The tile kind at every grid node, row-major (index y * grid_x + x).
  std::vector<TileKind> tile_map() const;
};

// Reads and validates a descriptor: every coordinate inside the grid, mirror maps of grid
// length (topologies' loader), no node claimed twice. Throws ModelConfigError naming the file,
// field and value.
SocDescriptor load_soc_descriptor(const std::filesystem::path& path);

}  // namespace cclmesh::sim
