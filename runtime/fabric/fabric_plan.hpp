#pragma once
// The persistent 1D fabric of a mesh (REFERENCE 6.1-6.7): which chips form the line or ring,
// which ethernet core of each hop runs a router, and every router's configuration. A pure
// function of (topology, options), so the backend that launches the routers at open and the
// op builders that connect workers to them agree without talking to each other.
//
// Along the embedding, a chip's *forward* router sits on the channel of the hop to the next
// chip and its *backward* router on the hop from the previous one. A packet travelling forward
// leaves through forward routers and arrives at backward routers, whose receivers hand it on
// to the same chip's forward router (the downstream of a backward router is the forward one,
// and the reverse). Link 0 of every hop is used (one routing plane, REFERENCE 3.3: usable
// num_links on a T3K is 1). The router region starts at kEriscKernelBase (l1_map.hpp); slot
// counts are the first fit of REFERENCE 6.2's options in the ERISC kernel region unless given.

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/api/fabric_connection.hpp"
#include "kernels/kernel_args.hpp"
#include "runtime/device/core_map.hpp"
#include "runtime/device/types.hpp"
#include "topologies/topology.hpp"

namespace cclmesh::runtime {

enum class FabricMode : std::uint8_t { None, Line, Ring };
std::string to_string(FabricMode mode);

struct FabricOptions {
  FabricMode mode = FabricMode::None;
  // REFERENCE 6.2: the 2026 default payload (4 bfp8_b tiles); WH max 7616.
  std::uint32_t max_payload_bytes = 4352;
  // The line's or ring's chips in order (consecutive chips must be neighbours); empty =
  // topo::find_system_line / find_system_ring.
  std::vector<ChipId> chip_order;
  // Bubble flow control (REFERENCE 6.7); default on for rings, off for lines (no cycle).
  std::optional<bool> bubble_flow_control;
  bool first_level_acks = true;
  std::uint32_t switch_interval = kernels::fabric_router::kDefaultSwitchInterval;
  // Slot counts per sender channel and for the receiver; default: first fit (REFERENCE 6.2).
  std::optional<std::uint32_t> sender_slots;
  std::optional<std::uint32_t> receiver_slots;

  bool operator==(const FabricOptions&) const = default;
};

// A fabric the topology cannot carry, or options that do not describe one (bad input).
class FabricPlanError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct FabricRouterSite {
  ChipId chip = 0;
  std::uint32_t channel = 0;  // logical ethernet channel
  bool forward = true;
  ChipId peer = 0;
  Noc0Coord noc0;
  kernels::FabricRouterConfig config{};
};

// How a packet from one chip reaches another: the connection to use and the hop count.
struct FabricRoute {
  bool forward = true;
  std::uint32_t hops = 0;
};

class FabricPlan {
 public:
  FabricPlan() = default;  // no fabric
  // Throws FabricPlanError (or topo::EmbeddingError) when the topology has no such line or
  // ring, or the router region cannot hold the requested slots.
  FabricPlan(const topo::Topology& topology, const FabricOptions& options);

  FabricMode mode() const { return options_.mode; }
  bool enabled() const { return options_.mode != FabricMode::None; }
  const FabricOptions& options() const { return options_; }
  // The embedding's chips, in order.
  const std::vector<ChipId>& chips() const { return chips_; }
  const std::vector<FabricRouterSite>& routers() const { return routers_; }
  // nullptr when the chip has no router in that direction (a line's end).
  const FabricRouterSite* router(ChipId chip, bool forward) const;
  bool contains(ChipId chip) const;
  // Throws FabricPlanError for a chip outside the fabric.
  std::size_t position(ChipId chip) const;

  // Shortest route (a ring breaks ties forward). Throws FabricPlanError for the same chip, a
  // chip outside the fabric, or more than 15 hops (the routing byte, REFERENCE 6.5).
  FabricRoute route(ChipId from, ChipId to) const;
  // How many chips lie beyond `chip` in a direction (a ring: all the others, both ways).
  std::uint32_t reach(ChipId chip, bool forward) const;

  // The layout every router shares.
  kernels::FabricRouterL1Layout layout() const;
  // A worker's connection block for sender channel 0 of `chip`'s router in a direction, with
  // the worker's three per-program semaphore ids. Throws FabricPlanError when there is none.
  api::FabricConnectionConfig worker_connection(ChipId chip, bool forward, std::uint32_t flow_control_semaphore_id,
                                                std::uint32_t teardown_semaphore_id,
                                                std::uint32_t buffer_index_semaphore_id) const;

 private:
  FabricOptions options_;
  std::vector<ChipId> chips_;
  std::vector<FabricRouterSite> routers_;
};

}  // namespace cclmesh::runtime
