#include "runtime/ccl/common/row_pieces.hpp"

#include <cstdint>
#include <utility>
#include <variant>

#include <fmt/format.h>

#include "runtime/ccl/common/ccl_common.hpp"
#include "sim/engine/check.hpp"

namespace cclmesh::runtime::ccl {

bool cuts_rows(const TensorSpec& spec, std::uint32_t dim) { return spec.layout == Layout::RowMajor && dim == 3; }

void require_row_piece_alignment(std::uint32_t row_bytes, const std::string& op, const std::string& what) {
  if (row_bytes % kRowPieceAlignment == 0) return;
  throw CclParamsError(fmt::format("{}: ROW_MAJOR along dim 3 {}; it must be a multiple of {} B (DRAM alignment, "
                                   "REFERENCE 6.5)",
                                   op, what, kRowPieceAlignment));
}

std::optional<std::uint32_t> fewest_row_pieces(std::uint32_t row_bytes,
                                               const std::function<bool(std::uint32_t)>& fits) {
  for (std::uint32_t pieces = 1; pieces <= row_bytes / kRowPieceAlignment; ++pieces) {
    const std::uint32_t piece = row_bytes / pieces;
    if (row_bytes % pieces == 0 && piece % kRowPieceAlignment == 0 && fits(piece)) return pieces;
  }
  return std::nullopt;
}

std::uint32_t payload_packing(std::uint32_t piece_bytes, std::uint32_t max_payload_bytes) {
  return max_payload_bytes / piece_bytes * piece_bytes;
}

std::uint32_t fill_payload_packing_floor(std::uint32_t max_payload_bytes) {
  // No multiple of 32 B packs more than 32 B pieces do: a packing is a multiple of 32 B within the payload.
  const std::uint64_t best = payload_packing(kRowPieceAlignment, max_payload_bytes);
  return static_cast<std::uint32_t>((best * (100 - kFillPayloadSlackPercent) + 99) / 100);
}

std::uint32_t fabric_row_pieces(std::uint32_t row_bytes, std::uint32_t max_payload_bytes, RowPieceChoice choice,
                                const std::string& op, const std::string& what) {
  // A row that fits a payload moves whole whatever its packing: pieces would add pages, not bytes.
  const bool fill = choice == RowPieceChoice::FillPayload && row_bytes > max_payload_bytes;
  const std::uint32_t packing_floor = fill ? fill_payload_packing_floor(max_payload_bytes) : 0;
  const auto fits = [&](std::uint32_t piece) {
    return piece <= max_payload_bytes && payload_packing(piece, max_payload_bytes) >= packing_floor;
  };
  if (const auto pieces = fewest_row_pieces(row_bytes, fits)) return *pieces;
  throw CclParamsError(fmt::format("{}: a {} B {} does not split into equal pieces of at most {} B (the fabric "
                                   "payload) that are multiples of {} B",
                                   op, row_bytes, what, max_payload_bytes, kRowPieceAlignment));
}

std::uint32_t fill_payload_pieces_of_fitting_row(std::uint32_t row_bytes, std::uint32_t max_payload_bytes) {
  CCLMESH_CHECK(row_bytes > 0 && row_bytes <= max_payload_bytes && row_bytes % kRowPieceAlignment == 0,
                fmt::format("a {} B row is not a multiple of {} B that fits a {} B payload", row_bytes,
                            kRowPieceAlignment, max_payload_bytes));
  const std::uint32_t packing_floor = fill_payload_packing_floor(max_payload_bytes);
  const auto pieces = fewest_row_pieces(row_bytes, [&](std::uint32_t piece) {
    return payload_packing(piece, max_payload_bytes) >= packing_floor;
  });
  // 32 B pieces reach the best packing, so some cut always does.
  CCLMESH_CHECK(pieces.has_value(), fmt::format("a {} B row found no pieces filling a {} B payload", row_bytes,
                                                max_payload_bytes));
  return *pieces;
}

kargs::TensorArgs in_row_pieces(kargs::TensorArgs args, std::uint32_t piece_bytes, std::uint32_t pieces,
                                std::uint32_t last_piece_bytes) {
  std::visit(
      [&](auto& t) {
        t.page_size_bytes = piece_bytes;
        t.pieces_per_page = pieces;
        t.last_piece_bytes = last_piece_bytes;
      },
      args);
  return args;
}

std::uint64_t FabricPages::image_offset(std::uint64_t page) const {
  const std::uint64_t buffer_page_bytes =
      std::uint64_t{pieces_per_page - 1} * page_bytes + (last_piece_bytes == 0 ? page_bytes : last_piece_bytes);
  return page / pieces_per_page * buffer_page_bytes + page % pieces_per_page * std::uint64_t{page_bytes};
}

FabricPages fabric_pages(std::uint32_t page_bytes, std::uint64_t buffer_pages, std::uint32_t max_payload_bytes,
                         RowPieceChoice choice, const std::string& op) {
  if (page_bytes == 0) throw PageExceedsPacketError(page_bytes, max_payload_bytes);
  FabricPages pages{page_bytes, 1, 0, 0};
  if (page_bytes > max_payload_bytes && page_bytes % kRowPieceAlignment == 0) {
    // Equal pieces: every moved page the same size. A 4384 B row (137 x 32 B) keeps its 32 B
    // pieces, whose runs fill whole payloads, rather than the shorter-last-piece cut below
    // (docs/collectives.md "Why a 4384 B row ...").
    pages.pieces_per_page = fabric_row_pieces(page_bytes, max_payload_bytes, choice, op, "page (a ROW_MAJOR row)");
    pages.page_bytes = page_bytes / pages.pieces_per_page;
  } else if (page_bytes > max_payload_bytes) {
    // Not a multiple of 32 B, so no equal pieces start 32 B-aligned: the fewest pieces that do,
    // as many as payloads rounded down to 32 B the page needs, each the page's share rounded up
    // to 32 B, the last what is left (never empty: (pieces - 1) x a piece < pieces - 1 payloads
    // < the page).
    const std::uint32_t widest_piece = max_payload_bytes / kRowPieceAlignment * kRowPieceAlignment;
    if (widest_piece == 0) {
      throw CclParamsError(fmt::format("{}: a {} B page (a ROW_MAJOR row) is wider than the {} B fabric payload, "
                                       "which holds no {} B-aligned piece of it; expected a payload of at least {} B",
                                       op, page_bytes, max_payload_bytes, kRowPieceAlignment, kRowPieceAlignment));
    }
    pages.pieces_per_page = (page_bytes + widest_piece - 1) / widest_piece;
    const std::uint32_t share = (page_bytes + pages.pieces_per_page - 1) / pages.pieces_per_page;
    pages.page_bytes = api::align_up(share, kRowPieceAlignment);
    const std::uint32_t last = page_bytes - (pages.pieces_per_page - 1) * pages.page_bytes;
    CCLMESH_CHECK(last > 0 && last <= pages.page_bytes,
                  fmt::format("{}: {} B in {} pieces of {} B left a last piece of {} B", op, page_bytes,
                              pages.pieces_per_page, pages.page_bytes, last));
    pages.last_piece_bytes = last == pages.page_bytes ? 0 : last;
  }
  const std::uint64_t count = buffer_pages * pages.pieces_per_page;
  if (count > UINT32_MAX) {
    throw CclParamsError(fmt::format("{}: {} pages of {} B pieces; a slice holds at most {}", op, count,
                                     pages.page_bytes, UINT32_MAX));
  }
  pages.count = static_cast<std::uint32_t>(count);
  return pages;
}

FabricPages fabric_pages(const BufferConfig& buffer, std::uint32_t max_payload_bytes, RowPieceChoice choice,
                         const std::string& op) {
  const std::uint64_t pages = buffer.page_size_bytes == 0 ? 0 : buffer.size_bytes / buffer.page_size_bytes;
  return fabric_pages(buffer.page_size_bytes, pages, max_payload_bytes, choice, op);
}

kargs::TensorArgs in_fabric_pages(kargs::TensorArgs args, const FabricPages& pages) {
  if (pages.pieces_per_page == 1) return args;
  return in_row_pieces(std::move(args), pages.page_bytes, pages.pieces_per_page, pages.last_piece_bytes);
}

api::TensorSlice all_fabric_pages(const FabricPages& pages) {
  const api::Shape4D shape{1, 1, 1, pages.count};
  return api::TensorSlice{shape, shape, api::Shape4D{0, 0, 0, 0}, shape, api::Shape4D{0, 0, 0, 0}};
}

}  // namespace cclmesh::runtime::ccl
