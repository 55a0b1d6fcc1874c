#pragma once
// The one-shot direct ring reduce_scatter for small tensors (REFERENCE 7.5: "a ring RS with
// <= 512 KiB per device uses a one-shot direct algorithm that sends about 2.3x the bytes";
// RingAlgorithm::OneShot, Auto's choice up to kDefaultOneShotMaxBytes). Every chip sends slice
// d of its input straight to chip d, the short way round the ring, into copy `rank` of d's
// intermediate buffer, and +1s the done semaphore of d's reduce core; that core waits for the
// N - 1 copies and sums them with its own slice. No partial is forwarded, so there is no chain
// of N - 1 dependent messages: one fabric step of at most N/2 hops.
//
// Bytes: chip r's slice for chip r + k travels min(k, N - k) hops. On 8 chips the seven slices
// travel 1, 1, 2, 2, 3, 3, 4 hops = 16 slice-hops per chip, against the chain's 7 (N - 1
// messages of one slice, one hop each): 16 / 7 = 2.29x the link bytes, REFERENCE's "about
// 2.3x". (4 chips: 1, 1, 2 = 4 against 3.) The antipode (N even) is reached upward from even
// ranks and downward from odd ones, so both directions of every link carry the same load.
//
// Per link l (routing plane l, each on run l of every slice's pages), three cores:
//   forward sender  (first_worker + 3l)      reader  STREAM_TENSOR_TO_CB  input slice d -> CB
//   backward sender (first_worker + 3l + 1)  writer  per destination d of its direction,
//                                                    farthest first (the longest latency starts
//                                                    first): STREAM_CB_TO_TENSOR -> copy `rank`
//                                                    of d's intermediate, ATOMIC_INC done on
//                                                    d's reduce core (same route: in order)
//   reduce core     (first_worker + 3l + 2)  RISC-V 1 (NoC1), intermediate: WAIT_VALUE done >=
//                                              N - 1, SET 0, then the N - 1 copies -> next CB
//                                            RISC-V 0 (NoC0), stream 0 (input): own slice ->
//                                              acc CB; stream 1 (output): pass 1 reduced ->
//                                              output; pass k > 1, per chunk: output -> acc CB,
//                                              reduced -> output (reads back what pass k - 1
//                                              wrote: same interpreter, same NoC, in order)
//                                            compute: reduce, acc + next -> reduced
// The own slice is read from the input on the reduce core rather than copied into the
// intermediate: a local copy's write and a local semaphore increment are not ordered (an
// ATOMIC_INC does not wait for earlier writes to land), and the reduce core can read it
// directly.
//
// Reduction order (reference_outputs() reproduces it bit for bit): slice s is
// fold(x_s, x_{s+1}, ..., x_{s-1}) over the ranks, own slice first, then the others in rank
// order going up from s (mod N); bf16 and bfp8_b re-rounded after every addition, as the chain.
//
// The done semaphore is the op's global barrier_semaphore (remote increments may arrive before
// the chip's program starts); the reduce core resets it after the wait. As the one-shot
// all_reduce, there is no entry barrier: back-to-back runs must be separated by a finish, or a
// fast chip's next run could write a copy that this chip is still summing.

#include <cstdint>
#include <vector>

#include "runtime/ccl/common/host_reference.hpp"
#include "runtime/ccl/reduce_scatter/reduce_scatter.hpp"
#include "runtime/ccl/reduce_scatter/reduce_scatter_plan.hpp"
#include "runtime/device/workload.hpp"
#include "topologies/topology.hpp"

namespace cclmesh::runtime::ccl::reduce_scatter::plan {

// Cores per link: a forward and a backward sender and a reduce core.
inline constexpr std::uint32_t kOneShotCoresPerLink = 3;

// The program of rank `rank` of group `g` (r.one_shot).
Program one_shot_program(const Params& p, const topo::Topology& topology, const Resolved& r, const FabricGroup& g,
                         std::uint32_t rank);

// The outputs of every rank from slices[rank][s] (rank's input slice s), in the order above.
std::vector<reference::Bytes> one_shot_reference(const std::vector<std::vector<reference::Bytes>>& slices,
                                                 DataType dtype);

}  // namespace cclmesh::runtime::ccl::reduce_scatter::plan
