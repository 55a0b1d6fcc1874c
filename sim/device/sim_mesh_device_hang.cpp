// SimMeshDevice's hang report and the kernels' waits inside a chip's busy window.

#include "sim/device/sim_mesh_device_detail.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "sim/device/fault_headline.hpp"
#include "sim/device/hang_timing.hpp"
#include "sim/device/wait_chain.hpp"

namespace cclmesh::sim::device {

std::vector<const KernelContext*> SimMeshDevice::kernels_of_interest() const {
  std::vector<const KernelContext*> all;
  for (const auto& k : kernels_) all.push_back(k.get());
  for (const auto& program : programs_) {
    for (const auto& k : program->to_launch) all.push_back(k.get());
  }
  return all;
}

std::vector<SimMeshDevice::KernelWaits> SimMeshDevice::kernel_waits_in_window(ChipId chip) const {
  std::vector<KernelWaits> waits;
  for (const auto& k : kernels_) {
    if (k->chip->id() != chip || !k->started) continue;
    const BusyWindow& window = k->chip->busy_window();
    if (!(window.begin < window.end)) return {};
    const SimTime until = k->done ? k->end : engine_->now();
    waits.push_back(KernelWaits{k->name(), overlap_with(window, k->start, until), k->blocked_in_window});
  }
  return waits;
}

std::string SimMeshDevice::hang_report(const std::string& headline, bool stopped_while_running) const {
  // Every chain is followed only when the fault summary can count it: a link down or one that
  // lost frames (wait_chain.hpp, follow_every_chain).
  bool link_broken = false;
  for (const auto& link : system_->links()) link_broken = link_broken || !link->up() || link->frames_dropped() > 0;
  const std::vector<const KernelContext*> kernels = kernels_of_interest();
  const SimTime progress = last_progress(kernels, engine_->now());
  const WaitChains chains =
      wait_chains(WaitChainInput{kernels, &fabric_, link_broken, HangTiming{&options_.faults, progress},
                                 stopped_while_running});
  std::string text = headline + "\n" +
                     fault_headline(FaultHeadlineInput{&options_.faults, engine_->now(), progress, &system_->links(),
                                                       &corruptions_, &chains.ends});
  if (mirrored_) {
    const std::string crossed = traffic_since_open_between_groups();
    text += crossed.empty()
                ? fmt::format("(identical groups simulated once: only these groups' chips ran: {}; {} other "
                              "groups mirror them, so they stopped where those did)\n",
                              mirrored_->simulated_chips(), mirrored_->mirrored_count())
                : fmt::format("(identical groups simulated once: only these groups' chips ran: {}; {}, so the groups "
                              "were not independent and the others' state below is not theirs)\n",
                              mirrored_->simulated_chips(), crossed);
  }
  const auto kernel_line = [](const KernelContext& k) {
    std::string line = "  " + k.name();
    if (k.persistent) line += " (persistent)";
    const std::string blocked = k.blocked_description();
    line += blocked.empty() ? ": parked" : ": blocked in " + blocked;
    const std::string command = k.current_command();
    if (!command.empty()) line += "; command " + command;
    return line + "\n";
  };
  std::size_t parked = 0;
  for (const auto& k : kernels_) {
    if (k->started && !k->done && !k->failed && !k->persistent) {
      text += kernel_line(*k);
      ++parked;
    }
  }
  if (parked == 0) text += "  (no workload kernel is parked)\n";
  for (const auto& [chip, queue] : queues_) {
    const auto hosts = static_cast<std::size_t>(std::count_if(
        queue.pending.begin(), queue.pending.end(), [](const ChipQueue::Entry& e) { return e.host != nullptr; }));
    const std::size_t programs = queue.pending.size() - hosts;
    if (programs > 0) {
      text += fmt::format("  chip {}: {} program(s) waiting to launch behind the running one\n", chip, programs);
    }
    if (hosts > 0) {
      text += fmt::format(
          "  chip {}: {} enqueued host write(s), read(s) or semaphore reset(s) waiting behind its programs (not run)\n",
          chip, hosts);
    }
  }
  // Routers idle in their main loop are the normal state of a persistent fabric: one line for
  // all of them; a router blocked anywhere else gets its own line.
  std::string idle_routers;
  std::size_t idle = 0;
  std::string busy_routers;
  for (const auto& k : kernels_) {
    if (!k->started || k->done || k->failed || !k->persistent) continue;
    if (k->blocked == BlockedIn::L1Activity) {
      idle_routers += fmt::format("{}chip {} ch {}", idle == 0 ? "" : ", ", k->chip->id(), k->logical.x);
      ++idle;
    } else {
      busy_routers += kernel_line(*k);
    }
  }
  if (idle > 0 || !busy_routers.empty()) text += "fabric routers:\n" + busy_routers;
  if (idle > 0) text += fmt::format("  {} idle in wait_for_l1_activity: {}\n", idle, idle_routers);
  text += chains.text;
  text += fault_summary();
  const HangReport engine = engine_->hang_report();
  text += fmt::format("engine at {}: {} actor(s) parked\n", to_string(engine.when), engine.parked.size());
  for (const ParkedActor& actor : engine.parked) {
    text += fmt::format("  {} '{}' waits for {}\n", actor.kind == Actor::Kind::Fiber ? "fiber" : "process", actor.name,
                        actor.waiting_for);
  }
  return text;
}

}  // namespace cclmesh::sim::device
