#pragma once
// The one-shot all_reduce for small tensors (REFERENCE 7.5's one-shot direct algorithm, 7.6):
// every chip multicasts its whole input to every other chip of its group and each chip sums the
// N copies locally. One workload, so one dispatch, and the data crosses the fabric in one step
// of ceil((N-1)/2) hops (ring) instead of reduce_scatter's N - 1 chained messages and
// all_gather's multicast after it. It moves (N-1) x the tensor into every chip, so it loses
// once bandwidth matters: all_reduce's Auto picks it up to a size threshold (all_reduce.hpp).
//
//   every chip:
//     gather core (first_worker)   reader  STREAM_TENSOR_TO_CB   input -> CB
//                                  writer  STREAM_CB_TO_TENSOR   CB -> copy `my rank` of the
//                                          intermediate buffer, locally and multicast (ring:
//                                          N/2 up and (N-1)/2 down; line: to both ends),
//                                          CB packets of whole 4-page scatter writes when
//                                          small pages allow (docs/collectives.md, "Small
//                                          pages: the mechanism")
//                                          ATOMIC_INC multicast  done +1 on the reduce core of
//                                          every chip reached (and here)
//     reduce core (the next core)  stream 0: WAIT_VALUE done >= N, SET 0, then the copies
//                                  stream 1: the output; reduce kernel: the composite's chain
//                                  output = ((g0 + g1) + g2) + ... in rank order, chunk by
//                                  chunk, pass k reading back what pass k - 1 wrote
// Reduction order: rank order, as the composite, so the composite's reference applies.

#include <cstdint>

#include "runtime/ccl/all_reduce/all_reduce.hpp"

namespace cclmesh::runtime::ccl::all_reduce::one_shot {

// Whether the one-shot's running sums (the whole tensor, in its local sum's CB packets) fit L1
// (local_sum.hpp's sums_fit_in_l1); build() refuses a tensor whose do not.
bool sums_fit(const Params& params);

// Throws CclParamsError when a chip's multicast would reach further than a fabric route holds
// (kMaxFabricHops: a ring of 32 multicasts 16 hops up); the composite's all_gather, which
// all_reduce::validate checks too, relays hop by hop and reaches where this does not.
void validate_reach(const Params& params, const topo::Topology& topology);

// The one-shot workload; `params` validated by the caller (all_reduce::validate), whose
// intermediate buffer holds the N copies (intermediate_spec).
MeshWorkload build(const Params& params, const topo::Topology& topology);

}  // namespace cclmesh::runtime::ccl::all_reduce::one_shot
