#include "runtime/fabric/fabric_plan.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "kernels/host/kernel_args_builder.hpp"
#include "runtime/device/l1_map.hpp"
#include "topologies/embedding.hpp"
#include "topologies/errors.hpp"
#include "topologies/usable_links.hpp"

namespace cclmesh::runtime {
namespace {

constexpr std::uint32_t kMaxRouteHops = 15;  // the routing byte's nibble (REFERENCE 6.5)

// The line or ring through `order` exactly as given, on the first num_links links of every hop
// (topo::find_line's order).
topo::Embedding embedding_in_order(const topo::Topology& topology, const std::vector<ChipId>& order, bool ring,
                                   std::uint32_t num_links) {
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
    const topo::NeighbourEdge& neighbours = topology.edges()[*edge];
    if (neighbours.links.size() < num_links) {
      throw FabricPlanError(fmt::format("fabric: chip_order's hop {}-{} has {} link(s); num_links is {}", from, to,
                                        neighbours.links.size(), num_links));
    }
    topo::Hop hop{from, to, {}};
    for (std::uint32_t k = 0; k < num_links; ++k) {
      const std::size_t link_index = neighbours.links[k];
      const topo::EthLink& link = topology.links()[link_index];
      const bool a_is_from = link.a.chip == from;
      hop.links.push_back(topo::HopLink{a_is_from ? link.a.channel : link.b.channel,
                                        a_is_from ? link.b.channel : link.a.channel, link_index});
    }
    e.hops.push_back(std::move(hop));
  }
  e.num_links = static_cast<std::int32_t>(num_links);
  return e;
}

}  // namespace

namespace {

// One line or ring of the plan before its routers are placed: the embedding, and the line's
// axis and opening (FabricLine; add_line sets the rest).
struct PlannedLine {
  topo::Embedding embedding;
  FabricLine line;
};

std::string edges_string(const std::vector<std::pair<ChipId, ChipId>>& edges) {
  std::string text;
  for (const auto& [a, b] : edges) text += fmt::format("{}{}-{}", text.empty() ? "" : ", ", a, b);
  return text;
}

// `group` (in its own order) as group_run lays it around `down_edges`: its embedding (a ring
// where it closes in Ring mode, a line otherwise or around a down edge) and whether it was
// opened. `what` names it for the refusal of a group the down edges cut.
PlannedLine planned_group(const topo::Topology& topology, const std::vector<ChipId>& group, bool ring,
                          std::uint32_t num_links, const std::vector<std::pair<ChipId, ChipId>>& down_edges,
                          const std::string& what, const std::function<topo::Embedding(bool ring)>& embed) {
  const GroupRun run = group_run(topology, group, ring, down_edges);
  if (!run.runs()) {
    throw FabricPlanError(fmt::format("fabric: {} {} {} is cut by down edge(s) {}", what, run.ring ? "ring" : "line",
                                      fmt::join(group, "-"), edges_string(run.cut_by)));
  }
  PlannedLine planned;
  if (run.opened_at) {
    planned.embedding = embedding_in_order(topology, run.chips, false, num_links);
    planned.line.opened_at = run.opened_at;
    planned.line.opened_from = group;
  } else {
    planned.embedding = embed(run.ring);
  }
  return planned;
}

// Per axis: each row / column of the mesh with at least 2 chips, as group_run lays it: a ring
// where the group closes (Ring mode on a torus), a line otherwise or around a down edge.
std::vector<PlannedLine> axis_embeddings(const topo::Topology& topology, bool ring, std::int32_t num_links,
                                         const std::vector<std::pair<ChipId, ChipId>>& down_edges) {
  const auto& shape = topology.mesh_shape();
  if (!shape) {
    throw FabricPlanError(fmt::format("fabric: per-axis lines need a mesh; '{}' has no mesh shape", topology.name()));
  }
  std::vector<PlannedLine> result;
  for (int axis = shape->rank() - 1; axis >= 0; --axis) {
    for (const std::vector<topo::ChipId>& group : topo::axis_groups(topology, axis)) {
      if (group.size() < 2) continue;
      const std::vector<ChipId> chips(group.begin(), group.end());
      PlannedLine planned = planned_group(
          topology, chips, ring, static_cast<std::uint32_t>(num_links), down_edges, fmt::format("axis {}", axis),
          [&](bool as_ring) {
            return as_ring ? topo::find_ring(topology, group, num_links) : topo::find_line(topology, group, num_links);
          });
      planned.line.axis = axis;
      result.push_back(std::move(planned));
    }
  }
  return result;
}

// The whole-system line or ring: chip_order's, or the one the embedding search finds; with a
// down edge on it, as planned_group lays it around the edge (the ring opened into a line).
PlannedLine system_embedding(const topo::Topology& topology, const FabricOptions& options) {
  const bool ring = options.mode == FabricMode::Ring;
  const auto links = static_cast<std::int32_t>(options.num_links);
  const topo::Embedding laid =
      options.chip_order.empty()
          ? (ring ? topo::find_system_ring(topology, links) : topo::find_system_line(topology, links))
          : embedding_in_order(topology, options.chip_order, ring, options.num_links);
  if (options.down_edges.empty()) return PlannedLine{laid, {}};
  const std::vector<ChipId> chips(laid.chips.begin(), laid.chips.end());
  return planned_group(topology, chips, ring, options.num_links, options.down_edges, "the system",
                       [&](bool) { return laid; });
}

// REFERENCE 6.7 / 12: the dateline VC was replaced by bubble flow control, so the two do not
// mix; and each dateline router kind has its own slot split (REFERENCE 6.2).
void check_dateline_options(const FabricOptions& options) {
  if (options.mode != FabricMode::Ring) {
    throw FabricPlanError(fmt::format("fabric: ring_flow_control dateline needs a ring fabric; the fabric is {} (a "
                                      "line has no buffer cycle to break, REFERENCE 6.7)",
                                      to_string(options.mode)));
  }
  if (options.bubble_flow_control.value_or(false)) {
    throw FabricPlanError("fabric: ring_flow_control dateline with bubble_flow_control on; expected it unset or off "
                          "(the bubble rule replaced the dateline VC, REFERENCE 6.7)");
  }
  if (options.sender_slots || options.receiver_slots) {
    throw FabricPlanError("fabric: ring_flow_control dateline with sender_slots / receiver_slots set; expected them "
                          "unset (each dateline-VC router kind takes REFERENCE 6.2's mid-2025 first fit)");
  }
}

// Where a ring's dateline is: on its closing hop, from the ring's last chip back to its first
// (every plane of that hop). PR #20165 places datelines at device init on fixed links: on a
// torus at the wraparound edges, on chips with corners at the N/S connection of logical chip 0.
// The closing hop is a 1D ring's wraparound, and it touches the ring's first chip (a system ring
// starts at chip 0; an axis ring at its row's or column's first chip); any fixed hop would do
// for deadlock freedom, as every route is shorter than the ring and so crosses it at most once.
kargs::DatelineRouterKind dateline_router_kind(const FabricLine& ring, ChipId chip, bool forward) {
  const ChipId first = ring.chips.front();
  const ChipId last = ring.chips.back();
  if ((chip == last && forward) || (chip == first && !forward)) return kargs::DatelineRouterKind::Dateline;
  if ((chip == first && forward) || (chip == last && !forward)) return kargs::DatelineRouterKind::DatelineUpstream;
  return kargs::DatelineRouterKind::Ordinary;
}

kernels::FabricRouterSlotCounts dateline_slots(const EriscL1Map& erisc, std::uint32_t payload_bytes,
                                               kargs::DatelineRouterKind kind) {
  try {
    return kargs::choose_dateline_router_slots(erisc.kernel_base(), erisc.kernel_bytes(), payload_bytes, kind);
  } catch (const kargs::KernelArgsError& e) {
    throw FabricPlanError(fmt::format("fabric: ring_flow_control dateline: {} (REFERENCE 6.7: the T3K was short of "
                                      "ERISC L1 for ring buffering)",
                                      e.what()));
  }
}

// A dateline-VC ring router's settings: its own, its peer's and its downstream neighbour's slot
// counts, whether its link is the dateline (its channels 0 and 1 then send into the peer's VC1
// receiver: the VC switch), and each receiver's packets in flight (VC1's transaction ids after
// VC0's, within the NoC's 16).
void set_dateline_vcs(kernels::FabricRouterConfig& c, const FabricLine& ring, const FabricRouterSite& site,
                      const EriscL1Map& erisc, const FabricOptions& options) {
  const kargs::DatelineRouterKind kind = dateline_router_kind(ring, site.chip, site.forward);
  const kernels::FabricRouterSlotCounts own = dateline_slots(erisc, options.max_payload_bytes, kind);
  c.dateline_vcs = true;
  c.sender_slots[0] = own.sender[0];
  c.sender_slots[1] = own.sender[1];
  c.sender2_slots = own.sender[2];
  c.receiver_slots = own.receiver[0];
  c.vc1_receiver_slots = own.receiver[1];
  c.sends_into_vc1 = kind == kargs::DatelineRouterKind::Dateline;
  c.peer_slots = dateline_slots(erisc, options.max_payload_bytes, dateline_router_kind(ring, site.peer, !site.forward));
  c.downstream_slots =
      dateline_slots(erisc, options.max_payload_bytes, dateline_router_kind(ring, site.chip, !site.forward));
  const std::uint32_t limit = kernels::fabric_router::kMaxReceiverPacketsInFlight;
  const auto in_flight = [&options](std::uint32_t slots, std::uint32_t room) {
    return std::min({options.receiver_packets_in_flight.value_or(slots), slots, room});
  };
  c.receiver_packets_in_flight = in_flight(own.receiver[0], limit);
  c.vc1_receiver_packets_in_flight = in_flight(own.receiver[1], limit - c.receiver_packets_in_flight);
}

}  // namespace

GroupRun group_run(const topo::Topology& topology, const std::vector<ChipId>& group, bool ring_mode,
                   const std::vector<std::pair<ChipId, ChipId>>& down_edges) {
  const std::size_t n = group.size();
  const bool closes = n >= 3 && topology.edge_between(static_cast<topo::ChipId>(group.back()),
                                                      static_cast<topo::ChipId>(group.front()))
                                    .has_value();
  const auto hop_is_down = [&](std::size_t i) {
    const ChipId a = group[i];
    const ChipId b = group[(i + 1) % n];
    return std::any_of(down_edges.begin(), down_edges.end(),
                       [&](const auto& e) { return (e.first == a && e.second == b) || (e.first == b && e.second == a); });
  };
  GroupRun run;
  run.chips = group;
  run.ring = ring_mode && closes;
  // The hops of the path the group takes without faults: a ring's n, a line's n - 1.
  std::vector<std::size_t> down_hops;
  for (std::size_t i = 0; i + 1 < n || (run.ring && i < n); ++i) {
    if (hop_is_down(i)) down_hops.push_back(i);
  }
  if (down_hops.empty()) return run;
  // A line that closes can use its closing hop instead, unless that is down too.
  const bool can_open = closes && (run.ring ? down_hops.size() == 1 : down_hops.size() == 1 && !hop_is_down(n - 1));
  if (!can_open) {
    for (const std::size_t i : down_hops) run.cut_by.emplace_back(group[i], group[(i + 1) % n]);
    if (!run.ring && closes && hop_is_down(n - 1)) run.cut_by.emplace_back(group[n - 1], group[0]);
    return run;
  }
  const std::size_t down = down_hops.front();
  run.ring = false;
  run.opened_at = std::pair{group[down], group[(down + 1) % n]};
  run.chips.clear();
  for (std::size_t k = 1; k <= n; ++k) run.chips.push_back(group[(down + k) % n]);
  return run;
}

FabricPlan::FabricPlan() : built_(no_fabric()) {}

FabricPlan::FabricPlan(const topo::Topology& topology, const FabricOptions& options)
    : built_(built_for(topology, options)) {}

const std::shared_ptr<const FabricPlan::Built>& FabricPlan::no_fabric() {
  static const std::shared_ptr<const Built> none = std::make_shared<const Built>();
  return none;
}

// Plans built on this thread, the latest last, with what each was built from. A run plans its
// device's fabric ~10 times (the planning device, the simulated device, the op's groups and its
// output's shape on each ...: 4% of a 32x32 torus run's instructions, docs/performance.md,
// seventeenth pass), every time from the same topology and options; a plan is a pure function of
// the two, so equal inputs share the one built first. Per thread, so without a lock (a device and
// the op builders that plan on its topology run on one thread); two entries, as a run plans at
// most the fabric it asked for and the one re-embedded around a down link. A plan lives as long
// as this list or any FabricPlan holds it.
std::shared_ptr<const FabricPlan::Built> FabricPlan::built_for(const topo::Topology& topology,
                                                               const FabricOptions& options) {
  struct Planned {
    topo::Topology topology;
    FabricOptions options;
    std::shared_ptr<const Built> built;
  };
  constexpr std::size_t kKept = 2;
  thread_local std::vector<Planned> recent;
  for (auto it = recent.begin(); it != recent.end(); ++it) {
    if (it->options == options && it->topology == topology) {
      std::shared_ptr<const Built> built = it->built;
      std::rotate(it, it + 1, recent.end());
      return built;
    }
  }
  std::shared_ptr<const Built> built = build(topology, options);  // bad input throws: nothing kept
  if (recent.size() == kKept) recent.erase(recent.begin());
  recent.push_back(Planned{topology, options, built});
  return built;
}

std::shared_ptr<const FabricPlan::Built> FabricPlan::build(const topo::Topology& topology, const FabricOptions& options) {
  auto built = std::make_shared<Built>();
  Built& plan = *built;
  plan.options = options;
  if (!valid_erisc_unreserved_bytes(options.erisc_unreserved_bytes)) {
    throw FabricPlanError(fmt::format("fabric: erisc_unreserved_bytes {}; expected {}..{} (106..150 KiB, REFERENCE "
                                      "1.4), a multiple of {}",
                                      options.erisc_unreserved_bytes, kEriscUnreservedMinBytes,
                                      kEriscUnreservedMaxBytes, kProgramSemaphoreStride));
  }
  if (options.mode == FabricMode::None) return built;
  const bool ring = options.mode == FabricMode::Ring;
  if (options.max_payload_bytes == 0 || options.max_payload_bytes > 0xFFFF) {
    throw FabricPlanError(fmt::format("fabric: max_payload_bytes {} must be in 1..65535", options.max_payload_bytes));
  }
  if (options.num_links == 0 || options.num_links > 16) {
    throw FabricPlanError(fmt::format("fabric: num_links {} must be in 1..16", options.num_links));
  }
  const auto links = static_cast<std::int32_t>(options.num_links);
  std::vector<PlannedLine> embeddings;
  if (options.scope == FabricScope::Axes) {
    if (!options.chip_order.empty()) {
      throw FabricPlanError("fabric: chip_order names one system line or ring; per-axis lines follow the mesh");
    }
    embeddings = axis_embeddings(topology, ring, links, options.down_edges);
    if (embeddings.empty()) {
      throw FabricPlanError(fmt::format("fabric: the {} mesh of '{}' has no row or column of 2 or more chips",
                                        topology.mesh_shape()->to_string(), topology.name()));
    }
  } else {
    embeddings.push_back(system_embedding(topology, options));
    if (embeddings.front().embedding.chips.size() < 2) {
      throw FabricPlanError(fmt::format("fabric: a {} needs at least 2 chips; '{}' has {}", to_string(options.mode),
                                        topology.name(), embeddings.front().embedding.chips.size()));
    }
  }
  // REFERENCE 3.3, 3.5: dispatch keeps a routing plane on tunnelled systems. One plane is always
  // allowed (a single-link edge between tunnelled chips still carries the one-plane fabric the
  // model has always run).
  for (const PlannedLine& planned : embeddings) {
    const topo::Embedding& embedding = planned.embedding;
    const std::int32_t usable = topo::usable_links(topology, embedding);
    if (links > 1 && links > usable) {
      const std::int32_t reserved = topo::dispatch_reserved_links(topology);
      const std::string why =
          reserved > 0 ? fmt::format("; fast dispatch keeps {} per hop because '{}' has chips that are not "
                                     "MMIO-attached",
                                     reserved, topology.name())
                       : "";
      throw FabricPlanError(fmt::format("fabric: num_links {} on {}: its hops leave {} usable link(s){} (REFERENCE "
                                        "3.3: usable num_links is 1 on N300 and T3K, 3 on TG, 4 on a Galaxy)",
                                        options.num_links, embedding.to_string(), usable, why));
    }
  }

  const EriscL1Map erisc = options.erisc_l1_map();
  kargs::FabricRouterSlots slots{};
  try {
    slots = kargs::choose_fabric_router_slots(erisc.kernel_base(), erisc.kernel_bytes(), options.max_payload_bytes, ring);
  } catch (const kargs::KernelArgsError& e) {
    if (!options.sender_slots || !options.receiver_slots) throw FabricPlanError(e.what());
  }
  if (options.sender_slots) slots.sender_slots = *options.sender_slots;
  if (options.receiver_slots) slots.receiver_slots = *options.receiver_slots;
  const bool dateline = options.ring_flow_control == RingFlowControl::Dateline;
  if (dateline) check_dateline_options(options);
  const bool bubble = options.bubble_flow_control.value_or(ring && !dateline);
  if (slots.sender_slots == 0 || slots.receiver_slots < (bubble ? 2u : 1u)) {
    throw FabricPlanError(fmt::format("fabric: {} sender / {} receiver slots; expected >= 1 / >= {}",
                                      slots.sender_slots, slots.receiver_slots, bubble ? 2 : 1));
  }
  if (options.receiver_packets_in_flight &&
      (*options.receiver_packets_in_flight == 0 ||
       *options.receiver_packets_in_flight > kernels::default_receiver_packets_in_flight(slots.receiver_slots))) {
    throw FabricPlanError(fmt::format("fabric: {} receiver packets in flight; expected 1..{} (the {} receiver slots, "
                                      "at most {} transaction ids)",
                                      *options.receiver_packets_in_flight,
                                      kernels::default_receiver_packets_in_flight(slots.receiver_slots),
                                      slots.receiver_slots, kernels::fabric_router::kMaxReceiverPacketsInFlight));
  }
  const kernels::FabricRouterL1Layout l = kernels::make_fabric_router_layout(
      erisc.kernel_base(), options.max_payload_bytes, slots.sender_slots, slots.sender_slots, slots.receiver_slots);
  if (std::uint64_t{l.end} - erisc.kernel_base() > erisc.kernel_bytes()) {
    throw FabricPlanError(fmt::format("fabric: {} sender / {} receiver slots of {} B need {} B of ERISC L1; the kernel "
                                      "region has {} B",
                                      slots.sender_slots, slots.receiver_slots, l.slot_size_bytes,
                                      l.end - erisc.kernel_base(), erisc.kernel_bytes()));
  }

  for (const PlannedLine& planned : embeddings) add_line(plan, topology, planned.embedding, planned.line);
  // Two routers on one ethernet core would be a plan bug: lines share no edge, planes no link.
  for (std::size_t i = 0; i < plan.routers.size(); ++i) {
    const FabricRouterSite& site = plan.routers[i];
    if (!plan.router_by_channel.emplace(std::pair{site.chip, site.channel}, i).second) {
      throw FabricPlanError(fmt::format("fabric: chip {} channel {} would run two routers", site.chip, site.channel));
    }
    plan.router_by_port.emplace(std::tuple{site.line, site.link, site.chip, site.forward}, i);
  }
  for (FabricRouterSite& site : plan.routers) {
    const FabricRouterSite* downstream = plan.router(FabricPort{site.line, site.link}, site.chip, !site.forward);
    kernels::FabricRouterConfig& c = site.config;
    c.l1_base = erisc.kernel_base();
    c.max_payload_bytes = options.max_payload_bytes;
    c.sender_slots[0] = slots.sender_slots;
    c.sender_slots[1] = slots.sender_slots;
    c.receiver_slots = slots.receiver_slots;
    c.receiver_packets_in_flight = options.receiver_packets_in_flight.value_or(
        kernels::default_receiver_packets_in_flight(slots.receiver_slots));
    c.is_handshake_master = site.chip < site.peer;
    const bool line_is_ring = plan.lines[site.line].mode == FabricMode::Ring;
    c.topology = line_is_ring ? kernels::fabric_router::kTopologyRing : kernels::fabric_router::kTopologyLine;
    c.bubble_flow_control = options.bubble_flow_control.value_or(line_is_ring && !dateline);
    c.first_level_acks = options.first_level_acks;
    if (c.bubble_flow_control && !c.first_level_acks) {
      // REFERENCE 6.7: the bubble rule keeps a free receiver slot on the cycle; without
      // first-level acks every forwarded packet also holds its sender slot until the next
      // router has passed it on, so the forwarding channels can still close the cycle.
      throw FabricPlanError(fmt::format("fabric: bubble flow control with first_level_acks off on the {} through "
                                        "chips {}; bubble flow control needs first-level acks (REFERENCE 6.7), "
                                        "expected first_level_acks on, or ring_flow_control dateline",
                                        line_is_ring ? "ring" : "line", fmt::join(plan.lines[site.line].chips, "-")));
    }
    c.switch_interval = options.switch_interval;
    c.has_downstream = downstream != nullptr;
    c.downstream_noc_x = downstream != nullptr ? downstream->noc0.x : 0;
    c.downstream_noc_y = downstream != nullptr ? downstream->noc0.y : 0;
    if (dateline && line_is_ring) set_dateline_vcs(c, plan.lines[site.line], site, erisc, options);
  }
  return built;
}

// One line's sites, in line order: per chip forward before backward, planes in order.
void FabricPlan::add_line(Built& plan, const topo::Topology& topology, const topo::Embedding& embedding,
                          FabricLine line) {
  const auto line_index = static_cast<std::uint32_t>(plan.lines.size());
  line.mode = embedding.kind == topo::EmbeddingKind::Ring ? FabricMode::Ring : FabricMode::Line;
  line.chips.assign(embedding.chips.begin(), embedding.chips.end());
  std::vector<FabricRouterSite> sites;
  for (const topo::Hop& hop : embedding.hops) {
    for (std::uint32_t k = 0; k < hop.links.size(); ++k) {
      const topo::HopLink& link = hop.links[k];
      const auto site = [&](topo::ChipId chip, topo::ChipId peer, std::int32_t channel, bool forward) {
        FabricRouterSite r;
        r.chip = static_cast<ChipId>(chip);
        r.line = line_index;
        r.link = k;
        r.channel = static_cast<std::uint32_t>(channel);
        r.forward = forward;
        r.peer = static_cast<ChipId>(peer);
        return r;
      };
      const FabricRouterSite fwd = site(hop.from, hop.to, link.from_channel, true);
      const FabricRouterSite bwd = site(hop.to, hop.from, link.to_channel, false);
      sites.push_back(fwd);
      sites.push_back(bwd);
    }
  }
  // Positions looked up once: FabricLine::position scans the line, which made this sort
  // quadratic in a long line's chips.
  std::map<ChipId, std::size_t> position_of;
  for (std::size_t i = 0; i < line.chips.size(); ++i) position_of.emplace(line.chips[i], i);
  std::stable_sort(sites.begin(), sites.end(), [&position_of](const FabricRouterSite& a, const FabricRouterSite& b) {
    const std::size_t pa = position_of.at(a.chip);
    const std::size_t pb = position_of.at(b.chip);
    if (pa != pb) return pa < pb;
    if (a.forward != b.forward) return a.forward > b.forward;
    return a.link < b.link;
  });
  for (FabricRouterSite& site : sites) {
    site.noc0 = chip_core_map(topology, static_cast<topo::ChipId>(site.chip)).eth_noc0(site.channel);
  }
  plan.lines.push_back(std::move(line));
  plan.routers.insert(plan.routers.end(), sites.begin(), sites.end());
}

bool FabricLine::contains(ChipId chip) const { return std::find(chips.begin(), chips.end(), chip) != chips.end(); }

std::size_t FabricLine::position(ChipId chip) const {
  const auto it = std::find(chips.begin(), chips.end(), chip);
  if (it == chips.end()) {
    throw FabricPlanError(fmt::format("fabric: chip {} is not on the fabric's {}", chip, to_string()));
  }
  return static_cast<std::size_t>(it - chips.begin());
}

std::string FabricLine::to_string() const {
  std::string text = axis ? fmt::format("axis {} ", *axis) : "";
  text += mode == FabricMode::Ring ? "ring " : "line ";
  for (std::size_t i = 0; i < chips.size(); ++i) text += fmt::format("{}{}", i == 0 ? "" : "-", chips[i]);
  if (mode == FabricMode::Ring && !chips.empty()) text += fmt::format("-{}", chips.front());
  return text;
}

const FabricLine& FabricPlan::only_line() const {
  if (built_->lines.size() != 1) {
    throw FabricPlanError(built_->lines.empty() ? std::string("fabric: no fabric (mode none)")
                                         : fmt::format("fabric: the {} fabric has {} lines; name the line (a "
                                                       "cluster_axis group or a FabricPort)",
                                                       to_string(built_->options.scope), built_->lines.size()));
  }
  return built_->lines.front();
}

std::optional<std::uint32_t> FabricPlan::line_containing(const std::vector<ChipId>& chips) const {
  for (std::uint32_t i = 0; i < built_->lines.size(); ++i) {
    if (std::all_of(chips.begin(), chips.end(), [&](ChipId c) { return built_->lines[i].contains(c); })) return i;
  }
  return std::nullopt;
}

std::string FabricPlan::describe() const {
  if (built_->lines.empty()) return "no fabric";
  if (built_->lines.size() == 1) return built_->lines.front().to_string();
  std::string text = fmt::format("{} {} lines:", built_->lines.size(), to_string(built_->options.scope));
  for (const FabricLine& line : built_->lines) text += " [" + line.to_string() + "]";
  return text;
}

const std::vector<ChipId>& FabricPlan::chips() const { return only_line().chips; }

const FabricRouterSite* FabricPlan::router(ChipId chip, bool forward) const {
  if (built_->lines.size() != 1) only_line();  // throws the reason
  return router(FabricPort{0, 0}, chip, forward);
}

const FabricRouterSite* FabricPlan::router(FabricPort port, ChipId chip, bool forward) const {
  return built_->router(port, chip, forward);
}

const FabricRouterSite* FabricPlan::Built::router(FabricPort port, ChipId chip, bool forward) const {
  const auto found = router_by_port.find(std::tuple{port.line, port.link, chip, forward});
  return found == router_by_port.end() ? nullptr : &routers[found->second];
}

const FabricRouterSite* FabricPlan::router_on_channel(ChipId chip, std::uint32_t channel) const {
  const auto found = built_->router_by_channel.find(std::pair{chip, channel});
  return found == built_->router_by_channel.end() ? nullptr : &built_->routers[found->second];
}

const FabricRouterSite* FabricPlan::router_at(ChipId chip, std::uint32_t noc0_x, std::uint32_t noc0_y) const {
  for (const FabricRouterSite& site : built_->routers) {
    if (site.chip == chip && site.noc0.x == noc0_x && site.noc0.y == noc0_y) return &site;
  }
  return nullptr;
}

bool FabricPlan::contains(ChipId chip) const {
  return std::any_of(built_->lines.begin(), built_->lines.end(), [chip](const FabricLine& l) { return l.contains(chip); });
}

std::size_t FabricPlan::position(ChipId chip) const { return only_line().position(chip); }

FabricRoute FabricPlan::route(ChipId from, ChipId to) const {
  if (!enabled()) throw FabricPlanError("fabric: no route without a fabric (mode none)");
  if (from == to) throw FabricPlanError(fmt::format("fabric: no route from chip {} to itself", from));
  const std::optional<std::uint32_t> index = line_containing({from, to});
  if (!index) {
    if (built_->lines.size() == 1) built_->lines.front().position(contains(from) ? to : from);  // names the chip off the line
    throw FabricPlanError(fmt::format("fabric: chips {} and {} share no line of the {} fabric (a 1D fabric "
                                      "routes along one row or column; {})",
                                      from, to, to_string(built_->options.scope), describe()));
  }
  const FabricLine& line = built_->lines[*index];
  const auto a = static_cast<std::int64_t>(line.position(from));
  const auto b = static_cast<std::int64_t>(line.position(to));
  const auto n = static_cast<std::int64_t>(line.chips.size());
  FabricRoute r;
  r.line = *index;
  if (line.mode == FabricMode::Line) {
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
  const FabricLine& line = only_line();
  const std::size_t p = line.position(chip);
  if (line.mode == FabricMode::Ring) return static_cast<std::uint32_t>(line.chips.size() - 1);
  return static_cast<std::uint32_t>(forward ? line.chips.size() - 1 - p : p);
}

kernels::FabricRouterL1Layout FabricPlan::layout() const {
  if (built_->routers.empty()) throw FabricPlanError("fabric: no routers (mode none)");
  return kernels::make_fabric_router_layout(built_->routers.front().config);
}

api::FabricConnectionConfig FabricPlan::worker_connection(ChipId chip, bool forward,
                                                          std::uint32_t flow_control_semaphore_id,
                                                          std::uint32_t teardown_semaphore_id,
                                                          std::uint32_t buffer_index_semaphore_id) const {
  if (built_->lines.size() != 1) only_line();  // throws the reason
  return worker_connection(FabricPort{0, 0}, chip, forward, flow_control_semaphore_id, teardown_semaphore_id,
                           buffer_index_semaphore_id);
}

api::FabricConnectionConfig FabricPlan::worker_connection(FabricPort port, ChipId chip, bool forward,
                                                          std::uint32_t flow_control_semaphore_id,
                                                          std::uint32_t teardown_semaphore_id,
                                                          std::uint32_t buffer_index_semaphore_id) const {
  const FabricRouterSite* site = router(port, chip, forward);
  if (site == nullptr) {
    throw FabricPlanError(fmt::format("fabric: chip {} has no {} router on {} plane {}", chip,
                                      forward ? "forward" : "backward",
                                      port.line < built_->lines.size() ? built_->lines[port.line].to_string() : "no line", port.link));
  }
  return kargs::worker_fabric_connection(site->config, site->noc0.x, site->noc0.y, flow_control_semaphore_id,
                                         teardown_semaphore_id, buffer_index_semaphore_id);
}

}  // namespace cclmesh::runtime
