#pragma once
// Arguments of the concat kernel (kernels/concat.cpp): N tile-padded TILE tensors in
// interleaved buffers on this chip, joined along dim 2 or 3 into one interleaved TILE tensor
// (placement: concat/tile_placement.hpp). Parsed and checked here, so the host builder
// (kargs::build_concat_args) accepts exactly what the kernel runs.
//
// CT:  [0] input CB id: scratch for kInputBatchTiles input tiles (read before one barrier)
//      [1] output CB id: scratch for one output tile
//      [2] element bytes: 2 (bf16) or 4 (fp32)
// RT:  [0] dim (2 or 3)  [1..4] one rank's logical shape w, z, y, x (elements)  [5] ranks N
//      [6] first output tile  [7] output tiles (this core's run)  [8] tile bytes (page size)
//      [9] inputs in DRAM (1) or L1 (0)  [10] input banks  [11] input aligned page size
//      [12] output in DRAM (1) or L1 (0)  [13] output banks  [14] output aligned page size
//      [15] output address  [16 .. 16 + N) input addresses, rank order
//
// Device-clean: <cstdint> and kernels/ headers only.

#include <cstdint>

#include "kernels/concat/tile_placement.hpp"

namespace cclmesh::kernels::concat {

// Input tiles the kernel reads before one read barrier; the input CB holds this many pages.
constexpr uint32_t kInputBatchTiles = 8;

constexpr uint32_t kCtInCbId = 0;
constexpr uint32_t kCtOutCbId = 1;
constexpr uint32_t kCtElementBytes = 2;
constexpr uint32_t kNumCompileTimeArgs = 3;

constexpr uint32_t kRtDim = 0;
constexpr uint32_t kRtShape = 1;
constexpr uint32_t kRtRanks = 5;
constexpr uint32_t kRtFirstTile = 6;
constexpr uint32_t kRtNumTiles = 7;
constexpr uint32_t kRtTileBytes = 8;
constexpr uint32_t kRtInDram = 9;
constexpr uint32_t kRtInBanks = 10;
constexpr uint32_t kRtInAlignedPage = 11;
constexpr uint32_t kRtOutDram = 12;
constexpr uint32_t kRtOutBanks = 13;
constexpr uint32_t kRtOutAlignedPage = 14;
constexpr uint32_t kRtOutAddress = 15;
constexpr uint32_t kRtFirstInAddress = 16;
constexpr uint32_t num_runtime_args(uint32_t ranks) { return kRtFirstInAddress + ranks; }

// The most ranks a concat joins: a group on one fabric line (REFERENCE 6.5's 15 hops, both ways).
constexpr uint32_t kMaxRanks = 32;

struct ConcatArgs {
  ConcatGeometry geometry;
  uint32_t element_bytes = 2;
  uint32_t first_tile = 0;
  uint32_t num_tiles = 0;
  uint32_t tile_bytes = 0;
  bool in_dram = true;
  uint32_t in_banks = 0;
  uint32_t in_aligned_page = 0;
  bool out_dram = true;
  uint32_t out_banks = 0;
  uint32_t out_aligned_page = 0;
  uint32_t out_address = 0;
  const uint32_t* in_addresses = nullptr;  // into the runtime args
};

// Parses `rt` (n words) and `element_bytes`; returns the index of the first bad arg, or
// kArgsOk.
constexpr uint32_t kArgsOk = 0xFFFFFFFFu;
constexpr uint32_t parse_concat_args(const uint32_t* rt, uint32_t n, uint32_t element_bytes, ConcatArgs& out) {
  if (element_bytes != 2 && element_bytes != 4) return kCtElementBytes;
  if (n < kRtFirstInAddress) return n;
  out.geometry.dim = rt[kRtDim];
  if (out.geometry.dim != 2 && out.geometry.dim != 3) return kRtDim;
  for (uint32_t i = 0; i < 4; ++i) {
    out.geometry.shape[i] = rt[kRtShape + i];
    if (out.geometry.shape[i] == 0) return kRtShape + i;
  }
  out.geometry.ranks = rt[kRtRanks];
  if (out.geometry.ranks == 0 || out.geometry.ranks > kMaxRanks) return kRtRanks;
  if (n < num_runtime_args(out.geometry.ranks)) return n;
  out.element_bytes = element_bytes;
  out.first_tile = rt[kRtFirstTile];
  out.num_tiles = rt[kRtNumTiles];
  if (out.first_tile + out.num_tiles > out.geometry.out_tiles() || out.first_tile + out.num_tiles < out.first_tile) {
    return kRtNumTiles;
  }
  out.tile_bytes = rt[kRtTileBytes];
  if (out.tile_bytes != kTileElements * element_bytes) return kRtTileBytes;
  out.in_dram = rt[kRtInDram] != 0;
  out.in_banks = rt[kRtInBanks];
  if (out.in_banks == 0) return kRtInBanks;
  out.in_aligned_page = rt[kRtInAlignedPage];
  if (out.in_aligned_page < out.tile_bytes) return kRtInAlignedPage;
  out.out_dram = rt[kRtOutDram] != 0;
  out.out_banks = rt[kRtOutBanks];
  if (out.out_banks == 0) return kRtOutBanks;
  out.out_aligned_page = rt[kRtOutAlignedPage];
  if (out.out_aligned_page < out.tile_bytes) return kRtOutAlignedPage;
  out.out_address = rt[kRtOutAddress];
  out.in_addresses = rt + kRtFirstInAddress;
  return kArgsOk;
}

}  // namespace cclmesh::kernels::concat
