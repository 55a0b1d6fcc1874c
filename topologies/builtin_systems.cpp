#include "topologies/builtin_systems.hpp"

#include <array>
#include <numeric>
#include <utility>

#include "topologies/detail/grid_wiring.hpp"

namespace cclmesh::topo {
namespace {

// REFERENCE 1.1: an n150 has 72 Tensix (1 of 10 rows harvested), an n300 chip 64 (2 rows).
// Which bit is which row is unconfirmed (REFERENCE 3.7), so the low bits are used.
constexpr std::uint32_t kOneRowHarvested = 0b1;
constexpr std::uint32_t kTwoRowsHarvested = 0b11;

EthLink wormhole_link(ChipId a, std::int32_t channel_a, ChipId b, std::int32_t channel_b) {
  return EthLink{EthEndpoint{a, channel_a}, EthEndpoint{b, channel_b},
                 kWormholeTraits.link_rate_bytes_per_s, kWormholeTraits.link_latency_ps};
}

Chip make_chip(ChipId id, Arch arch, BoardType board, std::uint64_t board_id,
               std::optional<std::int32_t> pci_device, std::optional<MeshCoord> coord,
               std::uint32_t tensix_harvest_mask = 0) {
  Chip chip;
  chip.id = id;
  chip.arch = arch;
  chip.board = board;
  chip.board_id = board_id;
  chip.pci_device = pci_device;
  chip.mesh_coord = coord;
  chip.harvesting.tensix_mask = tensix_harvest_mask;
  return chip;
}

// Chips 0..rows*cols-1 in row-major order on one Galaxy board, wired by the grid rule.
std::pair<std::vector<Chip>, std::vector<EthLink>> galaxy_mesh(Arch arch, bool host_attached,
                                                               std::int32_t links_per_neighbour) {
  const MeshShape shape = MeshShape::mesh(4, 8);
  std::vector<ChipId> ids(static_cast<std::size_t>(shape.chip_count()));
  std::iota(ids.begin(), ids.end(), 0);
  std::vector<Chip> chips;
  for (const ChipId id : ids) {
    chips.push_back(make_chip(id, arch, BoardType::Galaxy, 0,
                              host_attached ? std::optional<std::int32_t>(id) : std::nullopt,
                              shape.coord_at(id)));
  }
  return {std::move(chips), detail::wire_grid(shape, ids, arch, links_per_neighbour)};
}

}  // namespace

Topology build_n150() {
  return Topology(
      "n150",
      {make_chip(0, Arch::Wormhole, BoardType::N150, 0, 0, MeshCoord{0, 0, 0}, kOneRowHarvested)},
      {}, MeshShape::mesh(1, 1));
}

Topology build_n300() {
  return Topology(
      "n300",
      {make_chip(0, Arch::Wormhole, BoardType::N300, 0, 0, MeshCoord{0, 0, 0}, kTwoRowsHarvested),
       make_chip(1, Arch::Wormhole, BoardType::N300, 0, std::nullopt, MeshCoord{0, 1, 0},
                 kTwoRowsHarvested)},
      {wormhole_link(0, 8, 1, 0), wormhole_link(0, 9, 1, 1)}, MeshShape::mesh(1, 2));
}

Topology build_t3k() {
  // REFERENCE 3.3: the tt-umd descriptor's (x, y) places the chips as
  //   y=0: 4 0 2 6
  //   y=1: 5 1 3 7
  // and the mesh coordinate is (row, col) = (y, x).
  struct Placement {
    ChipId id;
    std::int32_t row;
    std::int32_t col;
    std::uint64_t board;
    std::optional<std::int32_t> pci_device;
  };
  constexpr std::array<Placement, 8> kPlacements{{{0, 0, 1, 0, 0},
                                                  {1, 1, 1, 1, 1},
                                                  {2, 0, 2, 2, 3},
                                                  {3, 1, 2, 3, 2},
                                                  {4, 0, 0, 0, std::nullopt},
                                                  {5, 1, 0, 1, std::nullopt},
                                                  {6, 0, 3, 2, std::nullopt},
                                                  {7, 1, 3, 3, std::nullopt}}};
  std::vector<Chip> chips;
  for (const Placement& p : kPlacements) {
    chips.push_back(make_chip(p.id, Arch::Wormhole, BoardType::N300, p.board, p.pci_device,
                              MeshCoord{p.row, p.col, 0}, kTwoRowsHarvested));
  }
  std::vector<EthLink> links;
  // Inside each n300 card (L <-> R): 8, 9 <-> 0, 1.
  for (const auto& [l, r] :
       std::array<std::pair<ChipId, ChipId>, 4>{{{0, 4}, {1, 5}, {2, 6}, {3, 7}}}) {
    links.push_back(wormhole_link(l, 8, r, 0));
    links.push_back(wormhole_link(l, 9, r, 1));
  }
  const auto same_channels = [&links](ChipId a, ChipId b, std::int32_t first_channel) {
    links.push_back(wormhole_link(a, first_channel, b, first_channel));
    links.push_back(wormhole_link(a, first_channel + 1, b, first_channel + 1));
  };
  same_channels(0, 1, 14);
  same_channels(2, 3, 14);
  same_channels(1, 3, 0);
  same_channels(0, 2, 6);
  same_channels(4, 5, 6);
  same_channels(6, 7, 6);
  return Topology("t3k", std::move(chips), std::move(links), MeshShape::mesh(2, 4));
}

Topology build_galaxy() {
  auto [chips, links] = galaxy_mesh(Arch::Wormhole, true, kWormholeTraits.links_per_direction);
  return Topology("galaxy", std::move(chips), std::move(links), MeshShape::mesh(4, 8));
}

Topology build_tg() {
  auto [chips, links] = galaxy_mesh(Arch::Wormhole, false, kWormholeTraits.links_per_direction);
  // REFERENCE 3.1: each gateway N150 uses 2 links (its ports S0, S1) into the Galaxy, whose
  // side is named N0, N4, ..., N28; the chip mapping is unconfirmed. We read Nk as north port
  // k, numbered 4 per chip along the top row, so N0, N4, ..., N28 are the first north channel
  // (ch 0) of the 8 top-row chips, and gateway g serves columns 2g and 2g+1 from its
  // channels 0 and 1.
  constexpr ChipId kFirstGateway = 32;
  constexpr std::int32_t kGatewayCount = 4;
  constexpr std::int32_t kGalaxyNorthChannel = 0;
  for (std::int32_t g = 0; g < kGatewayCount; ++g) {
    const ChipId gateway = kFirstGateway + g;
    chips.push_back(make_chip(gateway, Arch::Wormhole, BoardType::N150,
                              static_cast<std::uint64_t>(1 + g), g, std::nullopt,
                              kOneRowHarvested));
    for (std::int32_t port = 0; port < 2; ++port) {
      const ChipId top_row_chip = 2 * g + port;  // row 0, column 2g + port
      links.push_back(wormhole_link(gateway, port, top_row_chip, kGalaxyNorthChannel));
    }
  }
  return Topology("tg", std::move(chips), std::move(links), MeshShape::mesh(4, 8));
}

Topology build_p150() {
  return Topology("p150",
                  {make_chip(0, Arch::Blackhole, BoardType::P150, 0, 0, MeshCoord{0, 0, 0})}, {},
                  MeshShape::mesh(1, 1));
}

Topology build_p300() {
  // Which channels join the two chips of a P300, and whether both are PCIe-attached, is not in
  // REFERENCE: we use the grid rule (E block of chip 0 to W block of chip 1) with the 2 links
  // per direction Blackhole CCLs use, and attach both chips.
  const MeshShape shape = MeshShape::mesh(1, 2);
  std::vector<Chip> chips{make_chip(0, Arch::Blackhole, BoardType::P300, 0, 0, MeshCoord{0, 0, 0}),
                          make_chip(1, Arch::Blackhole, BoardType::P300, 0, 1, MeshCoord{0, 1, 0})};
  return Topology(
      "p300", std::move(chips),
      detail::wire_grid(shape, {0, 1}, Arch::Blackhole, kBlackholeTraits.links_per_direction),
      shape);
}

Topology build_bh_galaxy() {
  auto [chips, links] = galaxy_mesh(Arch::Blackhole, true, kBlackholeTraits.links_per_direction);
  return Topology("bh_galaxy", std::move(chips), std::move(links), MeshShape::mesh(4, 8));
}

const std::vector<std::string>& builtin_system_names() {
  static const std::vector<std::string> kNames{"n150",   "n300", "t3k",  "tg",
                                               "galaxy", "p150", "p300", "bh_galaxy"};
  return kNames;
}

std::optional<Topology> build_builtin_system(std::string_view name) {
  if (name == "n150") return build_n150();
  if (name == "n300") return build_n300();
  if (name == "t3k") return build_t3k();
  if (name == "tg") return build_tg();
  if (name == "galaxy") return build_galaxy();
  if (name == "p150") return build_p150();
  if (name == "p300") return build_p300();
  if (name == "bh_galaxy") return build_bh_galaxy();
  return std::nullopt;
}

}  // namespace cclmesh::topo
