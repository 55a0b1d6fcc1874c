#pragma once
// The semaphore increments a kernel makes from its own code, not from command streams, read
// from its arguments: a legacy EDM announces a buffer to each channel's worker
// (kernels/legacy_edm.cpp), a legacy all-gather receiver +1s the relay semaphore its core's
// sender waits on, a legacy reduce-scatter sender +1s the ready semaphore of the other
// direction's receiver. The wait-for chain (wait_chain.hpp) asks them who would release a wait
// that no command stream writes; the interpreter's writes are in its command streams instead.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/device/kernel_context.hpp"

namespace cclmesh::sim::device {

struct KernelSemaphoreWrite {
  CoreCoord target;       // NoC0 of the Tensix core that holds the semaphore, on the writer's chip
  std::uint64_t address = 0;
  std::optional<std::uint32_t> edm_channel;  // a legacy EDM's: the channel that announces on it
  std::string what;       // when it writes: "+1 for each message it has written to the output ..."
};

// Every such write `k` makes ({} for a kernel that makes none, or whose arguments are short).
std::vector<KernelSemaphoreWrite> kernel_semaphore_writes(const KernelContext& k);

}  // namespace cclmesh::sim::device
