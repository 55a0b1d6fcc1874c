// Wait chains (wait_chain_builder.hpp): a semaphore wait and who would satisfy it: the command
// streams that write the word (over the fabric too), the fabric connection the word belongs
// to, or a kernel that writes it from its own code.

#include "sim/device/wait_chain_builder.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runtime/device/l1_map.hpp"

namespace cclmesh::sim::device::wait_chain_detail {

Explained ChainBuilder::explain_semaphore(const KernelContext& k, const std::string& head, const SemaphoreWait& wait) {
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
  const std::vector<Writer>& all_writers = writers_of(chip_of(k), k.noc0, address);
  if (std::optional<Explained> over = explain_overcount(k, head, wait, all_writers)) return std::move(*over);
  if (std::optional<Explained> coded = explain_kernel_write(k, head, address)) return std::move(*coded);
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
std::vector<Writer> ChainBuilder::could_satisfy(const KernelContext& k, const std::vector<Writer>& writers,
                                                const SemaphoreWait& wait) {
  std::vector<Writer> useful;
  for (const Writer& w : meeting_the_wait(writers, wait)) {
    if (w.kernel != &k || executed(w)) useful.push_back(w);
  }
  return useful;
}

// The writers whose writes can meet the wait, the waiting kernel's own included: all but the
// writes of a value that does not meet it (a reset to 0 under a wait for >= 8).
std::vector<Writer> ChainBuilder::meeting_the_wait(const std::vector<Writer>& writers, const SemaphoreWait& wait) {
  std::vector<Writer> useful;
  for (const Writer& w : writers) {
    if (w.sets && !(wait.equal ? w.amount == wait.target : w.amount >= wait.target)) continue;
    useful.push_back(w);
  }
  return useful;
}

// Writes to the word that landed before the waiting kernel's program launched and were
// overwritten by the launch's semaphore initialisation (recorded by the device), or null.
const SemaphoreOverwrittenAtLaunch* ChainBuilder::overwritten_at_launch(const KernelContext& k, std::uint64_t address) {
  if (k.core == nullptr) return nullptr;
  const auto it = k.core->overwritten_at_launch.find(address);
  return it == k.core->overwritten_at_launch.end() ? nullptr : &it->second;
}

std::string ChainBuilder::lost_at_launch(const KernelContext& k, const SemaphoreOverwrittenAtLaunch& lost, const Writer& w) {
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

// Prefer a writer still to run its command (the chain goes on through it), then a pending
// one, then (when writes were lost at the waiter's launch) one that launched before it, then
// one whose route is broken.
const Writer& ChainBuilder::pick(const std::vector<Writer>& writers, const SemaphoreOverwrittenAtLaunch* lost) const {
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

// An equality wait (noc_semaphore_wait) on a word already past its target, which no command
// stream sets: increments only raise it, so the wait never matches whoever runs. An over-count:
// typically a semaphore reused without a reset, whose count from an earlier use adds to this
// one's (REFERENCE 4.8 / 11.7).
std::optional<Explained> ChainBuilder::explain_overcount(const KernelContext& k, const std::string& head,
                                                         const SemaphoreWait& wait, const std::vector<Writer>& writers) {
  if (!wait.equal || k.l1 == nullptr) return std::nullopt;
  const std::uint32_t now = k.l1->read_u32(wait.address);
  if (now <= wait.target) return std::nullopt;
  if (std::any_of(writers.begin(), writers.end(), [](const Writer& w) { return w.sets; })) return std::nullopt;
  return Explained{head + fmt::format("; the word is at {}, past the {} it waits to equal, and nothing sets it back: "
                                      "increments only raise it, so the wait never matches (an over-count: a semaphore "
                                      "reused without a reset, or more increments than the wait expects; REFERENCE "
                                      "4.8 / 11.7)",
                                      now, wait.target),
                   std::nullopt};
}

// Whether the writer's kernel has finished that command (each stream's own count: another
// stream's last report says nothing about it).
bool ChainBuilder::executed(const Writer& w) {
  const KernelContext& k = *w.kernel;
  if (k.done) return true;
  if (!k.started || w.stream >= k.streams.size()) return false;
  return k.streams[w.stream].completed > w.index;
}

std::optional<ChainBuilder::ConnectionWait> ChainBuilder::connection_of(const KernelContext& k, std::uint64_t address) {
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
std::vector<std::size_t> ChainBuilder::connection_arg_blocks(const KernelContext& k) {
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

// Every command of every interpreter that writes word `address` of chip `chip` core `core`.
// Found once per word: each walks every command of every kernel, and a parked interpreter's
// semaphore wait asks for its word several times (its stream, the walk back, the chain).
const std::vector<Writer>& ChainBuilder::writers_of(std::uint32_t chip, CoreCoord core, std::uint64_t address) {
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

void ChainBuilder::add_writer(std::vector<Writer>& found, const KernelContext& k, std::uint32_t stream, const cmd::DecodedCommand& d,
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

// The fabric line and plane of the interpreter's connection in a direction (its router's
// site), or nullopt without one.
std::optional<runtime::FabricPort> ChainBuilder::port_of(const KernelContext& k, bool forward) const {
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

std::vector<std::pair<std::uint32_t, runtime::FabricRoute>> ChainBuilder::target_chips(const KernelContext& k,
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

// A semaphore no command stream writes may be one a kernel +1s from its code
// (kernel_semaphore_writes.hpp): a legacy EDM's announcement to its channel's worker, or a
// legacy worker's relay or ready semaphore. The chain goes on to that EDM channel or kernel;
// nullopt when no kernel writes the word so.
std::optional<Explained> ChainBuilder::explain_kernel_write(const KernelContext& k, const std::string& head, std::uint64_t address) {
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

const std::vector<KernelSemaphoreWrite>& ChainBuilder::kernel_writes(const KernelContext& k) {
  const auto [it, inserted] = kernel_writes_.try_emplace(&k);
  if (inserted) it->second = kernel_semaphore_writes(k);
  return it->second;
}

}  // namespace cclmesh::sim::device::wait_chain_detail
