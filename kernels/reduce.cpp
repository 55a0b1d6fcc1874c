// Reduce: out = in0 + in1, page by page (optionally, for the last blocks, (in0 + in1) + in2, or
// over several passes ((in0 + in1) + in1') + ... with the running sums kept in the out CB), for
// the reduce-type collectives (REFERENCE §7.5):
// fp32, bf16 (reduce/reduce_math.hpp) and bfp8_b tiles (reduce/bfp8_math.hpp).
// It consumes blocks of `pages_per_block` CB pages from both inputs and produces the same on
// the output, so it pairs with interpreter streams that push and pop whole packets. Data moves
// through L1 with l1_read_bytes / l1_write_bytes in bounded stack chunks; the arithmetic's
// time is charged with spend_cycles (reduce/reduce_math.hpp has the figure and why).
//
// Arguments: kernel_args.hpp (namespace reduce).

#include <cstdint>

#include "kernels/api/dataflow_api.hpp"
#include "kernels/api/kernel_fault.hpp"
#include "kernels/kernel_args.hpp"
#include "kernels/kernels.hpp"
#include "kernels/reduce/bfp8_math.hpp"
#include "kernels/reduce/reduce_math.hpp"

namespace cclmesh::kernels {
namespace {

constexpr uint32_t kChunkBytes = 256;

[[noreturn]] void fail(api::KernelFaultCode code, uint32_t detail) {
  kernel_fault(api::fault_code(code), api::kFaultNoCommand, detail);
}

void add_bytes(uint32_t a_address, uint32_t b_address, uint32_t out_address, uint32_t bytes, uint32_t format) {
  uint32_t a[kChunkBytes / 4];
  uint32_t b[kChunkBytes / 4];
  uint32_t out[kChunkBytes / 4] = {};
  for (uint32_t done = 0; done < bytes; done += kChunkBytes) {
    const uint32_t n = bytes - done < kChunkBytes ? bytes - done : kChunkBytes;
    l1_read_bytes(a_address + done, a, n);
    l1_read_bytes(b_address + done, b, n);
    if (format == reduce::kDataFormatFloat32) {
      add_fp32(a, b, out, n / 4);
    } else {
      add_bf16_packed(a, b, out, n / 2);
    }
    l1_write_bytes(out_address + done, out, n);
  }
}

// One bfp8_b tile: the exponent sections of both operands, then their element bytes in runs
// of whole blocks, so the stack holds no more than a chunk of each.
void add_bfp8_tile_in_l1(uint32_t a_address, uint32_t b_address, uint32_t out_address) {
  constexpr uint32_t kBlocksPerChunk = kChunkBytes / kBfp8BlockValues;
  uint8_t exponents_a[kBfp8ExponentBytes];
  uint8_t exponents_b[kBfp8ExponentBytes];
  uint8_t exponents_out[kBfp8ExponentBytes];
  uint8_t a[kChunkBytes];
  uint8_t b[kChunkBytes];
  uint8_t out[kChunkBytes];
  l1_read_bytes(a_address, exponents_a, kBfp8ExponentBytes);
  l1_read_bytes(b_address, exponents_b, kBfp8ExponentBytes);
  for (uint32_t first = 0; first < kBfp8BlocksPerTile; first += kBlocksPerChunk) {
    const uint32_t offset = kBfp8ExponentBytes + first * kBfp8BlockValues;
    l1_read_bytes(a_address + offset, a, kChunkBytes);
    l1_read_bytes(b_address + offset, b, kChunkBytes);
    for (uint32_t k = 0; k < kBlocksPerChunk; ++k) {
      const uint32_t block = first + k;
      add_bfp8_block(exponents_a[block], a + k * kBfp8BlockValues, exponents_b[block], b + k * kBfp8BlockValues,
                     exponents_out + block, out + k * kBfp8BlockValues);
    }
    l1_write_bytes(out_address + offset, out, kChunkBytes);
  }
  l1_write_bytes(out_address, exponents_out, kBfp8ExponentBytes);
}

void add_page(uint32_t a_address, uint32_t b_address, uint32_t out_address, uint32_t bytes, uint32_t format) {
  if (format != reduce::kDataFormatBfp8B) {
    add_bytes(a_address, b_address, out_address, bytes, format);
    return;
  }
  for (uint32_t tile = 0; tile < bytes; tile += kBfp8TileBytes) {
    add_bfp8_tile_in_l1(a_address + tile, b_address + tile, out_address + tile);
  }
}

// The unit a page must be a whole number of: an element, or a bfp8_b tile.
uint32_t format_unit_bytes(uint32_t format) {
  switch (format) {
    case reduce::kDataFormatFloat32: return 4;
    case reduce::kDataFormatBfp8B: return kBfp8TileBytes;
    default: return 2;
  }
}

}  // namespace
}  // namespace cclmesh::kernels

void kernel_main_reduce() {
  using namespace cclmesh::kernels;
  using cclmesh::api::KernelFaultCode;
  const auto in0 = static_cast<int32_t>(get_compile_time_arg_val(static_cast<int>(reduce::kCtIn0CbId)));
  const auto in1 = static_cast<int32_t>(get_compile_time_arg_val(static_cast<int>(reduce::kCtIn1CbId)));
  const auto out = static_cast<int32_t>(get_compile_time_arg_val(static_cast<int>(reduce::kCtOutCbId)));
  const uint32_t format = get_compile_time_arg_val(static_cast<int>(reduce::kCtDataFormat));
  if (format != reduce::kDataFormatFloat32 && format != reduce::kDataFormatFloat16B &&
      format != reduce::kDataFormatBfp8B) {
    fail(KernelFaultCode::UNSUPPORTED_DATA_FORMAT, format);
  }
  if (get_num_args() < reduce::kNumRuntimeArgs) {
    fail(KernelFaultCode::BAD_ARGS, get_num_args());
  }
  const uint32_t num_blocks = get_arg_val<uint32_t>(static_cast<int>(reduce::kRtNumBlocks));
  const uint32_t pages_per_block = get_arg_val<uint32_t>(static_cast<int>(reduce::kRtPagesPerBlock));
  const uint32_t page_bytes = get_cb_page_size(static_cast<uint32_t>(out));
  if (pages_per_block == 0) {
    fail(KernelFaultCode::BAD_ARGS, reduce::kRtPagesPerBlock);
  }
  if (page_bytes % format_unit_bytes(format) != 0 || get_cb_page_size(static_cast<uint32_t>(in0)) < page_bytes ||
      get_cb_page_size(static_cast<uint32_t>(in1)) < page_bytes) {
    fail(KernelFaultCode::BAD_ARGS, reduce::kCtOutCbId);
  }
  // The optional third input: the last in2_blocks blocks add it to the sum of the first two.
  const bool has_in2 = get_num_args() >= reduce::kNumRuntimeArgsWithIn2;
  const auto in2 = has_in2 ? static_cast<int32_t>(get_arg_val<uint32_t>(static_cast<int>(reduce::kRtIn2CbId))) : 0;
  const uint32_t in2_blocks = has_in2 ? get_arg_val<uint32_t>(static_cast<int>(reduce::kRtIn2Blocks)) : 0;
  if (in2_blocks > num_blocks || (in2_blocks != 0 && get_cb_page_size(static_cast<uint32_t>(in2)) < page_bytes)) {
    fail(KernelFaultCode::BAD_ARGS, reduce::kRtIn2Blocks);
  }
  const uint32_t passes =
      get_num_args() >= reduce::kNumRuntimeArgsWithPasses ? get_arg_val<uint32_t>(static_cast<int>(reduce::kRtPasses)) : 1;
  if (passes == 0 || (passes > 1 && in2_blocks != 0)) {
    fail(KernelFaultCode::BAD_ARGS, reduce::kRtPasses);
  }
  const uint32_t in0_stride = get_cb_page_size(static_cast<uint32_t>(in0));
  const uint32_t in1_stride = get_cb_page_size(static_cast<uint32_t>(in1));
  const uint32_t in2_stride = in2_blocks != 0 ? get_cb_page_size(static_cast<uint32_t>(in2)) : 0;
  const auto pages = static_cast<int32_t>(pages_per_block);
  if (passes > 1) {
    // The running sums stay in the out CB: every block reserved at once, each pushed when the
    // last pass has added to it.
    cb_reserve_back(out, static_cast<int32_t>(num_blocks * pages_per_block));
    const uint32_t sums = get_write_ptr(static_cast<uint32_t>(out));
    for (uint32_t pass = 0; pass < passes; ++pass) {
      for (uint32_t block = 0; block < num_blocks; ++block) {
        const uint32_t o = sums + block * pages_per_block * page_bytes;
        if (pass == 0) cb_wait_front(in0, pages);
        cb_wait_front(in1, pages);
        const uint32_t a = pass == 0 ? get_read_ptr(static_cast<uint32_t>(in0)) : o;
        const uint32_t a_stride = pass == 0 ? in0_stride : page_bytes;
        const uint32_t b = get_read_ptr(static_cast<uint32_t>(in1));
        // In place after the first pass: add_page reads both operands of a chunk before writing.
        for (uint32_t p = 0; p < pages_per_block; ++p) {
          add_page(a + p * a_stride, b + p * in1_stride, o + p * page_bytes, page_bytes, format);
        }
        spend_cycles(reduce_cycles(pages_per_block * page_bytes));
        cb_pop_front(in1, pages);
        if (pass == 0) cb_pop_front(in0, pages);
        if (pass + 1 == passes) cb_push_back(out, pages);
      }
    }
    return;
  }
  for (uint32_t block = 0; block < num_blocks; ++block) {
    const bool adds_in2 = block >= num_blocks - in2_blocks;
    cb_wait_front(in0, pages);
    cb_wait_front(in1, pages);
    if (adds_in2) cb_wait_front(in2, pages);
    cb_reserve_back(out, pages);
    const uint32_t a = get_read_ptr(static_cast<uint32_t>(in0));
    const uint32_t b = get_read_ptr(static_cast<uint32_t>(in1));
    const uint32_t o = get_write_ptr(static_cast<uint32_t>(out));
    for (uint32_t p = 0; p < pages_per_block; ++p) {
      add_page(a + p * in0_stride, b + p * in1_stride, o + p * page_bytes, page_bytes, format);
    }
    if (adds_in2) {
      // In place: add_page reads both operands of a chunk before writing its sums.
      const uint32_t c = get_read_ptr(static_cast<uint32_t>(in2));
      for (uint32_t p = 0; p < pages_per_block; ++p) {
        add_page(o + p * page_bytes, c + p * in2_stride, o + p * page_bytes, page_bytes, format);
      }
    }
    spend_cycles(reduce_cycles((adds_in2 ? 2 : 1) * pages_per_block * page_bytes));
    cb_push_back(out, pages);
    cb_pop_front(in0, pages);
    cb_pop_front(in1, pages);
    if (adds_in2) cb_pop_front(in2, pages);
  }
}
