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
// bfp8_b: a face row of 16 elements is one block with one shared exponent (reduce/bfp8_math.hpp),
// and a piece's elements land in blocks whose other elements come from elsewhere, so they cannot
// be copied as bytes. As the unpacker and packer would: each segment is unpacked to fp32 into an
// fp32 scratch tile (cleared to zeros), and once the tile is assembled every block is packed
// again with its own shared exponent (pack_bfp8_block, the reduce kernel's rule).
//
// Inputs and output are interleaved or sharded (DRAM or L1), addressed through the
// interpreter's address-generator blocks. Arguments: concat/concat_args.hpp.

#include <cstdint>

#include "kernels/api/addrgen.hpp"
#include "kernels/api/dataflow_api.hpp"
#include "kernels/api/kernel_fault.hpp"
#include "kernels/concat/concat_args.hpp"
#include "kernels/concat/tile_placement.hpp"
#include "kernels/kernels.hpp"
#include "kernels/reduce/bfp8_math.hpp"

namespace cclmesh::kernels {
namespace {

using api::KernelFaultCode;
using concat::ConcatArgs;
using concat::TilePiece;

constexpr uint32_t kZeroChunkBytes = 64;

[[noreturn]] void fail(KernelFaultCode code, uint32_t word) {
  kernel_fault(api::fault_code(code), api::kFaultNoCommand, word);
}

// The NoC address of `page` of tensor `t` whose addrgen was parsed at base 0 or at its own
// address; `base` is added (an input rank's address, or 0).
uint64_t page_noc_addr(const InterpreterTensor& t, const uint32_t* rt, uint32_t base, uint32_t page) {
  const api::PageLocation at = api::page_location(t.addrgen, page);
  const uint32_t address = base + at.address;
  if (t.addrgen.layout == api::TensorMemoryLayout::INTERLEAVED) {
    return get_bank_noc_addr(t.buffer_type == api::BufferType::DRAM, at.target, address);
  }
  if (at.target >= t.addrgen.sharded.number_of_cores) fail(KernelFaultCode::PAGE_OUTSIDE_SHARD_GRID, page);
  const uint32_t xy = rt[t.core_table_offset + at.target];
  if (t.buffer_type == api::BufferType::DRAM) {
    // DRAM shards: the table holds each shard's bank id (x), not NoC coordinates.
    return get_bank_noc_addr(true, interpreter::core_xy_x(xy), address);
  }
  return get_noc_addr(interpreter::core_xy_x(xy), interpreter::core_xy_y(xy), address);
}

void clear_tile(uint32_t address, uint32_t bytes) {
  const uint8_t zeros[kZeroChunkBytes] = {};
  for (uint32_t done = 0; done < bytes; done += kZeroChunkBytes) {
    const uint32_t chunk = bytes - done < kZeroChunkBytes ? bytes - done : kZeroChunkBytes;
    l1_write_bytes(address + done, zeros, chunk);
  }
}

// The segments of one piece: contiguous runs of at most one face row on both sides.
template <class CopySegment>
uint32_t for_each_segment(const TilePiece& p, CopySegment copy_segment) {
  uint32_t cycles = 0;
  for (uint32_t i = 0; i < p.rows; ++i) {
    for (uint32_t j = 0; j < p.cols;) {
      const uint32_t sc = p.src_col + j;
      const uint32_t dc = p.dst_col + j;
      uint32_t run = concat::face_row_run(sc);
      if (concat::face_row_run(dc) < run) run = concat::face_row_run(dc);
      if (p.cols - j < run) run = p.cols - j;
      cycles += copy_segment(concat::tile_element_index(p.src_row + i, sc),
                             concat::tile_element_index(p.dst_row + i, dc), run);
      j += run;
    }
  }
  return cycles;
}

// Copies one piece from the input tile at `src` to the output tile at `dst`; returns the
// modelled cycles.
uint32_t copy_piece(const TilePiece& p, uint32_t src, uint32_t dst, uint32_t element_bytes) {
  return for_each_segment(p, [&](uint32_t from, uint32_t to, uint32_t run) {
    const uint32_t bytes = run * element_bytes;
    l1_copy(dst + to * element_bytes, src + from * element_bytes, bytes);
    return concat::segment_cycles(bytes);
  });
}

// bfp8_b: unpacks one piece of the bfp8_b input tile at `src` to fp32 into the unpacked tile at
// `unpacked` (4 B per element, face layout); returns the modelled cycles (as a copy of the fp32
// words written).
uint32_t unpack_piece(const TilePiece& p, uint32_t src, uint32_t unpacked) {
  return for_each_segment(p, [&](uint32_t from, uint32_t to, uint32_t run) {
    // A segment lies inside one face row of the source: one block, one shared exponent.
    uint8_t exponent = 0;
    l1_read_bytes(src + from / kBfp8BlockValues, &exponent, 1);
    uint8_t elements[kBfp8BlockValues];
    l1_read_bytes(src + kBfp8ExponentBytes + from, elements, run);
    uint32_t values[kBfp8BlockValues];
    for (uint32_t k = 0; k < run; ++k) values[k] = bfp8_element_to_fp32_bits(elements[k], exponent);
    l1_write_bytes(unpacked + to * 4, values, run * 4);
    return concat::segment_cycles(run * 4);
  });
}

// bfp8_b: packs the unpacked tile into the bfp8_b tile at `dst`, block by block; returns the
// modelled cycles.
uint32_t pack_tile(uint32_t unpacked, uint32_t dst) {
  for (uint32_t k = 0; k < kBfp8BlocksPerTile; ++k) {
    uint32_t values[kBfp8BlockValues];
    l1_read_bytes(unpacked + k * kBfp8BlockValues * 4, values, kBfp8BlockValues * 4);
    uint8_t exponent = 0;
    uint8_t elements[kBfp8BlockValues];
    pack_bfp8_block(values, &exponent, elements);
    l1_write_bytes(dst + k, &exponent, 1);
    l1_write_bytes(dst + kBfp8ExponentBytes + k * kBfp8BlockValues, elements, kBfp8BlockValues);
  }
  return concat::pack_tile_cycles();
}

}  // namespace
}  // namespace cclmesh::kernels

void kernel_main_concat() {
  using namespace cclmesh::kernels;
  const uint32_t in_cb = get_compile_time_arg_val(static_cast<int>(concat::kCtInCbId));
  const uint32_t out_cb = get_compile_time_arg_val(static_cast<int>(concat::kCtOutCbId));
  const uint32_t element_bytes = get_compile_time_arg_val(static_cast<int>(concat::kCtElementBytes));
  const uint32_t unpack_cb = get_compile_time_arg_val(static_cast<int>(concat::kCtUnpackCbId));
  const uint32_t* rt = get_arg_ptr(0);
  ConcatArgs a;
  const uint32_t bad = concat::parse_concat_args(rt, get_num_args(), element_bytes, a);
  if (bad != concat::kArgsOk) fail(KernelFaultCode::BAD_ARGS, bad);
  if (get_cb_page_size(in_cb) < a.tile_bytes || get_cb_page_size(out_cb) < a.tile_bytes) {
    fail(KernelFaultCode::BAD_ARGS, concat::kCtInCbId);
  }
  const bool bfp8 = element_bytes == concat::kBfp8ElementBytes;
  if (bfp8 && get_cb_page_size(unpack_cb) < concat::kUnpackedTileBytes) {
    fail(KernelFaultCode::BAD_ARGS, concat::kCtUnpackCbId);
  }
  const uint32_t in_stride = get_cb_page_size(in_cb);
  const uint32_t in_base = get_write_ptr(in_cb);
  const uint32_t out_tile = get_write_ptr(out_cb);
  const uint32_t unpacked = bfp8 ? get_write_ptr(unpack_cb) : 0;
  // What is assembled in place: the output tile, or the fp32 tile bfp8_b packs from.
  const uint32_t assembly = bfp8 ? unpacked : out_tile;
  const uint32_t assembly_bytes = bfp8 ? concat::kUnpackedTileBytes : a.tile_bytes;

  for (uint32_t t = a.first_tile; t < a.first_tile + a.num_tiles; ++t) {
    noc_async_writes_flushed();  // the previous tile has left the scratch
    clear_tile(assembly, assembly_bytes);
    uint32_t cycles = concat::clear_cycles(assembly_bytes);
    concat::PieceCursor cursor(a.geometry, t);
    TilePiece batch[concat::kInputBatchTiles];
    bool more = true;
    while (more) {
      uint32_t count = 0;
      while (count < concat::kInputBatchTiles && (more = cursor.next(batch[count]))) {
        const TilePiece& p = batch[count];
        noc_async_read(page_noc_addr(a.in, rt, a.in_addresses[p.rank], p.src_tile), in_base + count * in_stride,
                       a.tile_bytes);
        ++count;
      }
      noc_async_read_barrier();
      for (uint32_t k = 0; k < count; ++k) {
        const uint32_t src = in_base + k * in_stride;
        cycles += bfp8 ? unpack_piece(batch[k], src, unpacked) : copy_piece(batch[k], src, out_tile, element_bytes);
      }
    }
    if (bfp8) cycles += pack_tile(unpacked, out_tile);
    spend_cycles(cycles);
    noc_async_write(out_tile, page_noc_addr(a.out, rt, 0, t), a.tile_bytes);
  }
  noc_async_write_barrier();
}
