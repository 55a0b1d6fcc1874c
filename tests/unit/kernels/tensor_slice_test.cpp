// Slice page iteration against a brute-force reference, and the host slicers.
#include "kernels/api/tensor_slice.hpp"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "kernels/host/slicing.hpp"

namespace cclmesh::api {
namespace {

// Reference: the worker's pages in x-fastest order over the slice, each mapped to the tensor.
std::vector<uint32_t> brute_force_pages(const CclCommandTensor& t) {
  std::vector<uint32_t> pages;
  const Shape4D& s = t.tensor_slice_shape;
  uint32_t start = flat_index(s, t.worker_start_offset_in_slice);
  uint32_t i = 0;
  for (uint32_t w = 0; w < s.w; ++w) {
    for (uint32_t z = 0; z < s.z; ++z) {
      for (uint32_t y = 0; y < s.y; ++y) {
        for (uint32_t x = 0; x < s.x; ++x, ++i) {
          if (i >= start && i < start + t.worker_pages_per_slice) {
            const Shape4D o = t.tensor_slice_offset;
            pages.push_back(x + o.x + t.tensor_shape.x * (y + o.y + t.tensor_shape.y * (z + o.z + t.tensor_shape.z * (w + o.w))));
          }
        }
      }
    }
  }
  return pages;
}

// The walker, run by run; checks that each run is contiguous and stays inside one slice row.
std::vector<uint32_t> walked_pages(const CclCommandTensor& t) {
  std::vector<uint32_t> pages;
  SliceWalker walker = make_slice_walker(t);
  while (!walker.done()) {
    const uint32_t run = walker.run_length_in_row();
    EXPECT_GE(run, 1u);
    EXPECT_LE(walker.coord.x + run, t.tensor_slice_shape.x);
    for (uint32_t k = 0; k < run; ++k) {
      pages.push_back(walker.current_page() + k);
    }
    walker.advance(run);
  }
  return pages;
}

TEST(FlatIndex, MatchesTheReferenceFormulaAndInverts) {
  const Shape4D shape{2, 3, 4, 5};
  EXPECT_EQ(flat_index(shape, {1, 2, 3, 4}), 4u + 3 * 5 + 2 * 5 * 4 + 1 * 5 * 4 * 3);
  for (uint32_t i = 0; i < volume(shape); ++i) {
    EXPECT_EQ(flat_index(shape, unflatten(shape, i)), i);
  }
  EXPECT_EQ(unflatten(Shape4D{1, 1, 0, 4}, 3), (Shape4D{0, 0, 0, 0}));  // no division by zero
}

TEST(SliceWalker, HandPickedCase) {
  // tensor 4x8 pages, slice 3x2 at (y=1, x=5), worker starts at page 1 of the slice, 4 pages:
  // slice pages (1,6) (2,5) (2,6) (3,5) -> tensor pages 14, 21, 22, 29.
  const CclCommandTensor t{{1, 1, 4, 8}, {1, 1, 3, 2}, {0, 0, 1, 5}, {0, 0, 0, 1}, 4};
  EXPECT_EQ(first_page_of_worker(t), 14u);
  EXPECT_EQ(walked_pages(t), (std::vector<uint32_t>{14, 21, 22, 29}));
  EXPECT_EQ(check_command_tensor(t), SliceCheck::OK);
}

TEST(SliceWalker, MatchesBruteForceOverManyShapesAndOffsets) {
  std::mt19937 rng(2024);
  auto draw = [&](uint32_t lo, uint32_t hi) { return std::uniform_int_distribution<uint32_t>(lo, hi)(rng); };
  int checked = 0;
  for (int iteration = 0; iteration < 400; ++iteration) {
    const Shape4D tensor{draw(1, 3), draw(1, 3), draw(1, 5), draw(1, 7)};
    const Shape4D slice{draw(1, tensor.w), draw(1, tensor.z), draw(1, tensor.y), draw(1, tensor.x)};
    const Shape4D offset{draw(0, tensor.w - slice.w), draw(0, tensor.z - slice.z), draw(0, tensor.y - slice.y),
                         draw(0, tensor.x - slice.x)};
    const auto slice_pages = static_cast<uint32_t>(volume(slice));
    const uint32_t start = draw(0, slice_pages - 1);
    const uint32_t pages = draw(0, slice_pages - start);
    // Alternate the two spellings of the worker offset: wrapped (all in x) and a coordinate.
    const Shape4D worker_offset = iteration % 2 == 0 ? Shape4D{0, 0, 0, start} : unflatten(slice, start);
    const CclCommandTensor t{tensor, slice, offset, worker_offset, pages};
    ASSERT_EQ(check_command_tensor(t), SliceCheck::OK);
    EXPECT_EQ(walked_pages(t), brute_force_pages(t)) << "iteration " << iteration;
    ++checked;
  }
  EXPECT_EQ(checked, 400);
}

TEST(SliceCheck, RejectsSlicesOutsideTheirTensor) {
  const CclCommandTensor ok{{1, 1, 4, 8}, {1, 1, 2, 2}, {0, 0, 2, 6}, {0, 0, 0, 0}, 4};
  EXPECT_EQ(check_command_tensor(ok), SliceCheck::OK);
  CclCommandTensor t = ok;
  t.tensor_slice_offset.x = 7;
  EXPECT_EQ(check_command_tensor(t), SliceCheck::SLICE_OUTSIDE_TENSOR);
  t = ok;
  t.tensor_slice_offset.y = 0xFFFFFFFF;  // overflow-safe
  EXPECT_EQ(check_command_tensor(t), SliceCheck::SLICE_OUTSIDE_TENSOR);
  t = ok;
  t.worker_pages_per_slice = 5;
  EXPECT_EQ(check_command_tensor(t), SliceCheck::WORKER_OUTSIDE_SLICE);
  t = ok;
  t.worker_start_offset_in_slice = {0, 0, 0, 1};
  EXPECT_EQ(check_command_tensor(t), SliceCheck::WORKER_OUTSIDE_SLICE);
  t = ok;
  t.tensor_shape.z = 0;
  EXPECT_EQ(check_command_tensor(t), SliceCheck::EMPTY_TENSOR);
  t = ok;
  t.tensor_shape = {0x10000, 0x10000, 1, 1};
  EXPECT_EQ(check_command_tensor(t), SliceCheck::TENSOR_TOO_LARGE);
}

TEST(Slicers, PageAlignedSlicesGiveTheFirstOnesTheRemainder) {
  const Shape4D tensor{1, 1, 4, 10};
  const std::vector<TensorSlice> slices = cmd::compute_page_aligned_slices(3, tensor, 3);
  ASSERT_EQ(slices.size(), 3u);
  EXPECT_EQ(slices[0].tensor_slice_shape, (Shape4D{1, 1, 4, 4}));
  EXPECT_EQ(slices[1].tensor_slice_shape, (Shape4D{1, 1, 4, 3}));
  EXPECT_EQ(slices[2].tensor_slice_shape, (Shape4D{1, 1, 4, 3}));
  EXPECT_EQ(slices[0].tensor_slice_offset, (Shape4D{0, 0, 0, 0}));
  EXPECT_EQ(slices[1].tensor_slice_offset, (Shape4D{0, 0, 0, 4}));
  EXPECT_EQ(slices[2].tensor_slice_offset, (Shape4D{0, 0, 0, 7}));
  for (const TensorSlice& s : slices) {
    EXPECT_EQ(s.tensor_shape, tensor);
    EXPECT_EQ(s.worker_slice_shape, s.tensor_slice_shape);
    EXPECT_EQ(s.worker_slice_offset, (Shape4D{0, 0, 0, 0}));
  }
  EXPECT_THROW(cmd::compute_page_aligned_slices(0, tensor, 3), cmd::SliceError);
  EXPECT_THROW(cmd::compute_page_aligned_slices(2, tensor, 4), cmd::SliceError);
}

TEST(Slicers, WrappedWorkerRunsCoverTheSliceExactlyOnce) {
  const Shape4D tensor{1, 2, 4, 8};
  for (uint32_t dim = 0; dim < 4; ++dim) {
    for (const TensorSlice& slice : cmd::compute_page_aligned_slices(2, tensor, dim)) {
      for (uint32_t workers : {1u, 2u, 3u, 5u, 64u}) {
        const std::vector<TensorSlice> runs =
            cmd::split_tensor_slice_across_workers_wrapped_page_aligned(slice, workers);
        ASSERT_EQ(runs.size(), workers);
        std::vector<uint32_t> covered;
        uint32_t expected_start = 0;
        for (uint32_t i = 0; i < workers; ++i) {
          const CclCommandTensor t = to_command_tensor(runs[i]);
          EXPECT_EQ(runs[i].worker_slice_offset, (Shape4D{0, 0, 0, expected_start}));
          ASSERT_EQ(check_command_tensor(t), SliceCheck::OK);
          for (uint32_t p : walked_pages(t)) {
            covered.push_back(p);
          }
          expected_start += t.worker_pages_per_slice;
        }
        const CclCommandTensor whole = to_command_tensor(slice);
        EXPECT_EQ(covered, brute_force_pages(whole)) << "dim " << dim << " workers " << workers;
        // The first (pages % workers) runs are one page longer.
        const auto pages = static_cast<uint32_t>(volume(slice.tensor_slice_shape));
        EXPECT_EQ(to_command_tensor(runs[0]).worker_pages_per_slice, pages / workers + (pages % workers ? 1 : 0));
      }
    }
  }
}

TEST(Slicers, ShapeInPages) {
  const uint32_t bf16_tensor[] = {1, 1, 64, 256};
  EXPECT_EQ(cmd::shape_in_pages(bf16_tensor, PageLayout::TILE), (Shape4D{1, 1, 2, 8}));
  EXPECT_EQ(cmd::shape_in_pages(bf16_tensor, PageLayout::ROW_MAJOR), (Shape4D{1, 1, 64, 1}));
  const uint32_t rank2[] = {33, 65};
  EXPECT_EQ(cmd::shape_in_pages(rank2, PageLayout::TILE), (Shape4D{1, 1, 2, 3}));  // padded to tiles
  const uint32_t rank5[] = {1, 1, 1, 1, 1};
  EXPECT_THROW(cmd::shape_in_pages(rank5, PageLayout::TILE), cmd::SliceError);
}

}  // namespace
}  // namespace cclmesh::api
