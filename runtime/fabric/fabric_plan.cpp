#include "runtime/fabric/fabric_plan.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "kernels/host/kernel_args_builder.hpp"
#include "runtime/device/l1_map.hpp"
#include "topologies/embedding.hpp"

namespace cclmesh::runtime {
namespace {

constexpr std::uint32_t kMaxRouteHops = 15;  // the routing byte's nibble (REFERENCE 6.5)

// The line or ring through `order` exactly as given, on link 0 of every hop.
topo::Embedding embedding_in_order(const topo::Topology& topology, const std::vector<ChipId>& order, bool ring) {
  const char* kind = ring ? "ring" : "line";
  if (ring && order.size() < 3) {
    throw FabricPlanError(fmt::format("fabric: a ring needs at least 3 chips; chip_order has {}", order.size()));
  }
  topo::Embedding e;
  e.kind = ring ? topo::EmbeddingKind::Ring : topo::EmbeddingKind::Line;
  for (const ChipId chip : order) {
    const auto id = static_cast<topo::ChipId>(chip);
    topology.chip(id);  // throws topo::InputError for an unknown chip
    if (std::find(e.chips.begin(), e.chips.end(), id) != e.chips.end()) {
      throw FabricPlanError(fmt::format("fabric: chip {} appears twice in chip_order", chip));
    }
    e.chips.push_back(id);
  }
  const std::size_t hops = ring ? e.chips.size() : e.chips.size() - 1;
  for (std::size_t i = 0; i < hops; ++i) {
    const topo::ChipId from = e.chips[i];
    const topo::ChipId to = e.chips[(i + 1) % e.chips.size()];
    const std::optional<std::size_t> edge = topology.edge_between(from, to);
    if (!edge) {
      throw FabricPlanError(fmt::format("fabric: chip_order's {} goes from chip {} to chip {}, which are not "
                                        "neighbours",
                                        kind, from, to));
    }
    const std::size_t link_index = topology.edges()[*edge].links.front();
    const topo::EthLink& link = topology.links()[link_index];
    const bool a_is_from = link.a.chip == from;
    e.hops.push_back(topo::Hop{from, to,
                               {topo::HopLink{a_is_from ? link.a.channel : link.b.channel,
                                              a_is_from ? link.b.channel : link.a.channel, link_index}}});
  }
  return e;
}

}  // namespace

std::string to_string(FabricMode mode) {
  switch (mode) {
    case FabricMode::None: return "none";
    case FabricMode::Line: return "line";
    case FabricMode::Ring: return "ring";
  }
  return "unknown";
}

FabricPlan::FabricPlan(const topo::Topology& topology, const FabricOptions& options) : options_(options) {
  if (options.mode == FabricMode::None) return;
  const bool ring = options.mode == FabricMode::Ring;
  if (options.max_payload_bytes == 0 || options.max_payload_bytes > 0xFFFF) {
    throw FabricPlanError(fmt::format("fabric: max_payload_bytes {} must be in 1..65535", options.max_payload_bytes));
  }
  const topo::Embedding embedding =
      options.chip_order.empty() ? (ring ? topo::find_system_ring(topology) : topo::find_system_line(topology))
                                 : embedding_in_order(topology, options.chip_order, ring);
  chips_.assign(embedding.chips.begin(), embedding.chips.end());
  if (chips_.size() < 2) {
    throw FabricPlanError(fmt::format("fabric: a {} needs at least 2 chips; '{}' has {}", to_string(options.mode),
                                      topology.name(), chips_.size()));
  }

  kargs::FabricRouterSlots slots{};
  try {
    slots = kargs::choose_fabric_router_slots(kEriscKernelBase, kEriscKernelBytes, options.max_payload_bytes, ring);
  } catch (const kargs::KernelArgsError& e) {
    if (!options.sender_slots || !options.receiver_slots) throw FabricPlanError(e.what());
  }
  if (options.sender_slots) slots.sender_slots = *options.sender_slots;
  if (options.receiver_slots) slots.receiver_slots = *options.receiver_slots;
  const bool bubble = options.bubble_flow_control.value_or(ring);
  if (slots.sender_slots == 0 || slots.receiver_slots < (bubble ? 2u : 1u)) {
    throw FabricPlanError(fmt::format("fabric: {} sender / {} receiver slots; expected >= 1 / >= {}",
                                      slots.sender_slots, slots.receiver_slots, bubble ? 2 : 1));
  }
  const kernels::FabricRouterL1Layout l = kernels::make_fabric_router_layout(
      kEriscKernelBase, options.max_payload_bytes, slots.sender_slots, slots.sender_slots, slots.receiver_slots);
  if (std::uint64_t{l.end} - kEriscKernelBase > kEriscKernelBytes) {
    throw FabricPlanError(fmt::format("fabric: {} sender / {} receiver slots of {} B need {} B of ERISC L1; the kernel "
                                      "region has {} B",
                                      slots.sender_slots, slots.receiver_slots, l.slot_size_bytes,
                                      l.end - kEriscKernelBase, kEriscKernelBytes));
  }

  // Sites first, configs once every chip's routers are known (downstream = the other one).
  for (const topo::Hop& hop : embedding.hops) {
    const topo::HopLink& link = hop.links.front();
    FabricRouterSite fwd;
    fwd.chip = static_cast<ChipId>(hop.from);
    fwd.channel = static_cast<std::uint32_t>(link.from_channel);
    fwd.forward = true;
    fwd.peer = static_cast<ChipId>(hop.to);
    FabricRouterSite bwd;
    bwd.chip = static_cast<ChipId>(hop.to);
    bwd.channel = static_cast<std::uint32_t>(link.to_channel);
    bwd.forward = false;
    bwd.peer = static_cast<ChipId>(hop.from);
    routers_.push_back(fwd);
    routers_.push_back(bwd);
  }
  std::stable_sort(routers_.begin(), routers_.end(), [this](const FabricRouterSite& a, const FabricRouterSite& b) {
    const std::size_t pa = position(a.chip);
    const std::size_t pb = position(b.chip);
    return pa != pb ? pa < pb : a.forward > b.forward;
  });
  for (FabricRouterSite& site : routers_) {
    site.noc0 = chip_core_map(topology, static_cast<topo::ChipId>(site.chip)).eth_noc0(site.channel);
  }
  for (FabricRouterSite& site : routers_) {
    const FabricRouterSite* downstream = router(site.chip, !site.forward);
    kernels::FabricRouterConfig& c = site.config;
    c.l1_base = kEriscKernelBase;
    c.max_payload_bytes = options.max_payload_bytes;
    c.sender_slots[0] = slots.sender_slots;
    c.sender_slots[1] = slots.sender_slots;
    c.receiver_slots = slots.receiver_slots;
    c.is_handshake_master = site.chip < site.peer;
    c.topology = ring ? kernels::fabric_router::kTopologyRing : kernels::fabric_router::kTopologyLine;
    c.bubble_flow_control = bubble;
    c.first_level_acks = options.first_level_acks;
    c.switch_interval = options.switch_interval;
    c.has_downstream = downstream != nullptr;
    c.downstream_noc_x = downstream != nullptr ? downstream->noc0.x : 0;
    c.downstream_noc_y = downstream != nullptr ? downstream->noc0.y : 0;
  }
}

const FabricRouterSite* FabricPlan::router(ChipId chip, bool forward) const {
  for (const FabricRouterSite& site : routers_) {
    if (site.chip == chip && site.forward == forward) return &site;
  }
  return nullptr;
}

bool FabricPlan::contains(ChipId chip) const { return std::find(chips_.begin(), chips_.end(), chip) != chips_.end(); }

std::size_t FabricPlan::position(ChipId chip) const {
  const auto it = std::find(chips_.begin(), chips_.end(), chip);
  if (it == chips_.end()) {
    const std::vector<topo::ChipId> chips(chips_.begin(), chips_.end());
    throw FabricPlanError(fmt::format("fabric: chip {} is not on the fabric's {} ({})", chip, to_string(mode()),
                                      topo::chip_list_to_string(chips)));
  }
  return static_cast<std::size_t>(it - chips_.begin());
}

FabricRoute FabricPlan::route(ChipId from, ChipId to) const {
  if (!enabled()) throw FabricPlanError("fabric: no route without a fabric (mode none)");
  if (from == to) throw FabricPlanError(fmt::format("fabric: no route from chip {} to itself", from));
  const auto a = static_cast<std::int64_t>(position(from));
  const auto b = static_cast<std::int64_t>(position(to));
  const auto n = static_cast<std::int64_t>(chips_.size());
  FabricRoute r;
  if (mode() == FabricMode::Line) {
    r.forward = b > a;
    r.hops = static_cast<std::uint32_t>(r.forward ? b - a : a - b);
  } else {
    const std::int64_t ahead = ((b - a) % n + n) % n;
    r.forward = ahead <= n - ahead;
    r.hops = static_cast<std::uint32_t>(r.forward ? ahead : n - ahead);
  }
  if (r.hops > kMaxRouteHops) {
    throw FabricPlanError(fmt::format("fabric: chip {} -> chip {} is {} hops; a route holds at most {}", from, to,
                                      r.hops, kMaxRouteHops));
  }
  return r;
}

std::uint32_t FabricPlan::reach(ChipId chip, bool forward) const {
  const std::size_t p = position(chip);
  if (mode() == FabricMode::Ring) return static_cast<std::uint32_t>(chips_.size() - 1);
  return static_cast<std::uint32_t>(forward ? chips_.size() - 1 - p : p);
}

kernels::FabricRouterL1Layout FabricPlan::layout() const {
  if (routers_.empty()) throw FabricPlanError("fabric: no routers (mode none)");
  return kernels::make_fabric_router_layout(routers_.front().config);
}

api::FabricConnectionConfig FabricPlan::worker_connection(ChipId chip, bool forward,
                                                          std::uint32_t flow_control_semaphore_id,
                                                          std::uint32_t teardown_semaphore_id,
                                                          std::uint32_t buffer_index_semaphore_id) const {
  const FabricRouterSite* site = router(chip, forward);
  if (site == nullptr) {
    throw FabricPlanError(fmt::format("fabric: chip {} has no {} router", chip, forward ? "forward" : "backward"));
  }
  return kargs::worker_fabric_connection(site->config, site->noc0.x, site->noc0.y, flow_control_semaphore_id,
                                         teardown_semaphore_id, buffer_index_semaphore_id);
}

}  // namespace cclmesh::runtime
