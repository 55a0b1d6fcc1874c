#include "runtime/ccl/common/row_pieces.hpp"

#include <variant>

#include <fmt/format.h>

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

}  // namespace cclmesh::runtime::ccl
