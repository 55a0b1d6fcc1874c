#pragma once
// The wait-for chain of a hang (issue 8): for each parked kernel, who would satisfy its wait,
// and what that one waits for in turn, across chips, until the chain ends at a cause (a
// semaphore no command stream writes, a link that is down or lost frames, mismatched router
// configurations, a kernel still waiting to launch) or comes back on itself (a cycle of buffer
// dependencies: a ring deadlock). Worked out from what the simulator knows, read-only:
//
// - a kernel's wait: the semaphore address, CB or barrier it is blocked in (KernelContext);
// - who writes a semaphore: every interpreter kernel's decoded command streams (ATOMIC_INC,
//   RAW_INLINE_WRITE_BYTES, NOC_WRITE_AND_ATOMIC_INC, SET_SEMAPHORE_VALUE), their chip
//   destination resolved over the fabric's line or ring, and how far each kernel has got;
//   or a kernel that increments it from its own code (kernel_semaphore_writes.hpp: a legacy
//   EDM's announcement to its channel's worker, a legacy worker's relay or ready semaphore);
// - a legacy EDM channel: its counters in the EDM's L1 (legacy_edm_state.hpp) and its link;
// - a fabric slot: the router's sender channel counters and receiver slots in its ERISC L1,
//   the link's state, and both ends' router configurations (compile-time args).
//
// Bounded: at most kMaxChains chains of at most kMaxSteps steps; a chain that reaches a step
// an earlier chain explained says so and stops. A worker connected through a fabric mux is
// followed through the mux to the router it feeds (REFERENCE 6.3), or, when the mux holds no
// packet, to the client it waits for. The method is in
// docs/faults.md.

#include <cstddef>
#include <string>
#include <vector>

#include "runtime/fabric/fabric_plan.hpp"
#include "sim/device/hang_timing.hpp"
#include "sim/device/kernel_context.hpp"

namespace cclmesh::sim {
class EthLink;
}

namespace cclmesh::sim::device {

struct WaitChainInput {
  // Every kernel the device knows: running, parked, done or still waiting to launch.
  std::vector<const KernelContext*> kernels;
  const runtime::FabricPlan* fabric = nullptr;
  // Follow every parked kernel's chain, not only the kMaxChains printed: for the report's fault
  // summary, which counts the chips whose chains end at a broken link. Set only when a link is
  // down or lost frames: on a large mesh each unprinted chain scans every command stream for a
  // semaphore's writers, so a timeout report there would otherwise cost minutes for nothing.
  bool follow_every_chain = false;
  // Which links that are down now were down for the hang (hang_timing.hpp): a chain ends at one
  // that was, and passes one that went down after the last progress and dropped nothing.
  HangTiming timing;
  // A time limit stopped the run while events were still queued (a timeout, not a hang): what was
  // on its way between two routers had not landed yet, rather than been lost.
  bool stopped_while_running = false;
};

inline constexpr std::size_t kMaxChains = 8;
// A chain prints its first kMaxSteps steps and then only the step it ends at; it is followed
// up to kMaxFollowedSteps (a legacy reduce_scatter's chain goes ~4 steps per chip round an
// 8-ring: 32 and more), so that the fault summary counts it where it ends.
inline constexpr std::size_t kMaxSteps = 16;
inline constexpr std::size_t kMaxFollowedSteps = 256;

// How a link a chain ends at broke.
enum class LinkBreak : std::uint8_t { Down, LostFrames };

// What a parked kernel is: one of the op's workers, or a data mover, which moves the op's data
// between its workers and a link as the routers do.
enum class ParkedKernel : std::uint8_t { Worker, FabricMux, LegacyEdm };

// Where one parked kernel's chain ends: the link that is down or lost frames, or null (any
// other cause, a cycle, or the step bound).
struct ChainEnd {
  runtime::ChipId chip;  // of the parked kernel
  const EthLink* broken_link = nullptr;
  LinkBreak how = LinkBreak::Down;
  ParkedKernel kind = ParkedKernel::Worker;
  bool data_mover() const { return kind != ParkedKernel::Worker; }
};

struct WaitChains {
  // "wait-for chains (who would satisfy each wait):\n  ...": the first kMaxChains chains; ""
  // when no workload kernel is parked.
  std::string text;
  // One per followed parked workload kernel (every one with WaitChainInput::follow_every_chain,
  // else the printed ones): what the report's fault summary counts (the parked kernels, and
  // their chips, that wait on a broken link).
  std::vector<ChainEnd> ends;
};

WaitChains wait_chains(const WaitChainInput& input);

// wait_chains(input).text.
std::string wait_chain_report(const WaitChainInput& input);

// REFERENCE 11.5, two workers on one sender channel: when `failed` is a fabric router that
// stopped because a worker overran a sender channel's credits (WORKER_PROTOCOL_VIOLATION), and
// two or more of `kernels` (interpreters, by their connection arguments) were connected to
// that channel at once, "; N kernels were connected to its sender channel C at once: ...";
// else "". Appended to the fault's line (wait_chain_shared_channel.cpp).
std::string workers_sharing_an_overrun_channel(const KernelContext& failed, const std::vector<const KernelContext*>& kernels);

}  // namespace cclmesh::sim::device
