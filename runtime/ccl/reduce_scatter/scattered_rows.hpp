#pragma once
// reduce_scatter of a ROW_MAJOR tensor along dim 3 (row_pieces.hpp), fabric and legacy mode alike:
// every input row is cut into N output rows, rank r's output row being the r-th part, summed over
// the ranks. The workers address the buffers in equal row pieces, q per output row and N x q per
// input row, and run as along dim 3 of a TILE tensor with q "tiles" per row: rank r's output is
// pieces [r q, (r + 1) q) of every input row. So an output row must be whole 32 B pieces; how
// large a piece may be (a fabric payload, an EDM buffer) is each mode's.
// Internal to runtime/ccl/reduce_scatter.

#include <cstdint>

#include "runtime/ccl/common/collective.hpp"

namespace cclmesh::runtime::ccl::reduce_scatter {

// The bytes of an output row of `input` (ROW_MAJOR, cut along dim 3 over `n` chips). Throws
// CclParamsError when its rows do not split into n equal parts ("reduce_scatter: input dim 3 is 100
// elements and does not split into 8 equal slices ...") or a part is not a multiple of 32 B
// ("reduce_scatter: ROW_MAJOR along dim 3 cuts each 384 B input row into 8 output rows of 48 B; it
// must be a multiple of 32 B ...").
std::uint32_t scattered_row_bytes(const TensorSpec& input, std::uint32_t n);

}  // namespace cclmesh::runtime::ccl::reduce_scatter
