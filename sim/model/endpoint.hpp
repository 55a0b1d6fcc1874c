#pragma once
// A NoC grid node with an NIU: a Tensix core, an ethernet core or a DRAM endpoint. It owns one
// NocPort per NoC and points at the memory a NoC address on it reaches.
//
// The ports are made at the first use of either (port(), or make_ports() by the chip when it
// hands out the core's L1): most cores of a big mesh's chips never see a NoC request, and a
// pair of ports costs ~1.4 KB. A port made late is the same as one made with the chip and
// never used: it has no transactions, and nobody listened to it (a core's L1 activity is
// listened to only through Chip::l1(), which makes the ports first).

#include <array>
#include <cstdint>
#include <memory>

#include "sim/model/arch_params.hpp"
#include "sim/model/core_coord.hpp"
#include "sim/model/memory_region.hpp"
#include "sim/model/noc_port.hpp"

namespace cclmesh::sim {

class DramChannel;

struct Endpoint {
  TileKind kind = TileKind::None;
  CoreCoord coord;
  MemoryRegion* memory = nullptr;      // L1, or the DRAM channel's memory
  DramChannel* dram = nullptr;         // set for DRAM endpoints
  // What its ports are made with.
  ChipId chip = 0;
  const NiuRates* rates = nullptr;     // the chip's ArchParams, which outlive it
  std::int32_t request_slots = 0;

  NocPort& port(NocId noc) {
    std::unique_ptr<NocPort>& p = ports_[static_cast<std::size_t>(index_of(noc))];
    if (p == nullptr) [[unlikely]] make_ports();
    return *p;
  }
  // The port if it was made, else nullptr: a report that reads statistics makes none.
  const NocPort* port_if_made(NocId noc) const { return ports_[static_cast<std::size_t>(index_of(noc))].get(); }
  // Both ports (they join the L1's activity sources in NoC order, as they always did).
  void make_ports();
  bool can_request() const { return kind == TileKind::Tensix || kind == TileKind::Eth; }

 private:
  std::array<std::unique_ptr<NocPort>, kNocCount> ports_;
};

}  // namespace cclmesh::sim
