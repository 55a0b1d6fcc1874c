#pragma once
// Logical cores -> NoC0 coordinates for one chip, from the topology alone (the chip's
// architecture, its SoC descriptor and its harvest mask), so that op builders, which are pure
// functions of (params, topology), and every backend translate cores the same way.
//
// - Tensix: the logical worker grid is (columns x rows) of the SoC descriptor's Tensix cores
//   without harvested rows; logical (x, y) is the x-th column and the y-th remaining row, in
//   ascending NoC0 order. Harvest mask bit i removes the i-th Tensix row in ascending NoC0 y
//   (REFERENCE 3.7 / 13: which bit means which row is unconfirmed; this is our choice). A
//   T3K chip (mask 0b11) thus has rows 3..11 without 6: an 8 x 8 grid.
// - Ethernet: logical core (channel, 0) is the channel-th entry of the descriptor's eth list
//   (REFERENCE 1.4).
// - Interleaving banks: DRAM bank b is described by the backend (kernels call
//   get_bank_noc_addr); the count is the descriptor's DRAM channels x banks per channel
//   (Wormhole 2, REFERENCE 3.8 caveat; Blackhole 1). L1 bank b is the b-th core of the
//   logical worker grid, row-major.

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/device/types.hpp"
#include "topologies/topology.hpp"

namespace cclmesh::runtime {

struct Noc0Coord {
  std::uint32_t x = 0;
  std::uint32_t y = 0;
  constexpr auto operator<=>(const Noc0Coord&) const = default;
};

// A logical core that is not on the chip, or a channel it does not have.
class CoreMapError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

class ChipCoreMap {
 public:
  ChipCoreMap(ChipId chip, topo::Arch arch, std::vector<std::uint32_t> worker_columns,
              std::vector<std::uint32_t> worker_rows, std::vector<std::uint32_t> harvested_rows,
              std::vector<Noc0Coord> eth_cores, std::uint32_t dram_bank_count, std::uint64_t tensix_l1_bytes,
              std::uint64_t erisc_l1_bytes);

  ChipId chip() const { return chip_; }
  topo::Arch arch() const { return arch_; }
  // Columns x rows of this chip's worker grid.
  CoreCoord worker_grid() const;
  // NoC0 y of the Tensix rows this chip's harvest mask removes, ascending.
  const std::vector<std::uint32_t>& harvested_rows() const { return harvested_rows_; }
  std::uint32_t eth_channel_count() const { return static_cast<std::uint32_t>(eth_cores_.size()); }
  std::uint32_t dram_bank_count() const { return dram_bank_count_; }
  std::uint64_t tensix_l1_bytes() const { return tensix_l1_bytes_; }
  std::uint64_t erisc_l1_bytes() const { return erisc_l1_bytes_; }

  // Throw CoreMapError naming the chip and the core when it is not on the chip.
  Noc0Coord tensix_noc0(CoreCoord logical) const;
  Noc0Coord eth_noc0(std::uint32_t channel) const;
  Noc0Coord noc0(CoreKind kind, CoreCoord logical) const;

  // L1 interleaving over the given logical grid (the mesh's common grid), row-major.
  Noc0Coord l1_bank_core(CoreCoord grid, std::uint32_t bank) const;

 private:
  ChipId chip_;
  topo::Arch arch_;
  std::vector<std::uint32_t> worker_columns_;
  std::vector<std::uint32_t> worker_rows_;
  std::vector<std::uint32_t> harvested_rows_;
  std::vector<Noc0Coord> eth_cores_;
  std::uint32_t dram_bank_count_;
  std::uint64_t tensix_l1_bytes_;
  std::uint64_t erisc_l1_bytes_;
};

// Throws topo::InputError when the chip is not in the topology or its SoC descriptor cannot be
// read, CoreMapError when its harvest mask removes more rows than it has.
ChipCoreMap chip_core_map(const topo::Topology& topology, ChipId chip);

// The logical worker grid every chip of the topology has (the smallest columns and rows).
CoreCoord common_worker_grid(const topo::Topology& topology);

// For a refusal of workers that do not fit common_worker_grid(): "" when no chip harvests a
// Tensix row / column, else where the grid comes from, naming the system and the chip harvesting
// the most ("; the worker grid is what Tensix harvesting leaves on system 'x': chip 0's harvest
// mask 0x1ff removes 9 of a wormhole_b0 chip's 10 Tensix rows (as on 7 other chips)"). A system
// file's `harvesting: {tensix: 511}` otherwise surfaced as an op's "10 worker cores ... do not fit
// the 8x1 worker grid", naming neither (bug bash, session 44).
std::string worker_grid_harvest_note(const topo::Topology& topology);

// Interleaving banks per architecture (see above).
std::uint32_t dram_banks_per_channel(topo::Arch arch);

}  // namespace cclmesh::runtime
