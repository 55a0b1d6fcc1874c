#include "sim/device/wait_chain.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include "kernels/api/fabric_connection.hpp"
#include "kernels/host/command_decoder.hpp"
#include "kernels/host/kernel_args_builder.hpp"
#include "kernels/kernel_args.hpp"
#include "kernels/kernel_registry.hpp"
#include "runtime/device/l1_map.hpp"
#include "sim/device/kernel_semaphore_writes.hpp"
#include "sim/device/legacy_edm_state.hpp"
#include "sim/engine/check.hpp"
#include "sim/model/eth_core.hpp"
#include "sim/model/eth_link.hpp"

namespace cclmesh::sim::device {
namespace {

namespace ia = kernels::interpreter;
namespace ca = api::fabric_connection_arg;

// One step of a chain: a kernel's wait, a router's sender channel, or a router's receiver.
struct KernelStep {
  const KernelContext* kernel;
  auto operator<=>(const KernelStep&) const = default;
};
struct SenderStep {
  const KernelContext* router;
  std::uint32_t channel;
  auto operator<=>(const SenderStep&) const = default;
};
struct ReceiverStep {
  const KernelContext* router;
  auto operator<=>(const ReceiverStep&) const = default;
};
// A fabric mux (kernels/fabric_mux.cpp): the core between its client workers and a router's
// worker channel (REFERENCE 6.3).
struct MuxStep {
  const KernelContext* mux;
  auto operator<=>(const MuxStep&) const = default;
};
// One channel of a legacy per-op EDM (kernels/legacy_edm.cpp): between one worker and the link.
struct EdmChannelStep {
  const KernelContext* edm;
  std::uint32_t channel;
  auto operator<=>(const EdmChannelStep&) const = default;
};
using Step = std::variant<KernelStep, SenderStep, ReceiverStep, MuxStep, EdmChannelStep>;

// The link a chain ends at (null: none) and how it broke.
struct Break {
  const EthLink* link = nullptr;
  LinkBreak how = LinkBreak::Down;
};

struct Explained {
  std::string line;
  std::optional<Step> next;
  Break broken{};  // the chain ends at this link (down or lost frames)
};

// A link that is down for the hang or lost frames, in words, and how it broke ("": neither).
struct LinkProblem {
  std::string text;
  LinkBreak how = LinkBreak::Down;
};

// The first broken link on a writer's fabric route, in words, and the link.
struct RouteProblem {
  std::string text;
  Break broken{};
};

// A command of some interpreter that writes a semaphore word.
struct Writer {
  const KernelContext* kernel;
  std::uint32_t stream;
  std::size_t index;
  std::string text;       // disassembly
  std::uint32_t amount;   // increment, or value written
  bool sets;              // writes `amount` instead of adding it
  bool over_fabric;       // leaves its chip through a router
  bool forward;           // direction when over_fabric
  std::uint32_t hops;     // to this target
  runtime::FabricPort port{};  // the fabric line and plane its connection uses
};

// A wait on a semaphore word: for a value of at least `target`, or exactly `target` (`equal`).
struct SemaphoreWait {
  std::uint64_t address;
  std::uint64_t target;
  bool equal;
};

// What one command stream of a parked interpreter waits for (ChainBuilder::stream_wait).
struct StreamWait {
  std::uint32_t stream;
  std::size_t index;
  std::string text;
  std::optional<SemaphoreWait> semaphore;  // or a CB, which `partner` pops or pushes
  const KernelContext* partner;
  std::string own_writer;  // non-empty: the semaphore is written by another of its own streams
};

std::uint32_t chip_of(const KernelContext& k) { return static_cast<std::uint32_t>(k.chip->id()); }

bool is_router(const KernelContext& k) { return k.persistent && k.kernel == kernels::kFabricRouterKernelName; }

bool is_mux(const KernelContext& k) { return k.kernel == kernels::kFabricMuxKernelName; }

// A kernel that moves the op's data between its workers and a link, as the routers do, rather
// than one of the op's workers (ParkedKernel).
bool is_data_mover(const KernelContext& k) { return is_mux(k) || is_legacy_edm(k); }

ParkedKernel parked_kind(const KernelContext& k) {
  if (is_mux(k)) return ParkedKernel::FabricMux;
  if (is_legacy_edm(k)) return ParkedKernel::LegacyEdm;
  return ParkedKernel::Worker;
}

std::string short_name(const KernelContext& k) {
  if (is_router(k)) return fmt::format("router chip {} ch {}", chip_of(k), k.logical.x);
  if (is_mux(k)) return fmt::format("fabric mux chip {} core ({},{})", chip_of(k), k.noc0.x, k.noc0.y);
  if (is_legacy_edm(k)) return fmt::format("legacy EDM chip {} ch {}", chip_of(k), k.logical.x);
  return k.name();
}

std::string progress(const KernelContext& k) {
  if (!k.started) return "its program has not launched yet";
  if (k.done) return "it has finished";
  if (k.failed) return "it failed";
  const std::string blocked = k.blocked_description();
  std::string text = blocked.empty() ? "it is running" : "it is blocked in " + blocked;
  const std::string command = k.current_command();
  if (!command.empty()) text += " at " + command;
  return text;
}

class ChainBuilder {
 public:
  explicit ChainBuilder(const WaitChainInput& in) : in_(in) {
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

  WaitChains report() {
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

 private:
  std::string chain(const KernelContext& start) {
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
  static Step first_step(const KernelContext& k) {
    if (is_mux(k)) return MuxStep{&k};
    return KernelStep{&k};
  }

  std::string describe(const Step& step) const {
    if (const auto* k = std::get_if<KernelStep>(&step)) return short_name(*k->kernel);
    if (const auto* s = std::get_if<SenderStep>(&step)) {
      return fmt::format("{} sender channel {}", short_name(*s->router), s->channel);
    }
    if (const auto* m = std::get_if<MuxStep>(&step)) return short_name(*m->mux);
    if (const auto* e = std::get_if<EdmChannelStep>(&step)) return edm_channel_name(*e->edm, e->channel);
    return fmt::format("{} receiver", short_name(*std::get<ReceiverStep>(step).router));
  }

  // "a", "a and b", "a, b and c".
  static std::string and_joined(const std::vector<std::string>& items) {
    std::string text = items.front();
    for (std::size_t i = 1; i < items.size(); ++i) text += (i + 1 == items.size() ? " and " : ", ") + items[i];
    return text;
  }

  // What a cycle is made of, in words. Router buffers alone are a channel-dependency deadlock
  // (REFERENCE 11.1). A cycle through a kernel or a fabric mux is not: those wait for each other
  // (a semaphore, a CB, a slot of the mux, a client that has not closed), which no router
  // buffer's size or flow control would have avoided; it is named by what it holds.
  std::string cycle_cause(const std::vector<Step>& cycle) const {
    bool bubble_off = false;
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
      bubble_off = bubble_off || !c.bubble_flow_control;
    }
    if (kernel_count == 0 && mux_count == 0 && edm_count == 0) {
      std::string text = "a cycle of full router buffers, each waiting for the next: a channel-dependency deadlock";
      if (ring && bubble_off) text += " (ring without bubble flow control, REFERENCE 6.7 / 11.1)";
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

  // --- kernels ---------------------------------------------------------------------------------
  Explained explain(const Step& step) {
    if (const auto* k = std::get_if<KernelStep>(&step)) return explain_kernel(*k->kernel);
    if (const auto* s = std::get_if<SenderStep>(&step)) return explain_sender(*s->router, s->channel);
    if (const auto* m = std::get_if<MuxStep>(&step)) return explain_mux(*m->mux);
    if (const auto* e = std::get_if<EdmChannelStep>(&step)) return explain_edm_channel(*e->edm, e->channel);
    return explain_receiver(*std::get<ReceiverStep>(step).router);
  }

  Explained explain_kernel(const KernelContext& k) {
    if (!k.started || k.done || k.failed) return {fmt::format("{}: {}", short_name(k), progress(k)), std::nullopt};
    const std::string head = fmt::format("{} is blocked in {}{}", short_name(k), k.blocked_description(),
                                         k.current_command().empty() ? "" : " at " + k.current_command());
    if (is_legacy_edm(k)) return explain_legacy_edm(k, head);
    switch (k.blocked) {
      case BlockedIn::SemaphoreEqual:
      case BlockedIn::SemaphoreAtLeast:
        return explain_semaphore(k, head, SemaphoreWait{k.blocked_a, k.blocked_b, k.blocked == BlockedIn::SemaphoreEqual});
      case BlockedIn::CbWait:
      case BlockedIn::CbReserve: {
        const KernelContext* other = core_partner(k);
        const char* role = k.blocked == BlockedIn::CbWait ? "pushes pages into" : "pops pages from";
        if (other == nullptr) return {head + fmt::format("; no other kernel on this core {} CB {}", role, k.blocked_a), std::nullopt};
        return {head + fmt::format("; {} {} CB {}", short_name(*other), role, k.blocked_a), KernelStep{other}};
      }
      case BlockedIn::L1Activity: return explain_streams(k, head);
      default: return {head + "; a NoC transaction never completed", std::nullopt};
    }
  }

  // An interpreter with several streams left parks in wait_for_l1_activity when none of them
  // can move, so its wait names no word or CB; but every stream it has left waits then, each at
  // the command it last reported (KernelContext::streams), on the one thing its attempt gives up
  // on without blocking: room or pages in a CB of its core, or a semaphore value. Each is named.
  // The chain follows one that waits on something outside this kernel and does not come back to
  // it (in the ring relay the reader waits for room in the CB its writer, blocked on a fabric
  // slot, stopped draining; a stream waiting for a CB whose other kernel waits on this one's
  // other stream is not why it hangs); when more than one such stream is left, it follows the
  // first and says that the choice is a guess.
  Explained explain_streams(const KernelContext& k, const std::string& head) {
    const Explained unknown{head + "; each of its streams waits for another (CB, semaphore or fabric slot)", std::nullopt};
    if (k.kernel != kernels::kCclInterpreterKernelName || k.core == nullptr) return unknown;
    std::vector<StreamWait> waits;
    for (const auto& [stream, decoded] : commands_of(k)) {
      if (stream >= k.streams.size()) return unknown;
      const KernelContext::StreamPosition& at = k.streams[stream];
      if (!at.started || at.completed >= decoded.size()) continue;  // finished (or not begun: the first pass fetches)
      const cmd::DecodedCommand* command = command_at(k, stream, at.current);
      if (command == nullptr) return unknown;
      std::optional<StreamWait> wait = stream_wait(k, stream, *command);
      if (!wait) return unknown;
      waits.push_back(std::move(*wait));
    }
    // The streams whose waits lead outside the kernel, and of those the ones that do not come
    // back to it.
    std::vector<const StreamWait*> outside;
    std::vector<const StreamWait*> away;
    std::set<Step> away_to;      // where those lead next
    std::size_t away_ends = 0;  // those whose wait ends the chain here (a missing increment ...)
    for (StreamWait& w : waits) {
      if (!w.own_writer.empty()) continue;
      outside.push_back(&w);
      const std::optional<Step> next = w.semaphore ? explain_semaphore(k, "", *w.semaphore).next
                                                   : std::optional<Step>(KernelStep{w.partner});
      if (next && comes_back(*next, k)) {
        w.text += " (and that chain comes back to this kernel)";
        continue;
      }
      away.push_back(&w);
      if (next) {
        away_to.insert(*next);
      } else {
        ++away_ends;
      }
    }
    std::string named;
    for (const StreamWait& w : waits) named += "; " + w.text;
    if (waits.empty()) return {head + "; none of its streams has a command left to wait in", std::nullopt};
    if (outside.empty()) return {head + named + ": its streams wait for each other", std::nullopt};
    if (away.empty()) {
      return {head + named + ": every wait comes back to this kernel (a deadlock between its streams and the kernels "
                             "above)",
              std::nullopt};
    }
    const StreamWait& followed = *away.front();
    // Several streams that all wait on the same next step (both of a reader's streams waiting
    // for room in CBs its writer drains) leave nothing to guess.
    const std::string which =
        away_to.size() + away_ends <= 1 ? ""
                         : fmt::format("; {} of its streams wait on something outside this kernel: the chain follows "
                                       "stream {} alone (a guess: any of them may be why it hangs)",
                                       away.size(), followed.stream);
    if (followed.semaphore) return explain_semaphore(k, head + named + which, *followed.semaphore);
    return {head + named + which, KernelStep{followed.partner}};
  }

  // Whether the chain from `from` comes back to kernel `k` within kMaxSteps, walked without
  // recording it. Inside the walk a parked interpreter's streams are not walked again (the check
  // is skipped, so the first stream is taken), which bounds the work.
  // The answer depends only on the kernels' state, which the report does not change, so it is
  // kept per (step, kernel): every parked interpreter asks it for each of its streams.
  bool comes_back(const Step& from, const KernelContext& k) {
    if (walking_) return false;
    const auto [known, inserted] = comes_back_.try_emplace({from, &k}, false);
    if (!inserted) return known->second;
    walking_ = true;
    std::set<Step> seen;
    std::optional<Step> step = from;
    bool back = false;
    for (std::size_t n = 0; n < kMaxSteps && step; ++n) {
      if (*step == Step{KernelStep{&k}}) {
        back = true;
        break;
      }
      if (!seen.insert(*step).second) break;
      step = explain(*step).next;
    }
    walking_ = false;
    known->second = back;
    return back;
  }

  // What one stream's active command waits for, by its code (the interpreter's attempts:
  // kernels/ccl_interpreter.cpp), or nullopt for a command that does not wait.
  std::optional<StreamWait> stream_wait(const KernelContext& k, std::uint32_t stream, const cmd::DecodedCommand& d) {
    using api::CommandCode;
    const cmd::Command& c = d.command;
    // The head names the command of the stream that reported last; the others say theirs.
    const std::string where =
        k.has_command && k.stream == stream ? fmt::format("its stream {}", stream)
                                            : fmt::format("its stream {} (at #{} {})", stream, d.index,
                                                          describe_command(k, stream, d.index));
    const auto cb_of = [&](api::AddressOperand operand) -> std::optional<std::uint32_t> {
      const cmd::Address* a = c.find_address(operand);
      const auto* cb = a == nullptr ? nullptr : std::get_if<cmd::CircularBufferId>(a);
      return cb == nullptr ? std::nullopt : std::optional<std::uint32_t>(cb->id);
    };
    const auto semaphore_of = [&](api::AddressOperand operand) -> std::optional<SemaphoreWait> {
      const cmd::Address* a = c.find_address(operand);
      const auto* target = c.find_arg<cmd::TargetValueArg>();
      if (a == nullptr || target == nullptr) return std::nullopt;
      if (const auto* id = std::get_if<cmd::SemaphoreId>(a)) {
        return SemaphoreWait{runtime::tensix_program_semaphore_address(id->id), target->value, false};
      }
      if (const auto* abs = std::get_if<cmd::AbsoluteAddress>(a)) return SemaphoreWait{abs->address, target->value, false};
      return std::nullopt;
    };
    std::optional<SemaphoreWait> semaphore;
    std::optional<std::uint32_t> cb;
    bool fills = false;
    switch (c.code) {
      case CommandCode::WAIT_VALUE: semaphore = semaphore_of(api::AddressOperand::SOURCE); break;
      case CommandCode::FLOW_CONTROLLED_NOC_READ_BURST:
        semaphore = semaphore_of(api::AddressOperand::SOURCE);
        if (semaphore && k.l1->read_u32(semaphore->address) >= semaphore->target) semaphore.reset();  // reached: the CB next
        [[fallthrough]];
      case CommandCode::STREAM_TENSOR_TO_CB:
      case CommandCode::NOC_READ_BURST:
        if (!semaphore) cb = cb_of(api::AddressOperand::DESTINATION);
        fills = true;
        break;
      case CommandCode::STREAM_CB_TO_TENSOR:
      case CommandCode::NOC_WRITE_BURST:
      case CommandCode::NOC_WRITE_AND_ATOMIC_INC: cb = cb_of(api::AddressOperand::SOURCE); break;
      default: return std::nullopt;
    }
    StreamWait wait{stream, d.index, "", semaphore, nullptr, ""};
    if (semaphore) {
      wait.text = fmt::format("{} waits for L1 word {:#x} >= {} (now {})", where, semaphore->address, semaphore->target,
                              k.l1->read_u32(semaphore->address));
      // Written only by another of its own streams, still to run that command: a wait inside
      // this kernel, which the chain does not follow.
      const std::vector<Writer> useful =
          meeting_the_wait(writers_of(chip_of(k), k.noc0, semaphore->address), *semaphore);
      if (could_satisfy(k, useful, *semaphore).empty()) {
        for (const Writer& w : useful) {
          if (w.kernel != &k || w.stream == stream || executed(w)) continue;
          wait.own_writer = fmt::format("its own stream {} #{} {}", w.stream, w.index, w.text);
          wait.text += ", which " + wait.own_writer + " writes (that stream waits too)";
          break;
        }
      }
      return wait;
    }
    if (!cb) return std::nullopt;
    const auto it = k.core->cbs.find(*cb);
    wait.partner = core_partner(k);
    if (it == k.core->cbs.end() || wait.partner == nullptr) return std::nullopt;
    wait.text = fmt::format("{} waits for {} CB {} ({}), which {} {}", where, fills ? "room in" : "pages in", *cb,
                            it->second->state(), short_name(*wait.partner), fills ? "pops" : "pushes");
    return wait;
  }

  const cmd::DecodedCommand* command_at(const KernelContext& k, std::uint32_t stream, std::size_t index) {
    for (const auto& [s, decoded] : commands_of(k)) {
      if (s != stream) continue;
      for (const cmd::DecodedCommand& d : decoded) {
        if (d.index == index) return &d;
      }
    }
    return nullptr;
  }

  const KernelContext* core_partner(const KernelContext& k) const {
    for (const KernelContext* o : in_.kernels) {
      if (o != &k && !o->persistent && o->chip == k.chip && o->noc0 == k.noc0 && o->kind == k.kind) return o;
    }
    return nullptr;
  }

  Explained explain_semaphore(const KernelContext& k, const std::string& head, const SemaphoreWait& wait) {
    const std::uint64_t address = wait.address;
    if (const auto conn = connection_of(k, address)) {
      const KernelContext* router = router_at(chip_of(k), true, conn->core.x, conn->core.y);
      // A worker that shares its link with others connects to a fabric mux instead, with the
      // router's protocol (REFERENCE 6.3): its slots free when the mux copies them on into the
      // router, so the chain goes on through the mux to the router and its link.
      const KernelContext* mux = router == nullptr ? mux_at(chip_of(k), conn->core) : nullptr;
      if (router == nullptr && mux == nullptr) return {head + "; no fabric router or mux runs at that core", std::nullopt};
      // A connection to a client channel the mux does not have: nothing reads its packets or its
      // close (the mux's own state says nothing about it, so the chain ends here; followed into
      // the mux, it came back to this kernel as a cycle of a kernel and a mux).
      if (mux != nullptr && !mux_channel(conn->connection_live, mux_client_count(*mux))) {
        return {head + fmt::format("; its connection's connection_live word {:#x} is none of the {} client channel(s) "
                                   "of {}: nothing serves it",
                                   conn->connection_live, mux_client_count(*mux), short_name(*mux)),
                std::nullopt};
      }
      if (conn->for_slot) return {head, router != nullptr ? Step{SenderStep{router, 0}} : Step{MuxStep{mux}}};
      const KernelContext& peer = router != nullptr ? *router : *mux;
      return {head + fmt::format("; {}: {}", short_name(peer), progress(peer)), std::nullopt};
    }
    if (std::optional<Explained> coded = explain_kernel_write(k, head, address)) return std::move(*coded);
    const std::vector<Writer>& all_writers = writers_of(chip_of(k), k.noc0, address);
    const std::vector<Writer> writers = could_satisfy(k, all_writers, wait);
    if (writers.empty()) {
      const std::string others =
          all_writers.empty() ? ""
                              : fmt::format(" (its {} writer command(s) are the waiting kernel's own or set other values)",
                                            all_writers.size());
      return {head + fmt::format("; no command stream of any kernel writes L1 word {:#x} of chip {} core ({},{}) so as "
                                 "to satisfy the wait{}: the increment is missing",
                                 address, chip_of(k), k.noc0.x, k.noc0.y, others),
              std::nullopt};
    }
    std::uint64_t total = 0;
    bool any_set = false;
    for (const Writer& w : writers) {
      if (w.sets) {
        any_set = true;
        total = std::max<std::uint64_t>(total, w.amount);
      } else {
        total += w.amount;
      }
    }
    if (!any_set && total < wait.target) {
      return {head + fmt::format("; the command streams add {} to it in total ({} command(s)), never the {} it waits for",
                                 total, writers.size(), wait.target),
              std::nullopt};
    }
    const SemaphoreOverwrittenAtLaunch* lost = overwritten_at_launch(k, address);
    const Writer& w = pick(writers, lost);
    const std::string who = fmt::format("; would be {} by {} stream {} #{} {}", w.sets ? "written" : "incremented",
                                        short_name(*w.kernel), w.stream, w.index, w.text);
    if (!executed(w)) {
      if (!w.kernel->started) return {head + who + "; its program has not launched yet", std::nullopt};
      return {head + who, KernelStep{w.kernel}};
    }
    if (lost != nullptr) return {head + who + "; it ran that command" + lost_at_launch(k, *lost, w), std::nullopt};
    if (!w.over_fabric) return {head + who + "; it ran that command, yet the word did not change", std::nullopt};
    const RouteProblem route = path_problem(w);
    return {head + who + "; it ran that command" + route.text, std::nullopt, route.broken};
  }

  // The writers that could release kernel k: those meeting the wait, less k's own commands it has
  // not run (it is parked: its later commands, such as the reset after the wait, and those of
  // its other streams, which wait too).
  static std::vector<Writer> could_satisfy(const KernelContext& k, const std::vector<Writer>& writers,
                                           const SemaphoreWait& wait) {
    std::vector<Writer> useful;
    for (const Writer& w : meeting_the_wait(writers, wait)) {
      if (w.kernel != &k || executed(w)) useful.push_back(w);
    }
    return useful;
  }

  // The writers whose writes can meet the wait, the waiting kernel's own included: all but the
  // writes of a value that does not meet it (a reset to 0 under a wait for >= 8).
  static std::vector<Writer> meeting_the_wait(const std::vector<Writer>& writers, const SemaphoreWait& wait) {
    std::vector<Writer> useful;
    for (const Writer& w : writers) {
      if (w.sets && !(wait.equal ? w.amount == wait.target : w.amount >= wait.target)) continue;
      useful.push_back(w);
    }
    return useful;
  }

  // Writes to the word that landed before the waiting kernel's program launched and were
  // overwritten by the launch's semaphore initialisation (recorded by the device), or null.
  static const SemaphoreOverwrittenAtLaunch* overwritten_at_launch(const KernelContext& k, std::uint64_t address) {
    if (k.core == nullptr) return nullptr;
    const auto it = k.core->overwritten_at_launch.find(address);
    return it == k.core->overwritten_at_launch.end() ? nullptr : &it->second;
  }

  static std::string lost_at_launch(const KernelContext& k, const SemaphoreOverwrittenAtLaunch& lost, const Writer& w) {
    const std::string early =
        lost.found > lost.settled ? fmt::format("{} increment(s)", lost.found - lost.settled) : "writes";
    const std::string writer_launch =
        w.kernel->start < lost.launch
            ? fmt::format("; {}'s program launched at {}, {} earlier", short_name(*w.kernel), to_string(w.kernel->start),
                          to_string(lost.launch - w.kernel->start))
            : "";
    return fmt::format(", but the word went from {} to {} before chip {}'s program launched at {}, and the launch "
                       "initialised it to {}: {} arrived before the waiting program started and were lost{} (an op "
                       "without an entry barrier under launch skew, REFERENCE 11.12)",
                       lost.settled, lost.found, chip_of(k), to_string(lost.launch), lost.initial, early,
                       writer_launch);
  }

  // The first link on a fabric writer's route that is down or lost frames.
  RouteProblem path_problem(const Writer& w) const {
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

  static std::string link_name(const EthCore& eth) {
    return fmt::format("the link chip {} ch {} <-> chip {} ch {}", eth.chip().id(), eth.channel(),
                       eth.peer()->chip().id(), eth.peer()->channel());
  }

  // A link that went down after the last progress and dropped nothing is not a problem: no
  // kernel saw it down (HangTiming); its frame losses, if any, still are.
  LinkProblem link_problem(const EthCore& eth) const {
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
  std::string down_after_the_hang(const EthCore& eth) const {
    const EthLink& link = *eth.link();
    const std::optional<SimTime> since = in_.timing.down_since(link);
    if (link.up() || in_.timing.down_for_the_hang(link) || !since) return "";
    return fmt::format(" ({} went down at {}, after the last progress at {}, and dropped nothing: not why it waits)",
                       link_name(eth), to_string(*since), to_string(in_.timing.last_progress));
  }

  // Prefer a writer still to run its command (the chain goes on through it), then a pending
  // one, then (when writes were lost at the waiter's launch) one that launched before it, then
  // one whose route is broken.
  const Writer& pick(const std::vector<Writer>& writers, const SemaphoreOverwrittenAtLaunch* lost) const {
    for (const Writer& w : writers) {
      if (!executed(w) && w.kernel->started) return w;
    }
    for (const Writer& w : writers) {
      if (!executed(w)) return w;
    }
    for (const Writer& w : writers) {
      if (lost != nullptr && w.kernel->start < lost->launch) return w;
    }
    for (const Writer& w : writers) {
      if (w.over_fabric && !path_problem(w).text.starts_with(" and")) return w;
    }
    return writers.front();
  }

  // Whether the writer's kernel has finished that command (each stream's own count: another
  // stream's last report says nothing about it).
  static bool executed(const Writer& w) {
    const KernelContext& k = *w.kernel;
    if (k.done) return true;
    if (!k.started || w.stream >= k.streams.size()) return false;
    return k.streams[w.stream].completed > w.index;
  }

  // One of an interpreter's fabric connections, found by a semaphore of it the interpreter waits
  // on: the core it names (a router's or a mux's), its connection_live word there, and which word
  // is waited on: flow control (a free slot) or teardown (the close acknowledgement).
  struct ConnectionWait {
    bool for_slot;
    CoreCoord core;
    std::uint32_t connection_live;
  };

  static std::optional<ConnectionWait> connection_of(const KernelContext& k, std::uint64_t address) {
    const std::vector<std::uint32_t>& rt = k.runtime_args;
    for (const std::size_t at : connection_arg_blocks(k)) {
      const CoreCoord core{static_cast<std::int32_t>(rt[at + ca::kEdmNocX]), static_cast<std::int32_t>(rt[at + ca::kEdmNocY])};
      const std::uint32_t live = rt[at + ca::kConnectionLiveAddress];
      if (address == runtime::tensix_program_semaphore_address(rt[at + ca::kWorkerFlowControlSemaphore])) {
        return ConnectionWait{true, core, live};
      }
      if (address == runtime::tensix_program_semaphore_address(rt[at + ca::kWorkerTeardownSemaphore])) {
        return ConnectionWait{false, core, live};
      }
    }
    return std::nullopt;
  }

  // Where an interpreter's fabric connections' arguments start in its runtime args (forward,
  // then backward; kFabricConnectionArgWords each), the ones it has.
  static std::vector<std::size_t> connection_arg_blocks(const KernelContext& k) {
    std::vector<std::size_t> blocks;
    if (k.kernel != kernels::kCclInterpreterKernelName) return blocks;
    const std::vector<std::uint32_t>& rt = k.runtime_args;
    for (const std::uint32_t slot : {ia::kRtForwardConnectionOffset, ia::kRtBackwardConnectionOffset}) {
      if (rt.size() <= slot) continue;
      const std::uint64_t at = rt[slot];
      if (at == 0 || at + api::kFabricConnectionArgWords > rt.size()) continue;
      blocks.push_back(static_cast<std::size_t>(at));
    }
    return blocks;
  }

  const KernelContext* router_at(std::uint32_t chip, bool, std::int32_t x, std::int32_t y) const {
    const auto it = routers_.find({chip, x, y});
    return it == routers_.end() ? nullptr : it->second;
  }

  const KernelContext* mux_at(std::uint32_t chip, CoreCoord core) const {
    const auto it = muxes_.find({chip, core.x, core.y});
    return it == muxes_.end() ? nullptr : it->second;
  }

  // How many client channels a mux serves (its compile-time args; the kernel fails past kMaxClients).
  static std::uint32_t mux_client_count(const KernelContext& mux) {
    namespace m = kernels::fabric_mux;
    const std::vector<std::uint32_t>& ct = mux.compile_time_args;
    return ct.size() > m::kCtNumClients ? std::min(ct[m::kCtNumClients], m::kMaxClients) : 0;
  }

  // The client channel (< `channels`) whose connection_live word on the mux core is at
  // `connection_live`, or nullopt.
  static std::optional<std::uint32_t> mux_channel(std::uint32_t connection_live, std::uint32_t channels) {
    namespace m = kernels::fabric_mux;
    for (std::uint32_t c = 0; c < channels; ++c) {
      if (connection_live == runtime::tensix_program_semaphore_address(m::client_semaphore_id(c, m::kClientConnectionLive))) {
        return c;
      }
    }
    return std::nullopt;
  }

  // The router core (NoC0) a mux holds its one connection to, or nullopt.
  static std::optional<CoreCoord> router_of_mux(const KernelContext& mux) {
    const std::vector<std::uint32_t>& rt = mux.runtime_args;
    constexpr std::uint32_t at = kernels::fabric_mux::kRtRouterConnection;
    if (rt.size() < at + api::kFabricConnectionArgWords) return std::nullopt;
    return CoreCoord{static_cast<std::int32_t>(rt[at + ca::kEdmNocX]), static_cast<std::int32_t>(rt[at + ca::kEdmNocY])};
  }

  // The router site a fabric connection to core (x, y) of `chip` reaches: the router there, or,
  // when a mux runs there, the router the mux is connected to (REFERENCE 6.3).
  const runtime::FabricRouterSite* site_of_connection(std::uint32_t chip, std::uint32_t x, std::uint32_t y) const {
    if (const runtime::FabricRouterSite* site = in_.fabric->router_at(chip, x, y)) return site;
    const KernelContext* mux = mux_at(chip, CoreCoord{static_cast<std::int32_t>(x), static_cast<std::int32_t>(y)});
    if (mux == nullptr) return nullptr;
    const std::optional<CoreCoord> router = router_of_mux(*mux);
    if (!router) return nullptr;
    return in_.fabric->router_at(chip, static_cast<std::uint32_t>(router->x), static_cast<std::uint32_t>(router->y));
  }

  // Every command of every interpreter that writes word `address` of chip `chip` core `core`.
  // Found once per word: each walks every command of every kernel, and a parked interpreter's
  // semaphore wait asks for its word several times (its stream, the walk back, the chain).
  const std::vector<Writer>& writers_of(std::uint32_t chip, CoreCoord core, std::uint64_t address) {
    const auto [it, inserted] = writers_.try_emplace({chip, core.x, core.y, address});
    std::vector<Writer>& found = it->second;
    if (!inserted) return found;
    for (const KernelContext* k : in_.kernels) {
      if (k->kernel != kernels::kCclInterpreterKernelName) continue;
      for (const auto& [stream, decoded] : commands_of(*k)) {
        for (const cmd::DecodedCommand& d : decoded) add_writer(found, *k, stream, d, chip, core, address);
      }
    }
    return found;
  }

  void add_writer(std::vector<Writer>& found, const KernelContext& k, std::uint32_t stream, const cmd::DecodedCommand& d,
                  std::uint32_t chip, CoreCoord core, std::uint64_t address) const {
    using api::CommandCode;
    const cmd::Command& c = d.command;
    const bool inc = c.code == CommandCode::ATOMIC_INC || c.code == CommandCode::NOC_WRITE_AND_ATOMIC_INC;
    const bool set = c.code == CommandCode::RAW_INLINE_WRITE_BYTES || c.code == CommandCode::SET_SEMAPHORE_VALUE;
    if (!inc && !set) return;
    const cmd::Address* dst = c.find_address(api::AddressOperand::DESTINATION);
    if (dst == nullptr) return;
    std::uint64_t target_address = 0;
    if (const auto* id = std::get_if<cmd::SemaphoreId>(dst)) {
      target_address = runtime::tensix_program_semaphore_address(id->id);
    } else if (const auto* abs = std::get_if<cmd::AbsoluteAddress>(dst)) {
      target_address = abs->address;
    } else {
      return;
    }
    if (target_address != address) return;
    CoreCoord target_core = k.noc0;
    if (const auto* cd = c.find_arg<cmd::CoreDescriptorArg>()) {
      if (const auto* xy = std::get_if<cmd::NocXyCore>(&cd->core)) {
        target_core = CoreCoord{static_cast<std::int32_t>(xy->x), static_cast<std::int32_t>(xy->y)};
      } else if (!std::holds_alternative<cmd::LocalCore>(cd->core)) {
        return;
      }
    }
    if (!(target_core == core)) return;
    std::uint32_t amount = 0;
    if (inc) {
      if (const auto* v = c.find_arg<cmd::AtomicIncValueArg>()) amount = v->value;
    } else if (const auto* v = c.find_arg<cmd::TargetValueArg>()) {
      amount = v->value;
    }
    Writer w{&k, stream, d.index, "", amount, set, false, true, 0, {}};
    for (const auto& [target_chip, route] : target_chips(k, c.destination)) {
      if (target_chip != chip) continue;
      // Described only once it reaches the chip: describing decodes the command's whole stream.
      if (w.text.empty()) w.text = describe_command(k, stream, d.index);
      w.over_fabric = route.hops > 0;
      w.forward = route.forward;
      w.hops = route.hops;
      if (const auto port = port_of(k, route.forward)) w.port = *port;
      found.push_back(w);
    }
  }

  static std::string describe_command(const KernelContext& k, std::uint32_t stream, std::size_t index) {
    const std::string full = kargs::describe_interpreter_command(k.runtime_args, stream, static_cast<std::uint32_t>(index));
    // describe_interpreter_command repeats "stream s #i"; keep what follows.
    const std::size_t space = full.find(' ', full.find('#'));
    return space == std::string::npos ? full : full.substr(space + 1);
  }

  // The fabric line and plane of the interpreter's connection in a direction (its router's
  // site), or nullopt without one.
  std::optional<runtime::FabricPort> port_of(const KernelContext& k, bool forward) const {
    if (in_.fabric == nullptr || k.kernel != kernels::kCclInterpreterKernelName) return std::nullopt;
    const std::vector<std::uint32_t>& rt = k.runtime_args;
    const std::uint32_t slot = forward ? ia::kRtForwardConnectionOffset : ia::kRtBackwardConnectionOffset;
    if (rt.size() <= slot) return std::nullopt;
    const std::uint64_t at = rt[slot];
    if (at == 0 || at + api::kFabricConnectionArgWords > rt.size()) return std::nullopt;
    const runtime::FabricRouterSite* site = site_of_connection(chip_of(k), rt[at + ca::kEdmNocX], rt[at + ca::kEdmNocY]);
    if (site == nullptr) return std::nullopt;
    return runtime::FabricPort{site->line, site->link};
  }

  std::vector<std::pair<std::uint32_t, runtime::FabricRoute>> target_chips(const KernelContext& k,
                                                                           const cmd::ChipDestination& destination) const {
    const std::uint32_t me = chip_of(k);
    std::vector<std::pair<std::uint32_t, runtime::FabricRoute>> targets;
    if (std::holds_alternative<cmd::LocalOnly>(destination)) return {{me, {true, 0, 0}}};
    if (in_.fabric == nullptr || !in_.fabric->enabled() || !in_.fabric->contains(me)) return targets;
    std::optional<runtime::FabricPort> port = port_of(k, true);
    if (!port) port = port_of(k, false);
    if (!port) {  // no connection: a multicast reaches only this chip
      if (std::holds_alternative<cmd::ChipMulticast>(destination)) targets.push_back({me, {true, 0, 0}});
      return targets;
    }
    const runtime::FabricLine& line = in_.fabric->lines()[port->line];
    if (!line.contains(me)) return targets;
    const std::vector<runtime::ChipId>& order = line.chips;
    const bool ring = line.mode == runtime::FabricMode::Ring;
    const std::size_t n = order.size();
    const std::size_t at = line.position(me);
    const auto step = [&](bool forward, std::uint32_t hops) -> std::optional<std::uint32_t> {
      const std::size_t p = forward ? at + hops : at + n * 16 - hops;
      if (!ring && (forward ? at + hops >= n : hops > at)) return std::nullopt;
      return static_cast<std::uint32_t>(order[p % n]);
    };
    if (const auto* u = std::get_if<cmd::ChipUnicast>(&destination)) {
      if (const auto chip = step(u->forward, u->distance_in_hops)) {
        targets.push_back({*chip, {u->forward, u->distance_in_hops, port->line}});
      }
      return targets;
    }
    const auto& m = std::get<cmd::ChipMulticast>(destination);
    targets.push_back({me, {true, 0, port->line}});
    for (std::uint32_t h = 1; h <= m.num_targets_forward; ++h) {
      if (const auto chip = step(true, h)) targets.push_back({*chip, {true, h, port->line}});
    }
    for (std::uint32_t h = 1; h <= m.num_targets_backward; ++h) {
      if (const auto chip = step(false, h)) targets.push_back({*chip, {false, h, port->line}});
    }
    return targets;
  }

  // The kernel's decoded streams, decoded once; a stream that does not decode is skipped (the
  // kernel faults on it when it gets there, and that is reported as a fault).
  const std::vector<std::pair<std::uint32_t, std::vector<cmd::DecodedCommand>>>& commands_of(const KernelContext& k) {
    auto [it, inserted] = decoded_.try_emplace(&k);
    if (!inserted) return it->second;
    const std::vector<std::uint32_t>& rt = k.runtime_args;
    const std::uint32_t streams = k.compile_time_args.empty() ? 0 : k.compile_time_args[ia::kCtNumStreams];
    for (std::uint32_t s = 0; s < streams && s < ia::kMaxStreams; ++s) {
      const std::uint32_t b = ia::stream_block(s);
      if (rt.size() < b + ia::kStreamBlockWords) continue;
      const std::uint64_t begin = rt[b + ia::kStreamCommandsOffset];
      const std::uint64_t words = rt[b + ia::kStreamCommandsWords];
      if (begin + words > rt.size()) continue;
      try {
        it->second.emplace_back(s, cmd::decode_stream(std::span<const std::uint32_t>(rt).subspan(begin, words),
                                                      rt[b + ia::kStreamNumCommands]));
      } catch (const cmd::DecodeError&) {
      }
    }
    return it->second;
  }

  // --- routers ---------------------------------------------------------------------------------
  static kernels::FabricRouterConfig config(const KernelContext& router) {
    const std::vector<std::uint32_t>& ct = router.compile_time_args;
    return kernels::read_fabric_router_config([&ct](std::uint32_t i) { return i < ct.size() ? ct[i] : 0u; });
  }

  const KernelContext* peer_router(const KernelContext& router) const {
    if (router.eth == nullptr || router.eth->peer() == nullptr) return nullptr;
    const EthCore& peer = *router.eth->peer();
    return router_at(static_cast<std::uint32_t>(peer.chip().id()), true, peer.coord().x, peer.coord().y);
  }

  // Two ends of one link whose configurations cannot work together, or "".
  static std::string config_problem(const KernelContext& router, const KernelContext& peer) {
    const kernels::FabricRouterConfig cfg = config(router);
    const kernels::FabricRouterConfig peer_cfg = config(peer);
    if (cfg.first_level_acks != peer_cfg.first_level_acks) {
      return fmt::format("asymmetric first-level acks: {} expects them {}, {} sends them {} (credits drain, "
                         "REFERENCE 6.4 / 11.3)",
                         short_name(router), cfg.first_level_acks ? "on" : "off", short_name(peer),
                         peer_cfg.first_level_acks ? "on" : "off");
    }
    if (cfg.receiver_slots != peer_cfg.receiver_slots || cfg.max_payload_bytes != peer_cfg.max_payload_bytes) {
      return fmt::format("mismatched buffer sizes: {} sends into {} receiver slots of {} B payload, {} has {} slots of "
                         "{} B (both ends must share one layout, REFERENCE 6.2)",
                         short_name(router), cfg.receiver_slots, cfg.max_payload_bytes, short_name(peer),
                         peer_cfg.receiver_slots, peer_cfg.max_payload_bytes);
    }
    return "";
  }

  Explained explain_sender(const KernelContext& router, std::uint32_t channel) {
    const kernels::FabricRouterConfig cfg = config(router);
    const kernels::FabricRouterL1Layout layout = kernels::make_fabric_router_layout(cfg);
    const std::uint32_t written = router.l1->read_u32(layout.sender[channel].packets_written);
    const std::uint32_t freed = router.l1->read_u32(layout.sender[channel].packets_freed);
    const std::string head = fmt::format("{} sender channel {} ({}): {} of {} slots in use ({} packets written, {} freed)",
                                         short_name(router), channel, channel == 0 ? "from workers" : "forwarding",
                                         written - freed, layout.sender[channel].num_slots, written, freed);
    if (router.done) return {head + "; the router has terminated: nothing frees its slots any more", std::nullopt};
    if (router.eth == nullptr || router.eth->link() == nullptr) return {head + "; its channel has no link", std::nullopt};
    const LinkProblem problem = link_problem(*router.eth);
    if (!problem.text.empty()) {
      return {head + "; it needs acks across " + problem.text, std::nullopt, Break{router.eth->link(), problem.how}};
    }
    const KernelContext* peer = peer_router(router);
    if (peer == nullptr) return {head + "; no router runs at the other end of its link", std::nullopt};
    const std::string mismatch = config_problem(router, *peer);
    if (!mismatch.empty()) return {head + "; " + mismatch, std::nullopt};
    return {head + fmt::format("; its slots free when {} acknowledges them{}", short_name(*peer),
                               down_after_the_hang(*router.eth)),
            ReceiverStep{peer}};
  }

  // A mux: the slots its clients have filled and it has not freed yet (their packets_written and
  // packets_freed words on the mux core), then the router it copies them into.
  Explained explain_mux(const KernelContext& mux) {
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
  Explained explain_idle_mux(const KernelContext& mux, std::uint32_t channels, const std::string& head) {
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
  std::vector<std::pair<std::uint32_t, const KernelContext*>> clients_of(const KernelContext& mux,
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

  Explained explain_receiver(const KernelContext& router) {
    const kernels::FabricRouterConfig cfg = config(router);
    const kernels::FabricRouterL1Layout layout = kernels::make_fabric_router_layout(cfg);
    std::uint32_t held = 0;
    for (std::uint32_t s = 0; s < layout.receiver_slots; ++s) {
      const std::uint64_t sync = layout.receiver_buffer_base + std::uint64_t{s} * layout.slot_size_bytes + layout.sync_offset_in_slot;
      if (router.l1->read_u32(sync) != 0) ++held;
    }
    const std::string head =
        fmt::format("{} receiver: {} of {} slots hold packets", short_name(router), held, layout.receiver_slots);
    if (held == 0) {
      return {head + "; it holds nothing to acknowledge: the packets or acks between the two ends were lost", std::nullopt};
    }
    if (!cfg.has_downstream) return {head + "; it has no downstream router to forward to", std::nullopt};
    const KernelContext* downstream = router_at(chip_of(router), true, static_cast<std::int32_t>(cfg.downstream_noc_x),
                                                static_cast<std::int32_t>(cfg.downstream_noc_y));
    if (downstream == nullptr) return {head + "; its downstream router is not running", std::nullopt};
    return {head + fmt::format("; it forwards into {} sender channel 1", short_name(*downstream)),
            SenderStep{downstream, kernels::fabric_router::kForwardingChannel}};
  }

  // --- legacy EDMs and the semaphores kernels write from their own code --------------------------
  // A semaphore no command stream writes may be one a kernel +1s from its code
  // (kernel_semaphore_writes.hpp): a legacy EDM's announcement to its channel's worker, or a
  // legacy worker's relay or ready semaphore. The chain goes on to that EDM channel or kernel;
  // nullopt when no kernel writes the word so.
  std::optional<Explained> explain_kernel_write(const KernelContext& k, const std::string& head, std::uint64_t address) {
    const KernelContext* writer = nullptr;
    const KernelSemaphoreWrite* write = nullptr;
    for (const KernelContext* o : in_.kernels) {
      if (o->chip != k.chip) continue;
      for (const KernelSemaphoreWrite& w : kernel_writes(*o)) {
        if (!(w.target == k.noc0) || w.address != address) continue;
        // Prefer the writer of the program that runs now (an earlier one's has finished).
        if (writer == nullptr || (writer->done && !o->done)) {
          writer = o;
          write = &w;
        }
      }
    }
    if (writer == nullptr) return std::nullopt;
    const std::string who = fmt::format("; {} writes it: {}", short_name(*writer), write->what);
    if (!writer->started || writer->done || writer->failed) return Explained{head + who + "; " + progress(*writer), std::nullopt};
    if (write->edm_channel) return Explained{head + who, EdmChannelStep{writer, *write->edm_channel}};
    return Explained{head + who, KernelStep{writer}};
  }

  const std::vector<KernelSemaphoreWrite>& kernel_writes(const KernelContext& k) {
    const auto [it, inserted] = kernel_writes_.try_emplace(&k);
    if (inserted) it->second = kernel_semaphore_writes(k);
    return it->second;
  }

  // "sender channel 0", "receiver channel 1".
  static std::string channel_name(const KernelContext& edm, std::uint32_t channel) {
    const std::optional<LegacyEdmState> state = legacy_edm_state(edm);
    const bool sender = state && channel < state->config.num_sender_channels;
    return fmt::format("{} channel {}", sender ? "sender" : "receiver", channel);
  }

  static std::string edm_channel_name(const KernelContext& edm, std::uint32_t channel) {
    return short_name(edm) + " " + channel_name(edm, channel);
  }

  // A channel has finished once it has moved its message count (MESSAGE_COUNT_REACHED), or,
  // WORKER_INITIATED, once it is idle with every channel's end signal given.
  static bool channel_finished(const LegacyEdmState& state, const LegacyEdmChannelState& c) {
    if (!c.messages) return state.terminating() && channel_idle(c);
    return c.completed >= *c.messages && (!c.sender || c.worker_count >= *c.messages);
  }

  // A WORKER_INITIATED channel that holds nothing and has no count to reach waits for the end
  // signals, unless its worker, still running, waits on it (a receiver's worker for the next
  // message: the channel waits for the peer then).
  bool waits_for_end_signals(const KernelContext& edm, const LegacyEdmChannelState& c) const {
    if (c.messages || !channel_idle(c)) return false;
    const KernelContext* worker = worker_of(edm, c);
    return worker == nullptr || !running(*worker) || !blocked_on(*worker, c.worker_semaphore);
  }

  static bool running(const KernelContext& k) { return k.started && !k.done && !k.failed; }

  static bool blocked_on(const KernelContext& k, std::uint64_t semaphore) {
    return (k.blocked == BlockedIn::SemaphoreEqual || k.blocked == BlockedIn::SemaphoreAtLeast) && k.blocked_a == semaphore;
  }

  // A parked EDM waits for any of its channels; the chain follows the first that has not
  // finished, one still moving messages before one that only waits for the end signals, and
  // says so when there are several.
  Explained explain_legacy_edm(const KernelContext& edm, const std::string& head) {
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
  Explained explain_end_signals(const KernelContext& edm, const LegacyEdmState& state, const KernelContext* worker,
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
  Explained explain_edm_channel(const KernelContext& edm, std::uint32_t channel) {
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
  Explained across_link(const KernelContext& edm, const std::string& head, std::uint32_t peer_channel) {
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

  const KernelContext* peer_edm(const KernelContext& edm) const {
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
  const KernelContext* worker_of(const KernelContext& edm, const LegacyEdmChannelState& c) const {
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

  const WaitChainInput& in_;
  std::map<std::tuple<std::uint32_t, std::int32_t, std::int32_t>, const KernelContext*> routers_;
  std::map<std::tuple<std::uint32_t, std::int32_t, std::int32_t>, const KernelContext*> muxes_;
  std::map<std::tuple<std::uint32_t, std::int32_t, std::int32_t>, const KernelContext*> edms_;
  std::map<const KernelContext*, std::vector<KernelSemaphoreWrite>> kernel_writes_;
  std::map<Step, Break> end_of_;
  std::map<const KernelContext*, std::vector<std::pair<std::uint32_t, std::vector<cmd::DecodedCommand>>>> decoded_;
  std::set<Step> explained_;
  std::map<std::tuple<std::uint32_t, std::int32_t, std::int32_t, std::uint64_t>, std::vector<Writer>> writers_;
  std::map<std::pair<Step, const KernelContext*>, bool> comes_back_;
  bool walking_ = false;  // inside comes_back()
};

}  // namespace

WaitChains wait_chains(const WaitChainInput& input) { return ChainBuilder(input).report(); }

std::string wait_chain_report(const WaitChainInput& input) { return wait_chains(input).text; }

}  // namespace cclmesh::sim::device
