#pragma once
// One chip of a topology: what it is, where it sits, how the host reaches it.

#include <cstdint>
#include <optional>

#include "topologies/arch.hpp"
#include "topologies/board.hpp"
#include "topologies/mesh_shape.hpp"

namespace cclmesh::topo {

// tt-umd's chip id: a small non-negative integer, unique in a topology, not necessarily dense
// (removing a chip for a what-if study keeps the other ids).
using ChipId = std::int32_t;

// Harvesting masks as tt-umd writes them. Only the bit counts are trusted (which bit means
// which row is unconfirmed, REFERENCE 3.7); ethernet links are never checked against eth_mask,
// because the shared Blackhole files use channels whose bits are set there.
struct Harvesting {
  std::uint32_t tensix_mask = 0;  // WH: Tensix rows; BH: Tensix columns
  std::uint32_t dram_mask = 0;
  std::uint32_t eth_mask = 0;
  // tt-umd's noc_translation: the chip's NoC translation tables are on, so software addresses
  // Tensix cores by translated coordinates, in which the harvested rows are moved out of the
  // grid (runtime's core map then places them where a built-in system does).
  bool noc_translation = false;
  bool operator==(const Harvesting&) const = default;
};

struct Chip {
  ChipId id = 0;
  Arch arch = Arch::Wormhole;
  BoardType board = BoardType::Unknown;
  // Chips on the same physical card share it (tt-umd board_id, or a small index in built-in
  // systems); nullopt when unknown.
  std::optional<std::uint64_t> board_id;
  // Set when the chip is MMIO-attached (PCIe): the host's device index for it. Remote chips are
  // reached through an MMIO chip by ethernet tunnelling.
  std::optional<std::int32_t> pci_device;
  std::optional<MeshCoord> mesh_coord;
  Harvesting harvesting;

  bool mmio() const { return pci_device.has_value(); }
  bool operator==(const Chip&) const = default;
};

}  // namespace cclmesh::topo
