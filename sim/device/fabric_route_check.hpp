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
// Cost: per NoC write of a workload kernel, a scan of its chip's few entry points (routers of
// the chip, muxes of the running program), compared by core; the header is read only for a
// write that starts a slot. Built once per fabric launch and per program placement.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/api/fabric_packet_header.hpp"
#include "kernels/api/kernel_fault.hpp"
#include "runtime/device/types.hpp"
#include "runtime/fabric/fabric_plan.hpp"
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

// A chip's entry points, scanned per write.
using FabricEntryPoints = std::vector<FabricEntryPoint>;

// The worker sender channel of the router at `site`, whose L1 layout is `config`'s.
FabricEntryPoint router_entry_point(const runtime::FabricPlan& plan, const runtime::FabricRouterSite& site,
                                    const kernels::FabricRouterConfig& config);

// The entry point a write of `size_bytes` at `address` of `core` hands a packet header to (the
// write starts one of its slots and holds a header), or nullptr.
inline const FabricEntryPoint* packet_slot_written(const FabricEntryPoints& entries, CoreCoord core,
                                                   std::uint64_t address, std::uint32_t size_bytes) {
  if (size_bytes < api::kPacketHeaderSizeBytes) return nullptr;
  for (const FabricEntryPoint& e : entries) {
    if (e.core.x != core.x || e.core.y != core.y || address < e.slots_begin || address >= e.slots_end) continue;
    return (address - e.slots_begin) % e.slot_size_bytes == 0 ? &e : nullptr;
  }
  return nullptr;
}

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
