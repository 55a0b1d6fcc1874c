#pragma once
// Address generators (REFERENCE §4.10, §7.2): where page i of a tensor lives. Pure functions of
// small parameter structs, shared by the device kernels, the simulator's memory model and the
// runtime's buffers, so all three agree on every byte's home.
//
// A lookup returns the target (bank index for interleaved, core index for sharded), the
// page's index inside that target, its local address, and how many pages from it on are
// contiguous in that target's memory. Mapping a bank or core index to NoC x, y is the caller's
// table (the bank -> core table, or the sharded core table passed in runtime args).
//
// Device-clean: <cstdint> only.

#include <cstdint>

namespace cclmesh::api {

// Numeric values follow tt-metal's enums (TensorMemoryLayout, BufferType, Layout), as the
// interpreter's compile-time args carry them (REFERENCE §4.7). Value 1 of TensorMemoryLayout
// is tt-metal's retired SINGLE_BANK.
enum class TensorMemoryLayout : uint8_t {
  INTERLEAVED = 0,
  HEIGHT_SHARDED = 2,
  WIDTH_SHARDED = 3,
  BLOCK_SHARDED = 4,
};
enum class BufferType : uint8_t { DRAM = 0, L1 = 1 };
enum class PageLayout : uint8_t { ROW_MAJOR = 0, TILE = 1 };

constexpr uint32_t align_up(uint32_t value, uint32_t alignment) {
  return alignment == 0 ? value : (value + alignment - 1) / alignment * alignment;
}

struct PageLocation {
  uint32_t target;            // bank index (interleaved) or core index (sharded)
  uint32_t page_in_target;    // page index inside that bank or shard
  uint32_t address;           // local address in the bank / core
  uint32_t contiguous_pages;  // pages from this one on that are contiguous at `address`
};

// ---------------------------------------------------------------------------------------------
// Interleaved: page i -> bank i mod B, address base + (i div B) * aligned page size.
// Consecutive pages never share a bank, so a contiguous run is always one page.
//
// Pieces: a buffer's page may also be addressed in k pieces (k = pieces_per_page > 1), so that
// a ROW_MAJOR row can be written a part at a time (an all_gather along the width: each chip's
// row is one piece of the output row) or moved in fabric payloads when it is wider than one.
// Page i is then piece i mod k of buffer page i div k, at (i mod k) x piece_bytes inside it;
// the pieces from there to the end of the buffer page are contiguous. The last piece of a
// buffer page may be shorter (last_piece_bytes, 0: as long as the others), so that a row that
// is not k x 32 B still moves in k pieces that each start 32 B-aligned (page_run_bytes).
// k = 1 is the whole-page addressing above.
// ---------------------------------------------------------------------------------------------
struct InterleavedAddrGenParams {
  uint32_t base_address;             // the buffer's address, the same in every bank
  uint32_t num_banks;                // DRAM: 12 on WH; L1: one per worker core
  uint32_t aligned_page_size_bytes;  // align_up(buffer page size, bank alignment)
  uint32_t pieces_per_page = 1;      // k: addressed pages per buffer page
  uint32_t piece_bytes = 0;          // bytes of one piece (k > 1)
  uint32_t last_piece_bytes = 0;     // bytes of a buffer page's last piece (k > 1; 0: piece_bytes)
};

constexpr PageLocation interleaved_page_location(const InterleavedAddrGenParams& p, uint32_t page) {
  const uint32_t banks = p.num_banks == 0 ? 1 : p.num_banks;
  const uint32_t pieces = p.pieces_per_page == 0 ? 1 : p.pieces_per_page;
  const uint32_t buffer_page = page / pieces;
  const uint32_t piece = page % pieces;
  const uint32_t row = buffer_page / banks;
  return PageLocation{buffer_page % banks, row,
                      p.base_address + row * p.aligned_page_size_bytes + piece * p.piece_bytes, pieces - piece};
}

// ---------------------------------------------------------------------------------------------
// Sharded: the 7 compile-time values of tt-metal's ShardedAddrGen (sharding_addrgen.hpp), plus
// the shard base address (a runtime arg, the same on every core), and pieces per page as for
// interleaved buffers (this model's addition, for ROW_MAJOR rows written a part at a time).
// Cores are numbered row-major over the shard grid (shard row, then shard column); the core
// table in runtime args maps that number to NoC x, y and so encodes the grid's orientation.
//   height: core = page div (pages_per_tensor_row * rows_per_shard_height)
//   width:  core = column div pages_per_shard_width;
//           page in shard = row * pages_per_shard_width + column mod pages_per_shard_width
//   block:  both: core = shard_row * shards_per_tensor_row + shard_column
// A run is contiguous up to the end of the shard row (width, block) or of the shard (height),
// and to the end of the tensor row; a rightmost shard narrower than the shard width is
// padded, not packed.
// ---------------------------------------------------------------------------------------------
enum class ShardingContiguityMode : uint8_t {
  PADDING_BETWEEN_PAGES = 0,       // page stride > page size: every page is its own run
  PADDING_IN_RIGHTMOST_SHARD = 1,  // the last shard column is partly empty
  NO_SHARD_PADDING = 2,
};

struct ShardedAddrGenParams {
  TensorMemoryLayout shard_type;  // HEIGHT_SHARDED, WIDTH_SHARDED or BLOCK_SHARDED
  uint32_t number_of_cores;
  uint32_t page_size_jump_bytes;  // aligned page stride in L1
  uint32_t pages_per_tensor_row;
  ShardingContiguityMode contiguity;
  uint32_t pages_per_shard_width;
  uint32_t rows_per_shard_height;
  uint32_t shard_base_address;
  // Pieces, as InterleavedAddrGenParams: page i is piece i mod k of buffer page i div k.
  uint32_t pieces_per_page = 1;   // k: addressed pages per buffer page
  uint32_t piece_bytes = 0;       // bytes of one piece (k > 1)
  uint32_t last_piece_bytes = 0;  // bytes of a buffer page's last piece (k > 1; 0: piece_bytes)
};

// The parameters a lookup needs to be meaningful (no zero divisors, a sharded layout).
constexpr bool sharded_params_are_valid(const ShardedAddrGenParams& p) {
  const bool sharded = p.shard_type == TensorMemoryLayout::HEIGHT_SHARDED ||
                       p.shard_type == TensorMemoryLayout::WIDTH_SHARDED ||
                       p.shard_type == TensorMemoryLayout::BLOCK_SHARDED;
  return sharded && p.number_of_cores > 0 && p.page_size_jump_bytes > 0 && p.pages_per_tensor_row > 0 &&
         p.pages_per_shard_width > 0 && p.rows_per_shard_height > 0;
}

constexpr uint32_t min_u32(uint32_t a, uint32_t b) { return a < b ? a : b; }

// Buffer page `page` (whole pages, ignoring pieces).
constexpr PageLocation sharded_buffer_page_location(const ShardedAddrGenParams& p, uint32_t page) {
  const uint32_t row = page / p.pages_per_tensor_row;
  const uint32_t column = page % p.pages_per_tensor_row;
  const uint32_t shard_width = p.pages_per_shard_width;
  uint32_t core = 0;
  uint32_t page_in_shard = 0;
  uint32_t contiguous = 1;
  if (p.shard_type == TensorMemoryLayout::HEIGHT_SHARDED) {
    const uint32_t pages_per_shard = p.pages_per_tensor_row * p.rows_per_shard_height;
    core = page / pages_per_shard;
    page_in_shard = page % pages_per_shard;
    contiguous = pages_per_shard - page_in_shard;
  } else {
    const uint32_t shard_column = column / shard_width;
    const uint32_t column_in_shard = column % shard_width;
    const uint32_t row_in_shard =
        p.shard_type == TensorMemoryLayout::BLOCK_SHARDED ? row % p.rows_per_shard_height : row;
    if (p.shard_type == TensorMemoryLayout::BLOCK_SHARDED) {
      const uint32_t shards_per_tensor_row = (p.pages_per_tensor_row + shard_width - 1) / shard_width;
      core = (row / p.rows_per_shard_height) * shards_per_tensor_row + shard_column;
    } else {
      core = shard_column;
    }
    page_in_shard = row_in_shard * shard_width + column_in_shard;
    contiguous = min_u32(shard_width - column_in_shard, p.pages_per_tensor_row - column);
  }
  if (p.contiguity == ShardingContiguityMode::PADDING_BETWEEN_PAGES) {
    contiguous = 1;
  }
  return PageLocation{core, page_in_shard, p.shard_base_address + page_in_shard * p.page_size_jump_bytes,
                      contiguous};
}

// Requires sharded_params_are_valid(p). The returned core index may be >= number_of_cores
// when the page is past the tensor's end; the caller checks it against its core table. With
// k = pieces_per_page > 1, page i is piece i mod k of buffer page i div k (a ROW_MAJOR row
// written a part at a time), contiguous to the end of that buffer page.
constexpr PageLocation sharded_page_location(const ShardedAddrGenParams& p, uint32_t page) {
  const uint32_t pieces = p.pieces_per_page == 0 ? 1 : p.pieces_per_page;
  if (pieces == 1) return sharded_buffer_page_location(p, page);
  PageLocation at = sharded_buffer_page_location(p, page / pieces);
  const uint32_t piece = page % pieces;
  at.address += piece * p.piece_bytes;
  at.contiguous_pages = pieces - piece;
  return at;
}

// One entry point for a tensor whichever its layout (the interpreter's addrgen argument).
struct AddrGenParams {
  TensorMemoryLayout layout;
  InterleavedAddrGenParams interleaved;  // when layout == INTERLEAVED
  ShardedAddrGenParams sharded;          // otherwise
};

constexpr PageLocation page_location(const AddrGenParams& p, uint32_t page) {
  return p.layout == TensorMemoryLayout::INTERLEAVED ? interleaved_page_location(p.interleaved, page)
                                                     : sharded_page_location(p.sharded, page);
}

// Bytes of the `num_pages` addressed pages from `page` on, `page_size` each, which lie in one
// buffer page (as a lookup's contiguous_pages bounds a run): a run that ends a buffer page cut
// in pieces with a shorter last piece is short by that much.
constexpr uint32_t page_run_bytes(const AddrGenParams& p, uint32_t page, uint32_t num_pages, uint32_t page_size) {
  const bool interleaved = p.layout == TensorMemoryLayout::INTERLEAVED;
  const uint32_t pieces = interleaved ? p.interleaved.pieces_per_page : p.sharded.pieces_per_page;
  const uint32_t last = interleaved ? p.interleaved.last_piece_bytes : p.sharded.last_piece_bytes;
  const uint32_t bytes = num_pages * page_size;
  if (pieces <= 1 || last == 0 || last >= page_size || page % pieces + num_pages != pieces) return bytes;
  return bytes - (page_size - last);
}

}  // namespace cclmesh::api
