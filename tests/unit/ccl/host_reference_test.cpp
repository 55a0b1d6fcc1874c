// The host references: joining and cutting page images along each dim, and sums that round to
// bf16 after every addition (the device's reduce) in a given order.
#include "runtime/ccl/common/host_reference.hpp"

#include <gtest/gtest.h>

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
  EXPECT_THROW(reference::sum_in_order({one}, DataType::Bfloat8B), CclParamsError);
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
