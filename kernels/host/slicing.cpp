#include "kernels/host/slicing.hpp"

#include <fmt/format.h>

#include <array>

namespace cclmesh::cmd {
namespace {

uint32_t& dim_ref(api::Shape4D& s, uint32_t dim) {
  switch (dim) {
    case 0:
      return s.w;
    case 1:
      return s.z;
    case 2:
      return s.y;
    default:
      return s.x;
  }
}

uint32_t ceil_div(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

}  // namespace

api::Shape4D shape_in_pages(std::span<const uint32_t> logical_shape, api::PageLayout layout) {
  if (logical_shape.empty() || logical_shape.size() > 4) {
    throw SliceError(fmt::format("tensor shape: rank = {}, expected 1..4", logical_shape.size()));
  }
  std::array<uint32_t, 4> wzyx{1, 1, 1, 1};
  const std::size_t first = 4 - logical_shape.size();
  for (std::size_t i = 0; i < logical_shape.size(); ++i) {
    if (logical_shape[i] == 0) {
      throw SliceError(fmt::format("tensor shape: dimension {} = 0, expected >= 1", i));
    }
    wzyx[first + i] = logical_shape[i];
  }
  api::Shape4D pages{wzyx[0], wzyx[1], wzyx[2], wzyx[3]};
  if (layout == api::PageLayout::TILE) {
    pages.y = ceil_div(pages.y, kTileHeight);
    pages.x = ceil_div(pages.x, kTileWidth);
  } else {
    pages.x = 1;
  }
  return pages;
}

std::vector<api::TensorSlice> compute_page_aligned_slices(uint32_t num_slices, const api::Shape4D& tensor_shape_in_pages,
                                                          uint32_t dim) {
  if (num_slices == 0) {
    throw SliceError("compute_page_aligned_slices: num_slices = 0, expected >= 1");
  }
  if (dim > 3) {
    throw SliceError(fmt::format("compute_page_aligned_slices: dim = {}, expected 0..3 (w, z, y, x)", dim));
  }
  api::Shape4D tensor = tensor_shape_in_pages;
  const uint32_t size = dim_ref(tensor, dim);
  const uint32_t base = size / num_slices;
  const uint32_t extra = size % num_slices;
  std::vector<api::TensorSlice> slices;
  slices.reserve(num_slices);
  uint32_t offset = 0;
  for (uint32_t i = 0; i < num_slices; ++i) {
    api::TensorSlice s{};
    s.tensor_shape = tensor;
    s.tensor_slice_shape = tensor;
    dim_ref(s.tensor_slice_shape, dim) = base + (i < extra ? 1 : 0);
    s.tensor_slice_offset = api::Shape4D{0, 0, 0, 0};
    dim_ref(s.tensor_slice_offset, dim) = offset;
    s.worker_slice_shape = s.tensor_slice_shape;
    s.worker_slice_offset = api::Shape4D{0, 0, 0, 0};
    offset += dim_ref(s.tensor_slice_shape, dim);
    slices.push_back(s);
  }
  return slices;
}

std::vector<api::TensorSlice> split_tensor_slice_across_workers_wrapped_page_aligned(const api::TensorSlice& slice,
                                                                                     uint32_t num_workers) {
  if (num_workers == 0) {
    throw SliceError("split_tensor_slice_across_workers_wrapped_page_aligned: num_workers = 0, expected >= 1");
  }
  const uint64_t pages = api::volume(slice.tensor_slice_shape);
  if (pages > 0xFFFFFFFFull) {
    throw SliceError(fmt::format("split_tensor_slice_across_workers_wrapped_page_aligned: slice has {} pages, "
                                 "expected < 2^32",
                                 pages));
  }
  const auto total = static_cast<uint32_t>(pages);
  const uint32_t base = total / num_workers;
  const uint32_t extra = total % num_workers;
  std::vector<api::TensorSlice> workers;
  workers.reserve(num_workers);
  uint32_t start = 0;
  for (uint32_t i = 0; i < num_workers; ++i) {
    api::TensorSlice w = slice;
    const uint32_t n = base + (i < extra ? 1 : 0);
    w.worker_slice_shape = api::Shape4D{1, 1, 1, n};
    w.worker_slice_offset = api::Shape4D{0, 0, 0, start};
    start += n;
    workers.push_back(w);
  }
  return workers;
}

}  // namespace cclmesh::cmd
