#pragma once
// Page iteration over tensor slices (REFERENCE §4.2, §4.9). Shapes are in pages, (w, z, y, x),
// x fastest. A worker owns a run of `worker_pages_per_slice` pages that starts at
// `worker_start_offset_in_slice` and wraps over the slice in x-fastest order; walking it steps
// the tensor's flat page index by 1 inside a slice row and jumps over the pages outside the
// slice at the end of each row, plane and volume.
//
// Device-clean: <cstdint> only; all arithmetic in uint32 pages except bounds checks (uint64).

#include <cstdint>

#include "kernels/api/ccl_command.hpp"

namespace cclmesh::api {

// The host's view of one worker's share of a tensor (tt-metal TensorSlice v2).
struct TensorSlice {
  Shape4D tensor_shape;
  Shape4D tensor_slice_shape;
  Shape4D tensor_slice_offset;
  Shape4D worker_slice_shape;
  Shape4D worker_slice_offset;
};
static_assert(sizeof(TensorSlice) == 80, "TensorSlice is five Shape4Ds");

constexpr bool operator==(const TensorSlice& a, const TensorSlice& b) {
  return a.tensor_shape == b.tensor_shape && a.tensor_slice_shape == b.tensor_slice_shape &&
         a.tensor_slice_offset == b.tensor_slice_offset && a.worker_slice_shape == b.worker_slice_shape &&
         a.worker_slice_offset == b.worker_slice_offset;
}
constexpr bool operator!=(const TensorSlice& a, const TensorSlice& b) { return !(a == b); }

constexpr uint64_t volume(const Shape4D& s) { return uint64_t{s.w} * s.z * s.y * s.x; }

constexpr Shape4D operator+(const Shape4D& a, const Shape4D& b) {
  return Shape4D{a.w + b.w, a.z + b.z, a.y + b.y, a.x + b.x};
}

// x + y·X + z·X·Y + w·X·Y·Z
constexpr uint32_t flat_index(const Shape4D& shape, const Shape4D& coord) {
  return coord.x + shape.x * (coord.y + shape.y * (coord.z + shape.z * coord.w));
}

// Inverse of flat_index for flat < volume(shape). A shape with a zero dimension has no pages;
// it yields the origin instead of dividing by zero.
constexpr Shape4D unflatten(const Shape4D& shape, uint32_t flat) {
  if (shape.x == 0 || shape.y == 0 || shape.z == 0) {
    return Shape4D{0, 0, 0, 0};
  }
  const uint32_t x = flat % shape.x;
  flat /= shape.x;
  const uint32_t y = flat % shape.y;
  flat /= shape.y;
  const uint32_t z = flat % shape.z;
  return Shape4D{flat / shape.z, z, y, x};
}

// Host slice -> the device view that SET_FULL_TENSOR_SLICE_SPEC_IN_PAGES carries. The worker's
// run is worker_slice_shape's page count, starting at worker_slice_offset inside the slice.
constexpr CclCommandTensor to_command_tensor(const TensorSlice& s) {
  return CclCommandTensor{s.tensor_shape, s.tensor_slice_shape, s.tensor_slice_offset, s.worker_slice_offset,
                          static_cast<uint32_t>(volume(s.worker_slice_shape))};
}

// The worker's first page as a coordinate inside the slice. The offset is read as a flat
// index over the slice (wrapped slicers put it all in x), then unflattened.
constexpr Shape4D worker_start_coord_in_slice(const CclCommandTensor& t) {
  return unflatten(t.tensor_slice_shape, flat_index(t.tensor_slice_shape, t.worker_start_offset_in_slice));
}

// flat_index(tensor_shape, slice_offset + unflatten(slice_shape, worker_start_offset))
constexpr uint32_t first_page_of_worker(const CclCommandTensor& t) {
  return flat_index(t.tensor_shape, t.tensor_slice_offset + worker_start_coord_in_slice(t));
}

enum class SliceCheck : uint8_t {
  OK,
  EMPTY_TENSOR,           // a tensor dimension is zero
  TENSOR_TOO_LARGE,       // more than 2^32 - 1 pages: page ids are 32-bit
  SLICE_OUTSIDE_TENSOR,   // slice_offset + slice_shape exceeds tensor_shape in some dimension
  WORKER_OUTSIDE_SLICE,   // the worker's run does not fit in the slice
};

constexpr const char* slice_check_name(SliceCheck c) {
  switch (c) {
    case SliceCheck::OK:
      return "OK";
    case SliceCheck::EMPTY_TENSOR:
      return "EMPTY_TENSOR";
    case SliceCheck::TENSOR_TOO_LARGE:
      return "TENSOR_TOO_LARGE";
    case SliceCheck::SLICE_OUTSIDE_TENSOR:
      return "SLICE_OUTSIDE_TENSOR";
    case SliceCheck::WORKER_OUTSIDE_SLICE:
      return "WORKER_OUTSIDE_SLICE";
  }
  return "UNKNOWN";
}

// The bounds a slice must satisfy before anything walks it (the interpreter's "slice outside
// the tensor" error). Overflow-safe: sums are taken in 64 bits.
constexpr SliceCheck check_command_tensor(const CclCommandTensor& t) {
  const Shape4D& ts = t.tensor_shape;
  if (volume(ts) == 0) {
    return SliceCheck::EMPTY_TENSOR;
  }
  if (volume(ts) > 0xFFFFFFFFull) {
    return SliceCheck::TENSOR_TOO_LARGE;
  }
  const Shape4D& ss = t.tensor_slice_shape;
  const Shape4D& so = t.tensor_slice_offset;
  if (uint64_t{so.w} + ss.w > ts.w || uint64_t{so.z} + ss.z > ts.z || uint64_t{so.y} + ss.y > ts.y ||
      uint64_t{so.x} + ss.x > ts.x) {
    return SliceCheck::SLICE_OUTSIDE_TENSOR;
  }
  if (t.worker_pages_per_slice == 0) {
    return SliceCheck::OK;
  }
  const Shape4D& wo = t.worker_start_offset_in_slice;
  const uint64_t start = wo.x + uint64_t{ss.x} * (wo.y + uint64_t{ss.y} * (wo.z + uint64_t{ss.z} * wo.w));
  if (start + t.worker_pages_per_slice > volume(ss)) {
    return SliceCheck::WORKER_OUTSIDE_SLICE;
  }
  return SliceCheck::OK;
}

// Walks a worker's run over its slice. Only valid for a tensor that passes
// check_command_tensor. A run of contiguous tensor pages never crosses a slice row; the
// address generator may bound it further.
struct SliceWalker {
  Shape4D tensor_shape;
  Shape4D slice_shape;
  Shape4D coord;        // position inside the slice
  uint32_t page_id;     // flat page index in the tensor
  uint32_t pages_left;  // of the worker's run

  constexpr bool done() const { return pages_left == 0; }
  constexpr uint32_t current_page() const { return page_id; }

  // Pages from here to the end of the slice row, capped by the run.
  constexpr uint32_t run_length_in_row() const {
    const uint32_t row_left = slice_shape.x - coord.x;
    return row_left < pages_left ? row_left : pages_left;
  }

  // Steps over n pages, n <= run_length_in_row() (larger n is clamped).
  constexpr void advance(uint32_t n) {
    const uint32_t limit = run_length_in_row();
    if (n > limit) {
      n = limit;
    }
    coord.x += n;
    page_id += n;
    pages_left -= n;
    if (coord.x < slice_shape.x) {
      return;
    }
    coord.x = 0;
    coord.y += 1;
    page_id += tensor_shape.x - slice_shape.x;
    if (coord.y < slice_shape.y) {
      return;
    }
    coord.y = 0;
    coord.z += 1;
    page_id += (tensor_shape.y - slice_shape.y) * tensor_shape.x;
    if (coord.z < slice_shape.z) {
      return;
    }
    coord.z = 0;
    coord.w += 1;
    page_id += (tensor_shape.z - slice_shape.z) * tensor_shape.y * tensor_shape.x;
  }
};

constexpr SliceWalker make_slice_walker(const CclCommandTensor& t) {
  return SliceWalker{t.tensor_shape, t.tensor_slice_shape, worker_start_coord_in_slice(t), first_page_of_worker(t),
                     t.worker_pages_per_slice};
}

}  // namespace cclmesh::api
