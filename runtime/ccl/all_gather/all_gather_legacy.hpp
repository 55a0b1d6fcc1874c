#pragma once
// all_gather in legacy EDM mode (REFERENCE 5, 7.4 "Legacy ring (EDM)" and "Legacy line"): the
// op launches a legacy EDM on both ends of every hop of its groups, and moves data only between
// neighbours; chips relay what they receive. all_gather::build / validate / output_spec call
// these when params.mode is CclMode::Legacy.
//
//   every chip, per direction d (up = toward higher ranks, down = toward lower), one worker core:
//     sender    (RISC-V 0 / NoC0)  my input -> EDM sender channel toward the next chip of d
//               (the up sender, or the down one at a line's top end, also writes it to my
//               output), then each relayed slice: wait for the receiver's count, re-read the
//               message from my output, push it into the EDM
//     receiver  (RISC-V 1 / NoC1)  EDM receiver channel from the previous chip of d -> my
//               output, +1 on the sender's relay semaphore once the message has landed
//   every hop end: one legacy EDM, channel 0 = sender channel (my d-sender), channel 1 =
//   receiver channel (my receiver of the opposite direction), MESSAGE_COUNT_REACHED (counts
//   known at build) or WORKER_INITIATED (each worker signals after its last message).
//
// A ring sends the whole input both ways, half-way round (FULL_TENSOR, REFERENCE 7.3): N/2
// chips up, (N-1)/2 down. A line sends each chip's input to every chip above and below it:
// hops per direction = the distance to that end of the line.
//
// Several links (num_links up to legacy_usable_links, legacy_links.hpp): all of the above once
// per link, on that link's ethernet channels and its own two worker cores, each link moving its
// contiguous share of every slice (the input's pages split evenly, the first pages % num_links
// links one page more; inferred, REFERENCE gives one EDM and its workers per link but not the
// split).
//
// ROW_MAJOR along dim 3 (a page is a whole row): each chip's input row is one of N equal parts
// of every output row. The workers move row pieces instead of pages (q per input row, the fewest
// 32 B-aligned pieces one of which fits an EDM buffer: 1 unless a row is wider than a buffer),
// addressing the output in N x q pieces per row through the address generators' pieces_per_page,
// so each piece lands with its own NoC write at its byte offset of the output row (inferred to
// be how tt-metal's legacy workers wrote a page into part of an output page). Messages, relays
// and link runs are those of a TILE gather along dim 3 with q pages per chip per row.
//
// ROW_MAJOR along dims 0-2 (a page is a whole row, slices are whole rows): a row wider than an
// EDM buffer moves in q pieces (LegacyOp::outer_row_pieces), the buffers addressed and sliced q
// pieces a row, in and out; a row that fits moves whole, as before.

#include <cstdint>
#include <vector>

#include "runtime/ccl/all_gather/all_gather.hpp"

namespace cclmesh::runtime::ccl::all_gather::legacy {

// What one worker of one direction moves, in slices (each slice is one chip's input).
struct DirectionCounts {
  std::uint32_t sent = 0;      // my input plus the slices I relay
  std::uint32_t received = 0;  // slices that arrive from the previous chip of the direction
};
// Slices rank `rank` of an `n`-chip group sends and receives up (toward higher ranks) or down.
DirectionCounts direction_counts(CclTopology topology, std::uint32_t n, std::uint32_t rank, bool up);

// The worker cores every chip uses: per link [up, down].
std::vector<CoreCoord> worker_cores(const Params& params, const topo::Topology& topology);

TensorSpec output_spec(const Params& params, const topo::Topology& topology);
void validate(const Params& params, const topo::Topology& topology);
MeshWorkload build(const Params& params, const topo::Topology& topology);

}  // namespace cclmesh::runtime::ccl::all_gather::legacy
