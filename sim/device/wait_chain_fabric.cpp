// Wait chains (wait_chain_builder.hpp): fabric routers (sender channels, receivers), fabric
// muxes and their clients, and the links a chain crosses or ends at.

#include "sim/device/wait_chain_builder.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kernels/fabric/router_logic.hpp"
#include "runtime/device/l1_map.hpp"
#include "sim/engine/check.hpp"

namespace cclmesh::sim::device::wait_chain_detail {

// The first link on a fabric writer's route that is down or lost frames.
RouteProblem ChainBuilder::path_problem(const Writer& w) const {
  if (in_.fabric == nullptr || !in_.fabric->enabled() || w.port.line >= in_.fabric->lines().size()) return {};
  const std::vector<runtime::ChipId>& order = in_.fabric->lines()[w.port.line].chips;
  std::size_t at = in_.fabric->lines()[w.port.line].position(chip_of(*w.kernel));
  for (std::uint32_t hop = 0; hop < w.hops; ++hop) {
    const runtime::FabricRouterSite* site = in_.fabric->router(w.port, order[at], w.forward);
    if (site == nullptr) break;
    const KernelContext* router = router_at(site->chip, true, static_cast<std::int32_t>(site->noc0.x),
                                            static_cast<std::int32_t>(site->noc0.y));
    if (router != nullptr && router->eth != nullptr && router->eth->link() != nullptr) {
      const LinkProblem problem = link_problem(*router->eth);
      if (!problem.text.empty()) {
        return {fmt::format(", but its route crosses {}", problem.text), Break{router->eth->link(), problem.how}};
      }
      const KernelContext* peer = peer_router(*router);
      const std::string mismatch = peer == nullptr ? "" : config_problem(*router, *peer);
      if (!mismatch.empty()) return {fmt::format(", but its route crosses a link with {}", mismatch)};
    }
    at = w.forward ? (at + 1) % order.size() : (at + order.size() - 1) % order.size();
  }
  return {fmt::format(" and its packet left chip {} over the fabric; nothing on its {} hop(s) is down",
                      chip_of(*w.kernel), w.hops)};
}

std::string ChainBuilder::link_name(const EthCore& eth) {
  return fmt::format("the link chip {} ch {} <-> chip {} ch {}", eth.chip().id(), eth.channel(),
                     eth.peer()->chip().id(), eth.peer()->channel());
}

// A link that went down after the last progress and dropped nothing is not a problem: no
// kernel saw it down (HangTiming); its frame losses, if any, still are.
LinkProblem ChainBuilder::link_problem(const EthCore& eth) const {
  const EthLink& link = *eth.link();
  if (in_.timing.down_for_the_hang(link)) {
    return {link_name(eth) + ", which is down (see the injected faults): everything sent on it is dropped",
            LinkBreak::Down};
  }
  if (link.frames_dropped() > 0) {
    return {fmt::format("{}, which lost {} frame(s) (injected frame loss): a packet or an ack never arrived",
                        link_name(eth), link.frames_dropped()),
            LinkBreak::LostFrames};
  }
  return {};
}

// " (the link ... went down at T, after the last progress at P, and dropped nothing: ...)" for
// a link that is down now but not for the hang, else "".
std::string ChainBuilder::down_after_the_hang(const EthCore& eth) const {
  const EthLink& link = *eth.link();
  const std::optional<SimTime> since = in_.timing.down_since(link);
  if (link.up() || in_.timing.down_for_the_hang(link) || !since) return "";
  return fmt::format(" ({} went down at {}, after the last progress at {}, and dropped nothing: not why it waits)",
                     link_name(eth), to_string(*since), to_string(in_.timing.last_progress));
}

const KernelContext* ChainBuilder::router_at(std::uint32_t chip, bool, std::int32_t x, std::int32_t y) const {
  const auto it = routers_.find({chip, x, y});
  return it == routers_.end() ? nullptr : it->second;
}

const KernelContext* ChainBuilder::mux_at(std::uint32_t chip, CoreCoord core) const {
  const auto it = muxes_.find({chip, core.x, core.y});
  return it == muxes_.end() ? nullptr : it->second;
}

// How many client channels a mux serves (its compile-time args; the kernel fails past kMaxClients).
std::uint32_t ChainBuilder::mux_client_count(const KernelContext& mux) {
  namespace m = kernels::fabric_mux;
  const std::vector<std::uint32_t>& ct = mux.compile_time_args;
  return ct.size() > m::kCtNumClients ? std::min(ct[m::kCtNumClients], m::kMaxClients) : 0;
}

// The client channel (< `channels`) whose connection_live word on the mux core is at
// `connection_live`, or nullopt.
std::optional<std::uint32_t> ChainBuilder::mux_channel(std::uint32_t connection_live, std::uint32_t channels) {
  namespace m = kernels::fabric_mux;
  for (std::uint32_t c = 0; c < channels; ++c) {
    if (connection_live == runtime::tensix_program_semaphore_address(m::client_semaphore_id(c, m::kClientConnectionLive))) {
      return c;
    }
  }
  return std::nullopt;
}

// The router core (NoC0) a mux holds its one connection to, or nullopt.
std::optional<CoreCoord> ChainBuilder::router_of_mux(const KernelContext& mux) {
  const std::vector<std::uint32_t>& rt = mux.runtime_args;
  constexpr std::uint32_t at = kernels::fabric_mux::kRtRouterConnection;
  if (rt.size() < at + api::kFabricConnectionArgWords) return std::nullopt;
  return CoreCoord{static_cast<std::int32_t>(rt[at + ca::kEdmNocX]), static_cast<std::int32_t>(rt[at + ca::kEdmNocY])};
}

// The router site a fabric connection to core (x, y) of `chip` reaches: the router there, or,
// when a mux runs there, the router the mux is connected to (REFERENCE 6.3).
const runtime::FabricRouterSite* ChainBuilder::site_of_connection(std::uint32_t chip, std::uint32_t x, std::uint32_t y) const {
  if (const runtime::FabricRouterSite* site = in_.fabric->router_at(chip, x, y)) return site;
  const KernelContext* mux = mux_at(chip, CoreCoord{static_cast<std::int32_t>(x), static_cast<std::int32_t>(y)});
  if (mux == nullptr) return nullptr;
  const std::optional<CoreCoord> router = router_of_mux(*mux);
  if (!router) return nullptr;
  return in_.fabric->router_at(chip, static_cast<std::uint32_t>(router->x), static_cast<std::uint32_t>(router->y));
}

kernels::FabricRouterConfig ChainBuilder::config(const KernelContext& router) {
  const std::vector<std::uint32_t>& ct = router.compile_time_args;
  return kernels::read_fabric_router_config([&ct](std::uint32_t i) { return i < ct.size() ? ct[i] : 0u; });
}

const KernelContext* ChainBuilder::peer_router(const KernelContext& router) const {
  if (router.eth == nullptr || router.eth->peer() == nullptr) return nullptr;
  const EthCore& peer = *router.eth->peer();
  return router_at(static_cast<std::uint32_t>(peer.chip().id()), true, peer.coord().x, peer.coord().y);
}

// Two ends of one link whose configurations cannot work together, or "".
std::string ChainBuilder::config_problem(const KernelContext& router, const KernelContext& peer) {
  const kernels::FabricRouterConfig cfg = config(router);
  const kernels::FabricRouterConfig peer_cfg = config(peer);
  if (cfg.first_level_acks != peer_cfg.first_level_acks) {
    return fmt::format("asymmetric first-level acks: {} expects them {}, {} sends them {} (credits drain, "
                       "REFERENCE 6.4 / 11.3)",
                       short_name(router), cfg.first_level_acks ? "on" : "off", short_name(peer),
                       peer_cfg.first_level_acks ? "on" : "off");
  }
  if (cfg.dateline_vcs && peer_cfg.dateline_vcs) {
    // Each dateline-VC router kind has its own slot split (REFERENCE 6.2), so the two ends'
    // receivers differ by design; what must agree is the split this router was told its peer has.
    if (cfg.peer_slots.receiver[0] == peer_cfg.receiver_slots &&
        cfg.peer_slots.receiver[1] == peer_cfg.vc1_receiver_slots &&
        cfg.max_payload_bytes == peer_cfg.max_payload_bytes) {
      return "";
    }
    return fmt::format("mismatched buffer sizes: {} sends into {} VC0 / {} VC1 receiver slots of {} B payload, {} has "
                       "{} / {} slots of {} B (a router must know its peer's layout, REFERENCE 6.2)",
                       short_name(router), cfg.peer_slots.receiver[0], cfg.peer_slots.receiver[1],
                       cfg.max_payload_bytes, short_name(peer), peer_cfg.receiver_slots, peer_cfg.vc1_receiver_slots,
                       peer_cfg.max_payload_bytes);
  }
  if (cfg.receiver_slots != peer_cfg.receiver_slots || cfg.max_payload_bytes != peer_cfg.max_payload_bytes) {
    return fmt::format("mismatched buffer sizes: {} sends into {} receiver slots of {} B payload, {} has {} slots of "
                       "{} B (both ends must share one layout, REFERENCE 6.2)",
                       short_name(router), cfg.receiver_slots, cfg.max_payload_bytes, short_name(peer),
                       peer_cfg.receiver_slots, peer_cfg.max_payload_bytes);
  }
  return "";
}

namespace {

// REFERENCE 11.8: what a chain that ends at a router that exited with packets still to carry
// is an instance of.
constexpr const char* kTornDownWithTrafficInFlight =
    ": the fabric was torn down with traffic in flight (terminated before every channel drained, or routers "
    "terminated nearest first while farther ones still sent through them; REFERENCE 6.8 / 11.8)";

// "the router has terminated" with the signal it was given (its termination_signal word), which
// says whether it drained its own channels before it exited. `held_packets`: the channel the
// step is about still holds packets.
std::string how_it_terminated(const KernelContext& router, const kernels::FabricRouterL1Layout& layout,
                              bool held_packets) {
  const std::uint32_t signal = router.l1->read_u32(layout.termination_signal);
  if (signal == static_cast<std::uint32_t>(api::TerminationSignal::IMMEDIATELY_TERMINATE)) {
    return held_packets ? "the router has terminated (IMMEDIATELY_TERMINATE: it exited without draining its channels)"
                        : "the router has terminated (IMMEDIATELY_TERMINATE)";
  }
  if (signal == static_cast<std::uint32_t>(api::TerminationSignal::GRACEFULLY_TERMINATE)) {
    return held_packets ? "the router has terminated (GRACEFULLY_TERMINATE: it drained its channels, then these came)"
                        : "the router has terminated (GRACEFULLY_TERMINATE: it drained its own channels first)";
  }
  return "the router has terminated";
}

}  // namespace

namespace {

// What a sender channel carries (REFERENCE 6.1; a dateline-VC router's channel 2 forwards on VC1).
const char* sender_channel_role(std::uint32_t channel) {
  if (channel == kernels::fabric_router::kWorkerChannel) return "from workers";
  if (channel == kernels::fabric_router::kVc1ForwardingChannel) return "forwarding on VC1";
  return "forwarding";
}

}  // namespace

// A dateline-VC router has two receivers, named by their VC; every other router has one.
std::string ChainBuilder::receiver_name(const KernelContext& router, std::uint32_t vc) {
  if (!config(router).dateline_vcs) return fmt::format("{} receiver", short_name(router));
  return fmt::format("{} receiver VC{}", short_name(router), vc);
}

Explained ChainBuilder::explain_sender(const KernelContext& router, std::uint32_t channel) {
  const kernels::FabricRouterConfig cfg = config(router);
  const kernels::FabricRouterL1Layout layout = kernels::make_fabric_router_layout(cfg);
  const std::uint32_t written = router.l1->read_u32(layout.sender[channel].packets_written);
  const std::uint32_t freed = router.l1->read_u32(layout.sender[channel].packets_freed);
  const std::string head = fmt::format("{} sender channel {} ({}): {} of {} slots in use ({} packets written, {} freed)",
                                       short_name(router), channel, sender_channel_role(channel), written - freed,
                                       layout.sender[channel].num_slots, written, freed);
  if (router.done) {
    return {head + "; " + how_it_terminated(router, layout, written != freed) + ": nothing frees its slots any more" +
                (written != freed ? kTornDownWithTrafficInFlight : ""),
            std::nullopt};
  }
  if (router.eth == nullptr || router.eth->link() == nullptr) return {head + "; its channel has no link", std::nullopt};
  const LinkProblem problem = link_problem(*router.eth);
  if (!problem.text.empty()) {
    return {head + "; it needs acks across " + problem.text, std::nullopt, Break{router.eth->link(), problem.how}};
  }
  const KernelContext* peer = peer_router(router);
  if (peer == nullptr) return {head + "; no router runs at the other end of its link", std::nullopt};
  const std::string mismatch = config_problem(router, *peer);
  if (!mismatch.empty()) return {head + "; " + mismatch, std::nullopt};
  // The peer receiver the channel sends into: on a dateline-VC ring, VC1 past the dateline.
  const std::uint32_t vc = kernels::sender_target_vc(channel, cfg.sends_into_vc1);
  // Without first-level acks a slot frees only once the peer has handled its packet (REFERENCE 6.4).
  const char* frees_when = cfg.first_level_acks ? "acknowledges them"
                                                : "has handled them (completion acks; first-level acks are off)";
  // A dateline-VC peer has two receivers: which one; any other peer has one, named by its router.
  const std::string by = config(*peer).dateline_vcs ? receiver_name(*peer, vc) : short_name(*peer);
  return {head + fmt::format("; its slots free when {} {}{}", by, frees_when,
                             down_after_the_hang(*router.eth)),
          ReceiverStep{peer, vc}};
}

// A mux: the slots its clients have filled and it has not freed yet (their packets_written and
// packets_freed words on the mux core), then the router it copies them into.
Explained ChainBuilder::explain_mux(const KernelContext& mux) {
  namespace m = kernels::fabric_mux;
  const std::vector<std::uint32_t>& ct = mux.compile_time_args;
  const std::uint32_t clients = mux_client_count(mux);
  const std::uint32_t slots = ct.size() > m::kCtSlotsPerClient ? ct[m::kCtSlotsPerClient] : 0;
  std::uint32_t held = 0;
  std::string per_client;
  for (std::uint32_t c = 0; c < clients; ++c) {
    const auto word = [&](std::uint32_t field) {
      return mux.l1->read_u32(runtime::tensix_program_semaphore_address(m::client_semaphore_id(c, field)));
    };
    const std::uint32_t in_use = word(m::kClientPacketsWritten) - word(m::kClientPacketsFreed);
    held += in_use;
    per_client += fmt::format("{}{}", c == 0 ? "" : ", ", in_use);
  }
  std::string head = fmt::format("{} ({} client(s), {} slots each): {} slot(s) in use ({})", short_name(mux),
                                 clients, slots, held, per_client);
  // A mux that has ended frees no slot any more, as a router that has terminated.
  if (mux.done) return {head + "; it has finished: nothing frees its slots any more", std::nullopt};
  if (!mux.started || mux.failed) return {head + "; " + progress(mux), std::nullopt};
  if (held == 0) return explain_idle_mux(mux, clients, head);
  const std::optional<CoreCoord> core = router_of_mux(mux);
  const KernelContext* router = core ? router_at(chip_of(mux), true, core->x, core->y) : nullptr;
  if (router == nullptr) return {head + "; no fabric router runs at the core it is connected to", std::nullopt};
  return {head + fmt::format("; it copies them into {} sender channel 0", short_name(*router)), SenderStep{router, 0}};
}

// A mux that holds no packet waits for a client to send one or to close its connection: it
// ends only once every one of its `channels` client channels has opened and closed
// (kernels/fabric_mux.cpp). The clients are the interpreters whose fabric connection names
// this core and a client's connection_live word; the chain goes on through the first that has
// not closed, as what that worker waits for is what holds the mux. A client that has finished
// has closed: its close waits for the mux's acknowledgement, which the mux gives as it marks
// the channel closed. So once every client kernel has finished, what holds the mux is a
// channel no kernel connects to (a host that gave the mux more clients than it connected).
Explained ChainBuilder::explain_idle_mux(const KernelContext& mux, std::uint32_t channels, const std::string& head) {
  std::vector<std::pair<std::uint32_t, const KernelContext*>> open;
  std::vector<bool> named(channels, false);
  std::size_t found = 0;
  for (const auto& [client, k] : clients_of(mux, channels)) {
    ++found;
    named[client] = true;
    if (!k->done) open.emplace_back(client, k);
  }
  const std::string idle = head + "; it holds no packet: it waits for its clients to send or to close";
  if (found == 0) return {idle + " (no kernel's fabric connection names a client channel of this mux)", std::nullopt};
  if (!open.empty()) {
    const auto& [client, k] = open.front();
    std::string which = fmt::format("; client {} ({}) has not closed", client, short_name(*k));
    if (open.size() > 1) which += fmt::format(" (of {} that have not closed: the chain follows the first)", open.size());
    if (!k->started || k->failed) return {idle + which + ": " + progress(*k), std::nullopt};
    return {idle + which, KernelStep{k}};
  }
  std::vector<std::string> unnamed;
  for (std::uint32_t c = 0; c < channels; ++c) {
    if (!named[c]) unnamed.push_back(std::to_string(c));
  }
  // A time limit can stop the run between a client's close and the mux's round that sees it:
  // the mux is about to end, which a hang (nothing left to run) never leaves it.
  if (unnamed.empty() && in_.stopped_while_running) {
    return {idle + fmt::format(": its {} client kernel(s) have finished and closed; the time limit stopped the run "
                               "before the mux saw the last close and ended",
                               found),
            std::nullopt};
  }
  CCLMESH_CHECK(!unnamed.empty(), fmt::format("{} holds no packet and every one of its {} client channels has a "
                                              "kernel that finished, so closed: the mux would have ended",
                                              short_name(mux), channels));
  return {idle + fmt::format(", but its {} client kernel(s) have finished and no kernel's fabric connection names "
                             "client{} {} (it ends only once every client has opened and closed)",
                             found, unnamed.size() == 1 ? "" : "s", and_joined(unnamed)),
          std::nullopt};
}

// The interpreters on the mux's chip connected to one of its `channels` client channels, with
// the channel (by their connection's connection_live address, the client's word on the mux
// core). A kernel that ended before the mux started was a client of an earlier mux on the
// core, not of this one.
std::vector<std::pair<std::uint32_t, const KernelContext*>> ChainBuilder::clients_of(const KernelContext& mux,
                                                                                     std::uint32_t channels) const {
  std::vector<std::pair<std::uint32_t, const KernelContext*>> clients;
  for (const KernelContext* k : in_.kernels) {
    if (k->chip != mux.chip || (k->done && mux.started && k->end < mux.start)) continue;
    const std::vector<std::uint32_t>& rt = k->runtime_args;
    for (const std::size_t at : connection_arg_blocks(*k)) {
      if (static_cast<std::int32_t>(rt[at + ca::kEdmNocX]) != mux.noc0.x ||
          static_cast<std::int32_t>(rt[at + ca::kEdmNocY]) != mux.noc0.y) {
        continue;
      }
      if (const std::optional<std::uint32_t> c = mux_channel(rt[at + ca::kConnectionLiveAddress], channels)) {
        clients.emplace_back(*c, k);
      }
    }
  }
  std::stable_sort(clients.begin(), clients.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return clients;
}

// Why a receiver the chain reached holds no packet to acknowledge: packets its peer sent that
// had not landed (queued for the wire or on it when a time limit stopped the run), or, when the
// run had nothing left to do, packets or acks lost between the two ends.
std::string ChainBuilder::nothing_held(const KernelContext& router) const {
  if (router.eth != nullptr && router.eth->peer() != nullptr) {
    const EthCoreStats sent = router.eth->peer()->stats();
    const std::int64_t on_the_wire =
        sent.packets_sent - sent.packets_dropped - router.eth->stats().packets_received;
    if (on_the_wire > 0) {
      return fmt::format("; it holds nothing to acknowledge yet: {} packet(s) {} sent had not landed when the run "
                         "stopped",
                         on_the_wire, router.eth->peer()->name());
    }
  }
  if (in_.stopped_while_running) {
    return "; it holds nothing to acknowledge: the run was stopped by a time limit, not hung, so packets or acks "
           "between the two ends may still have been on their way";
  }
  return "; it holds nothing to acknowledge: the packets or acks between the two ends were lost";
}

Explained ChainBuilder::explain_receiver(const KernelContext& router, std::uint32_t vc) {
  const kernels::FabricRouterConfig cfg = config(router);
  const kernels::FabricRouterL1Layout layout = kernels::make_fabric_router_layout(cfg);
  const std::uint32_t slots = vc == 0 ? layout.receiver_slots : layout.vc1_receiver_slots;
  const std::uint64_t base = vc == 0 ? layout.receiver_buffer_base : layout.vc1_receiver_buffer_base;
  std::uint32_t held = 0;
  for (std::uint32_t s = 0; s < slots; ++s) {
    const std::uint64_t sync = base + std::uint64_t{s} * layout.slot_size_bytes + layout.sync_offset_in_slot;
    if (router.l1->read_u32(sync) != 0) ++held;
  }
  const std::string head = fmt::format("{}: {} of {} slots hold packets", receiver_name(router, vc), held, slots);
  if (router.done && held != 0) {
    // It exited, then packets still came across the link into its slots: nobody forwards or
    // acknowledges them, so the sender across the link runs out of credits.
    return {head + "; " + how_it_terminated(router, layout, false) +
                ", and these arrived after it had: nothing forwards or acknowledges them" + kTornDownWithTrafficInFlight,
            std::nullopt};
  }
  if (held == 0) return {head + nothing_held(router), std::nullopt};
  if (!cfg.has_downstream) return {head + "; it has no downstream router to forward to", std::nullopt};
  const KernelContext* downstream = router_at(chip_of(router), true, static_cast<std::int32_t>(cfg.downstream_noc_x),
                                              static_cast<std::int32_t>(cfg.downstream_noc_y));
  if (downstream == nullptr) return {head + "; its downstream router is not running", std::nullopt};
  // VC0 forwards into channel 1, VC1 into channel 2 (a dateline-VC router's VC1 forwarding).
  const std::uint32_t channel = kernels::forwarding_channel_of_vc(vc);
  return {head + fmt::format("; it forwards into {} sender channel {}", short_name(*downstream), channel),
          SenderStep{downstream, channel}};
}

}  // namespace cclmesh::sim::device::wait_chain_detail
