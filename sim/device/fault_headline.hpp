#pragma once
// The lines a hang report under injected faults starts with (under its headline): which faults
// took effect (a slow link or a skew is named whenever it is configured: it changes timing,
// not where a chain ends, and is not tracked per packet) and, for a link that went down or lost
// frames, how many of the parked worker kernels (not fabric muxes or legacy EDMs, unless no
// worker is parked), and on how many chips, wait on it, i.e. have a wait-for chain
// (wait_chain.hpp) that ends at one of its links. A link that went down after the
// run's last progress (hang_timing.hpp) gets a line of its own: the engine ran on to it after
// every kernel had parked, so it did not make the run hang unless it dropped something already
// on its way. The full detail stays in the report's "injected faults:" section further down; a
// user reads the first lines.

#include <memory>
#include <string>
#include <vector>

#include "sim/device/fault_plan.hpp"
#include "sim/device/wait_chain.hpp"
#include "sim/engine/time.hpp"
#include "sim/model/eth_link.hpp"
#include "sim/model/packet_corruption.hpp"

namespace cclmesh::sim::device {

struct FaultHeadlineInput {
  const FaultPlan* plan = nullptr;
  SimTime now;
  SimTime last_progress;  // hang_timing.hpp, last_progress()
  const std::vector<std::unique_ptr<EthLink>>* links = nullptr;  // every link of the system
  const std::vector<std::unique_ptr<PacketCorruption>>* corruptions = nullptr;
  const std::vector<ChainEnd>* chain_ends = nullptr;  // one per parked workload kernel
};

// "injected faults in effect: link 0-2 went down at 12.000 us (--fault link-down:0-2@12us):
// 12 of the 16 parked worker kernels (on 6 of the 8 chips with parked ones) wait on it (their
// wait-for chains end there)\n", faults joined by "; ", then, when a link went down after the
// last progress, "injected faults after the last progress (the last time any kernel ran, at
// 52.529 us): link 0-1 went down at 5.000 ms (--fault link-down:0-1@5ms) and dropped nothing:
// not why the run hung\n"; "" when no fault has taken effect yet.
std::string fault_headline(const FaultHeadlineInput& in);

}  // namespace cclmesh::sim::device
