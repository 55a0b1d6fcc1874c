#pragma once
// The local sum of an all_reduce whose N copies already sit in one chip's intermediate buffer
// (the composite all_gather's output, or the one-shot's multicast copies), on one worker core,
// output = ((g0 + g1) + g2) + ... in rank order. Two forms:
//
// Running sums in L1 (add_local_sum; when sums_fit_in_l1, the one-shot always):
//   stream 0 (intermediate): [wait `ready` >= N, reset it], copy 0 -> acc CB and copy 1 -> next
//                            CB chunk by chunk, then copies 2 .. N-1 -> next CB
//   stream 1 (output):       the sums CB -> output, once
//   reduce kernel (compute): N - 1 passes (ReduceSpec::passes), the running sums in the sums CB
// Nothing is read back, so no read can overtake a write (the NoC orders writes per destination,
// not a read behind a write: docs/collectives.md, "The running sums stay in L1").
//
// Chained through the output (add_local_sum_pass; composites whose sums do not fit): one
// program per pass k = 1 .. N-1, each its own workload, chunk by chunk
//   stream 0 (intermediate): pass 1 copy 0 -> acc CB and copy 1 -> next CB; pass k: copy k -> next
//   stream 1 (output):       pass k > 1: output -> acc CB; reduced -> output
// Pass k reads what pass k - 1 wrote only after pass k - 1's kernels have ended, and a kernel
// ends with a write barrier (all its writes acked), so every read-back is behind acked writes.

#include <cstdint>
#include <optional>

#include "kernels/host/micro_ops.hpp"
#include "runtime/ccl/common/row_pieces.hpp"
#include "runtime/ccl/all_reduce/all_reduce.hpp"

namespace cclmesh::runtime::ccl::all_reduce {

// The tensor's pages as the local sum and the one-shot move them: whole pages (TILE pages always),
// or ROW_MAJOR rows wider than a fabric payload in the fewest equal 32 B-aligned pieces that fit one (row_pieces.hpp;
// pieces_per_page 1 keeps the streams of whole pages). The sum is element-wise, so pieces sum as
// rows do; the buffers are addressed in_fabric_pages.
FabricPages moved_pages(const Params& params);

// The bytes of the sums CB that keeps the whole tensor's running sums (whole CB packets of
// `packet` pages), and whether they fit kMaxReducedCbBytes.
std::uint64_t local_sums_bytes(const Params& params, std::uint32_t packet);
bool sums_fit_in_l1(const Params& params, std::uint32_t packet);

// Adds the local sum with its running sums in L1 on `core` of `chip` to `program`. `packet` is
// the CB packet in pages (the interpreter's read-barrier granularity); `ready`, when given, is a
// semaphore the first stream waits on until N copies have landed, then resets. Throws
// CclParamsError when the sums do not fit (sums_fit_in_l1).
void add_local_sum(Program& program, const Params& params, const topo::Topology& topology, ChipId chip, CoreCoord core,
                   std::uint32_t n, std::uint32_t packet, std::optional<cmd::GlobalSemaphoreAddress> ready);

// Adds pass `pass` (1 .. n - 1) of the local sum chained through the output: output = output +
// copy `pass` (pass 1: copy 0 + copy 1). Each pass must run as a program of its own, after the
// previous one.
void add_local_sum_pass(Program& program, const Params& params, const topo::Topology& topology, ChipId chip,
                        CoreCoord core, std::uint32_t n, std::uint32_t packet, std::uint32_t pass);

}  // namespace cclmesh::runtime::ccl::all_reduce
