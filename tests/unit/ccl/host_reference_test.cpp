// The host references: joining and cutting page images along each dim (ROW_MAJOR rows along the
// width too), and sums that round to bf16 after every addition (the device's reduce) in a given
// order.
#include "runtime/ccl/common/host_reference.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

namespace cclmesh::runtime::ccl {
namespace {

using reference::Bytes;

// A page image whose page i is filled with byte `tag + i`.
Bytes pages(std::uint32_t count, std::uint32_t page_bytes, std::uint8_t tag) {
  Bytes b(std::size_t{count} * page_bytes);
  for (std::uint32_t i = 0; i < count; ++i) {
    std::memset(b.data() + std::size_t{i} * page_bytes, tag + i, page_bytes);
  }
  return b;
}

std::vector<std::uint8_t> page_tags(const Bytes& b, std::uint32_t page_bytes) {
  std::vector<std::uint8_t> tags;
  for (std::size_t i = 0; i < b.size(); i += page_bytes) tags.push_back(static_cast<std::uint8_t>(b[i]));
  return tags;
}

TEST(HostReference, ConcatJoinsPagesAlongEachDim) {
  // (w, z, y, x) = (2, 1, 2, 2) tiles per part; parts tagged 0x10.. and 0x40..
  const TensorSpec part{{2, 1, 64, 64}, DataType::Bfloat16, Layout::Tile};
  const std::vector<Bytes> parts{pages(8, 2048, 0x10), pages(8, 2048, 0x40)};
  EXPECT_EQ(page_tags(reference::concat(parts, part, 0), 2048),
            (std::vector<std::uint8_t>{0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x40, 0x41, 0x42, 0x43, 0x44,
                                       0x45, 0x46, 0x47}));
  EXPECT_EQ(page_tags(reference::concat(parts, part, 2), 2048),
            (std::vector<std::uint8_t>{0x10, 0x11, 0x12, 0x13, 0x40, 0x41, 0x42, 0x43, 0x14, 0x15, 0x16, 0x17, 0x44,
                                       0x45, 0x46, 0x47}));
  EXPECT_EQ(page_tags(reference::concat(parts, part, 3), 2048),
            (std::vector<std::uint8_t>{0x10, 0x11, 0x40, 0x41, 0x12, 0x13, 0x42, 0x43, 0x14, 0x15, 0x44, 0x45, 0x16,
                                       0x17, 0x46, 0x47}));
}

TEST(HostReference, SliceUndoesConcat) {
  const TensorSpec part{{1, 3, 32, 96}, DataType::Float32, Layout::Tile};
  std::vector<Bytes> parts;
  for (std::uint8_t i = 0; i < 4; ++i) parts.push_back(pages(9, 4096, static_cast<std::uint8_t>(0x20 * i)));
  for (std::uint32_t dim = 0; dim < 4; ++dim) {
    const Bytes whole = reference::concat(parts, part, dim);
    const TensorSpec whole_spec = with_dim_scaled(part, dim, 4, true);
    for (std::uint32_t i = 0; i < 4; ++i) {
      EXPECT_EQ(reference::slice(whole, whole_spec, dim, 4, i), parts[i]) << "dim " << dim << " piece " << i;
    }
  }
  EXPECT_THROW(
      reference::slice(pages(3, 4096, 0), TensorSpec{{1, 1, 32, 96}, DataType::Float32, Layout::Tile}, 3, 2, 0),
      CclParamsError);
}

// ROW_MAJOR along dim 3 cuts inside rows: piece i of every row is elements [i X/n, (i+1) X/n)
// (all_to_all's chunks), and concat of those pieces gives the rows back.
TEST(HostReference, RowMajorSliceCutsRowsAlongTheWidth) {
  const TensorSpec whole_spec{{1, 2, 3, 8}, DataType::Bfloat16, Layout::RowMajor};  // 6 rows of 16 B
  Bytes whole(6 * 16);
  for (std::size_t i = 0; i < whole.size(); ++i) whole[i] = static_cast<std::byte>(i);
  const TensorSpec piece_spec{{1, 2, 3, 2}, DataType::Bfloat16, Layout::RowMajor};
  std::vector<Bytes> pieces;
  for (std::uint32_t i = 0; i < 4; ++i) {
    pieces.push_back(reference::slice(whole, whole_spec, 3, 4, i));
    ASSERT_EQ(pieces.back().size(), 6u * 4) << i;
    for (std::size_t row = 0; row < 6; ++row) {
      for (std::size_t b = 0; b < 4; ++b) {
        EXPECT_EQ(pieces.back()[row * 4 + b], static_cast<std::byte>(row * 16 + i * 4 + b)) << i << " " << row;
      }
    }
  }
  EXPECT_EQ(reference::concat(pieces, piece_spec, 3), whole);
  EXPECT_THROW(reference::slice(whole, whole_spec, 3, 3, 0), CclParamsError);  // 8 elements into 3
}

Bytes bf16_values(std::initializer_list<std::uint16_t> bits) {
  Bytes b(bits.size() * 2);
  std::size_t i = 0;
  for (std::uint16_t v : bits) {
    std::memcpy(b.data() + i, &v, 2);
    i += 2;
  }
  return b;
}

// 1 + 2^-8 rounds back to 1 in bf16 (a tie, to even), so 1 + 2^-8 + 2^-8 summed with a rounding
// after each addition is 1, while (2^-8 + 2^-8) + 1 = 2^-7 + 1 is exact: the order matters,
// which is why the reference takes it from the op.
TEST(HostReference, Bf16SumsRoundAfterEveryAddition) {
  const Bytes one = bf16_values({0x3F80});
  const Bytes tiny = bf16_values({0x3B80});  // 2^-8
  EXPECT_EQ(reference::sum_in_order({one, tiny, tiny}, DataType::Bfloat16), bf16_values({0x3F80}));
  EXPECT_EQ(reference::sum_in_order({tiny, tiny, one}, DataType::Bfloat16), bf16_values({0x3F81}));
}

// One bfp8_b tile whose only non-zero value is element 0 of block 0 (1088 B: 64 exponents,
// then 1024 element bytes; kernels/reduce/bfp8_math.hpp).
Bytes bfp8_tile(std::uint8_t exponent, std::uint8_t element) {
  Bytes tile(1088, std::byte{0});
  tile[0] = std::byte{exponent};
  tile[64] = std::byte{element};
  return tile;
}

// bfp8_b sums are re-quantised after every addition: at shared exponent 2^0 the grid is 2^-6,
// so 1 + 2^-7 is a tie that rounds back to 1 (to even), twice; (2^-7 + 2^-7) + 1 = 1 + 2^-6 is
// exact (65 / 64). The same order dependence as bf16, for the same reason.
TEST(HostReference, Bfp8SumsRequantiseAfterEveryAddition) {
  const Bytes one = bfp8_tile(127, 64);   // 64 / 64 x 2^0
  const Bytes tiny = bfp8_tile(121, 32);  // 32 / 64 x 2^-6 = 2^-7
  EXPECT_EQ(reference::sum_in_order({one, tiny, tiny}, DataType::Bfloat8B), one);
  EXPECT_EQ(reference::sum_in_order({tiny, tiny, one}, DataType::Bfloat8B), bfp8_tile(127, 65));
  // Two tiles: each summed on its own.
  Bytes two_tiles = one;
  two_tiles.insert(two_tiles.end(), tiny.begin(), tiny.end());
  Bytes expected = bfp8_tile(128, 64);  // 2.0
  const Bytes tiny_doubled = bfp8_tile(121, 64);  // 2^-6
  expected.insert(expected.end(), tiny_doubled.begin(), tiny_doubled.end());
  EXPECT_EQ(reference::sum_in_order({two_tiles, two_tiles}, DataType::Bfloat8B), expected);
  // bfp8_b is summed in whole tiles only.
  EXPECT_THROW(reference::sum_in_order({Bytes(1087)}, DataType::Bfloat8B), CclParamsError);
}

TEST(HostReference, BoundedBfp8ExponentsKeepTheElements) {
  Bytes tile(1088);
  for (std::size_t i = 0; i < tile.size(); ++i) tile[i] = static_cast<std::byte>(i * 7);
  Bytes bounded = tile;
  reference::bound_bfp8_exponents(bounded);
  for (std::size_t i = 0; i < 64; ++i) {
    EXPECT_GE(static_cast<unsigned>(bounded[i]), 120u);
    EXPECT_LE(static_cast<unsigned>(bounded[i]), 135u);
  }
  EXPECT_TRUE(std::equal(tile.begin() + 64, tile.end(), bounded.begin() + 64));
  Bytes partial(1000);
  EXPECT_THROW(reference::bound_bfp8_exponents(partial), CclParamsError);
}

TEST(HostReference, Fp32SumsAreIeeeInOrder) {
  const float a = 1.0f;
  const float b = 1e-8f;
  Bytes x(4), y(4);
  std::memcpy(x.data(), &a, 4);
  std::memcpy(y.data(), &b, 4);
  const Bytes s = reference::sum_in_order({x, y, y}, DataType::Float32);
  float r = 0;
  std::memcpy(&r, s.data(), 4);
  EXPECT_EQ(r, (a + b) + b);
}

}  // namespace
}  // namespace cclmesh::runtime::ccl
