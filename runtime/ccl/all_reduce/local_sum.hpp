#pragma once
// The local sum of an all_reduce whose N copies already sit in one chip's intermediate buffer
// (the composite all_gather's output, or the one-shot's multicast copies): on one worker core,
//   stream 0 (intermediate): [wait `ready` >= N, reset it], pass 1 copy 0 -> acc CB and
//                            copy 1 -> next CB; pass k: copy k -> next CB
//   stream 1 (output):       pass 1 reduced -> output; pass k: output -> acc CB, reduced -> output
//   reduce kernel (compute): acc + next -> reduced
// so output = ((g0 + g1) + g2) + ... in rank order, chunk by chunk. Pass k reads back what pass
// k - 1 wrote, with the same interpreter on the same NoC (in order per destination,
// docs/kernels.md).

#include <cstdint>
#include <optional>

#include "kernels/host/micro_ops.hpp"
#include "runtime/ccl/all_reduce/all_reduce.hpp"

namespace cclmesh::runtime::ccl::all_reduce {

// Adds the local sum's kernels and CBs on `core` of `chip` to `program`. `packet` is the CB
// packet in pages (the interpreter's read-barrier granularity); `ready`, when given, is a
// semaphore the first stream waits on until N copies have landed, then resets.
void add_local_sum(Program& program, const Params& params, const topo::Topology& topology, ChipId chip, CoreCoord core,
                   std::uint32_t n, std::uint32_t packet, std::optional<cmd::GlobalSemaphoreAddress> ready);

}  // namespace cclmesh::runtime::ccl::all_reduce
