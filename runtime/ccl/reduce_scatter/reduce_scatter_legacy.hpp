#pragma once
// reduce_scatter in legacy EDM mode (REFERENCE 5, 7.5 "legacy ring"): tt-metal's 2024 ring
// reduce-scatter. The op launches a legacy EDM on both ends of every hop of its groups and
// moves partial sums between neighbours only; every chip adds its input and passes the sum on.
// reduce_scatter::validate / build / output_spec / reference_outputs call these when
// params.mode is CclMode::Legacy.
//
//   every chip, per direction d (up = toward higher ranks, down = lower), one worker core, each
//   on its own row (worker_cores below):
//     receiver (RISC-V 1 / NoC1)  EDM receiver channel from the previous chip of d -> partial
//                                 CB; this chip's operand (its input run) -> local CB
//     reduce   (compute)          partial CB + local CB -> reduced CB
//     sender   (RISC-V 0 / NoC0)  raw input run (a chain's first chip) or the sums -> EDM
//                                 sender channel toward the next chip of d; the chain's last
//                                 sum -> this chip's output
//   every hop end: one legacy EDM (legacy_edm_plan.hpp's hop EDM: channel 0 my d-sender,
//   channel 1 my receiver of the other direction).
//
// Ring (N >= 3): the output's slice is split in two runs, the up worker chains the first, the
// down worker the second, exactly the fabric ring's chains: for slice s the up half starts at
// rank s+1 with its raw input and adds ranks s+2, ..., s (mod N); the down half s-1, ..., s.
// N - 1 messages per run leave each worker, one of them raw.
// Line: no wrap, so for slice s the up worker chains ranks 0, 1, ..., s (rank s writes
// U = x0 + ... + xs to its output) and the down worker chains N-1, ..., s+1 into rank s, which
// adds that partial D to its output (or to its input, for s = 0): result = U + D. Rank s's down
// receiver waits for a per-message "ready" count its up sender gives after the output landed.
//
// Several links (num_links up to legacy_usable_links, legacy_links.hpp): what one link chains
// (a ring's up and down halves of each slice's output, a line's whole slice) is split into
// contiguous runs, one per link, and every link's EDMs and two workers chain their own runs
// exactly as above (inferred: REFERENCE 7.5 says workers take strided slices, not how links
// share them). Halves first, so an element's direction and reduction order, and so the bytes,
// do not depend on the number of links.
//
// ROW_MAJOR rows wider than an EDM buffer along dims 0-2 move in q pieces a row
// (LegacyOp::outer_row_pieces), sliced as q pages a row; the sum is element-wise, so its order,
// and reference_outputs, are those of whole rows.
//
// Messages are chunk-lockstep: message c of every step before message c + 1 of any, so each
// worker's sends wait only on earlier messages up the chain and the ring cannot deadlock with
// bounded EDM and CB buffers (the fabric ring relies on its output-sized receive buffer).
//
// Reduction order (reference_outputs reproduces it bit for bit): bf16 sums are rounded after
// every addition; ring: as the fabric ring; line: U in rank order 0..s, D in rank order
// N-1..s+1, then D + U (the arriving partial first, as in every step).
//
// Ranks and positions: "rank" above is the position along the group's EDM chain. They differ on
// a ring run as the line around a down link (legacy_groups.hpp: ranks 0-1-2-3 with 0-1 down run
// as the line 1-2-3-0): the chains run along the line's positions, and each chip takes, gives and
// keeps the slices of the ranks (its own output: its rank's slice), so the result is the
// unfaulted one, summed in the line's order (reference_outputs with the group).

#include <vector>

#include "runtime/ccl/common/host_reference.hpp"
#include "runtime/ccl/reduce_scatter/reduce_scatter.hpp"

namespace cclmesh::runtime::ccl::reduce_scatter::legacy {

// The worker cores every chip uses: per link [up, down]; link l's up worker at (first.x,
// first.y + l), its down worker at (first.x + 1, first.y + num_links + l), so that the two
// directions' receivers read their partials along different NoC1 rows (the .cpp says why).
std::vector<CoreCoord> worker_cores(const Params& params, const topo::Topology& topology);

TensorSpec output_spec(const Params& params, const topo::Topology& topology);
void validate(const Params& params, const topo::Topology& topology);
MeshWorkload build(const Params& params, const topo::Topology& topology);
// Throws CclParamsError when a group runs from mid-line (a ring run as a line around a down link
// that is not its closing one): its sums depend on the group; give it (below).
std::vector<reference::Bytes> reference_outputs(const Params& params, const topo::Topology& topology,
                                                const std::vector<reference::Bytes>& inputs_by_rank);
// The same for `group` (chips in rank order): a ring run as a line around a down link sums in the
// line's order from the chip after the link (legacy_groups.hpp), whose rank need not be 0.
std::vector<reference::Bytes> reference_outputs(const Params& params, const topo::Topology& topology,
                                                const std::vector<ChipId>& group,
                                                const std::vector<reference::Bytes>& inputs_by_rank);

}  // namespace cclmesh::runtime::ccl::reduce_scatter::legacy
