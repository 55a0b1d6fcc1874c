#pragma once
// How an all_to_all sender cuts one destination's share into the pieces it sends one a round
// (all_to_all.hpp, Params::rounds: a sender takes one piece of every destination per round).
// Pieces are whole packets: a piece that is not ends in a short packet (the reader pushes a whole
// CB packet for it and the writer sends it alone), so every round would pay a packet for a few
// pages. Until session 39 the pieces were cut by pages; row pieces that fill a payload then paid
// once a row: a 4416 B chunk of a row in 23 x 192 B pieces, 22 a packet, went as 4224 + 192 B
// packets, no fewer than 2 x 2208 B, and all_to_all along dim 3 kept the fewest pieces
// (docs/collectives.md "Rounds in whole packets (session 39)").

#include <cstdint>
#include <vector>

namespace cclmesh::runtime::ccl::all_to_all {

// Pages [first, first + count) of a chunk.
struct PageSpan {
  std::uint32_t first = 0;
  std::uint32_t count = 0;
  bool operator==(const PageSpan&) const = default;
};

// Part `index` of `parts` of `whole`, as the interpreter's workers split a slice: equal parts, the
// first whole.count % parts of them one page longer.
PageSpan part_of(PageSpan whole, std::uint32_t parts, std::uint32_t index);

// The pieces a sender sends `whole` in, one a round, with at most `rounds` rounds and
// `packet_pages` pages a packet: as many pieces as rounds, or as whole packets when fewer (at
// least one piece), each whole packets split as part_of splits pages, the first also taking the
// short packet left over. Pieces follow each other and cover `whole`.
std::vector<PageSpan> round_pieces(PageSpan whole, std::uint32_t rounds, std::uint32_t packet_pages);

}  // namespace cclmesh::runtime::ccl::all_to_all
