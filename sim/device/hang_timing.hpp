#pragma once
// When a hung run last moved, and whether a link that is down now was down for the hang: what
// lets a hang report tell the faults that can explain it from those that came after it (the
// engine runs on to a link-down scheduled later than the last kernel parked, and takes it down,
// but no kernel ever saw it). Read by the wait-for chain (wait_chain.hpp) and the report's first
// lines (fault_headline.hpp).

#include <cstdint>
#include <optional>
#include <vector>

#include "runtime/device/types.hpp"
#include "sim/device/fault_plan.hpp"
#include "sim/device/kernel_context.hpp"
#include "sim/engine/time.hpp"

namespace cclmesh::sim {
class EthLink;
}

namespace cclmesh::sim::device {

// The run's last progress: the latest simulated time at which any kernel ran code, over every
// kernel that has started (workload kernels, fabric muxes and the persistent fabric routers).
// A kernel parked in a wait last ran when it entered that wait (KernelContext::blocked_since), a
// finished one when it ended, and any other (running when a watchdog stopped the run, or failing,
// which stops it) runs now. Events that wake no kernel (a link-down, the landing of a write
// nobody waits for) are not progress. Zero when no kernel has started.
SimTime last_progress(const std::vector<const KernelContext*>& kernels, SimTime now);

// Whether `link` joins chips a and b (either way round).
bool joins(const EthLink& link, runtime::ChipId a, runtime::ChipId b);

// Packets (and remote writes) dropped on either direction of `link` because it was down.
std::int64_t packets_dropped_while_down(const EthLink& link);

// When the link-down faults of a plan took a link down, set against the run's last progress.
struct HangTiming {
  const FaultPlan* plan = nullptr;  // null: every link that is down counts as down for the hang
  SimTime last_progress = SimTime::max();

  // When the plan took `link` down (its earliest link-down fault), or nullopt.
  std::optional<SimTime> down_since(const EthLink& link) const;
  // Whether `link` is down and was down for the hang: it went down at or before the last
  // progress, or it dropped a packet (one already on its way when it went down later: that loss
  // is what a kernel waits on). A link that went down after the last progress and dropped
  // nothing changed nothing any kernel saw: a wait-for chain passes it as the link it was.
  bool down_for_the_hang(const EthLink& link) const;
};

}  // namespace cclmesh::sim::device
