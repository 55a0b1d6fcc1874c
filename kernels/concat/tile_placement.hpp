#pragma once
// Where the elements of a tile-padded concatenation go: the concat kernel's placement, as pure
// functions so the host tests them without a device.
//
// N ranks each hold a TILE tensor of logical shape (w, z, y, x) elements, padded up to whole
// 32x32 tiles (REFERENCE 7.1). The result joins them along dim 2 (y) or 3 (x): rank r's element
// (w, z, i, j) lands at (w, z, i + r*y, j) or (w, z, i, j + r*x), and everything outside the
// N*y x x (or y x N*x) logical extent is padding, which the result holds as zeros.
//
// Tiles are numbered row-major over the tile grid of the last two dims, outer dims flattened
// (REFERENCE 7.1, inferred there). Inside a tile, elements sit in four 16x16 faces, face
// order top-left, top-right, bottom-left, bottom-right, each face row-major (REFERENCE 7.1's
// "four 16x16 faces"; the face order and the row-major order inside a face are tt-metal's
// tilize convention, inferred: REFERENCE does not spell them out).
//
// For one output tile, a PieceCursor yields the pieces that fill it: one per (rank, input tile)
// whose real elements land in it, each a rectangle of rows x cols, the same shape at
// (src_row, src_col) of the input tile and at (dst_row, dst_col) of the output tile. Along the
// gather dim a 32-element span meets at most 32 ranks, each in at most 2 input tiles.
//
// Device-clean: <cstdint> only.

#include <cstdint>

namespace cclmesh::kernels::concat {

constexpr uint32_t kTileSide = 32;
constexpr uint32_t kFaceSide = 16;
constexpr uint32_t kTileElements = kTileSide * kTileSide;

// The element index of (row, col) inside a tile, in face layout.
constexpr uint32_t tile_element_index(uint32_t row, uint32_t col) {
  const uint32_t face = (row / kFaceSide) * 2 + col / kFaceSide;
  return face * kFaceSide * kFaceSide + (row % kFaceSide) * kFaceSide + col % kFaceSide;
}

// Elements from (row, col) on that are contiguous in the tile: to the end of the face row.
constexpr uint32_t face_row_run(uint32_t col) { return kFaceSide - col % kFaceSide; }

constexpr uint32_t tiles_of(uint32_t elements) { return (elements + kTileSide - 1) / kTileSide; }

struct ConcatGeometry {
  uint32_t shape[4] = {1, 1, 32, 32};  // one rank's logical shape (w, z, y, x), elements
  uint32_t dim = 3;                    // 2 or 3
  uint32_t ranks = 1;

  uint32_t outer() const { return shape[0] * shape[1]; }
  uint32_t in_tiles_y() const { return tiles_of(shape[2]); }
  uint32_t in_tiles_x() const { return tiles_of(shape[3]); }
  uint32_t out_rows() const { return dim == 2 ? shape[2] * ranks : shape[2]; }
  uint32_t out_cols() const { return dim == 3 ? shape[3] * ranks : shape[3]; }
  uint32_t out_tiles_y() const { return tiles_of(out_rows()); }
  uint32_t out_tiles_x() const { return tiles_of(out_cols()); }
  uint32_t out_tiles() const { return outer() * out_tiles_y() * out_tiles_x(); }
  uint32_t in_tiles() const { return outer() * in_tiles_y() * in_tiles_x(); }
};

struct TilePiece {
  uint32_t rank = 0;
  uint32_t src_tile = 0;  // tile index in rank's input
  uint32_t src_row = 0;
  uint32_t src_col = 0;
  uint32_t dst_row = 0;
  uint32_t dst_col = 0;
  uint32_t rows = 0;
  uint32_t cols = 0;
};

class PieceCursor {
 public:
  PieceCursor(const ConcatGeometry& g, uint32_t out_tile) : g_(g) {
    const uint32_t per_outer = g.out_tiles_y() * g.out_tiles_x();
    outer_ = out_tile / per_outer;
    ty_ = out_tile % per_outer / g.out_tiles_x();
    tx_ = out_tile % g.out_tiles_x();
    // The output tile's real span along the gather axis [g0_, g1_) and across it [c0_, c1_).
    const bool rows = g.dim == 2;
    const uint32_t gather_tile = rows ? ty_ : tx_;
    const uint32_t cross_tile = rows ? tx_ : ty_;
    const uint32_t gather_extent = rows ? g.out_rows() : g.out_cols();
    const uint32_t cross_extent = rows ? g.shape[3] : g.shape[2];
    extent_ = rows ? g.shape[2] : g.shape[3];
    g0_ = gather_tile * kTileSide;
    g1_ = min(g0_ + kTileSide, gather_extent);
    c0_ = cross_tile * kTileSide;
    c1_ = min(c0_ + kTileSide, cross_extent);
    rank_ = g0_ / extent_;
    begin_rank();
  }

  // The next piece, or false when the tile has no more.
  bool next(TilePiece& piece) {
    while (rank_ < g_.ranks && rank_ * extent_ < g1_) {
      if (k_ <= k_last_) {
        const uint32_t lo = max(a_, k_ * kTileSide);
        const uint32_t hi = min(b_, (k_ + 1) * kTileSide);
        fill(piece, lo, hi);
        ++k_;
        return true;
      }
      ++rank_;
      begin_rank();
    }
    return false;
  }

 private:
  static constexpr uint32_t min(uint32_t a, uint32_t b) { return a < b ? a : b; }
  static constexpr uint32_t max(uint32_t a, uint32_t b) { return a > b ? a : b; }

  // Rank rank_'s input span [a_, b_) along the gather axis that lands in this tile, and the
  // input tiles k_ .. k_last_ it lies in.
  void begin_rank() {
    if (rank_ >= g_.ranks || rank_ * extent_ >= g1_) return;
    const uint32_t base = rank_ * extent_;
    a_ = max(g0_, base) - base;
    b_ = min(g1_, base + extent_) - base;
    k_ = a_ / kTileSide;
    k_last_ = (b_ - 1) / kTileSide;
  }

  void fill(TilePiece& piece, uint32_t lo, uint32_t hi) const {
    const uint32_t base = rank_ * extent_;
    const uint32_t src_gather = lo % kTileSide;
    const uint32_t dst_gather = lo + base - g0_;
    const uint32_t cross = c0_ % kTileSide;  // 0: the output tile starts a cross-axis tile
    piece.rank = rank_;
    if (g_.dim == 2) {
      piece.src_tile = (outer_ * g_.in_tiles_y() + k_) * g_.in_tiles_x() + tx_;
      piece.src_row = src_gather;
      piece.dst_row = dst_gather;
      piece.rows = hi - lo;
      piece.src_col = cross;
      piece.dst_col = cross;
      piece.cols = c1_ - c0_;
    } else {
      piece.src_tile = (outer_ * g_.in_tiles_y() + ty_) * g_.in_tiles_x() + k_;
      piece.src_col = src_gather;
      piece.dst_col = dst_gather;
      piece.cols = hi - lo;
      piece.src_row = cross;
      piece.dst_row = cross;
      piece.rows = c1_ - c0_;
    }
  }

  ConcatGeometry g_;
  uint32_t outer_ = 0;
  uint32_t ty_ = 0;
  uint32_t tx_ = 0;
  uint32_t extent_ = 1;
  uint32_t g0_ = 0;
  uint32_t g1_ = 0;
  uint32_t c0_ = 0;
  uint32_t c1_ = 0;
  uint32_t rank_ = 0;
  uint32_t a_ = 0;
  uint32_t b_ = 0;
  uint32_t k_ = 1;
  uint32_t k_last_ = 0;
};

// The modelled cost of assembling one output tile on the data-movement RISC-V, in cycles
// (inferred: no Tensix figure is published, REFERENCE 13): clearing the tile, one 32-bit
// store per word, plus, per face-row segment copied, kSegmentCycles of address arithmetic and
// one load and one store per 32-bit word of it.
constexpr uint32_t kSegmentCycles = 8;
constexpr uint32_t clear_cycles(uint32_t tile_bytes) { return tile_bytes / 4; }
constexpr uint32_t segment_cycles(uint32_t bytes) { return kSegmentCycles + 2 * ((bytes + 3) / 4); }

// bfp8_b (inferred the same way; tt-metal's concat on bfp8_b goes through the unpacker and
// packer, whose cost REFERENCE does not give): the tile is assembled as 1024 fp32 values, so
// clearing it is clear_cycles(4096) and each segment costs segment_cycles of its fp32 words;
// packing it back costs, per 16-value block, what copying a 16-word segment costs (read the
// 16 values, write the block), 64 blocks a tile.
constexpr uint32_t kBlocksPerTile = 64;
constexpr uint32_t kBlockValues = 16;
constexpr uint32_t pack_tile_cycles() { return kBlocksPerTile * segment_cycles(kBlockValues * 4); }

}  // namespace cclmesh::kernels::concat
