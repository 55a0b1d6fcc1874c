#pragma once
// Arguments of the concat kernel (kernels/concat.cpp): N tile-padded TILE tensors on this chip
// (one buffer per rank, all laid out alike), joined along dim 2 or 3 into one TILE tensor
// (placement: concat/tile_placement.hpp). Inputs and output are interleaved or sharded, in DRAM
// or L1: each is described by the command interpreter's address-generator block
// (kernel_args.hpp, namespace interpreter), parsed by the same function. Parsed and checked
// here, so the host builder (kargs::build_concat_args) accepts exactly what the kernel runs.
//
// CT:  [0] input CB id: scratch for kInputBatchTiles input tiles (read before one barrier)
//      [1] output CB id: scratch for one output tile
//      [2] element bytes: 2 (bf16), 4 (fp32) or 1 (bfp8_b: a 1088 B tile of 64 shared
//          exponents and 1024 element bytes, reduce/bfp8_math.hpp)
//      [3] unpack CB id (bfp8_b only): scratch for one tile of fp32 values (kUnpackedTileBytes)
// RT:  [0] dim (2 or 3)  [1..4] one rank's logical shape w, z, y, x (elements)  [5] ranks N
//      [6] first output tile  [7] output tiles (this core's run)  [8] tile bytes (page size)
//      [9] output address  [10] output addrgen block offset  [11] input addrgen block offset
//      (one block for all N inputs, addressed at 0: a page's address is the block's plus the
//      rank's)  [12 .. 12 + N) input addresses, rank order; then the two addrgen blocks.
//
// Device-clean: <cstdint> and kernels/ headers only.

#include <cstdint>

#include "kernels/concat/tile_placement.hpp"
#include "kernels/interpreter/interpreter_args.hpp"
#include "kernels/reduce/bfp8_math.hpp"

namespace cclmesh::kernels::concat {

// Input tiles the kernel reads before one read barrier; the input CB holds this many pages.
constexpr uint32_t kInputBatchTiles = 8;

// CT[2] for bfp8_b: one element byte (plus the tile's 64 shared exponents).
constexpr uint32_t kBfp8ElementBytes = 1;
// The bfp8_b unpack scratch: one tile of fp32 values, face layout.
constexpr uint32_t kUnpackedTileBytes = kTileElements * 4;

constexpr uint32_t kCtInCbId = 0;
constexpr uint32_t kCtOutCbId = 1;
constexpr uint32_t kCtElementBytes = 2;
constexpr uint32_t kCtUnpackCbId = 3;
constexpr uint32_t kNumCompileTimeArgs = 4;

constexpr uint32_t kRtDim = 0;
constexpr uint32_t kRtShape = 1;
constexpr uint32_t kRtRanks = 5;
constexpr uint32_t kRtFirstTile = 6;
constexpr uint32_t kRtNumTiles = 7;
constexpr uint32_t kRtTileBytes = 8;
constexpr uint32_t kRtOutAddress = 9;
constexpr uint32_t kRtOutAddrGenOffset = 10;
constexpr uint32_t kRtInAddrGenOffset = 11;
constexpr uint32_t kRtFirstInAddress = 12;
// The args before the addrgen blocks.
constexpr uint32_t header_words(uint32_t ranks) { return kRtFirstInAddress + ranks; }

// The most ranks a concat joins: a group on one fabric line (REFERENCE 6.5's 15 hops, both ways).
constexpr uint32_t kMaxRanks = 32;

// A tile's bytes for CT[2]: 1024 elements, plus the shared exponents for bfp8_b; 0 if invalid.
constexpr uint32_t tile_bytes_for(uint32_t element_bytes) {
  if (element_bytes == kBfp8ElementBytes) return kBfp8TileBytes;
  return element_bytes == 2 || element_bytes == 4 ? kTileElements * element_bytes : 0;
}

struct ConcatArgs {
  ConcatGeometry geometry;
  uint32_t element_bytes = 2;
  uint32_t first_tile = 0;
  uint32_t num_tiles = 0;
  uint32_t tile_bytes = 0;
  InterpreterTensor out{};  // addressed at the output's address
  InterpreterTensor in{};   // addressed at 0: add in_addresses[rank]
  const uint32_t* in_addresses = nullptr;  // into the runtime args
};

// Parses `rt` (n words) and `element_bytes`; returns the index of the first bad arg, or
// kArgsOk.
constexpr uint32_t kArgsOk = 0xFFFFFFFFu;
constexpr uint32_t parse_concat_args(const uint32_t* rt, uint32_t n, uint32_t element_bytes, ConcatArgs& out) {
  if (tile_bytes_for(element_bytes) == 0) return kCtElementBytes;
  if (n < kRtFirstInAddress) return n;
  out.geometry.dim = rt[kRtDim];
  if (out.geometry.dim != 2 && out.geometry.dim != 3) return kRtDim;
  for (uint32_t i = 0; i < 4; ++i) {
    out.geometry.shape[i] = rt[kRtShape + i];
    if (out.geometry.shape[i] == 0) return kRtShape + i;
  }
  out.geometry.ranks = rt[kRtRanks];
  if (out.geometry.ranks == 0 || out.geometry.ranks > kMaxRanks) return kRtRanks;
  if (n < header_words(out.geometry.ranks)) return n;
  out.element_bytes = element_bytes;
  out.first_tile = rt[kRtFirstTile];
  out.num_tiles = rt[kRtNumTiles];
  if (out.first_tile + out.num_tiles > out.geometry.out_tiles() || out.first_tile + out.num_tiles < out.first_tile) {
    return kRtNumTiles;
  }
  out.tile_bytes = rt[kRtTileBytes];
  if (out.tile_bytes != tile_bytes_for(element_bytes)) return kRtTileBytes;
  const uint32_t out_block = rt[kRtOutAddrGenOffset];
  if (out_block < header_words(out.geometry.ranks)) return kRtOutAddrGenOffset;
  ArgsFault fault = parse_addrgen(rt, n, out_block, rt[kRtOutAddress], out.tile_bytes, out.out);
  if (!fault.ok()) return fault.word;
  const uint32_t in_block = rt[kRtInAddrGenOffset];
  if (in_block < header_words(out.geometry.ranks)) return kRtInAddrGenOffset;
  fault = parse_addrgen(rt, n, in_block, 0, out.tile_bytes, out.in);
  if (!fault.ok()) return fault.word;
  out.in_addresses = rt + kRtFirstInAddress;
  return kArgsOk;
}

}  // namespace cclmesh::kernels::concat
