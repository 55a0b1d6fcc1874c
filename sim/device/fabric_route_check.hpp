#pragma once
// The simulator's check of a fabric packet's route at its sender (docs/sim_device.md, "Fabric
// routes checked at the sender"). A worker hands a packet to the fabric by writing its header
// at the start of a slot of a router's worker sender channel (or of a fabric mux's client
// channel, which feeds one): that write is where the simulated device, which knows the fabric
// plan, compares the header's hops with how far the line or ring goes from the sending chip.
//
// Two mistakes are caught there, and reported as a fault of the sending kernel (chip, core,
// kernel, for the interpreter its stream and command), with the hops asked for and the line's
// or ring's extent:
//   - past a line's end (ROUTE_PAST_END): the router at the end faults too, as the backstop,
//     but it cannot say who sent the packet (the header carries no origin);
//   - round a ring (ROUTE_WRAPS_RING): a route of as many hops as the ring has chips, or more,
//     passes its sender and lands on chip (origin + hops) mod N; no router can tell.
// Hardware checks neither at the sender: this is a simulator check, kept out of kernels/.
//
// Cost: per NoC write of a workload kernel, one table look-up by the written core; for a write
// to a router or mux core, its entry point compared (a scan from there only where several
// share a core or a table slot); the header's routing byte is read
// only for a write that starts a slot. Built once per fabric launch and per program placement.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kernels/api/fabric_packet_header.hpp"
#include "kernels/api/kernel_fault.hpp"
#include "runtime/device/types.hpp"
#include "runtime/fabric/fabric_plan.hpp"
#include "sim/engine/check.hpp"
#include "sim/model/core_coord.hpp"

namespace cclmesh::sim::device {

// Slots a sender writes packets into, and how far the fabric goes from there.
struct FabricEntryPoint {
  CoreCoord core;                  // NoC0 of the router (or mux) that owns the slots
  std::uint32_t slots_begin = 0;   // [slots_begin, slots_end): the slots, slot_size_bytes each
  std::uint32_t slots_end = 0;
  std::uint32_t slot_size_bytes = 0;
  runtime::ChipId chip = 0;
  const runtime::FabricLine* line = nullptr;  // the line or ring the router is on (in the plan)
  std::uint32_t position = 0;                 // the chip's place on it
  bool forward = true;
  std::uint32_t reach = 0;  // hops the fabric goes on this way: to a line's end, or ring chips - 1
  std::string mux;          // "fabric mux at NoC0 (x,y)" when the slots are a mux's, else ""
};

// A chip's entry points (routers of the chip, muxes of the running program), and per NoC0 node
// the first that may be there, so that a write to any other core (most writes: DRAM, CBs) is
// passed over with one look-up, and one to a router or mux core starts at its entry point.
class FabricEntryPoints {
 public:
  void push_back(FabricEntryPoint e) {
    std::uint8_t& first = first_at_[node_slot(e.core)];
    if (first == 0) {
      CCLMESH_CHECK(entries_.size() < 255, "more than 254 fabric entry points on a chip");
      first = static_cast<std::uint8_t>(entries_.size() + 1);
    }
    entries_.push_back(std::move(e));
  }
  bool empty() const { return entries_.empty(); }
  std::size_t size() const { return entries_.size(); }
  std::vector<FabricEntryPoint>::const_iterator begin() const { return entries_.begin(); }
  std::vector<FabricEntryPoint>::const_iterator end() const { return entries_.end(); }

  // The entry point a write of `size_bytes` at `address` of `core` hands a packet header to (the
  // write starts one of its slots and holds a header), or nullptr.
  const FabricEntryPoint* packet_slot_written(CoreCoord core, std::uint64_t address, std::uint32_t size_bytes) const {
    const std::uint8_t first = first_at_[node_slot(core)];
    if (first == 0 || size_bytes < api::kPacketHeaderSizeBytes) return nullptr;
    // The entries from the first that may be at `core` on: the earlier ones are elsewhere.
    for (auto e = entries_.begin() + (first - 1); e != entries_.end(); ++e) {
      if (e->core.x != core.x || e->core.y != core.y || address < e->slots_begin || address >= e->slots_end) continue;
      return (address - e->slots_begin) % e->slot_size_bytes == 0 ? &*e : nullptr;
    }
    return nullptr;
  }

 private:
  // Exact for NoC0 coordinates below 16 (every chip's grid); larger ones share slots, which only
  // sends their writes on to the scan, where the core is compared.
  static std::uint32_t node_slot(CoreCoord c) {
    return (static_cast<std::uint32_t>(c.x) & 15U) | ((static_cast<std::uint32_t>(c.y) & 15U) << 4);
  }

  std::vector<FabricEntryPoint> entries_;
  std::uint8_t first_at_[256] = {};  // by node_slot: 1 + the first entry there may be, 0 none
};

// The worker sender channel of the router at `site`, whose L1 layout is `config`'s.
FabricEntryPoint router_entry_point(const runtime::FabricPlan& plan, const runtime::FabricRouterSite& site,
                                    const kernels::FabricRouterConfig& config);

// The route's last hop fits the fabric from the entry point. A routing byte no router can act
// on (a zero field) is left to the router's BAD_PACKET_HEADER.
inline bool route_fits(const FabricEntryPoint& e, std::uint8_t routing) {
  if (!api::routing_is_valid(routing)) return true;
  const std::uint32_t last_hop = std::uint32_t{api::routing_start_distance(routing)} + api::routing_range(routing) - 1;
  return last_hop <= e.reach;
}

struct RouteMistake {
  api::KernelFaultCode code;  // ROUTE_PAST_END or ROUTE_WRAPS_RING
  std::uint32_t last_hop;
  std::string detail;  // what was asked, the fabric's extent, where it would have gone
};

// Why `header`, handed to `e`, does not fit (call when route_fits is false).
RouteMistake describe_route_mistake(const FabricEntryPoint& e, const api::PacketHeader& header);

}  // namespace cclmesh::sim::device
