#pragma once
// ROW_MAJOR along dim 3: a ROW_MAJOR page is a whole row, so an op that cuts or joins rows along
// the width cannot move whole pages. It addresses its buffers in equal row pieces instead
// (pieces_per_page of api::InterleavedAddrGenParams and api::ShardedAddrGenParams alike), and is
// then sliced like a TILE op along dim 3 with that many "tiles" per row. all_gather (fabric and
// legacy) joins rows this way, reduce_scatter and all_to_all cut them; what a piece must fit
// (a fabric payload, an EDM buffer) is each op's own.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "kernels/host/kernel_args_builder.hpp"
#include "runtime/ccl/common/collective.hpp"

namespace cclmesh::runtime::ccl {

// DRAM accesses need 32 B alignment (REFERENCE 6.5): every piece starts 32 B-aligned.
inline constexpr std::uint32_t kRowPieceAlignment = 32;

// True when `spec` is ROW_MAJOR and `dim` is its width (dim 3): the op works in row pieces.
bool cuts_rows(const TensorSpec& spec, std::uint32_t dim);

// Throws CclParamsError "<op>: ROW_MAJOR along dim 3 <what>; it must be a multiple of 32 B (DRAM
// alignment, REFERENCE 6.5)" unless `row_bytes` is a multiple of 32 B. `what` says which row and
// why its size matters ("writes each chip's 96 B row at an offset of ...").
void require_row_piece_alignment(std::uint32_t row_bytes, const std::string& op, const std::string& what);

// The fewest equal pieces, each a multiple of 32 B, that a `row_bytes` row (a multiple of 32 B)
// splits into with `fits(piece bytes)`; nullopt when not even 32 B pieces fit.
std::optional<std::uint32_t> fewest_row_pieces(std::uint32_t row_bytes,
                                               const std::function<bool(std::uint32_t)>& fits);

// fewest_row_pieces for pieces that each fit one fabric payload of `max_payload_bytes`. Throws
// CclParamsError "<op>: a <row_bytes> B <what> does not split into equal pieces of at most <payload> B
// (the fabric payload) that are multiples of 32 B" (only a payload under 32 B gets there); `what`
// names the row ("ROW_MAJOR output row").
std::uint32_t fabric_row_pieces(std::uint32_t row_bytes, std::uint32_t max_payload_bytes, const std::string& op,
                                const std::string& what);

// `args` addressing each buffer page in `pieces` pieces of `piece_bytes`.
kargs::TensorArgs in_row_pieces(kargs::TensorArgs args, std::uint32_t piece_bytes,
                                        std::uint32_t pieces);

}  // namespace cclmesh::runtime::ccl
