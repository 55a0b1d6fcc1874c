#pragma once
// The persistent 1D fabric a device runs (REFERENCE 3.4, 3.5, 6.1-6.7), as options: which lines
// or rings, how many routing planes, the routers' settings. Device-level, as tt-metal's fabric
// config is: a device is opened with a fabric and MeshDevice::fabric() says which, so op builders
// name the routers the device launched (runtime/fabric/fabric_plan.hpp turns these options and
// a topology into the routers' sites and configurations). FabricMode::None: no persistent
// fabric (legacy mode: each op launches its own EDMs).

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kernels/kernel_args.hpp"
#include "runtime/device/l1_map.hpp"
#include "runtime/device/types.hpp"

namespace cclmesh::runtime {

// The largest fabric packet payload a Wormhole fabric takes (REFERENCE 6.2: 7 tiles of
// bfp8_b; Blackhole's 15232 B is not modelled): the bound of every --fabric-payload option, and
// so the largest page an op over the fabric can send.
inline constexpr std::uint32_t kMaxFabricPayloadBytes = 7616;

enum class FabricMode : std::uint8_t { None, Line, Ring };
std::string to_string(FabricMode mode);
// System: one line or ring through every chip. Axes: one per mesh row and per mesh column.
enum class FabricScope : std::uint8_t { System, Axes };
std::string to_string(FabricScope scope);

// How a ring's routers avoid the buffer cycle (REFERENCE 6.7, 12). Bubble: late 2025 (PR #33222),
// the injection channel sends only with >= 2 free downstream slots; 2 sender channels and one
// receiver per router. Dateline: mid 2025 (PR #19101 / #20165), a second VC past a dateline
// link; 3 sender channels and 2 receivers per router, REFERENCE 6.2's mid-2025 slot split
// (runtime/fabric/fabric_plan.cpp places the dateline). Lines ignore neither: a Dateline fabric
// must be a ring (a line has no cycle to break).
enum class RingFlowControl : std::uint8_t { Bubble, Dateline };
std::string to_string(RingFlowControl flow_control);

struct FabricOptions {
  FabricMode mode = FabricMode::None;
  // Axes: a Ring mode makes a ring of every row / column that has its closing link (a torus),
  // and a line of the others.
  FabricScope scope = FabricScope::System;
  // Routing planes: routers per hop end, each on its own link of the edge (REFERENCE 3.5).
  std::uint32_t num_links = 1;
  // REFERENCE 6.2: the 2026 default payload (4 bfp8_b tiles); at most kMaxFabricPayloadBytes.
  std::uint32_t max_payload_bytes = 4352;
  // System scope: the line's or ring's chips in order (consecutive chips must be neighbours);
  // empty = topo::find_system_line / find_system_ring. Must be empty with scope Axes.
  std::vector<ChipId> chip_order;
  // Chip pairs whose links are down from the start (the simulated device's faults,
  // sim/device/fabric_reembed.hpp). A row or column that closes (3+ chips and a closing link, a
  // torus), or the whole-system ring, with one of them on it runs as a line from the chip after
  // it, in either mode: a ring minus one edge is a line (fabric_plan.hpp, group_run). A system
  // fabric gets them only when no other ring avoids them (its chip_order avoids them otherwise).
  std::vector<std::pair<ChipId, ChipId>> down_edges;
  // Bubble flow control (REFERENCE 6.7); default on for rings, off for lines (no cycle).
  std::optional<bool> bubble_flow_control;
  // Dateline: no bubble rule (bubble_flow_control unset or false; it came with PR #33222) and
  // no sender_slots / receiver_slots overrides (each router kind has its own split).
  RingFlowControl ring_flow_control = RingFlowControl::Bubble;
  // REFERENCE 6.4: a sender slot frees on the receiver's first-level ack (standard from 2025-11,
  // PR #33192), or, off, only on the completion ack (the mid-2025 router). Off with bubble flow
  // control is refused by the plan: the bubble rule needs them (REFERENCE 6.7).
  bool first_level_acks = true;
  std::uint32_t switch_interval = kernels::fabric_router::kDefaultSwitchInterval;
  // Slot counts per sender channel and for the receiver; default: first fit (REFERENCE 6.2).
  std::optional<std::uint32_t> sender_slots;
  std::optional<std::uint32_t> receiver_slots;
  // Received packets whose NoC writes a router's receiver keeps in flight at once (one
  // transaction id each, REFERENCE 1.1, 1.6); default: every receiver slot, at most 16. 1 is
  // the receiver that handles one packet at a time (for comparisons).
  std::optional<std::uint32_t> receiver_packets_in_flight;
  // The ERISC's unreserved L1 (REFERENCE 1.4, unconfirmed: 106..150 KiB; l1_map.hpp). Not a
  // fabric setting but a chip one every ERISC user shares: the routers' slots, the legacy EDMs'
  // buffers, all_gather's bidirectional-mode threshold and where ERISC semaphores sit. It rides
  // here because these options are what the device and every op builder already share (so a
  // device without a fabric still has FabricOptions: mode None, this set).
  std::uint32_t erisc_unreserved_bytes = kEriscUnreservedDefaultBytes;

  EriscL1Map erisc_l1_map() const { return EriscL1Map{erisc_unreserved_bytes}; }
  bool operator==(const FabricOptions&) const = default;
};

}  // namespace cclmesh::runtime
