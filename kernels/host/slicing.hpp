#pragma once
// Host slicers (REFERENCE §4.9, tt-metal ccl_command_stream_builders): how a tensor is cut
// into per-chip slices and a slice into per-worker runs. Both return several slices, hence
// host-side; walking a slice is device code (kernels/api/tensor_slice.hpp).

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/api/addrgen.hpp"
#include "kernels/api/tensor_slice.hpp"

namespace cclmesh::cmd {

class SliceError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

constexpr uint32_t kTileHeight = 32;
constexpr uint32_t kTileWidth = 32;

// A logical shape (rank 1..4, elements, outermost first) as (w, z, y, x) in pages: right-
// aligned, missing outer dims are 1. TILE: y and x become tile counts (rounded up: shapes are
// padded to whole tiles). ROW_MAJOR: a page is one row, so x becomes 1.
api::Shape4D shape_in_pages(std::span<const uint32_t> logical_shape, api::PageLayout layout);

// Splits the tensor evenly along `dim` (0 = w, 1 = z, 2 = y, 3 = x) into `num_slices` slices;
// the first (size % n) slices get one page more. Every slice keeps the full tensor shape, and
// its worker slice is the whole slice at offset 0.
std::vector<api::TensorSlice> compute_page_aligned_slices(uint32_t num_slices, const api::Shape4D& tensor_shape_in_pages,
                                                          uint32_t dim);

// Splits a slice's pages into `num_workers` contiguous runs, wrapped over the slice in
// x-fastest order: worker i gets worker_slice_shape = (1,1,1,its pages) and
// worker_slice_offset = (0,0,0,its flat start); the first (pages % n) workers get one more.
std::vector<api::TensorSlice> split_tensor_slice_across_workers_wrapped_page_aligned(const api::TensorSlice& slice,
                                                                                     uint32_t num_workers);

}  // namespace cclmesh::cmd
