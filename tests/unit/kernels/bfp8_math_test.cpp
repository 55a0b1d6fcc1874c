// bfp8_b arithmetic for the reduce kernel (kernels/reduce/bfp8_math.hpp): element decoding,
// the packing rule (largest exponent, round to nearest even, bump on overflow), and tile sums,
// checked against hand-worked values and against an independent quantiser written in double
// arithmetic from the rule as stated.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "kernels/reduce/bfp8_math.hpp"

namespace {

using namespace cclmesh;

float value_of(uint8_t element, uint8_t exponent) {
  return kernels::bits_to_float(kernels::bfp8_element_to_fp32_bits(element, exponent));
}

struct Block {
  uint8_t exponent = 0;
  uint8_t elements[16] = {};
};

Block pack(const std::vector<float>& values) {
  uint32_t bits[16] = {};
  for (std::size_t i = 0; i < 16; ++i) bits[i] = kernels::float_to_bits(i < values.size() ? values[i] : 0.0f);
  Block b;
  kernels::pack_bfp8_block(bits, &b.exponent, b.elements);
  return b;
}

// The rule in double arithmetic: the block's largest binary exponent sets the scale, each
// value rounds to nearest even on the grid of 2^-6 of that scale, and a value reaching 128
// steps moves the scale up once. Finite, normal inputs only.
std::vector<double> quantise_independently(const std::vector<float>& values) {
  int largest = std::numeric_limits<int>::min();
  for (float v : values) {
    if (v != 0.0f) largest = std::max(largest, std::ilogb(v));
  }
  std::vector<double> out(values.size(), 0.0);
  if (largest == std::numeric_limits<int>::min()) return out;
  for (int attempt = 0; attempt < 2; ++attempt) {
    const double step = std::ldexp(1.0, largest - 6);
    bool overflow = false;
    for (std::size_t i = 0; i < values.size(); ++i) {
      const double m = std::nearbyint(std::fabs(static_cast<double>(values[i])) / step);  // ties to even
      overflow = overflow || m >= 128.0;
      out[i] = std::copysign(m * step, static_cast<double>(values[i]));
    }
    if (!overflow) return out;
    ++largest;
  }
  return out;
}

TEST(Bfp8Math, ElementDecoding) {
  EXPECT_EQ(value_of(64, 127), 1.0f);       // leading bit only: 64 / 64
  EXPECT_EQ(value_of(0x80 | 64, 127), -1.0f);
  EXPECT_EQ(value_of(96, 127), 1.5f);
  EXPECT_EQ(value_of(127, 127), 127.0f / 64.0f);
  EXPECT_EQ(value_of(1, 127), 1.0f / 64.0f);  // no leading bit: the value renormalises
  EXPECT_EQ(value_of(3, 130), 3.0f / 8.0f);
  EXPECT_EQ(kernels::bfp8_element_to_fp32_bits(0, 127), 0u);
  EXPECT_EQ(kernels::bfp8_element_to_fp32_bits(0x80, 127), 0x80000000u);  // signed zero
  // Below fp32's normal range: flushed to (signed) zero.
  EXPECT_EQ(kernels::bfp8_element_to_fp32_bits(1, 6), 0u);
  EXPECT_EQ(kernels::bfp8_element_to_fp32_bits(0x81, 6), 0x80000000u);
  EXPECT_EQ(value_of(1, 7), std::ldexp(1.0f, -126));  // the smallest normal survives
  EXPECT_TRUE(std::isinf(value_of(64, 255)));
  EXPECT_TRUE(std::isnan(value_of(127, 255)));
}

TEST(Bfp8Math, PackingRoundsToNearestEvenAtTheSharedExponent) {
  // The block's largest value is 1.x, so the grid is 2^-6.
  const Block b = pack({1.0f, 1.0f + 1.0f / 128, 1.0f + 3.0f / 128, 1.0f / 128, 3.0f / 256, -0.25f, 0.0f,
                        1.0f / 256});
  EXPECT_EQ(b.exponent, 127);
  EXPECT_EQ(b.elements[0], 64);         // exact
  EXPECT_EQ(b.elements[1], 64);         // 64.5 steps: tie to even 64
  EXPECT_EQ(b.elements[2], 66);         // 65.5 steps: tie to even 66
  EXPECT_EQ(b.elements[3], 0);          // 0.5 steps: tie to even 0, stored as +0
  EXPECT_EQ(b.elements[4], 1);          // 0.75 steps: up to 1
  EXPECT_EQ(b.elements[5], 0x80 | 16);  // -0.25 = -16 steps
  EXPECT_EQ(b.elements[6], 0);
  EXPECT_EQ(b.elements[7], 0);          // 0.25 steps
}

TEST(Bfp8Math, PackingMovesTheExponentUpWhenTheLargestValueRoundsOver) {
  // 1.999 is 127.94 steps of 2^-6: it rounds to 128, which does not fit, so the grid becomes
  // 2^-5 and every value is rounded again from its original value.
  const Block b = pack({1.999f, 1.0f + 1.0f / 64, 0.5f});
  EXPECT_EQ(b.exponent, 128);
  EXPECT_EQ(b.elements[0], 64);  // 2.0
  EXPECT_EQ(b.elements[1], 32);  // 32.5 steps: tie to even 32, not 33 from the first rounding
  EXPECT_EQ(b.elements[2], 16);
}

TEST(Bfp8Math, PackingSpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  const Block b = pack({-inf, std::numeric_limits<float>::quiet_NaN(), 1.0f});
  EXPECT_EQ(b.exponent, 255);
  EXPECT_TRUE(std::isinf(value_of(b.elements[0], b.exponent)));
  EXPECT_LT(value_of(b.elements[0], b.exponent), 0.0f);
  EXPECT_TRUE(std::isnan(value_of(b.elements[1], b.exponent)));
  EXPECT_EQ(b.elements[2], 0);  // 1.0 vanishes beside an infinity
  // The largest finite values overflow to infinity, as in bf16.
  const Block big = pack({std::numeric_limits<float>::max()});
  EXPECT_EQ(big.exponent, 255);
  EXPECT_TRUE(std::isinf(value_of(big.elements[0], big.exponent)));
  // All zeros (and subnormals, which count as zero).
  const Block zero = pack({0.0f, -0.0f, std::numeric_limits<float>::denorm_min()});
  EXPECT_EQ(zero.exponent, 0);
  for (uint8_t e : zero.elements) EXPECT_EQ(e, 0);
}

TEST(Bfp8Math, PackingMatchesAnIndependentQuantiser) {
  std::mt19937 generator(7);
  std::uniform_real_distribution<float> mantissa(-2.0f, 2.0f);
  std::uniform_int_distribution<int> exponent(-12, 12);
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<float> values(16);
    for (float& v : values) v = std::ldexp(mantissa(generator), exponent(generator));
    const Block b = pack(values);
    const std::vector<double> expected = quantise_independently(values);
    for (std::size_t i = 0; i < 16; ++i) {
      ASSERT_EQ(static_cast<double>(value_of(b.elements[i], b.exponent)), expected[i])
          << "trial " << trial << " value " << values[i];
    }
  }
}

TEST(Bfp8Math, RepresentableValuesRoundTrip) {
  std::mt19937 generator(11);
  std::uniform_int_distribution<int> byte(0, 255);
  for (int trial = 0; trial < 500; ++trial) {
    Block in;
    in.exponent = static_cast<uint8_t>(100 + byte(generator) % 50);
    in.elements[0] = 64;  // a leading-bit magnitude pins the exponent
    for (int i = 1; i < 16; ++i) in.elements[i] = static_cast<uint8_t>(byte(generator));
    uint32_t bits[16];
    for (int i = 0; i < 16; ++i) bits[i] = kernels::bfp8_element_to_fp32_bits(in.elements[i], in.exponent);
    Block out;
    kernels::pack_bfp8_block(bits, &out.exponent, out.elements);
    EXPECT_EQ(out.exponent, in.exponent);
    for (int i = 0; i < 16; ++i) {
      const uint8_t expected = (in.elements[i] & 0x7F) == 0 ? 0 : in.elements[i];  // zero loses its sign
      EXPECT_EQ(out.elements[i], expected) << "trial " << trial << " element " << i;
    }
  }
}

TEST(Bfp8Math, TileSumIsTheQuantisedFp32SumOfEachBlock) {
  std::mt19937 generator(3);
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<uint8_t> a(kernels::kBfp8TileBytes);
  std::vector<uint8_t> b(kernels::kBfp8TileBytes);
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<uint8_t>(byte(generator));
    b[i] = static_cast<uint8_t>(byte(generator));
  }
  for (uint32_t k = 0; k < kernels::kBfp8ExponentBytes; ++k) {  // exponents 2^-8 .. 2^7 apart
    a[k] = static_cast<uint8_t>(119 + a[k] % 16);
    b[k] = static_cast<uint8_t>(119 + b[k] % 16);
  }
  std::vector<uint8_t> out(kernels::kBfp8TileBytes, 0xEE);
  kernels::add_bfp8_tile(a.data(), b.data(), out.data());
  for (uint32_t k = 0; k < kernels::kBfp8BlocksPerTile; ++k) {
    std::vector<float> sums(16);
    for (uint32_t j = 0; j < 16; ++j) {
      const uint32_t at = kernels::kBfp8ExponentBytes + k * 16 + j;
      sums[j] = value_of(a[at], a[k]) + value_of(b[at], b[k]);
    }
    const std::vector<double> expected = quantise_independently(sums);
    for (uint32_t j = 0; j < 16; ++j) {
      const uint32_t at = kernels::kBfp8ExponentBytes + k * 16 + j;
      ASSERT_EQ(static_cast<double>(value_of(out[at], out[k])), expected[j]) << "block " << k << " value " << j;
    }
  }
}

}  // namespace
