// Wait chains (wait_chain_builder.hpp): a kernel's own wait: a CB its core's other kernel
// fills or drains, or, for a parked interpreter, what each of its command streams waits for.

#include "sim/device/wait_chain_builder.hpp"

#include <fmt/format.h>

#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "kernels/host/kernel_args_builder.hpp"
#include "runtime/device/l1_map.hpp"

namespace cclmesh::sim::device::wait_chain_detail {

Explained ChainBuilder::explain_kernel(const KernelContext& k) {
  // A kernel in no blocking call was between steps when a time limit stopped the run: running,
  // not waiting for anything a chain could follow.
  if (!k.started || k.done || k.failed || k.blocked == BlockedIn::Nothing) {
    return {fmt::format("{}: {}", short_name(k), progress(k)), std::nullopt};
  }
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
Explained ChainBuilder::explain_streams(const KernelContext& k, const std::string& head) {
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
bool ChainBuilder::comes_back(const Step& from, const KernelContext& k) {
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
std::optional<StreamWait> ChainBuilder::stream_wait(const KernelContext& k, std::uint32_t stream, const cmd::DecodedCommand& d) {
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

const cmd::DecodedCommand* ChainBuilder::command_at(const KernelContext& k, std::uint32_t stream, std::size_t index) {
  for (const auto& [s, decoded] : commands_of(k)) {
    if (s != stream) continue;
    for (const cmd::DecodedCommand& d : decoded) {
      if (d.index == index) return &d;
    }
  }
  return nullptr;
}

const KernelContext* ChainBuilder::core_partner(const KernelContext& k) const {
  for (const KernelContext* o : in_.kernels) {
    if (o != &k && !o->persistent && o->chip == k.chip && o->noc0 == k.noc0 && o->kind == k.kind) return o;
  }
  return nullptr;
}

std::string ChainBuilder::describe_command(const KernelContext& k, std::uint32_t stream, std::size_t index) {
  const std::string full = kargs::describe_interpreter_command(k.runtime_args, stream, static_cast<std::uint32_t>(index));
  // describe_interpreter_command repeats "stream s #i"; keep what follows.
  const std::size_t space = full.find(' ', full.find('#'));
  return space == std::string::npos ? full : full.substr(space + 1);
}

// The kernel's decoded streams, decoded once; a stream that does not decode is skipped (the
// kernel faults on it when it gets there, and that is reported as a fault).
const std::vector<std::pair<std::uint32_t, std::vector<cmd::DecodedCommand>>>& ChainBuilder::commands_of(const KernelContext& k) {
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

}  // namespace cclmesh::sim::device::wait_chain_detail
