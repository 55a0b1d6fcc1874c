// The wait-for chains of a hang report (wait_chain.hpp): the walk from each parked kernel, where
// it joins an earlier chain or comes back on itself (cycles), and the report. What each kind
// of step waits for is explained in the other wait_chain_*.cpp files (wait_chain_builder.hpp).

#include "sim/device/wait_chain.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sim/device/wait_chain_builder.hpp"

namespace cclmesh::sim::device::wait_chain_detail {

ChainBuilder::ChainBuilder(const WaitChainInput& in) : in_(in) {
  for (const KernelContext* k : in_.kernels) {
    if (is_router(*k)) routers_[{chip_of(*k), k->noc0.x, k->noc0.y}] = k;
    if (is_mux(*k)) muxes_[{chip_of(*k), k->noc0.x, k->noc0.y}] = k;
    // A core runs one op's EDM at a time; one of an earlier program has finished.
    if (is_legacy_edm(*k)) {
      const KernelContext*& at = edms_[{chip_of(*k), k->noc0.x, k->noc0.y}];
      if (at == nullptr || at->done) at = k;
    }
  }
}

WaitChains ChainBuilder::report() {
  // Workers first, then the data movers, fabric muxes and legacy EDMs (a mover's chain is
  // usually one of its workers' already, and the user wrote the workers, not the movers).
  std::vector<const KernelContext*> parked;
  for (const bool movers : {false, true}) {
    for (const KernelContext* k : in_.kernels) {
      if (k->started && !k->done && !k->failed && !k->persistent && is_data_mover(*k) == movers) parked.push_back(k);
    }
  }
  WaitChains out;
  std::string text;
  std::size_t chains = 0;
  for (const KernelContext* k : parked) {
    // The first kMaxChains are followed and printed; the rest only followed, for where they
    // end (WaitChains::ends), when the input asks for every chain.
    const bool printed = chains < kMaxChains;
    ++chains;
    if (!printed && !in_.follow_every_chain) continue;
    const std::string one = chain(*k);
    if (printed) text += one;
    const Break end = end_of_.at(first_step(*k));
    out.ends.push_back(ChainEnd{static_cast<runtime::ChipId>(chip_of(*k)), end.link, end.how, parked_kind(*k)});
  }
  if (chains == 0) return out;
  if (chains > kMaxChains) {
    text += fmt::format("  ({} more parked kernel(s): chains not shown)\n", chains - kMaxChains);
  }
  out.text = "wait-for chains (who would satisfy each wait):\n" + text;
  return out;
}

std::string ChainBuilder::chain(const KernelContext& start) {
  std::string text = fmt::format("  {}\n", start.name());
  std::set<Step> on_this_chain;
  std::vector<Step> in_order;  // the chain's steps, for the cycle a step back closes
  // The link the chain ends at, for every step on it: a later chain that joins this one at a
  // step ends there too.
  const auto ends_at = [&](Break end) {
    for (const Step& s : on_this_chain) end_of_[s] = end;
  };
  Step step = first_step(start);
  // Past kMaxSteps the steps are followed but not printed, but for the one the chain ends at.
  std::size_t hidden = 0;
  const auto say_hidden = [&] {
    if (hidden > 0) text += fmt::format("    ... ({} more step(s) not shown)\n", hidden);
    hidden = 0;
  };
  for (std::size_t n = 0; n < kMaxFollowedSteps; ++n) {
    if (explained_.count(step) != 0 && n > 0) {
      say_hidden();
      text += fmt::format("    <- {} (followed in a chain above)\n", describe(step));
      const auto joined = end_of_.find(step);
      ends_at(joined == end_of_.end() ? Break{} : joined->second);
      return text;
    }
    on_this_chain.insert(step);
    in_order.push_back(step);
    explained_.insert(step);
    const Explained e = explain(step);
    const std::string line = fmt::format("    {} {}\n", n == 0 ? "--" : "<-", e.line);
    if (!e.next) {
      say_hidden();
      text += line;
      ends_at(e.broken);
      return text;
    }
    if (n < kMaxSteps) {
      text += line;
    } else {
      ++hidden;
    }
    if (on_this_chain.count(*e.next) != 0) {
      say_hidden();
      // The cycle is the steps from the one the chain comes back to; those before it lead
      // into the cycle and are not part of it.
      const auto back = std::find(in_order.begin(), in_order.end(), *e.next);
      text += fmt::format("    <- back to {}: {}\n", describe(*e.next),
                          cycle_cause(std::vector<Step>(back, in_order.end())));
      ends_at(Break{});
      return text;
    }
    step = *e.next;
  }
  say_hidden();
  text += fmt::format("    (stopped after {} steps)\n", kMaxFollowedSteps);
  ends_at(Break{});
  return text;
}

// A parked kernel's chain starts at its own step: a fabric mux's is its slots and clients
// (explain_mux), which a worker's chain through the mux reaches too.
Step ChainBuilder::first_step(const KernelContext& k) {
  if (is_mux(k)) return MuxStep{&k};
  return KernelStep{&k};
}

std::string ChainBuilder::describe(const Step& step) const {
  if (const auto* k = std::get_if<KernelStep>(&step)) return short_name(*k->kernel);
  if (const auto* s = std::get_if<SenderStep>(&step)) {
    return fmt::format("{} sender channel {}", short_name(*s->router), s->channel);
  }
  if (const auto* m = std::get_if<MuxStep>(&step)) return short_name(*m->mux);
  if (const auto* e = std::get_if<EdmChannelStep>(&step)) return edm_channel_name(*e->edm, e->channel);
  const ReceiverStep& r = std::get<ReceiverStep>(step);
  return receiver_name(*r.router, r.vc);
}

// "a", "a and b", "a, b and c".
std::string ChainBuilder::and_joined(const std::vector<std::string>& items) {
  std::string text = items.front();
  for (std::size_t i = 1; i < items.size(); ++i) text += (i + 1 == items.size() ? " and " : ", ") + items[i];
  return text;
}

// What a cycle is made of, in words. Router buffers alone are a channel-dependency deadlock
// (REFERENCE 11.1). A cycle through a kernel or a fabric mux is not: those wait for each other
// (a semaphore, a CB, a slot of the mux, a client that has not closed), which no router
// buffer's size or flow control would have avoided; it is named by what it holds.
std::string ChainBuilder::cycle_cause(const std::vector<Step>& cycle) const {
  bool bubble_off = false;
  bool bubble_without_acks = false;  // the plan refuses it; a router config forced behind its back
  bool ring = false;
  std::size_t kernel_count = 0;
  std::size_t mux_count = 0;
  std::size_t edm_count = 0;
  std::size_t buffer_count = 0;
  for (const Step& s : cycle) {
    if (std::holds_alternative<KernelStep>(s)) ++kernel_count;
    if (std::holds_alternative<MuxStep>(s)) ++mux_count;
    if (std::holds_alternative<EdmChannelStep>(s)) ++edm_count;
    const KernelContext* r = nullptr;
    if (const auto* x = std::get_if<SenderStep>(&s)) r = x->router;
    if (const auto* x = std::get_if<ReceiverStep>(&s)) r = x->router;
    if (r == nullptr) continue;
    ++buffer_count;
    const kernels::FabricRouterConfig c = config(*r);
    ring = ring || c.topology == kernels::fabric_router::kTopologyRing;
    // A dateline-VC ring avoids the cycle without the bubble rule (REFERENCE 6.7).
    bubble_off = bubble_off || (!c.bubble_flow_control && !c.dateline_vcs);
    bubble_without_acks = bubble_without_acks || (c.bubble_flow_control && !c.first_level_acks);
  }
  if (kernel_count == 0 && mux_count == 0 && edm_count == 0) {
    std::string text = "a cycle of full router buffers, each waiting for the next: a channel-dependency deadlock";
    if (ring && bubble_off) text += " (ring without bubble flow control, REFERENCE 6.7 / 11.1)";
    // A forwarded packet holds its sender slot until the next router has passed it on, so the
    // bubble rule's free receiver slot does not keep the cycle open (REFERENCE 6.7).
    if (ring && bubble_without_acks) {
      text += " (bubble flow control without first-level acks, which it needs: REFERENCE 6.7)";
    }
    return text;
  }
  std::vector<std::string> parts;
  if (kernel_count > 0) parts.push_back(fmt::format("{} kernel{}", kernel_count, kernel_count == 1 ? "" : "s"));
  if (mux_count > 0) parts.push_back(fmt::format("{} fabric mux{}", mux_count, mux_count == 1 ? "" : "es"));
  if (edm_count > 0) parts.push_back(fmt::format("{} legacy EDM channel{}", edm_count, edm_count == 1 ? "" : "s"));
  if (buffer_count > 0) {
    parts.push_back(fmt::format("{} router buffer{}", buffer_count, buffer_count == 1 ? "" : "s"));
  }
  const std::string made_of = and_joined(parts);
  // Who waits, in the cycle's own numbers (review: "kernels and a fabric mux" was said of a
  // cycle of two muxes, or of muxes alone), and on what.
  std::vector<std::string> who;
  if (kernel_count > 0) who.emplace_back(kernel_count == 1 ? "a kernel" : "kernels");
  if (mux_count > 0) who.emplace_back(mux_count == 1 ? "a fabric mux" : "fabric muxes");
  if (edm_count > 0) who.emplace_back(edm_count == 1 ? "a legacy EDM channel" : "legacy EDM channels");
  if (buffer_count > 0) who.emplace_back("full router buffers");
  const std::string waiting = and_joined(who);
  std::string on = "a semaphore, a CB";
  if (mux_count > 0) on += ", a slot of the mux, a client that has not closed";
  if (edm_count > 0) on += ", a buffer of the EDM, a message or an ack from its peer";
  if (buffer_count > 0) on += ", a free slot downstream";
  return fmt::format("a cycle of {}, each waiting for the next: a deadlock of {} waiting for each other ({}){}", made_of,
                     waiting, on, buffer_count == 0 ? ", not of full router buffers" : "");
}

Explained ChainBuilder::explain(const Step& step) {
  if (const auto* k = std::get_if<KernelStep>(&step)) return explain_kernel(*k->kernel);
  if (const auto* s = std::get_if<SenderStep>(&step)) return explain_sender(*s->router, s->channel);
  if (const auto* m = std::get_if<MuxStep>(&step)) return explain_mux(*m->mux);
  if (const auto* e = std::get_if<EdmChannelStep>(&step)) return explain_edm_channel(*e->edm, e->channel);
  const ReceiverStep& r = std::get<ReceiverStep>(step);
  return explain_receiver(*r.router, r.vc);
}

}  // namespace cclmesh::sim::device::wait_chain_detail

namespace cclmesh::sim::device {

WaitChains wait_chains(const WaitChainInput& input) { return wait_chain_detail::ChainBuilder(input).report(); }

std::string wait_chain_report(const WaitChainInput& input) { return wait_chains(input).text; }

}  // namespace cclmesh::sim::device
