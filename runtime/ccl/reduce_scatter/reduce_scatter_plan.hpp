#pragma once
// What reduce_scatter.cpp resolves once per build from (params, topology) and shares with the
// algorithm builders (the ring / wrap line in reduce_scatter.cpp, the two-sided line and the
// half-way ring in two_sided_chains.cpp, the one-shot ring in one_shot.cpp): the worker's CB and
// semaphore ids, the runs of the output and their cores.
// Internal to runtime/ccl/reduce_scatter.

#include <cstdint>
#include <vector>

#include "kernels/api/tensor_slice.hpp"
#include "kernels/host/kernel_args_builder.hpp"
#include "runtime/ccl/common/ccl_common.hpp"
#include "runtime/ccl/common/collective.hpp"
#include "runtime/ccl/common/reduction_chain_cbs.hpp"
#include "runtime/ccl/common/reduction_chunks.hpp"
#include "runtime/ccl/common/row_pieces.hpp"
#include "runtime/device/buffer_layout.hpp"
#include "runtime/device/core_map.hpp"
#include "runtime/fabric/fabric_plan.hpp"

namespace cclmesh::runtime::ccl::reduce_scatter::plan {

constexpr const char* kOp = "reduce_scatter";

// The chain's CBs (reduction_chain_cbs.hpp: received partials, this chip's input, reduce out).
constexpr std::uint32_t kPartialCbId = kChainPartialCbId;
constexpr std::uint32_t kLocalCbId = kChainLocalCbId;
constexpr std::uint32_t kReducedCbId = kChainReducedCbId;
constexpr std::uint32_t kRawCbId = 3;      // raw slices straight to the writer (message 0; two-sided: position 0)
// Per-program semaphores of a worker (1..6 are its fabric connections', ccl_common.hpp).
constexpr std::uint32_t kReceiveSemaphoreIds[2] = {7, 8};
constexpr std::uint32_t kCreditSemaphoreIds[2] = {9, 10};
constexpr std::uint32_t kConsumedSemaphoreIds[2] = {11, 12};  // reader -> writer's credit stream
// Two-sided line and half-way ring: the left partial has landed in region B (per chunk), and the
// writer's sends stream has popped its last forwarded chunk (so its credit stream may write the
// result).
constexpr std::uint32_t kLeftPartialSemaphoreId = 13;
constexpr std::uint32_t kSendsDoneSemaphoreId = 14;
constexpr std::uint32_t kLeftPartialCbId = 4;  // two-sided line, half-way ring: the owner's third input

// The op's groups placed on the fabric (place_groups), and what this op works out from them.
struct Resolved : PlacedGroups {
  TensorSpec output;
  std::uint32_t page_size = 0;  // of the pages the workers move (a row piece for row pieces)
  // ROW_MAJOR along dim 3 (scattered_rows.hpp): the pieces each output row moves in (q), each
  // input row N x q. ROW_MAJOR along dims 0-2 with rows wider than a fabric payload: the pieces
  // every row moves in (q, input and output alike; rows_cut false). 0: whole pages.
  std::uint32_t row_pieces = 0;
  std::uint32_t last_piece_bytes = 0;  // dims 0-2: a row's last piece when shorter than page_size (fabric_pages)
  bool rows_cut = false;               // along dim 3: an input row holds N output rows
  // The tensors in the pages the workers move: shape_in_pages, except that x counts row pieces
  // when row_pieces is set. mid_pages: the intermediate's (two_sided, one_shot, half_way).
  api::Shape4D in_pages;
  api::Shape4D out_pages;
  api::Shape4D mid_pages;
  std::uint32_t packet_pages = 0;
  bool ring = false;
  bool two_sided = false;  // a two-sided line
  bool one_shot = false;   // the ring's one-shot direct algorithm (one_shot.hpp)
  bool half_way = false;   // the ring's half-way algorithm (half_way_ring.hpp)
  TensorSpec intermediate;  // two_sided, one_shot, half_way: the receive buffer's tensor
  // Ring: 2 per link and worker, up workers' runs first, then down workers'; wrap line: 1. Run r
  // is on plane r % num_links. Two-sided line: 2 per link and worker, the rightward chain's first,
  // then the leftward chain's on the same pages (run r and r + runs / 2 share their pages).
  // Half-way ring: as the two-sided line, its page runs' chain lengths half_way_chains().
  // One-shot: 1 per link (run l is link l's pages of every slice; its cores are
  // cores[3l .. 3l + 2], one_shot.hpp).
  std::uint32_t runs = 0;
  std::uint32_t workers_per_link = 1;  // what runs per link and direction (half-way: both sets')
  std::vector<CoreCoord> cores;      // per run
  std::vector<CoreCoord> mux_cores;  // workers_per_link > 1: per link, forward then backward
  std::vector<std::uint32_t> run_pages;
  std::vector<std::uint32_t> chunk_packets;  // per run
};

// A buffer's interpreter args as the workers address it: `layout`'s, in row pieces when the op
// moves them (N x q per input row along dim 3, else q; q per row of the output and of the
// intermediate, whose rows are output rows).
inline kargs::TensorArgs input_args(const Resolved& r, const BufferLayout& layout, const ChipCoreMap& map) {
  const kargs::TensorArgs args = layout.interpreter_args(map);
  if (r.row_pieces == 0) return args;
  return in_row_pieces(args, r.page_size, (r.rows_cut ? r.group_size : 1) * r.row_pieces, r.last_piece_bytes);
}
inline kargs::TensorArgs output_args(const Resolved& r, const BufferLayout& layout, const ChipCoreMap& map) {
  const kargs::TensorArgs args = layout.interpreter_args(map);
  return r.row_pieces == 0 ? args : in_row_pieces(args, r.page_size, r.row_pieces, r.last_piece_bytes);
}

// Where moved page `page` of a slice starts in the slice's image (its rows packed back to back,
// as the host reference holds them): page x page_size, except that rows cut along dims 0-2 in
// pieces with a shorter last one (last_piece_bytes) are that much shorter each.
inline std::uint64_t slice_image_offset(const Resolved& r, std::uint64_t page) {
  if (r.row_pieces == 0 || r.rows_cut) return page * r.page_size;
  return FabricPages{r.page_size, r.row_pieces, 0, r.last_piece_bytes}.image_offset(page);
}

inline std::uint32_t ceil_div(std::uint32_t a, std::uint32_t b) { return (a + b - 1) / b; }

// Pages [first_page, first_page + pages) of a worker's run.
inline api::TensorSlice chunk_of(const api::TensorSlice& run, std::uint32_t first_page, std::uint32_t pages) {
  api::TensorSlice c = run;
  c.worker_slice_offset = api::Shape4D{0, 0, 0, run.worker_slice_offset.x + first_page};
  c.worker_slice_shape = api::Shape4D{1, 1, 1, pages};
  return c;
}

}  // namespace cclmesh::runtime::ccl::reduce_scatter::plan
