#pragma once
// The persistent 1D fabric of a mesh (REFERENCE 3.4, 3.5, 6.1-6.7): its independent lines or
// rings ("fabric lines"), which ethernet cores of each hop run routers, and every router's
// configuration. A pure function of (topology, options), so the backend that launches the
// routers at open and the op builders that connect workers to them agree without talking to
// each other. Being one, it is built once per (topology, options) on a thread and shared: a
// FabricPlan is a handle to an immutable plan, cheap to copy (fabric_plan.cpp, built_for).
//
// Scope: System builds one line or ring through every chip (FabricOptions::chip_order, or
// topo::find_system_line / ring; a ring with one down edge on it runs as a line around it, as a
// torus row does: group_run); Axes builds one per mesh row and one per mesh column, as
// tt-metal's FABRIC_1D / FABRIC_1D_RING do (REFERENCE 3.4, 6.7): a chip then has up to four
// router pairs' worth of neighbours (E/W on its row's line, N/S on its column's), each router on
// its own ethernet channel. Chips without mesh coordinates (TG's gateway N150s) get none.
//
// Along a fabric line, a chip's *forward* router sits on the channel of the hop to the next
// chip and its *backward* router on the hop from the previous one. A packet travelling forward
// leaves through forward routers and arrives at backward routers, whose receivers hand it on
// to the same chip's forward router of the same line and plane (the downstream of a backward
// router is the forward one, and the reverse). Routing planes (REFERENCE 3.5): with num_links
// L every hop runs L routers per end, plane i on the hop's i-th link (topo::find_line's order),
// and planes never exchange traffic. L may not exceed what dispatch leaves usable on every hop
// (topo::usable_links: 1 on N300 and T3K, 3 on TG, 4 on a Galaxy, REFERENCE 3.3). The router
// region starts at kEriscKernelBase (l1_map.hpp); slot counts are the first fit of REFERENCE
// 6.2's options in the ERISC kernel region unless given.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "kernels/api/fabric_connection.hpp"
#include "kernels/kernel_args.hpp"
#include "runtime/device/core_map.hpp"
#include "runtime/device/fabric_options.hpp"
#include "runtime/device/l1_map.hpp"
#include "runtime/device/types.hpp"
#include "topologies/embedding.hpp"
#include "topologies/topology.hpp"

namespace cclmesh::runtime {

// A fabric the topology cannot carry, or options that do not describe one (bad input).
class FabricPlanError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// One independent line or ring of the fabric.
struct FabricLine {
  FabricMode mode = FabricMode::Line;  // Line or Ring
  std::vector<ChipId> chips;           // in order
  std::optional<int> axis;             // scope Axes: the cluster_axis whose group this is
  // A row or column that closes, or the whole-system ring, run as a line around a down edge
  // (FabricOptions::down_edges): that edge, (the line's last chip, its first), ...
  std::optional<std::pair<ChipId, ChipId>> opened_at;
  // ... and the chips in the order of what it opens (a row or column in coordinate order, the
  // whole-system ring or line as laid without the edge down): the ranks' order of a group that is
  // all of it, so that which link is down does not change where an op's data goes.
  std::vector<ChipId> opened_from;

  bool contains(ChipId chip) const;
  // Throws FabricPlanError for a chip not on this line.
  std::size_t position(ChipId chip) const;
  // "line 4-0-2-6" / "ring 4-0-2-6-4" (axis lines say "axis 1 line ...").
  std::string to_string() const;
};

// Which routers a worker connection uses: the fabric line and the routing plane on it.
struct FabricPort {
  std::uint32_t line = 0;
  std::uint32_t link = 0;
};

struct FabricRouterSite {
  ChipId chip = 0;
  std::uint32_t line = 0;  // index into FabricPlan::lines()
  std::uint32_t link = 0;  // routing plane
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
  std::uint32_t line = 0;  // the fabric line it runs on
};

// How the fabric runs a group of chips (`group`, in its own order: a mesh row or column in
// coordinate order, or the whole-system line or ring) when the links of `down_edges` are down
// from the start. A group that closes (3+ chips and a link from its last chip to its first: a
// torus row, the whole-system ring) is a ring in Ring mode and a line in the group's order in
// Line mode; with one down edge on the path it would take (the ring, or the line) it runs as a
// line from the chip after that edge round to the chip before it, in either mode (a ring minus
// one edge is a line). A group that does not close is a line, which a down edge cuts; two down
// edges cut a closing group.
struct GroupRun {
  std::vector<ChipId> chips;  // in fabric order
  bool ring = false;
  std::optional<std::pair<ChipId, ChipId>> opened_at;  // the down edge a line runs around
  // Down edges that cut the group (it then cannot run): none when it runs.
  std::vector<std::pair<ChipId, ChipId>> cut_by;
  bool runs() const { return cut_by.empty(); }
};
GroupRun group_run(const topo::Topology& topology, const std::vector<ChipId>& group, bool ring_mode,
                   const std::vector<std::pair<ChipId, ChipId>>& down_edges);

class FabricPlan {
 public:
  FabricPlan();  // no fabric
  // Throws FabricPlanError (or topo::EmbeddingError / topo::InputError) when the topology has
  // no such line or ring, no mesh for per-axis lines, fewer usable links than num_links, or
  // the router region cannot hold the requested slots. The plan of equal inputs built last on
  // this thread is shared, not built again.
  FabricPlan(const topo::Topology& topology, const FabricOptions& options);
  // Copies share the plan; a move copies too, so that no FabricPlan is ever left without one.
  FabricPlan(const FabricPlan&) = default;
  FabricPlan& operator=(const FabricPlan&) = default;

  FabricMode mode() const { return built_->options.mode; }
  FabricScope scope() const { return built_->options.scope; }
  bool enabled() const { return built_->options.mode != FabricMode::None; }
  const FabricOptions& options() const { return built_->options; }
  std::uint32_t num_links() const { return built_->options.num_links; }
  const std::vector<FabricLine>& lines() const { return built_->lines; }
  const std::vector<FabricRouterSite>& routers() const { return built_->routers; }
  // The line holding every chip of `chips` (a chip lies on at most one line per axis, so at
  // most one line holds two given chips); nullopt when none does.
  std::optional<std::uint32_t> line_containing(const std::vector<ChipId>& chips) const;
  // "line 4-0-2-6-7-3-1-5" or, per axis, "12 lines: rows 4x ..., columns ..." for messages.
  std::string describe() const;

  // --- the whole-system fabric's view (exactly one line; FabricPlanError otherwise) ---------
  // The embedding's chips, in order.
  const std::vector<ChipId>& chips() const;
  bool contains(ChipId chip) const;  // on any line
  std::size_t position(ChipId chip) const;
  // nullptr when the chip has no router in that direction (a line's end); plane 0.
  const FabricRouterSite* router(ChipId chip, bool forward) const;
  // How many chips lie beyond `chip` in a direction (a ring: all the others, both ways), on
  // the one line holding `chip` (FabricPlanError when none or several do).
  std::uint32_t reach(ChipId chip, bool forward) const;

  // --- any fabric --------------------------------------------------------------------------
  const FabricRouterSite* router(FabricPort port, ChipId chip, bool forward) const;
  // The router on `chip`'s ethernet channel, or nullptr.
  const FabricRouterSite* router_on_channel(ChipId chip, std::uint32_t channel) const;
  // The router whose ethernet core is at NoC0 (x, y) of `chip`, or nullptr.
  const FabricRouterSite* router_at(ChipId chip, std::uint32_t noc0_x, std::uint32_t noc0_y) const;
  // Shortest route on the line holding both chips (a ring breaks ties forward). Throws
  // FabricPlanError for the same chip, chips on no common line, or more than 15 hops (the
  // routing byte, REFERENCE 6.5).
  FabricRoute route(ChipId from, ChipId to) const;

  // The layout every router shares.
  kernels::FabricRouterL1Layout layout() const;
  // A worker's connection block for sender channel 0 of `chip`'s router in a direction, with
  // the worker's three per-program semaphore ids. Throws FabricPlanError when there is none.
  // Without a port: the whole-system fabric's plane 0.
  api::FabricConnectionConfig worker_connection(ChipId chip, bool forward, std::uint32_t flow_control_semaphore_id,
                                                std::uint32_t teardown_semaphore_id,
                                                std::uint32_t buffer_index_semaphore_id) const;
  api::FabricConnectionConfig worker_connection(FabricPort port, ChipId chip, bool forward,
                                                std::uint32_t flow_control_semaphore_id,
                                                std::uint32_t teardown_semaphore_id,
                                                std::uint32_t buffer_index_semaphore_id) const;

 private:
  // The plan itself, immutable once built.
  struct Built {
    FabricOptions options;
    std::vector<FabricLine> lines;
    std::vector<FabricRouterSite> routers;
    // Index into routers by (line, link, chip, forward) and by (chip, channel): looking a router
    // up by scanning them made the plan quadratic in its routers (every router asks for its
    // downstream one; docs/topologies.md, "Review (session 11)").
    std::map<std::tuple<std::uint32_t, std::uint32_t, ChipId, bool>, std::size_t> router_by_port;
    std::map<std::pair<ChipId, std::uint32_t>, std::size_t> router_by_channel;
    const FabricRouterSite* router(FabricPort port, ChipId chip, bool forward) const;
  };
  static const std::shared_ptr<const Built>& no_fabric();
  // The plan of (topology, options): one of this thread's latest, or built.
  static std::shared_ptr<const Built> built_for(const topo::Topology& topology, const FabricOptions& options);
  static std::shared_ptr<const Built> build(const topo::Topology& topology, const FabricOptions& options);
  // `line` (its axis and opening) laid along `embedding`: its mode, chips and routers.
  static void add_line(Built& plan, const topo::Topology& topology, const topo::Embedding& embedding, FabricLine line);
  const FabricLine& only_line() const;

  std::shared_ptr<const Built> built_;
};

}  // namespace cclmesh::runtime
