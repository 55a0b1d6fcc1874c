#include "runtime/ccl/common/row_pieces.hpp"

#include <cstdint>
#include <utility>
#include <variant>

#include <fmt/format.h>

#include "runtime/ccl/common/ccl_common.hpp"

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

std::uint32_t fabric_row_pieces(std::uint32_t row_bytes, std::uint32_t max_payload_bytes, const std::string& op,
                                const std::string& what) {
  if (const auto pieces = fewest_row_pieces(row_bytes, [&](std::uint32_t b) { return b <= max_payload_bytes; })) {
    return *pieces;
  }
  throw CclParamsError(fmt::format("{}: a {} B {} does not split into equal pieces of at most {} B (the fabric "
                                   "payload) that are multiples of {} B",
                                   op, row_bytes, what, max_payload_bytes, kRowPieceAlignment));
}

kargs::TensorArgs in_row_pieces(kargs::TensorArgs args, std::uint32_t piece_bytes, std::uint32_t pieces) {
  std::visit(
      [&](auto& t) {
        t.page_size_bytes = piece_bytes;
        t.pieces_per_page = pieces;
      },
      args);
  return args;
}

FabricPages fabric_pages(std::uint32_t page_bytes, std::uint64_t buffer_pages, std::uint32_t max_payload_bytes,
                         const std::string& op) {
  if (page_bytes == 0) throw PageExceedsPacketError(page_bytes, max_payload_bytes);
  std::uint32_t pieces = 1;
  if (page_bytes > max_payload_bytes) {
    if (page_bytes % kRowPieceAlignment != 0) {
      throw CclParamsError(fmt::format("{}: a {} B page (a ROW_MAJOR row) is wider than the {} B fabric payload and "
                                       "moves in pieces, which must be multiples of {} B (DRAM alignment, REFERENCE "
                                       "6.5); expected a page of a multiple of {} B, or of at most {} B",
                                       op, page_bytes, max_payload_bytes, kRowPieceAlignment, kRowPieceAlignment,
                                       max_payload_bytes));
    }
    pieces = fabric_row_pieces(page_bytes, max_payload_bytes, op, "page (a ROW_MAJOR row)");
  }
  const std::uint64_t count = buffer_pages * pieces;
  if (count > UINT32_MAX) {
    throw CclParamsError(fmt::format("{}: {} pages of {} B pieces; a slice holds at most {}", op, count,
                                     page_bytes / pieces, UINT32_MAX));
  }
  return FabricPages{page_bytes / pieces, pieces, static_cast<std::uint32_t>(count)};
}

FabricPages fabric_pages(const BufferConfig& buffer, std::uint32_t max_payload_bytes, const std::string& op) {
  const std::uint64_t pages = buffer.page_size_bytes == 0 ? 0 : buffer.size_bytes / buffer.page_size_bytes;
  return fabric_pages(buffer.page_size_bytes, pages, max_payload_bytes, op);
}

kargs::TensorArgs in_fabric_pages(kargs::TensorArgs args, const FabricPages& pages) {
  if (pages.pieces_per_page == 1) return args;
  return in_row_pieces(std::move(args), pages.page_bytes, pages.pieces_per_page);
}

api::TensorSlice all_fabric_pages(const FabricPages& pages) {
  const api::Shape4D shape{1, 1, 1, pages.count};
  return api::TensorSlice{shape, shape, api::Shape4D{0, 0, 0, 0}, shape, api::Shape4D{0, 0, 0, 0}};
}

}  // namespace cclmesh::runtime::ccl
