// Wait chains (wait_chain_builder.hpp): the channels of a legacy per-op EDM, their workers, and
// the peer channel across the link.

#include "sim/device/wait_chain_builder.hpp"

#include <fmt/format.h>

#include <optional>
#include <string>
#include <vector>

namespace cclmesh::sim::device::wait_chain_detail {

// "sender channel 0", "receiver channel 1".
std::string ChainBuilder::channel_name(const KernelContext& edm, std::uint32_t channel) {
  const std::optional<LegacyEdmState> state = legacy_edm_state(edm);
  const bool sender = state && channel < state->config.num_sender_channels;
  return fmt::format("{} channel {}", sender ? "sender" : "receiver", channel);
}

std::string ChainBuilder::edm_channel_name(const KernelContext& edm, std::uint32_t channel) {
  return short_name(edm) + " " + channel_name(edm, channel);
}

// A channel has finished once it has moved its message count (MESSAGE_COUNT_REACHED), or,
// WORKER_INITIATED, once it is idle with every channel's end signal given.
bool ChainBuilder::channel_finished(const LegacyEdmState& state, const LegacyEdmChannelState& c) {
  if (!c.messages) return state.terminating() && channel_idle(c);
  return c.completed >= *c.messages && (!c.sender || c.worker_count >= *c.messages);
}

// A WORKER_INITIATED channel that holds nothing and has no count to reach waits for the end
// signals, unless its worker, still running, waits on it (a receiver's worker for the next
// message: the channel waits for the peer then).
bool ChainBuilder::waits_for_end_signals(const KernelContext& edm, const LegacyEdmChannelState& c) const {
  if (c.messages || !channel_idle(c)) return false;
  const KernelContext* worker = worker_of(edm, c);
  return worker == nullptr || !running(*worker) || !blocked_on(*worker, c.worker_semaphore);
}

bool ChainBuilder::running(const KernelContext& k) { return k.started && !k.done && !k.failed; }

bool ChainBuilder::blocked_on(const KernelContext& k, std::uint64_t semaphore) {
  return (k.blocked == BlockedIn::SemaphoreEqual || k.blocked == BlockedIn::SemaphoreAtLeast) && k.blocked_a == semaphore;
}

// A parked EDM waits for any of its channels; the chain follows the first that has not
// finished, one still moving messages before one that only waits for the end signals, and
// says so when there are several.
Explained ChainBuilder::explain_legacy_edm(const KernelContext& edm, const std::string& head) {
  const std::optional<LegacyEdmState> state = legacy_edm_state(edm);
  if (!state) return {head + "; its arguments do not describe its channels", std::nullopt};
  std::vector<std::uint32_t> moving;
  std::vector<std::uint32_t> ending;
  for (const LegacyEdmChannelState& c : state->channels) {
    if (channel_finished(*state, c)) continue;
    (waits_for_end_signals(edm, c) ? ending : moving).push_back(c.channel);
  }
  if (moving.empty() && ending.empty()) {
    return {head + fmt::format("; each of its {} channel(s) has moved its messages", state->channels.size()),
            std::nullopt};
  }
  if (moving.empty()) {
    return {head + fmt::format("; each of its {} channel(s) has moved what it was given: it ends once every channel's "
                               "worker has signalled its end ({} of {} signals given); the chain follows its {}",
                               state->channels.size(), state->end_signals.value(), state->channels.size(),
                               channel_name(edm, ending.front())),
            EdmChannelStep{&edm, ending.front()}};
  }
  const std::string which =
      moving.size() == 1 ? fmt::format("; its {} is the one still moving messages", channel_name(edm, moving.front()))
                         : fmt::format("; {} of its {} channels still move messages: the chain follows the first",
                                       moving.size(), state->channels.size());
  return {head + which, EdmChannelStep{&edm, moving.front()}};
}

// A WORKER_INITIATED channel that waits for the end signals: its own worker's while it runs,
// else another channel's worker that has not finished (a worker signals after its last
// message, as it ends: kernels/legacy_all_gather/worker_main.hpp); the chain goes on to that
// worker, and ends when every worker has finished with signals still missing.
Explained ChainBuilder::explain_end_signals(const KernelContext& edm, const LegacyEdmState& state, const KernelContext* worker,
                                            const std::string& head) {
  const std::string waits =
      fmt::format("{}; it holds nothing: it ends once every channel's worker has signalled its end ({} of {} signals "
                  "given)",
                  head, state.end_signals.value(), state.channels.size());
  if (worker != nullptr && running(*worker)) return {waits + ": its worker has not finished", KernelStep{worker}};
  if (worker != nullptr && !worker->started) return {waits + "; its worker's program has not launched yet", std::nullopt};
  const std::string own = worker == nullptr ? "; no kernel on its worker's core uses the channel"
                                            : fmt::format("; its worker {}", worker->done ? "has finished" : "failed");
  for (const LegacyEdmChannelState& other : state.channels) {
    const KernelContext* w = worker_of(edm, other);
    if (w == nullptr || !running(*w)) continue;
    return {waits + own + fmt::format(", {}'s worker has not", channel_name(edm, other.channel)), KernelStep{w}};
  }
  return {waits + own + fmt::format(", as has every other channel's: {} end signal(s) never came",
                                    state.channels.size() - state.end_signals.value()),
          std::nullopt};
}

// One channel: what it holds (its counters) and whom it waits for: its worker (to fill or
// pull a buffer, or take one announced), or the peer across the link (acks for a sender's
// buffers, data for a receiver), which ends the chain at a broken link.
Explained ChainBuilder::explain_edm_channel(const KernelContext& edm, std::uint32_t channel) {
  const std::optional<LegacyEdmState> state = legacy_edm_state(edm);
  if (!state || channel >= state->channels.size()) {
    return {fmt::format("{} channel {}: its arguments do not describe it", short_name(edm), channel), std::nullopt};
  }
  const LegacyEdmChannelState& c = state->channels[channel];
  const std::uint32_t buffers = state->config.num_buffers_per_channel;
  const KernelContext* worker = worker_of(edm, c);
  const std::string worker_name =
      worker != nullptr ? short_name(*worker) : fmt::format("chip {} core ({},{})", chip_of(edm), c.worker.x, c.worker.y);
  const std::string head = fmt::format("{} (worker {}): {}", edm_channel_name(edm, channel), worker_name,
                                       describe_channel_counters(c, buffers));
  if (edm.done || edm.failed) return {head + "; " + progress(edm), std::nullopt};
  if (channel_finished(*state, c)) return {head + "; it has moved every message", std::nullopt};
  if (waits_for_end_signals(edm, c)) return explain_end_signals(edm, *state, worker, head);
  const auto to_worker = [&](const std::string& why) -> Explained {
    if (worker == nullptr) return {head + "; " + why + ", but no kernel on that core uses the channel", std::nullopt};
    return {head + "; " + why, KernelStep{worker}};
  };
  if (worker != nullptr && worker->l1 != nullptr && worker->l1->read_u32(c.worker_semaphore) != 0) {
    return to_worker(fmt::format("it has announced {} its worker has not taken", c.sender ? "a free buffer" : "a message"));
  }
  const std::uint32_t peer_channel = kernels::legacy_edm_peer_channel(state->config, channel);
  if (c.sender) {
    // The peer takes a message into the buffer of the same index only once its worker has
    // pulled the one before (its level-2 ack): then the filled buffers wait on that, not on
    // level-1 acks for messages that cannot be sent yet.
    if (c.arrived - c.completed >= buffers) {
      return across_link(
          edm, head + "; every buffer waits for the peer's level-2 ack (sent once its worker has pulled the message)",
          peer_channel);
    }
    if (c.worker_count - c.arrived >= buffers) {
      return across_link(edm, head + "; every buffer waits for the peer's level-1 ack", peer_channel);
    }
    if (c.messages && c.worker_count >= *c.messages) {
      return across_link(edm, head + "; its last messages wait for the peer's acks", peer_channel);
    }
    return to_worker("it waits for its worker to fill the buffer it announced");
  }
  if (c.arrived != c.worker_count) {
    return to_worker(fmt::format("{} message(s) arrived that its worker has not pulled", c.arrived - c.worker_count));
  }
  return across_link(edm, head + "; its worker has pulled every message that arrived: it waits for the next from the peer",
                     peer_channel);
}

// The channel waits on the peer EDM's channel `peer_channel` across its link: the chain ends at
// the link when it is down or lost frames, else goes on to that channel.
Explained ChainBuilder::across_link(const KernelContext& edm, const std::string& head, std::uint32_t peer_channel) {
  if (edm.eth == nullptr || edm.eth->link() == nullptr) return {head + "; its core has no link", std::nullopt};
  const LinkProblem problem = link_problem(*edm.eth);
  if (!problem.text.empty()) {
    return {head + " across " + problem.text, std::nullopt, Break{edm.eth->link(), problem.how}};
  }
  const KernelContext* peer = peer_edm(edm);
  if (peer == nullptr) return {head + "; no legacy EDM runs at the other end of its link", std::nullopt};
  return {head + fmt::format(", from {}{}", edm_channel_name(*peer, peer_channel), down_after_the_hang(*edm.eth)),
          EdmChannelStep{peer, peer_channel}};
}

const KernelContext* ChainBuilder::peer_edm(const KernelContext& edm) const {
  if (edm.eth == nullptr || edm.eth->peer() == nullptr) return nullptr;
  const EthCore& peer = *edm.eth->peer();
  const auto it = edms_.find({static_cast<std::uint32_t>(peer.chip().id()), peer.coord().x, peer.coord().y});
  return it == edms_.end() ? nullptr : it->second;
}

// The worker kernel whose arguments name this channel (its EDM's core and its semaphore), the
// one of the program that runs now when several did; for a worker whose arguments are not
// known (legacy_edm_channel_of_worker), the kernel on that core blocked on the semaphore, else
// the one kernel of the EDM's workload on that core (the one still running when an earlier
// run of the workload left one too): the only kernel there that can take the EDM's
// announcements. Null when neither says.
const KernelContext* ChainBuilder::worker_of(const KernelContext& edm, const LegacyEdmChannelState& c) const {
  const KernelContext* found = nullptr;
  const KernelContext* waiting = nullptr;
  std::vector<const KernelContext*> running_there;
  std::vector<const KernelContext*> there;
  for (const KernelContext* k : in_.kernels) {
    if (k->chip != edm.chip || !(k->noc0 == c.worker) || k->kind != runtime::CoreKind::Tensix) continue;
    if (blocked_on(*k, c.worker_semaphore) && !k->done) waiting = k;
    if (k->workload == edm.workload) (k->done ? there : running_there).push_back(k);
    const std::optional<LegacyEdmWorkerChannel> uses = legacy_edm_channel_of_worker(*k);
    if (!uses || !(uses->edm == edm.noc0) || uses->worker_semaphore != c.worker_semaphore) continue;
    if (found == nullptr || (found->done && !k->done)) found = k;
  }
  if (found != nullptr) return found;
  if (waiting != nullptr) return waiting;
  if (running_there.size() == 1) return running_there.front();
  if (running_there.empty() && there.size() == 1) return there.front();
  return nullptr;
}

}  // namespace cclmesh::sim::device::wait_chain_detail
