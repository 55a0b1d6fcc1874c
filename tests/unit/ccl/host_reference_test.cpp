// The host references: joining and cutting page images along each dim, and sums that round to
// bf16 after every addition (the device's reduce) in a given order.
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

// ROW_MAJOR along dim 3 (reduce_scatter's row pieces): a page is a whole row, cut element-wise;
// concat joins such rows back, a part's row being one page.
TEST(HostReference, SliceCutsRowMajorRowsAlongDim3) {
  const TensorSpec part{{1, 2, 3, 16}, DataType::Bfloat16, Layout::RowMajor};  // 32 B rows
  std::vector<Bytes> parts;
  for (std::uint8_t i = 0; i < 4; ++i) parts.push_back(pages(6, 32, static_cast<std::uint8_t>(0x20 * i)));
  const Bytes whole = reference::concat(parts, part, 3);
  const TensorSpec whole_spec = with_dim_scaled(part, 3, 4, true);
  EXPECT_EQ(page_tags(whole, 32), (std::vector<std::uint8_t>{0x00, 0x20, 0x40, 0x60, 0x01, 0x21, 0x41, 0x61, 0x02,
                                                             0x22, 0x42, 0x62, 0x03, 0x23, 0x43, 0x63, 0x04, 0x24,
                                                             0x44, 0x64, 0x05, 0x25, 0x45, 0x65}));
  for (std::uint32_t i = 0; i < 4; ++i) EXPECT_EQ(reference::slice(whole, whole_spec, 3, 4, i), parts[i]) << i;
  // 64 elements do not cut into 3.
  EXPECT_THROW(reference::slice(whole, whole_spec, 3, 3, 0), CclParamsError);
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
