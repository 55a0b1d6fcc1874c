#pragma once
// The line a hang report under injected faults starts with (under its headline): which faults
// took effect (a slow link or a skew is named whenever it is configured: it changes timing,
// not where a chain ends, and is not tracked per packet) and, for a link that went down or lost frames, how many chips' parked kernels
// wait on it, i.e. have a wait-for chain (wait_chain.hpp) that ends at one of its links. The
// full detail stays in the report's "injected faults:" section further down; a user reads the
// first lines.

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
  const std::vector<std::unique_ptr<EthLink>>* links = nullptr;  // every link of the system
  const std::vector<std::unique_ptr<PacketCorruption>>* corruptions = nullptr;
  const std::vector<ChainEnd>* chain_ends = nullptr;  // one per parked workload kernel
};

// "injected faults in effect: link 0-2 went down at 12.000 us (--fault link-down:0-2@12us):
// kernels on 3 of the 8 chip(s) with parked kernels wait on it (their wait-for chains end
// there)\n", faults joined by "; ", or "" when no fault has taken effect yet.
std::string fault_headline(const FaultHeadlineInput& in);

}  // namespace cclmesh::sim::device
