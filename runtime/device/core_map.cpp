#include "runtime/device/core_map.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <map>
#include <memory>
#include <mutex>
#include <set>

#include "topologies/arch.hpp"
#include "topologies/soc_descriptor.hpp"

namespace cclmesh::runtime {
namespace {

// SoC descriptors are read once per architecture; builders ask for a core map per chip.
std::shared_ptr<const topo::SocDescriptor> soc_descriptor(topo::Arch arch) {
  static std::mutex mutex;
  static std::map<topo::Arch, std::shared_ptr<const topo::SocDescriptor>> cache;
  std::lock_guard lock(mutex);
  auto it = cache.find(arch);
  if (it == cache.end()) {
    it = cache.emplace(arch, std::make_shared<const topo::SocDescriptor>(
                                 topo::load_soc_descriptor(topo::default_soc_descriptor_path(arch))))
             .first;
  }
  return it->second;
}

std::uint32_t to_u32(std::int32_t v) { return static_cast<std::uint32_t>(v); }

}  // namespace

std::uint32_t dram_banks_per_channel(topo::Arch arch) { return arch == topo::Arch::Wormhole ? 2u : 1u; }

ChipCoreMap::ChipCoreMap(ChipId chip, topo::Arch arch, std::vector<std::uint32_t> worker_columns,
                         std::vector<std::uint32_t> worker_rows, std::vector<std::uint32_t> harvested_rows,
                         std::vector<Noc0Coord> eth_cores, std::uint32_t dram_bank_count,
                         std::uint64_t tensix_l1_bytes, std::uint64_t erisc_l1_bytes)
    : chip_(chip),
      arch_(arch),
      worker_columns_(std::move(worker_columns)),
      worker_rows_(std::move(worker_rows)),
      harvested_rows_(std::move(harvested_rows)),
      eth_cores_(std::move(eth_cores)),
      dram_bank_count_(dram_bank_count),
      tensix_l1_bytes_(tensix_l1_bytes),
      erisc_l1_bytes_(erisc_l1_bytes) {}

CoreCoord ChipCoreMap::worker_grid() const {
  return CoreCoord{static_cast<std::uint32_t>(worker_columns_.size()), static_cast<std::uint32_t>(worker_rows_.size())};
}

Noc0Coord ChipCoreMap::tensix_noc0(CoreCoord logical) const {
  if (logical.x >= worker_columns_.size() || logical.y >= worker_rows_.size()) {
    throw CoreMapError(fmt::format("chip {}: logical Tensix core ({},{}) is outside its {}x{} worker grid", chip_,
                                   logical.x, logical.y, worker_columns_.size(), worker_rows_.size()));
  }
  return Noc0Coord{worker_columns_[logical.x], worker_rows_[logical.y]};
}

Noc0Coord ChipCoreMap::eth_noc0(std::uint32_t channel) const {
  if (channel >= eth_cores_.size()) {
    throw CoreMapError(fmt::format("chip {}: ethernet channel {} does not exist (0..{})", chip_, channel,
                                   eth_cores_.size() - 1));
  }
  return eth_cores_[channel];
}

Noc0Coord ChipCoreMap::noc0(CoreKind kind, CoreCoord logical) const {
  if (kind == CoreKind::Tensix) return tensix_noc0(logical);
  if (logical.y != 0) {
    throw CoreMapError(fmt::format("chip {}: ethernet core ({},{}): logical ethernet cores are (channel, 0)", chip_,
                                   logical.x, logical.y));
  }
  return eth_noc0(logical.x);
}

Noc0Coord ChipCoreMap::l1_bank_core(CoreCoord grid, std::uint32_t bank) const {
  if (grid.x == 0 || bank >= grid.x * grid.y) {
    throw CoreMapError(fmt::format("chip {}: L1 bank {} is outside the {}x{} bank grid", chip_, bank, grid.x, grid.y));
  }
  return tensix_noc0(CoreCoord{bank % grid.x, bank / grid.x});
}

namespace {

// What a core map holds besides the chip id: a function of the chip's architecture and Tensix
// harvesting alone.
struct CoreMapKind {
  topo::Arch arch;
  std::uint32_t tensix_mask;
  bool noc_translation;
  auto operator<=>(const CoreMapKind&) const = default;
};

// Everything a core map holds but the chip id.
struct CoreMapParts {
  std::vector<std::uint32_t> worker_columns;
  std::vector<std::uint32_t> worker_rows;
  std::vector<std::uint32_t> harvested_rows;
  std::vector<Noc0Coord> eth_cores;
  std::uint32_t dram_bank_count = 0;
  std::uint64_t tensix_l1_bytes = 0;
  std::uint64_t erisc_l1_bytes = 0;

  ChipCoreMap for_chip(ChipId chip_id, topo::Arch arch) const {
    return ChipCoreMap(chip_id, arch, worker_columns, worker_rows, harvested_rows, eth_cores, dram_bank_count,
                       tensix_l1_bytes, erisc_l1_bytes);
  }
};

// Throws for a harvest mask the chip cannot have, naming `chip_id`.
CoreMapParts build_core_map_parts(ChipId chip_id, const CoreMapKind& kind) {
  const std::shared_ptr<const topo::SocDescriptor> soc = soc_descriptor(kind.arch);
  std::set<std::uint32_t> columns;
  std::set<std::uint32_t> rows;
  for (const topo::NocCoord& c : soc->tensix) {
    columns.insert(to_u32(c.x));
    rows.insert(to_u32(c.y));
  }
  CoreMapParts parts;
  parts.worker_columns.assign(columns.begin(), columns.end());
  const std::vector<std::uint32_t> all_rows(rows.begin(), rows.end());
  std::uint32_t mask = kind.tensix_mask;
  // With NoC translation on (tt-umd's noc_translation: true), software addresses Tensix cores by
  // translated coordinates, in which the harvested rows are moved out of the grid: every chip
  // harvesting the same number of rows presents the same worker grid, whichever physical rows
  // they are (REFERENCE 3.7: rely on the bit count, not the positions). The model harvests that
  // many rows where a built-in system does (the low mask bits), so a multicast's one address
  // means the same cores on every chip, as it does on translated hardware.
  if (kind.noc_translation && kind.arch == topo::Arch::Wormhole && (mask >> all_rows.size()) == 0) {
    mask = (1u << std::popcount(mask)) - 1u;
  }
  if (kind.arch == topo::Arch::Wormhole) {
    for (std::size_t i = 0; i < all_rows.size(); ++i) {
      ((mask >> i) & 1u) != 0 ? parts.harvested_rows.push_back(all_rows[i]) : parts.worker_rows.push_back(all_rows[i]);
    }
    if (mask >> all_rows.size() != 0) {
      throw CoreMapError(fmt::format("chip {}: Tensix harvest mask {:#x} names rows beyond the {} the chip has",
                                     chip_id, mask, all_rows.size()));
    }
  } else {
    // Blackhole harvests columns (REFERENCE 2); not modelled: the full grid is used.
    parts.worker_rows = all_rows;
  }
  for (const topo::NocCoord& c : soc->eth) parts.eth_cores.push_back(Noc0Coord{to_u32(c.x), to_u32(c.y)});
  parts.dram_bank_count = static_cast<std::uint32_t>(soc->dram.size()) * dram_banks_per_channel(kind.arch);
  parts.tensix_l1_bytes = static_cast<std::uint64_t>(soc->worker_l1_size_bytes);
  parts.erisc_l1_bytes = static_cast<std::uint64_t>(soc->eth_l1_size_bytes);
  return parts;
}

}  // namespace

ChipCoreMap chip_core_map(const topo::Topology& topology, ChipId chip_id) {
  const topo::Chip& chip = topology.chip(chip_id);
  const CoreMapKind kind{chip.arch, chip.harvesting.tensix_mask, chip.harvesting.noc_translation};
  // Op builders ask for a chip's map per worker, and for its neighbours' (the relay all_gather on
  // a 16x16 torus: 128 calls per chip, 5% of a 1 MiB run's instructions while each call built
  // the map from the SoC descriptor's cores; FabricPlan per router: 18% of a 32x32 torus run's).
  // Chips alike share the parts; a kind whose map cannot be built is not cached, so every call
  // for it still throws.
  static std::mutex mutex;
  static std::map<CoreMapKind, CoreMapParts> built;
  {
    std::lock_guard lock(mutex);
    const auto found = built.find(kind);
    if (found != built.end()) return found->second.for_chip(chip_id, kind.arch);
  }
  CoreMapParts parts = build_core_map_parts(chip_id, kind);
  std::lock_guard lock(mutex);
  return built.emplace(kind, std::move(parts)).first->second.for_chip(chip_id, kind.arch);
}

CoreCoord common_worker_grid(const topo::Topology& topology) {
  // A chip's worker grid follows from its arch and Tensix harvesting alone, so chips alike share
  // one core map's answer. Building a core map per chip on every call made each op's set-up
  // quadratic in the chips (every chip's ChipBuffers asks; docs/topologies.md, "Review (session 11)").
  // Builders still ask once per chip (ChipBuffers), so this loop runs chips x chips times: a
  // chip like the one before (nearly always) costs a comparison, not a map lookup (on a 32x32
  // torus the lookups were 2.5% of a small all_gather's instructions).
  std::map<CoreMapKind, CoreCoord> grid_of_kind;
  CoreCoord grid{0, 0};
  bool first = true;
  CoreMapKind previous_kind{};
  CoreCoord previous_grid{0, 0};
  for (const topo::Chip& chip : topology.chips()) {
    const CoreMapKind kind{chip.arch, chip.harvesting.tensix_mask, chip.harvesting.noc_translation};
    if (first || kind != previous_kind) {
      auto found = grid_of_kind.find(kind);
      if (found == grid_of_kind.end()) {
        found = grid_of_kind.emplace(kind, chip_core_map(topology, chip.id).worker_grid()).first;
      }
      previous_kind = kind;
      previous_grid = found->second;
    }
    const CoreCoord g = previous_grid;
    grid = first ? g : CoreCoord{std::min(grid.x, g.x), std::min(grid.y, g.y)};
    first = false;
  }
  return grid;
}

std::string worker_grid_harvest_note(const topo::Topology& topology) {
  const topo::Chip* most = nullptr;
  for (const topo::Chip& chip : topology.chips()) {
    const int removed = std::popcount(chip.harvesting.tensix_mask);
    if (removed > 0 && (most == nullptr || removed > std::popcount(most->harvesting.tensix_mask))) most = &chip;
  }
  if (most == nullptr) return "";
  std::size_t alike = 0;
  for (const topo::Chip& chip : topology.chips()) {
    if (chip.id != most->id && chip.arch == most->arch && chip.harvesting.tensix_mask == most->harvesting.tensix_mask) {
      ++alike;
    }
  }
  const topo::ArchTraits& traits = topo::arch_traits(most->arch);
  return fmt::format("; the worker grid is what Tensix harvesting leaves on system '{}': chip {}'s harvest mask {:#x} "
                     "removes {} of a {} chip's {} Tensix {}{}",
                     topology.name(), most->id, most->harvesting.tensix_mask,
                     std::popcount(most->harvesting.tensix_mask), traits.name, traits.tensix_harvest_positions,
                     most->arch == topo::Arch::Wormhole ? "rows" : "columns",
                     alike == 0 ? std::string() : fmt::format(" (as on {} other chip{})", alike, alike == 1 ? "" : "s"));
}

}  // namespace cclmesh::runtime
