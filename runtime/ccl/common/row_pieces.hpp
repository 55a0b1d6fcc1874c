#pragma once
// ROW_MAJOR along dim 3: a ROW_MAJOR page is a whole row, so an op that cuts or joins rows along
// the width cannot move whole pages. It addresses its buffers in equal row pieces instead
// (pieces_per_page of api::InterleavedAddrGenParams and api::ShardedAddrGenParams alike), and is
// then sliced like a TILE op along dim 3 with that many "tiles" per row. all_gather (fabric and
// legacy) joins rows this way, reduce_scatter and all_to_all cut them; what a piece must fit
// (a fabric payload, an EDM buffer) is each op's own.
// Rows wider than a fabric payload along an outer dim (dims 0-2, whole rows sliced): the same
// addressing with q pieces a row (fabric_pages), sliced as q tiles a row, in all_gather,
// reduce_scatter, all_to_all (fabric mode) and all_reduce; broadcast, send_recv, reduce and
// all_broadcast move whole buffers in fabric_pages.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "kernels/api/tensor_slice.hpp"
#include "kernels/host/kernel_args_builder.hpp"
#include "runtime/ccl/common/collective.hpp"
#include "runtime/device/types.hpp"

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

// The pages an op that moves whole buffer pages over the fabric moves: the buffer's own when a
// page fits one fabric payload (pieces_per_page 1: the streams are those of whole pages), else
// each page in the fewest equal pieces, multiples of 32 B, that each fit one.
struct FabricPages {
  std::uint32_t page_bytes = 0;       // of a page the workers move: a buffer page or a piece of one
  std::uint32_t pieces_per_page = 1;  // of a buffer page
  std::uint32_t count = 0;            // pages the workers move, the whole buffer's
};

// FabricPages of pages of `page_bytes` (`buffer_pages` of them) against `max_payload_bytes`.
// Throws CclParamsError "<op>: a <page> B page (a ROW_MAJOR row) is wider than the <payload> B fabric
// payload and moves in pieces, which must be multiples of 32 B; ..." for a wide page that is
// not a multiple of 32 B, and PageExceedsPacketError for a page of 0 B.
FabricPages fabric_pages(std::uint32_t page_bytes, std::uint64_t buffer_pages, std::uint32_t max_payload_bytes,
                         const std::string& op);
// The same for a buffer's pages.
FabricPages fabric_pages(const BufferConfig& buffer, std::uint32_t max_payload_bytes, const std::string& op);

// `args` addressing `pages`: unchanged when pages are whole, else in_row_pieces.
kargs::TensorArgs in_fabric_pages(kargs::TensorArgs args, const FabricPages& pages);

// All of `pages` as one worker's slice of a (1, 1, 1, count) tensor (whole_buffer_slice's shape).
api::TensorSlice all_fabric_pages(const FabricPages& pages);

}  // namespace cclmesh::runtime::ccl
