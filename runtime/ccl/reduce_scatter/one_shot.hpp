#pragma once
// The one-shot direct ring reduce_scatter for small tensors (REFERENCE 7.5: "a ring RS with
// <= 512 KiB per device uses a one-shot direct algorithm that sends about 2.3x the bytes";
// RingAlgorithm::OneShot, Auto's choice up to kDefaultOneShotMaxBytes). Every chip sends slice
// d of its input straight to chip d, the short way round the ring, into copy `rank` of d's
// intermediate buffer, and +1s that copy's semaphore on d's reduce core; that core adds the
// copies to its own slice as they land. No partial is forwarded, so there is no chain of N - 1
// dependent messages: one fabric step of at most N/2 hops.
//
// Bytes: chip r's slice for chip r + k travels min(k, N - k) hops. On 8 chips the seven slices
// travel 1, 1, 2, 2, 3, 3, 4 hops = 16 slice-hops per chip, against the chain's 7 (N - 1
// messages of one slice, one hop each): 16 / 7 = 2.29x the link bytes, REFERENCE's "about
// 2.3x". (4 chips: 1, 1, 2 = 4 against 3.) The antipode (N even) is reached upward from even
// ranks and downward from odd ones, so both directions of every link carry the same load.
//
// Per link l (routing plane l, each on run l of every slice's pages), three cores:
//   forward sender  (first_worker + 3l)      reader  STREAM_TENSOR_TO_CB  input slice d -> CB
//   backward sender (first_worker + 3l + 1)  writer  entry handshake (below), then per
//                                                    destination d of its direction, nearest
//                                                    first: STREAM_CB_TO_TENSOR -> copy `rank` of
//                                                    d's intermediate, ATOMIC_INC copy semaphore
//                                                    on d's reduce core (same route: in order)
//   reduce core     (first_worker + 3l + 2)  RISC-V 1 (NoC1), intermediate: per copy in fold
//                                              order, WAIT_VALUE its semaphore >= 1, the copy ->
//                                              next CB
//                                            RISC-V 0 (NoC0), stream 0 (input): own slice ->
//                                              own CB; stream 1 (output): the sums, once
//                                            compute: reduce with N - 1 passes (kRtPasses):
//                                              pass 1 own + copy, each later pass adds the
//                                              next copy in place; the run's sums stay in the
//                                              sums CB (at most kMaxReducedCbBytes, refused
//                                              above) and go out as the last pass ends
// No running sum goes back through memory: reading back what the previous pass wrote raced the
// write (the NoC keeps writes, inline writes and atomics in order per destination, not a read
// behind a write; the interpreter's writes end with a flush, not a barrier), which a 2-page run
// on ring:8 showed as a wrong page.
// The copy semaphores are per-program (kOneShotFirstCopySemaphoreId + fold position), one per
// source, so the reduce core starts pass k as soon as its copy lands, while farther copies are
// still on the way; the senders go nearest first, the order the copies are added in.
// Entry handshake: a sender first +1s the global barrier_semaphore on each destination's sender
// toward this chip ("my program runs": its copy semaphores exist, and its previous run has
// summed its copies), then waits for as many increments from its destinations and resets it.
// So back-to-back runs need no finish between them.
// The own slice is read from the input on the reduce core rather than copied into the
// intermediate: a local copy's write and a local semaphore increment are not ordered (an
// ATOMIC_INC does not wait for earlier writes to land), and the reduce core can read it
// directly.
//
// Reduction order (reference_outputs() reproduces it bit for bit): slice s is
// fold(x_s, x_{s+1}, x_{s-1}, x_{s+2}, x_{s-2}, ...) over the ranks (mod N; the antipode once,
// last): own slice first, then the others nearest first, up before down; bf16 and bfp8_b
// re-rounded after every addition, as the chain.

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
// The reduce core's per-program semaphores, one per copy in fold order: this id and up (1..6 are
// the fabric connections', ccl_common.hpp), so a ring of at most kMaxProgramSemaphores - 6 chips.
inline constexpr std::uint32_t kOneShotFirstCopySemaphoreId = 7;

// The program of rank `rank` of group `g` (r.one_shot).
Program one_shot_program(const Params& p, const topo::Topology& topology, const Resolved& r, const FabricGroup& g,
                         std::uint32_t rank);

// The outputs of every rank from slices[rank][s] (rank's input slice s), in the order above.
std::vector<reference::Bytes> one_shot_reference(const std::vector<std::vector<reference::Bytes>>& slices,
                                                 DataType dtype);

}  // namespace cclmesh::runtime::ccl::reduce_scatter::plan
