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
// all_broadcast move whole buffers in fabric_pages. Legacy all_gather and reduce_scatter do the
// same with rows wider than an EDM buffer (legacy_outer_dim_row_pieces, legacy_op.hpp).

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "kernels/api/addrgen.hpp"
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

// How a row wider than a fabric payload is cut (docs/collectives.md, "Why a 4384 B row ..."). A
// copy's CB packet holds payload / piece whole pieces (contiguous ones merge into one NoC
// transfer), so a copy gains from pieces that fill a payload (FillPayload); a reduction pays per
// piece in its reduce kernel, so it takes the fewest (Fewest).
enum class RowPieceChoice { FillPayload, Fewest };

// Bytes of whole `piece_bytes` pieces one `max_payload_bytes` payload holds.
std::uint32_t payload_packing(std::uint32_t piece_bytes, std::uint32_t max_payload_bytes);

// The packing FillPayload's pieces must reach: within kFillPayloadSlackPercent of the best any
// multiple of 32 B reaches (32 B pieces': floor(payload / 32) x 32 B). 6 %, so that 4096 B
// pieces (94.1 % of 4352 B) still count: on the T3K ring all_gather and all_broadcast ran 1 %
// slower in 4352 B packets than in 4096 B ones whatever the piece size (measured, session 38).
inline constexpr std::uint32_t kFillPayloadSlackPercent = 6;
std::uint32_t fill_payload_packing_floor(std::uint32_t max_payload_bytes);

// The fewest equal 32 B-aligned pieces of a `row_bytes` row (a multiple of 32 B, at most a payload)
// whose payload_packing reaches fill_payload_packing_floor: 1 when the row's own packing does
// (4096 B), else as FillPayload cuts a wide row (3072 B: 3 x 1024 B, 4 a payload). Only all_gather
// along dim 3 cuts rows that fit, and only those wider than half a payload (docs/collectives.md,
// "Rows that fit a payload, all_gather along dim 3 (session 39)").
std::uint32_t fill_payload_pieces_of_fitting_row(std::uint32_t row_bytes, std::uint32_t max_payload_bytes);

// The equal pieces, multiples of 32 B, a `row_bytes` row (a multiple of 32 B) moves in over a
// fabric of `max_payload_bytes`: 1 when the row fits a payload; else Fewest takes the fewest that
// fit (4416 B: 2 x 2208 B) and FillPayload the fewest whose payload_packing reaches
// fill_payload_packing_floor (4416 B: 23 x 192 B, 22 a payload; 8192 B: 2 x 4096 B either way).
// Throws CclParamsError "<op>: a <row_bytes> B <what> does not split into equal pieces of at most
// <payload> B (the fabric payload) that are multiples of 32 B" (only a payload under 32 B gets
// there); `what` names the row ("ROW_MAJOR output row").
std::uint32_t fabric_row_pieces(std::uint32_t row_bytes, std::uint32_t max_payload_bytes, RowPieceChoice choice,
                                const std::string& op, const std::string& what);

// `args` addressing each buffer page in `pieces` pieces of `piece_bytes`, the last of them
// `last_piece_bytes` long when not 0 (api::InterleavedAddrGenParams::last_piece_bytes).
kargs::TensorArgs in_row_pieces(kargs::TensorArgs args, std::uint32_t piece_bytes, std::uint32_t pieces,
                                std::uint32_t last_piece_bytes = 0);

// The pages an op that moves whole buffer pages over the fabric moves: the buffer's own when a
// page fits one fabric payload (pieces_per_page 1: the streams are those of whole pages), else
// each page in pieces that each fit one and start 32 B-aligned (DRAM, REFERENCE 6.5): a page of
// a multiple of 32 B in equal pieces, multiples of 32 B, as fabric_row_pieces chooses for the
// op's RowPieceChoice (4384 B = 137 x 32 B: 137 x 32 B either way), any other in the fewest pieces
// of which all but the last are the same multiple of 32 B and the last is what is left (4400 B:
// 2208 + 2192 B; session 36).
struct FabricPages {
  std::uint32_t page_bytes = 0;        // of a page the workers move: a buffer page or a piece of one
  std::uint32_t pieces_per_page = 1;   // of a buffer page
  std::uint32_t count = 0;             // pages the workers move, the whole buffer's
  std::uint32_t last_piece_bytes = 0;  // of a buffer page's last piece when shorter than page_bytes, else 0

  // Where moved page `page` starts in the buffer's pages packed back to back (a host reference's
  // page images): pieces are page_bytes apart inside a buffer page, the last one shorter.
  std::uint64_t image_offset(std::uint64_t page) const;
};

// FabricPages of pages of `page_bytes` (`buffer_pages` of them) against `max_payload_bytes`.
// Throws CclParamsError when a wide page does not split (a payload under 32 B) or makes more
// than 2^32 pages, and PageExceedsPacketError for a page of 0 B.
FabricPages fabric_pages(std::uint32_t page_bytes, std::uint64_t buffer_pages, std::uint32_t max_payload_bytes,
                         RowPieceChoice choice, const std::string& op);
// The same for a buffer's pages.
FabricPages fabric_pages(const BufferConfig& buffer, std::uint32_t max_payload_bytes, RowPieceChoice choice,
                         const std::string& op);

// `args` addressing `pages`: unchanged when pages are whole, else in_row_pieces.
kargs::TensorArgs in_fabric_pages(kargs::TensorArgs args, const FabricPages& pages);

// All of `pages` as one worker's slice of a (1, 1, 1, count) tensor (whole_buffer_slice's shape).
api::TensorSlice all_fabric_pages(const FabricPages& pages);

}  // namespace cclmesh::runtime::ccl
