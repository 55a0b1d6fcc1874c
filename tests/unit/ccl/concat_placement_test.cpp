// The concat kernel's element placement (kernels/concat/tile_placement.hpp), on the host: the
// face layout of a tile, the pieces a PieceCursor yields for output tiles whose ranks straddle
// tile and face boundaries (checked piece by piece against hand-worked values), and the whole
// assembly, done as the kernel does it, against the host reference (reference::concat), which
// computes element offsets on its own. bfp8_b too: the assembly unpacks to fp32 and packs every
// output block again, and the reference re-blocks element by element; a hand-worked case pins
// the re-quantisation to the block's new shared exponent.
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <tuple>
#include <vector>

#include "kernels/concat/tile_placement.hpp"
#include "kernels/reduce/bfp8_math.hpp"
#include "runtime/ccl/common/host_reference.hpp"

namespace cclmesh::runtime::ccl {
namespace {

namespace kc = kernels::concat;
using reference::Bytes;

TEST(ConcatPlacement, FaceLayoutInsideATile) {
  EXPECT_EQ(kc::tile_element_index(0, 0), 0u);
  EXPECT_EQ(kc::tile_element_index(0, 15), 15u);
  EXPECT_EQ(kc::tile_element_index(0, 16), 256u);  // top-right face
  EXPECT_EQ(kc::tile_element_index(1, 0), 16u);    // a face row is 16 elements
  EXPECT_EQ(kc::tile_element_index(16, 0), 512u);  // bottom-left face
  EXPECT_EQ(kc::tile_element_index(17, 3), 531u);
  EXPECT_EQ(kc::tile_element_index(16, 16), 768u);  // bottom-right face
  EXPECT_EQ(kc::tile_element_index(31, 31), 1023u);
  EXPECT_EQ(kc::face_row_run(0), 16u);
  EXPECT_EQ(kc::face_row_run(13), 3u);
  EXPECT_EQ(kc::face_row_run(16), 16u);
}

using Piece = std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t,
                         std::uint32_t, std::uint32_t>;  // rank, src tile, src row, src col, dst row, dst col, rows, cols

// `ranks` ranks of `shape` (elements, w z y x) joined along `dim`.
kc::ConcatGeometry geometry_of(const std::array<std::uint32_t, 4>& shape, std::uint32_t dim, std::uint32_t ranks) {
  kc::ConcatGeometry g;
  for (std::size_t i = 0; i < 4; ++i) g.shape[i] = shape[i];
  g.dim = dim;
  g.ranks = ranks;
  return g;
}

std::vector<Piece> pieces_of(const kc::ConcatGeometry& g, std::uint32_t tile) {
  std::vector<Piece> out;
  kc::PieceCursor cursor(g, tile);
  kc::TilePiece p;
  while (cursor.next(p)) out.emplace_back(p.rank, p.src_tile, p.src_row, p.src_col, p.dst_row, p.dst_col, p.rows, p.cols);
  return out;
}

TEST(ConcatPlacement, RanksStraddlingFacesAlongTheWidth) {
  // 3 ranks of 20 columns (5 rows): output 60 columns = 2 tiles. Rank 1's columns 0..11 land at
  // 20..31 of tile 0 (across the face boundary at 16) and its 12..19 at 0..7 of tile 1.
  const kc::ConcatGeometry g = geometry_of({1, 1, 5, 20}, 3, 3);
  EXPECT_EQ(g.out_tiles(), 2u);
  EXPECT_EQ(pieces_of(g, 0), (std::vector<Piece>{{0, 0, 0, 0, 0, 0, 5, 20}, {1, 0, 0, 0, 0, 20, 5, 12}}));
  EXPECT_EQ(pieces_of(g, 1), (std::vector<Piece>{{1, 0, 0, 12, 0, 0, 5, 8}, {2, 0, 0, 0, 0, 8, 5, 20}}));
}

TEST(ConcatPlacement, RanksStraddlingInputTilesAlongTheWidth) {
  // 2 ranks of 40 columns: each input is 2 tiles wide; output 80 columns = 3 tiles. Tile 2 takes
  // rank 1's columns 24..39, which lie in its input tiles 0 and 1.
  const kc::ConcatGeometry g = geometry_of({1, 1, 32, 40}, 3, 2);
  EXPECT_EQ(pieces_of(g, 0), (std::vector<Piece>{{0, 0, 0, 0, 0, 0, 32, 32}}));
  EXPECT_EQ(pieces_of(g, 1), (std::vector<Piece>{{0, 1, 0, 0, 0, 0, 32, 8}, {1, 0, 0, 0, 0, 8, 32, 24}}));
  EXPECT_EQ(pieces_of(g, 2), (std::vector<Piece>{{1, 0, 0, 24, 0, 0, 32, 8}, {1, 1, 0, 0, 0, 8, 32, 8}}));
}

TEST(ConcatPlacement, OneElementPerRankAlongTheHeight) {
  // REFERENCE 8 row 24's [1,1,8,1] on dim 2: 8 ranks of one element, all in output tile 0.
  const kc::ConcatGeometry g = geometry_of({1, 1, 1, 1}, 2, 8);
  EXPECT_EQ(g.out_tiles(), 1u);
  std::vector<Piece> expected;
  for (std::uint32_t r = 0; r < 8; ++r) expected.emplace_back(r, 0, 0, 0, r, 0, 1, 1);
  EXPECT_EQ(pieces_of(g, 0), expected);
}

TEST(ConcatPlacement, OuterDimsAndTilesAcrossTheHeight) {
  // (2, 1, 40, 33) on dim 2 over 2 ranks: input 2x2 tiles per outer step, output 3x2. Output tile
  // (outer 1, ty 1, tx 1) = 1*6 + 1*2 + 1 = 9 holds rank 0's rows 32..39 (input tile 1*4 + 1*2 +
  // 1 = 7) and rank 1's rows 0..23 (input tile 1*4 + 0 + 1 = 5), one column wide (33 = 32 + 1).
  const kc::ConcatGeometry g = geometry_of({2, 1, 40, 33}, 2, 2);
  EXPECT_EQ(g.out_tiles(), 12u);
  EXPECT_EQ(pieces_of(g, 9), (std::vector<Piece>{{0, 7, 0, 0, 0, 0, 8, 1}, {1, 5, 0, 0, 8, 0, 24, 1}}));
}

// The kernel's assembly on the host: clear each output tile, then copy every piece face-row
// segment by segment, as kernels/concat.cpp does in L1.
Bytes assemble(const std::vector<Bytes>& parts, const kc::ConcatGeometry& g, std::uint32_t element) {
  const std::uint32_t tile_bytes = kc::kTileElements * element;
  Bytes out(std::size_t{g.out_tiles()} * tile_bytes, std::byte{0});
  for (std::uint32_t t = 0; t < g.out_tiles(); ++t) {
    kc::PieceCursor cursor(g, t);
    kc::TilePiece p;
    while (cursor.next(p)) {
      for (std::uint32_t i = 0; i < p.rows; ++i) {
        for (std::uint32_t j = 0; j < p.cols;) {
          std::uint32_t run = std::min({kc::face_row_run(p.src_col + j), kc::face_row_run(p.dst_col + j), p.cols - j});
          std::memcpy(out.data() + std::size_t{t} * tile_bytes +
                          kc::tile_element_index(p.dst_row + i, p.dst_col + j) * element,
                      parts[p.rank].data() + std::size_t{p.src_tile} * tile_bytes +
                          kc::tile_element_index(p.src_row + i, p.src_col + j) * element,
                      std::size_t{run} * element);
          j += run;
        }
      }
    }
  }
  return out;
}

// The assembly tests' geometries: one rank's shape, the concat dim and the rank count, with the
// dtype the bf16 / fp32 test runs it in (the bfp8_b test runs each in bfp8_b).
struct AssemblyCase {
  std::array<std::uint32_t, 4> shape;
  std::uint32_t dim;
  std::uint32_t ranks;
  DataType dtype;
};
const AssemblyCase kAssemblyCases[] = {
    {{1, 1, 1, 1}, 3, 8, DataType::Bfloat16},   {{1, 1, 1, 1}, 2, 8, DataType::Bfloat16},
    {{1, 1, 32, 368}, 3, 2, DataType::Bfloat16}, {{2, 3, 5, 20}, 3, 3, DataType::Float32},
    {{2, 1, 40, 33}, 2, 2, DataType::Bfloat16}, {{1, 1, 7, 13}, 3, 5, DataType::Float32},
    {{1, 2, 17, 9}, 2, 4, DataType::Bfloat16}};

// Each rank's input of `part`: bytes distinct per rank and position; bfp8_b exponents bounded
// (reference::bound_bfp8_exponents) so every value stays finite.
std::vector<Bytes> rank_inputs(const TensorSpec& part, std::uint32_t ranks) {
  std::vector<Bytes> parts;
  for (std::uint32_t r = 0; r < ranks; ++r) {
    Bytes b(size_bytes(part));
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<std::byte>((i * 131 + r * 37 + 1) % 251);
    if (part.dtype == DataType::Bfloat8B) reference::bound_bfp8_exponents(b);
    parts.push_back(std::move(b));
  }
  return parts;
}

TEST(ConcatPlacement, AssemblyMatchesTheHostReference) {
  for (const AssemblyCase& c : kAssemblyCases) {
    const TensorSpec part{c.shape, c.dtype, Layout::Tile};
    const std::vector<Bytes> parts = rank_inputs(part, c.ranks);
    const kc::ConcatGeometry g = geometry_of(c.shape, c.dim, c.ranks);
    const Bytes expected = reference::concat(parts, part, c.dim);
    EXPECT_EQ(expected.size(), size_bytes(with_dim_scaled(part, c.dim, c.ranks, true)));
    EXPECT_TRUE(assemble(parts, g, element_bytes(c.dtype)) == expected)
        << "shape " << c.shape[0] << "x" << c.shape[1] << "x" << c.shape[2] << "x" << c.shape[3] << " dim " << c.dim
        << " ranks " << c.ranks;
  }
}

TEST(ConcatPlacement, ReferencePutsEachRanksElementsInPlaceAndZerosThePadding) {
  // Two ranks of one bf16 element along dim 3: the output tile holds rank 0's element at (0, 0),
  // rank 1's at (0, 1), and zeros everywhere else, whatever the inputs' padding held.
  const TensorSpec part{{1, 1, 1, 1}, DataType::Bfloat16, Layout::Tile};
  std::vector<Bytes> parts(2, Bytes(2048, std::byte{0x5A}));
  parts[0][0] = std::byte{0x11}, parts[0][1] = std::byte{0x22};
  parts[1][0] = std::byte{0x33}, parts[1][1] = std::byte{0x44};
  const Bytes out = reference::concat(parts, part, 3);
  ASSERT_EQ(out.size(), 2048u);
  Bytes expected(2048, std::byte{0});
  expected[0] = std::byte{0x11}, expected[1] = std::byte{0x22}, expected[2] = std::byte{0x33}, expected[3] = std::byte{0x44};
  EXPECT_TRUE(out == expected);
}

// bfp8_b, as the kernel does it: every piece's face-row segments unpacked to fp32 into an fp32
// tile, then each of its 64 blocks packed with its own shared exponent.
Bytes assemble_bfp8(const std::vector<Bytes>& parts, const kc::ConcatGeometry& g) {
  constexpr std::uint32_t kTile = kernels::kBfp8TileBytes;
  Bytes out(std::size_t{g.out_tiles()} * kTile);
  for (std::uint32_t t = 0; t < g.out_tiles(); ++t) {
    std::vector<std::uint32_t> values(kc::kTileElements, 0);
    kc::PieceCursor cursor(g, t);
    kc::TilePiece p;
    while (cursor.next(p)) {
      const auto* src = reinterpret_cast<const std::uint8_t*>(parts[p.rank].data()) + std::size_t{p.src_tile} * kTile;
      for (std::uint32_t i = 0; i < p.rows; ++i) {
        for (std::uint32_t j = 0; j < p.cols; ++j) {
          const std::uint32_t from = kc::tile_element_index(p.src_row + i, p.src_col + j);
          values[kc::tile_element_index(p.dst_row + i, p.dst_col + j)] = kernels::bfp8_element_to_fp32_bits(
              src[kernels::kBfp8ExponentBytes + from], src[from / kernels::kBfp8BlockValues]);
        }
      }
    }
    auto* dst = reinterpret_cast<std::uint8_t*>(out.data()) + std::size_t{t} * kTile;
    for (std::uint32_t k = 0; k < kernels::kBfp8BlocksPerTile; ++k) {
      kernels::pack_bfp8_block(values.data() + k * kernels::kBfp8BlockValues, dst + k,
                               dst + kernels::kBfp8ExponentBytes + k * kernels::kBfp8BlockValues);
    }
  }
  return out;
}

TEST(ConcatPlacement, Bfp8AssemblyMatchesTheHostReference) {
  for (const AssemblyCase& c : kAssemblyCases) {  // every geometry, in bfp8_b
    const TensorSpec part{c.shape, DataType::Bfloat8B, Layout::Tile};
    const std::vector<Bytes> parts = rank_inputs(part, c.ranks);
    const kc::ConcatGeometry g = geometry_of(c.shape, c.dim, c.ranks);
    const Bytes expected = reference::concat(parts, part, c.dim);
    ASSERT_EQ(expected.size(), size_bytes(with_dim_scaled(part, c.dim, c.ranks, true)));
    EXPECT_TRUE(assemble_bfp8(parts, g) == expected)
        << "shape " << c.shape[0] << "x" << c.shape[1] << "x" << c.shape[2] << "x" << c.shape[3] << " dim " << c.dim
        << " ranks " << c.ranks;
    // Re-blocking changes values (blocks mix ranks' exponents), so a byte copy would differ.
    EXPECT_FALSE(expected == Bytes(expected.size(), std::byte{0}));
  }
}

TEST(ConcatPlacement, Bfp8ReferenceRequantisesToTheNewBlocksExponent) {
  // Two ranks of one bfp8_b element along dim 3. Rank 0: 8.0 (magnitude 64 at exponent 130).
  // Rank 1: -97/64 = -1.515625 (magnitude 97 at exponent 127). Both land in block 0 of the output
  // tile, whose shared exponent becomes 130: rank 1's value is 97/8 = 12.125 sixty-fourths of
  // 2^3 there, rounded to 12 (-1.5). Every other block is all zeros at exponent 0, whatever the
  // inputs' padding held.
  const TensorSpec part{{1, 1, 1, 1}, DataType::Bfloat8B, Layout::Tile};
  std::vector<Bytes> parts(2, Bytes(kernels::kBfp8TileBytes, std::byte{0x7B}));
  parts[0][0] = std::byte{130}, parts[0][64] = std::byte{64};
  parts[1][0] = std::byte{127}, parts[1][64] = std::byte{0x80 | 97};
  const Bytes out = reference::concat(parts, part, 3);
  ASSERT_EQ(out.size(), kernels::kBfp8TileBytes);
  Bytes expected(kernels::kBfp8TileBytes, std::byte{0});
  expected[0] = std::byte{130}, expected[64] = std::byte{64}, expected[65] = std::byte{0x80 | 12};
  EXPECT_TRUE(out == expected);
}

}  // namespace
}  // namespace cclmesh::runtime::ccl
