#include "sim/model/chip.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>

#include "sim/engine/check.hpp"
#include "sim/engine/engine.hpp"

namespace cclmesh::sim {

namespace {
// The page of a timing-only run's ERISC L1. Its payload bytes are zeros (inputs are never
// written, DRAM stores nothing), which need no storage; what the fabric routers do write is
// a header and a sync word per slot and their control words, a few bytes every few KiB. In
// 4 KiB pages that is one page per slot (~100 KiB per router); in 256 B pages, ~8 KiB. Larger
// if the L1 would need more than one page table: the kernels' direct reads use one
// (MemoryRegion::page_slots). A run with data keeps 4 KiB pages: its payloads fill the slots,
// and a packet then takes fewer page steps.
std::uint64_t timing_only_erisc_page_bytes(std::uint64_t erisc_bytes) {
  constexpr std::uint64_t kSmallestPageBytes = 256;
  const std::uint64_t one_table =
      std::bit_ceil((erisc_bytes + MemoryRegion::kPagesPerTable - 1) / MemoryRegion::kPagesPerTable);
  return std::min(MemoryRegion::kLargestPageBytes, std::max(kSmallestPageBytes, one_table));
}
}  // namespace

Chip::Chip(Engine& engine, ChipId id, std::shared_ptr<const ArchSpec> spec, ChipOptions options, FaultLog* faults)
    : engine_(engine), id_(id), spec_(std::move(spec)), options_(std::move(options)) {
  CCLMESH_CHECK(spec_ != nullptr, "a chip needs an architecture spec");
  grid_x_ = soc().grid_x;
  grid_y_ = soc().grid_y;
  if (faults == nullptr) {
    own_faults_ = std::make_unique<FaultLog>();
    faults = own_faults_.get();
  }
  faults_ = faults;
  const SocDescriptor& s = soc();
  const ArchParams& p = params();
  tiles_ = s.tile_map();
  endpoints_.resize(tiles_.size());

  for (std::int32_t row : options_.harvested_tensix_rows) {
    if (row < 0 || row >= grid_y()) {
      throw ModelConfigError(fmt::format("chip {}: harvested Tensix row {} is outside the grid (0..{})", id_, row,
                                         grid_y() - 1));
    }
  }
  // Tensix cores, row-major, without harvested rows.
  for (CoreCoord c : s.tensix) {
    const bool harvested = std::find(options_.harvested_tensix_rows.begin(), options_.harvested_tensix_rows.end(),
                                     c.y) != options_.harvested_tensix_rows.end();
    if (harvested) {
      tiles_[node(c)] = TileKind::None;
      continue;
    }
    tensix_cores_.push_back(c);
  }
  std::sort(tensix_cores_.begin(), tensix_cores_.end(),
            [](CoreCoord a, CoreCoord b) { return a.y != b.y ? a.y < b.y : a.x < b.x; });

  const StorageMode dram_mode = options_.mode == DataMode::Functional ? StorageMode::Stored : StorageMode::Discarded;
  const std::uint64_t erisc_page_bytes = options_.mode == DataMode::Functional
                                             ? MemoryRegion::kLargestPageBytes
                                             : timing_only_erisc_page_bytes(p.l1.erisc_bytes);
  for (CoreCoord c : tensix_cores_) {
    l1s_.push_back(std::make_unique<MemoryRegion>(MemoryId{id_, c, MemoryKind::TensixL1, -1}, p.l1.tensix_bytes,
                                                  StorageMode::Stored));
    add_endpoint(c, TileKind::Tensix, l1s_.back().get(), nullptr, p.noc.tensix_niu);
  }
  for (std::size_t ch = 0; ch < s.eth.size(); ++ch) {
    const CoreCoord c = s.eth[ch];
    l1s_.push_back(std::make_unique<MemoryRegion>(MemoryId{id_, c, MemoryKind::EriscL1, -1}, p.l1.erisc_bytes,
                                                  StorageMode::Stored, erisc_page_bytes));
    eth_.push_back(std::make_unique<EthCore>(*this, static_cast<std::int32_t>(ch), c, *l1s_.back()));
    add_endpoint(c, TileKind::Eth, l1s_.back().get(), nullptr, p.noc.eth_niu);
  }
  for (std::size_t ch = 0; ch < s.dram.size(); ++ch) {
    const auto channel = static_cast<std::int32_t>(ch);
    dram_.push_back(std::make_unique<DramChannel>(MemoryId{id_, s.dram[ch].front(), MemoryKind::Dram, channel},
                                                  p.dram.channel_bytes, dram_mode, s.dram[ch], p.dram.channel_rate,
                                                  p.dram.access_latency));
    for (CoreCoord endpoint : s.dram[ch]) {
      add_endpoint(endpoint, TileKind::Dram, &dram_.back()->memory(), dram_.back().get(), p.noc.dram_niu);
    }
  }
  nocs_[0] = std::make_unique<Noc>(*this, NocId::Noc0);
  nocs_[1] = std::make_unique<Noc>(*this, NocId::Noc1);
}

Chip::~Chip() = default;

std::string Chip::name() const { return fmt::format("chip {}", id_); }

void Chip::add_endpoint(CoreCoord core, TileKind kind, MemoryRegion* memory, DramChannel* dram,
                        const NiuRates& rates) {
  auto endpoint = std::make_unique<Endpoint>();
  endpoint->kind = kind;
  endpoint->coord = core;
  endpoint->memory = memory;
  endpoint->dram = dram;
  endpoint->chip = id_;
  endpoint->rates = &rates;
  endpoint->request_slots = params().noc.request_slots;
  endpoints_[node(core)] = std::move(endpoint);
}

TileKind Chip::tile(CoreCoord c) const { return in_grid(c) ? tiles_[node(c)] : TileKind::None; }


MemoryRegion& Chip::l1(CoreCoord core) {
  Endpoint* e = endpoint(core);
  if (e == nullptr || e->kind == TileKind::Dram) {
    AccessError::Details d;
    d.chip = id_;
    d.core = core;
    d.memory = MemoryKind::None;
    d.reason = fmt::format("is not on a Tensix or ethernet core (tile: {})", to_string(tile(core)));
    throw AccessError(fault_time_now(), std::move(d));
  }
  // Whoever listens to the L1's activity got the L1 here: its NoC ports (activity sources) exist
  // before the listener's first wait asks them, as they did when every port came with the chip.
  e->make_ports();
  return *e->memory;
}

DramChannel& Chip::dram_channel(std::int32_t channel) {
  CCLMESH_CHECK(channel >= 0 && channel < dram_channel_count(),
                fmt::format("chip {} has no DRAM channel {}", id_, channel));
  return *dram_[static_cast<std::size_t>(channel)];
}

std::int32_t Chip::dram_channel_of(CoreCoord endpoint_core) const {
  if (!in_grid(endpoint_core)) return -1;
  const Endpoint* e = endpoints_[node(endpoint_core)].get();
  if (e == nullptr || e->dram == nullptr) return -1;
  return e->dram->memory().id().unit;
}

DramBank Chip::dram_bank(std::int32_t bank) const {
  CCLMESH_CHECK(bank >= 0 && bank < dram_bank_count(), fmt::format("chip {} has no DRAM bank {}", id_, bank));
  const DramParams& d = params().dram;
  const std::int32_t channel = bank / d.banks_per_channel;
  const std::int32_t within = bank % d.banks_per_channel;
  const auto& endpoints = soc().dram[static_cast<std::size_t>(channel)];
  return DramBank{channel, endpoints[static_cast<std::size_t>(within) % endpoints.size()],
                  static_cast<std::uint64_t>(within) * d.bank_bytes()};
}

NocAddress Chip::dram_page(std::uint64_t page_index, std::uint64_t aligned_page_bytes,
                           std::uint64_t bank_base_address) const {
  const InterleavedPage page = interleaved_page(page_index, dram_bank_count(), aligned_page_bytes, bank_base_address);
  const DramBank bank = dram_bank(page.bank);
  return NocAddress{bank.endpoint, bank.channel_offset + page.offset};
}

NocAddress Chip::l1_page(std::uint64_t page_index, std::uint64_t aligned_page_bytes,
                         std::uint64_t bank_base_address) const {
  const InterleavedPage page = interleaved_page(page_index, l1_bank_count(), aligned_page_bytes, bank_base_address);
  return NocAddress{tensix_cores_[static_cast<std::size_t>(page.bank)], page.offset};
}

EthCore& Chip::eth(std::int32_t channel) {
  CCLMESH_CHECK(channel >= 0 && channel < eth_channel_count(),
                fmt::format("chip {} has no ethernet channel {}", id_, channel));
  return *eth_[static_cast<std::size_t>(channel)];
}

EthCore* Chip::eth_at(CoreCoord core) {
  for (auto& e : eth_) {
    if (e->coord() == core) return e.get();
  }
  return nullptr;
}

}  // namespace cclmesh::sim
