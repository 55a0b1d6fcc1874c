#include "runtime/ccl/reduce_scatter/scattered_rows.hpp"

#include <fmt/format.h>

#include "runtime/ccl/common/dim_split.hpp"
#include "runtime/ccl/common/row_pieces.hpp"

namespace cclmesh::runtime::ccl::reduce_scatter {

std::uint32_t scattered_row_bytes(const TensorSpec& input, std::uint32_t n) {
  require_dim_splits_evenly(input, 3, n, "reduce_scatter", "input dim", "slices");  // in elements
  const std::uint32_t row_bytes = page_size_bytes(input);
  const std::uint32_t out_row_bytes = row_bytes / n;
  require_row_piece_alignment(out_row_bytes, "reduce_scatter",
                              fmt::format("cuts each {} B input row into {} output rows of {} B", row_bytes, n,
                                          out_row_bytes));
  return out_row_bytes;
}

}  // namespace cclmesh::runtime::ccl::reduce_scatter
