#pragma once
// A legacy per-op EDM (kernels/legacy_edm.cpp, REFERENCE 5) as a hang report reads it, from
// outside the kernel: its configuration (compile-time args), each channel's worker and
// semaphores (runtime args), and the counters both ends of the link leave in L1. The EDM keeps
// its own bookkeeping (LegacySenderChannel, LegacyReceiverChannel) on its stack, out of reach;
// what a report needs of it is mirrored in words that are in L1:
//
// - sender channel: the EDM channel semaphore counts the buffers its worker filled; the ack
//   mailbox, written by the peer across the link, holds the level-1 acks (the peer received
//   them) and level-2 completions (the peer's worker pulled them) (LegacyAckWord);
// - receiver channel: the EDM channel semaphore counts the buffers its worker pulled; the ack
//   staging word holds the last acks it sent: how many buffers arrived, how many completed;
// - either: the worker's semaphore (on the worker's Tensix core) is 1 while an announcement
//   waits for the worker to take it;
// - WORKER_INITIATED: the EDM's termination semaphore counts the end signals its channels'
//   workers have given (one each; the EDM ends at one per channel, once every channel is idle).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/kernel_args.hpp"
#include "sim/device/kernel_context.hpp"

namespace cclmesh::sim::device {

struct LegacyEdmChannelState {
  std::uint32_t channel = 0;
  bool sender = false;                 // worker -> EDM -> link; else link -> EDM -> worker
  CoreCoord worker;                    // NoC0 of the Tensix core the EDM announces buffers to
  std::uint64_t worker_semaphore = 0;  // L1 address on the worker the EDM +1s
  std::uint64_t edm_semaphore = 0;     // L1 address on the EDM the worker +1s
  std::uint32_t worker_count = 0;      // sender: buffers the worker filled; receiver: buffers it pulled
  std::uint32_t arrived = 0;           // sender: level-1 acks back from the peer; receiver: buffers arrived
  std::uint32_t completed = 0;         // level-2 completions (sender: back from the peer; receiver: sent)
  std::optional<std::uint32_t> messages;  // MESSAGE_COUNT_REACHED: the channel's count
};

// Everything the channel's worker gave it (a sender's), or the peer sent it (a receiver's), has
// gone through: the acks included. A WORKER_INITIATED channel in this state waits for more, or
// for the end signals.
bool channel_idle(const LegacyEdmChannelState& channel);

struct LegacyEdmState {
  kernels::LegacyEdmConfig config{};
  std::vector<LegacyEdmChannelState> channels;  // senders first, then receivers (kernel_args.hpp)
  // WORKER_INITIATED: the end signals given so far (the termination semaphore), of one per
  // channel; nullopt under MESSAGE_COUNT_REACHED.
  std::optional<std::uint32_t> end_signals;
  // WORKER_INITIATED with every channel's signal given: an idle channel has finished.
  bool terminating() const { return end_signals && *end_signals >= channels.size(); }
};

bool is_legacy_edm(const KernelContext& k);

// The EDM's configuration and channels, or nullopt when `k` is no legacy EDM or its arguments
// do not hold its channels (the kernel faults on those at launch, and that is reported).
std::optional<LegacyEdmState> legacy_edm_state(const KernelContext& k);

// The EDM channel a legacy worker kernel (all-gather or reduce-scatter, sender or receiver)
// pushes into or pulls from, from its arguments: the EDM's core and the worker's semaphore the
// EDM announces buffers on; nullopt for any other kernel, or a worker without a channel.
struct LegacyEdmWorkerChannel {
  CoreCoord edm;                       // NoC0 of the EDM's ethernet core, on the worker's chip
  std::uint64_t worker_semaphore = 0;  // L1 address on the worker
};
std::optional<LegacyEdmWorkerChannel> legacy_edm_channel_of_worker(const KernelContext& k);

// The channel's counters in words: "2 of 2 buffers filled by its worker, 0 acknowledged by the
// peer, 0 completed" or "3 buffers arrived, 3 pulled by its worker".
std::string describe_channel_counters(const LegacyEdmChannelState& channel, std::uint32_t num_buffers);

}  // namespace cclmesh::sim::device
