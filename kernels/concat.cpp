// Concat: joins N tile-padded TILE tensors (the all_broadcast's outputs on this chip, one per
// rank) along dim 2 or 3 into one TILE tensor, with each rank's real elements at their place and
// zeros in the result's padding (concat/tile_placement.hpp). tt-metal runs this as ttnn.concat
// after all_broadcast_async when an all_gather's gather dim is not whole tiles (REFERENCE 7.6).
//
// Per output tile of this core's run: clear the output scratch tile, read the input tiles that
// hold its pieces (in batches of the input CB's pages, one read barrier per batch), copy each
// piece face-row segment by face-row segment (contiguous runs of at most 16 elements on both
// sides), charge the copy's modelled cycles (tile_placement.hpp), then write the tile to the
// output and let the write drain before the scratch tile is reused. The CBs are plain scratch L1.
//
// Arguments: concat/concat_args.hpp.

#include <cstdint>

#include "kernels/api/addrgen.hpp"
#include "kernels/api/dataflow_api.hpp"
#include "kernels/api/kernel_fault.hpp"
#include "kernels/concat/concat_args.hpp"
#include "kernels/concat/tile_placement.hpp"
#include "kernels/kernels.hpp"

namespace cclmesh::kernels {
namespace {

using concat::ConcatArgs;
using concat::TilePiece;

constexpr uint32_t kZeroChunkBytes = 64;

uint64_t page_noc_addr(bool dram, uint32_t address, uint32_t banks, uint32_t aligned_page, uint32_t page) {
  const api::InterleavedAddrGenParams params{address, banks, aligned_page};
  const api::PageLocation at = api::interleaved_page_location(params, page);
  return get_bank_noc_addr(dram, at.target, at.address);
}

void clear_tile(uint32_t address, uint32_t bytes) {
  const uint8_t zeros[kZeroChunkBytes] = {};
  for (uint32_t done = 0; done < bytes; done += kZeroChunkBytes) l1_write_bytes(address + done, zeros, kZeroChunkBytes);
}

// Copies one piece from the input tile at `src` to the output tile at `dst`; returns the
// modelled cycles.
uint32_t copy_piece(const TilePiece& p, uint32_t src, uint32_t dst, uint32_t element_bytes) {
  uint32_t cycles = 0;
  for (uint32_t i = 0; i < p.rows; ++i) {
    for (uint32_t j = 0; j < p.cols;) {
      const uint32_t sr = p.src_row + i;
      const uint32_t sc = p.src_col + j;
      const uint32_t dr = p.dst_row + i;
      const uint32_t dc = p.dst_col + j;
      uint32_t run = concat::face_row_run(sc);
      if (concat::face_row_run(dc) < run) run = concat::face_row_run(dc);
      if (p.cols - j < run) run = p.cols - j;
      const uint32_t bytes = run * element_bytes;
      l1_copy(dst + concat::tile_element_index(dr, dc) * element_bytes,
              src + concat::tile_element_index(sr, sc) * element_bytes, bytes);
      cycles += concat::segment_cycles(bytes);
      j += run;
    }
  }
  return cycles;
}

}  // namespace
}  // namespace cclmesh::kernels

void kernel_main_concat() {
  using namespace cclmesh::kernels;
  using cclmesh::api::KernelFaultCode;
  const uint32_t in_cb = get_compile_time_arg_val(static_cast<int>(concat::kCtInCbId));
  const uint32_t out_cb = get_compile_time_arg_val(static_cast<int>(concat::kCtOutCbId));
  const uint32_t element_bytes = get_compile_time_arg_val(static_cast<int>(concat::kCtElementBytes));
  ConcatArgs a;
  const uint32_t bad = concat::parse_concat_args(get_arg_ptr(0), get_num_args(), element_bytes, a);
  if (bad != concat::kArgsOk) kernel_fault(cclmesh::api::fault_code(KernelFaultCode::BAD_ARGS), cclmesh::api::kFaultNoCommand, bad);
  if (get_cb_page_size(in_cb) < a.tile_bytes || get_cb_page_size(out_cb) < a.tile_bytes) {
    kernel_fault(cclmesh::api::fault_code(KernelFaultCode::BAD_ARGS), cclmesh::api::kFaultNoCommand, concat::kCtInCbId);
  }
  const uint32_t in_stride = get_cb_page_size(in_cb);
  const uint32_t in_base = get_write_ptr(in_cb);
  const uint32_t out_tile = get_write_ptr(out_cb);

  for (uint32_t t = a.first_tile; t < a.first_tile + a.num_tiles; ++t) {
    noc_async_writes_flushed();  // the previous tile has left the scratch
    clear_tile(out_tile, a.tile_bytes);
    uint32_t cycles = concat::clear_cycles(a.tile_bytes);
    concat::PieceCursor cursor(a.geometry, t);
    TilePiece batch[concat::kInputBatchTiles];
    bool more = true;
    while (more) {
      uint32_t count = 0;
      while (count < concat::kInputBatchTiles && (more = cursor.next(batch[count]))) {
        const TilePiece& p = batch[count];
        noc_async_read(page_noc_addr(a.in_dram, a.in_addresses[p.rank], a.in_banks, a.in_aligned_page, p.src_tile),
                       in_base + count * in_stride, a.tile_bytes);
        ++count;
      }
      noc_async_read_barrier();
      for (uint32_t k = 0; k < count; ++k) cycles += copy_piece(batch[k], in_base + k * in_stride, out_tile, element_bytes);
    }
    spend_cycles(cycles);
    noc_async_write(out_tile, page_noc_addr(a.out_dram, a.out_address, a.out_banks, a.out_aligned_page, t), a.tile_bytes);
  }
  noc_async_write_barrier();
}
