#pragma once
// A NoC grid node with an NIU: a Tensix core, an ethernet core or a DRAM endpoint. It owns one
// NocPort per NoC and points at the memory a NoC address on it reaches.

#include <array>
#include <memory>

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
  std::array<std::unique_ptr<NocPort>, kNocCount> ports;

  NocPort& port(NocId noc) { return *ports[static_cast<std::size_t>(index_of(noc))]; }
  bool can_request() const { return kind == TileKind::Tensix || kind == TileKind::Eth; }
};

}  // namespace cclmesh::sim
