#pragma once
// Host reference implementations of the collectives, computed from the same inputs the device
// gets, for bit-for-bit comparison with what the device produced.
//
// Tensors are page images: the bytes of a tensor's pages in page order, as write_buffer takes
// and read_buffer returns them (tiles of TILE tensors, rows of ROW_MAJOR ones). Joining and
// cutting along a dim happen in whole pages (the collectives require tile-aligned cuts,
// collective.hpp), so the page-level result equals the element-level one and is independent of
// the element type; the exceptions are all_gather's tile-padded fallback (concat below) and
// ROW_MAJOR rows cut along dim 3 (slice below). Sums are element-wise, so the order of elements
// inside a page does not matter either.
//
// Sums and bf16 rounding: the device's reduce kernel adds two operands at a time, widening bf16
// to fp32 (exact), adding in fp32 and rounding the sum once to bf16, round-to-nearest-even
// (kernels/reduce/reduce_math.hpp, as tt-metal's packer). A chain of partial sums therefore
// rounds after every addition, and the result depends on the order the chips' values were
// added in. sum_in_order takes that order from the op (each op documents and exports it), so
// the reference is exact, not a tolerance. fp32 sums are plain IEEE fp32 additions in the same
// order. bfp8_b sums go tile by tile and block by block: both operands unpacked to fp32, added
// in fp32, the sum packed back to bfp8_b (shared exponent = the block's largest, magnitudes
// rounded to nearest even; kernels/reduce/bfp8_math.hpp states the rule), so a chain of partial
// sums re-quantises after every addition, exactly as the device's chain does.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "runtime/ccl/common/collective.hpp"

namespace cclmesh::runtime::ccl::reference {

using Bytes = std::vector<std::byte>;

// all_gather: the parts (each a `part` tensor) joined along `dim`, part 0 first. A TILE dim 2
// or 3 that is not whole 32-element tiles joins element by element instead (all_gather's
// broadcast fallback): part i's real elements land at i x the part's extent along `dim`,
// placed in tiles of four 16x16 faces (REFERENCE 7.1; face order and row-major faces inferred),
// and the result's padding is zeros. bfp8_b there: every element unpacked to fp32, placed, and
// every output block of 16 packed again with its own shared exponent (bfp8_math.hpp's rule).
Bytes concat(const std::vector<Bytes>& parts, const TensorSpec& part, std::uint32_t dim);
// The `index`-th of `count` equal pieces of `whole` along `dim` (reduce_scatter's output, an
// all_to_all chunk); ROW_MAJOR along dim 3, count equal parts of every row.
Bytes slice(const Bytes& whole, const TensorSpec& whole_spec, std::uint32_t dim, std::uint32_t count,
            std::uint32_t index);
// Element-wise sum of equally sized page images in the given order:
//   acc = parts[0]; acc = round(acc + parts[k]) for k = 1, 2, ...
// with `dtype` Bfloat16, Float32 or Bfloat8B (whole tiles; CclParamsError otherwise).
Bytes sum_in_order(const std::vector<std::span<const std::byte>>& parts, DataType dtype);

// Makes seeded bytes a bfp8_b tensor whose sums neither overflow nor underflow: every tile's
// 64 shared exponents are mapped into 2^-7 .. 2^8 (biased 120 .. 135) from their low 4 bits;
// the element bytes (sign, 7-bit magnitude) stay as they are. `tiles` is whole 1088 B tiles.
void bound_bfp8_exponents(std::span<std::byte> tiles);

}  // namespace cclmesh::runtime::ccl::reference
