#pragma once
// Where things sit on a chip: NoC0 physical coordinates (REFERENCE 1.2, 3.8), the kind of tile at
// a coordinate, and the two NoCs. Every model works in NoC0 coordinates; NoC1 only changes the
// direction packets travel (Noc::route), never how a core is named.

#include <compare>
#include <cstdint>
#include <string>

#include <fmt/format.h>

namespace cclmesh::sim {

// tt-umd's chip id (REFERENCE 3.7): small, non-negative, unique in a system.
using ChipId = std::int32_t;

struct CoreCoord {
  std::int32_t x = 0;
  std::int32_t y = 0;
  constexpr auto operator<=>(const CoreCoord&) const = default;
};

// An inclusive rectangle of cores in NoC0 coordinates, start <= end on both axes (multicast
// targets, REFERENCE 1.2).
struct CoreRect {
  CoreCoord start;
  CoreCoord end;
  constexpr bool contains(CoreCoord c) const {
    return c.x >= start.x && c.x <= end.x && c.y >= start.y && c.y <= end.y;
  }
  constexpr auto operator<=>(const CoreRect&) const = default;
};

enum class NocId : std::uint8_t { Noc0 = 0, Noc1 = 1 };
inline constexpr int kNocCount = 2;
constexpr int index_of(NocId noc) { return static_cast<int>(noc); }

// What occupies a NoC grid node (REFERENCE 3.8 SoC descriptor lists).
enum class TileKind : std::uint8_t { None, Tensix, Eth, Dram, Pcie, Arc, RouterOnly, Security, L2Cpu };

std::string to_string(TileKind kind);

inline std::string to_string(CoreCoord c) { return fmt::format("({},{})", c.x, c.y); }
inline std::string to_string(NocId noc) { return noc == NocId::Noc0 ? "NoC0" : "NoC1"; }

}  // namespace cclmesh::sim
