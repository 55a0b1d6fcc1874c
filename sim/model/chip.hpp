#pragma once
// One simulated chip: its L1s, DRAM channels, ethernet cores and two NoCs, built from an
// ArchSpec (parameters + SoC descriptor).

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/model/arch_params.hpp"
#include "sim/model/core_coord.hpp"
#include "sim/model/dram.hpp"
#include "sim/model/endpoint.hpp"
#include "sim/model/eth_core.hpp"
#include "sim/model/memory_region.hpp"
#include "sim/model/noc.hpp"
#include "sim/model/sim_fault.hpp"

namespace cclmesh::sim {

class Engine;

// Functional: every memory stores bytes. TimingOnly: DRAM stores nothing (reads as zero, still
// bounds-checked) so tensors of any size fit; L1 keeps its bytes because control state lives
// there (semaphores, sync words, command streams, packet headers), and L1 is small. Both modes
// run the same events, so simulated times are identical.
enum class DataMode : std::uint8_t { Functional, TimingOnly };

struct ChipOptions {
  DataMode mode = DataMode::Functional;
  // Tensix rows (NoC0 y) that are harvested: those cores do not exist.
  std::vector<std::int32_t> harvested_tensix_rows;
};

class Chip {
 public:
  Chip(Engine& engine, ChipId id, std::shared_ptr<const ArchSpec> spec, ChipOptions options = {},
       FaultLog* faults = nullptr);
  ~Chip();
  Chip(const Chip&) = delete;
  Chip& operator=(const Chip&) = delete;

  ChipId id() const { return id_; }
  ChipArch arch() const { return spec_->params.arch; }
  const ArchParams& params() const { return spec_->params; }
  const SocDescriptor& soc() const { return spec_->soc; }
  const std::shared_ptr<const ArchSpec>& spec() const { return spec_; }
  Engine& engine() const { return engine_; }
  DataMode mode() const { return options_.mode; }
  FaultLog& faults() const { return *faults_; }
  std::string name() const;

  // --- layout ------------------------------------------------------------------------------
  std::int32_t grid_x() const { return grid_x_; }
  std::int32_t grid_y() const { return grid_y_; }
  bool in_grid(CoreCoord c) const { return c.x >= 0 && c.y >= 0 && c.x < grid_x_ && c.y < grid_y_; }
  TileKind tile(CoreCoord c) const;
  // The Tensix cores that exist (not harvested), row-major in NoC0 coordinates.
  const std::vector<CoreCoord>& tensix_cores() const { return tensix_cores_; }

  // --- memories ----------------------------------------------------------------------------
  // The L1 of a Tensix or ethernet core; AccessError for any other tile.
  MemoryRegion& l1(CoreCoord core);
  std::int32_t dram_channel_count() const { return static_cast<std::int32_t>(dram_.size()); }
  DramChannel& dram_channel(std::int32_t channel);
  // The DRAM channel an endpoint reaches, or -1.
  std::int32_t dram_channel_of(CoreCoord endpoint) const;

  // Interleaving banks (REFERENCE 4.10, 3.8): DRAM bank b is channel b / banks_per_channel at
  // offset (b % banks_per_channel) * bank_bytes, reached through that channel's endpoint number
  // b % banks_per_channel, so the banks of a channel use different NIUs (our choice).
  std::int32_t dram_bank_count() const { return params().dram.bank_count(); }
  DramBank dram_bank(std::int32_t bank) const;
  // The NoC address of page `page_index` of a DRAM-interleaved buffer.
  NocAddress dram_page(std::uint64_t page_index, std::uint64_t aligned_page_bytes,
                       std::uint64_t bank_base_address = 0) const;
  // L1 interleaving: one bank per existing Tensix core, in tensix_cores() order (inferred).
  std::int32_t l1_bank_count() const { return static_cast<std::int32_t>(tensix_cores_.size()); }
  NocAddress l1_page(std::uint64_t page_index, std::uint64_t aligned_page_bytes, std::uint64_t bank_base_address) const;

  // --- ethernet and NoC --------------------------------------------------------------------
  std::int32_t eth_channel_count() const { return static_cast<std::int32_t>(eth_.size()); }
  EthCore& eth(std::int32_t channel);
  // The ethernet core at a coordinate, or nullptr.
  EthCore* eth_at(CoreCoord core);
  Noc& noc(NocId id) { return *nocs_[static_cast<std::size_t>(index_of(id))]; }

  // The NoC endpoint at a coordinate, or nullptr for tiles without an NIU model.
  // Inline: every NoC request looks up its requester and target (~0.9 a simulated event).
  Endpoint* endpoint(CoreCoord core) { return in_grid(core) ? endpoints_[node(core)].get() : nullptr; }

  // --- diagnostics ---------------------------------------------------------------------------
  // The span inside which this chip's servers (NoC links and NIUs, DRAM channels, ERISCs, its
  // outgoing ethernet wires) also sum their busy time (PacketResource::busy_in_window); empty
  // unless set. Per chip, not per process: two systems simulated at once keep their own.
  const BusyWindow& busy_window() const { return busy_window_; }
  void set_busy_window(BusyWindow window) { busy_window_ = window; }

 private:
  std::size_t node(CoreCoord c) const { return static_cast<std::size_t>(c.y * grid_x() + c.x); }
  void add_endpoint(CoreCoord core, TileKind kind, MemoryRegion* memory, DramChannel* dram, const NiuRates& rates);

  Engine& engine_;
  ChipId id_;
  std::shared_ptr<const ArchSpec> spec_;
  ChipOptions options_;
  std::int32_t grid_x_;  // soc().grid_x / grid_y, kept here: read for every NoC request
  std::int32_t grid_y_;
  std::unique_ptr<FaultLog> own_faults_;
  FaultLog* faults_;
  std::vector<TileKind> tiles_;
  std::vector<CoreCoord> tensix_cores_;
  std::vector<std::unique_ptr<MemoryRegion>> l1s_;          // Tensix and ERISC L1s
  std::vector<std::unique_ptr<DramChannel>> dram_;
  std::vector<std::unique_ptr<EthCore>> eth_;               // channel order
  std::vector<std::unique_ptr<Endpoint>> endpoints_;        // per grid node, null without NIU
  std::array<std::unique_ptr<Noc>, kNocCount> nocs_;
  BusyWindow busy_window_;
};

}  // namespace cclmesh::sim
