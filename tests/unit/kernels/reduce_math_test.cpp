// The reduce kernel's arithmetic (kernels/reduce/reduce_math.hpp): bf16 sums rounded to
// nearest even, fp32 sums, packed bf16 in L1 words, and the cycle model.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/host/kernel_args_builder.hpp"
#include "kernels/reduce/reduce_math.hpp"

namespace {

using namespace cclmesh;

uint16_t bf16(float f) { return static_cast<uint16_t>(kernels::float_to_bits(f) >> 16); }  // exact values only
float from_bf16(uint16_t b) { return kernels::bits_to_float(kernels::bf16_to_fp32_bits(b)); }

TEST(ReduceMath, Bf16RoundsToNearestEven) {
  // 1 + 2^-8 lies halfway between bf16 neighbours 1 and 1 + 2^-7: ties go to even (1).
  EXPECT_EQ(kernels::fp32_bits_to_bf16_rne(0x3F808000u), 0x3F80u);
  // 1 + 2^-7 + 2^-8 is halfway between 1 + 2^-7 (odd mantissa) and 1 + 2^-6: up to even.
  EXPECT_EQ(kernels::fp32_bits_to_bf16_rne(0x3F818000u), 0x3F82u);
  // Just above and below half.
  EXPECT_EQ(kernels::fp32_bits_to_bf16_rne(0x3F808001u), 0x3F81u);
  EXPECT_EQ(kernels::fp32_bits_to_bf16_rne(0x3F807FFFu), 0x3F80u);
  // Rounding carries into the exponent; the largest finite value overflows to infinity.
  EXPECT_EQ(kernels::fp32_bits_to_bf16_rne(0x3FFFFFFFu), 0x4000u);
  EXPECT_EQ(kernels::fp32_bits_to_bf16_rne(0x7F7FFFFFu), 0x7F80u);
  // NaN stays NaN, even one whose payload would round into the exponent.
  const uint16_t nan = kernels::fp32_bits_to_bf16_rne(0x7F80FFFFu);
  EXPECT_EQ(nan & 0x7F80u, 0x7F80u);
  EXPECT_NE(nan & 0x007Fu, 0u);
  EXPECT_EQ(kernels::fp32_bits_to_bf16_rne(0xFF800000u), 0xFF80u);  // -inf
}

TEST(ReduceMath, Bf16Sums) {
  EXPECT_EQ(from_bf16(kernels::bf16_add(bf16(1.5f), bf16(2.25f))), 3.75f);
  EXPECT_EQ(from_bf16(kernels::bf16_add(bf16(-4.0f), bf16(4.0f))), 0.0f);
  // 256 + 1 = 257 is not representable (8 significant bits): a tie, rounds to even 256.
  EXPECT_EQ(from_bf16(kernels::bf16_add(bf16(256.0f), bf16(1.0f))), 256.0f);
  // 258 + 1 = 259: tie between 258 (odd last bit) and 260: rounds to 260.
  EXPECT_EQ(from_bf16(kernels::bf16_add(bf16(258.0f), bf16(1.0f))), 260.0f);
  EXPECT_TRUE(std::isinf(from_bf16(kernels::bf16_add(bf16(std::numeric_limits<float>::infinity()), bf16(1.0f)))));
  EXPECT_TRUE(std::isnan(from_bf16(kernels::bf16_add(bf16(std::numeric_limits<float>::infinity()),
                                                     bf16(-std::numeric_limits<float>::infinity())))));
}

TEST(ReduceMath, PackedBf16MatchesElementwise) {
  std::vector<uint16_t> a{bf16(1.0f), bf16(2.0f), bf16(3.0f), bf16(-1.0f), bf16(0.5f)};
  std::vector<uint16_t> b{bf16(0.5f), bf16(256.0f), bf16(-3.0f), bf16(-1.0f), bf16(0.25f)};
  std::vector<uint32_t> wa(3, 0), wb(3, 0), out(3, 0xDEADBEEFu);
  std::memcpy(wa.data(), a.data(), a.size() * 2);
  std::memcpy(wb.data(), b.data(), b.size() * 2);
  kernels::add_bf16_packed(wa.data(), wb.data(), out.data(), 5);
  std::vector<uint16_t> got(6);
  std::memcpy(got.data(), out.data(), 12);
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(got[i], kernels::bf16_add(a[i], b[i])) << i;
  }
  EXPECT_EQ(got[5], 0xDEADu);  // the odd count leaves the last half-word alone
}

TEST(ReduceMath, Fp32Sums) {
  const uint32_t a[2] = {kernels::float_to_bits(1.0f), kernels::float_to_bits(1e30f)};
  const uint32_t b[2] = {kernels::float_to_bits(2.5f), kernels::float_to_bits(1e30f)};
  uint32_t out[2] = {};
  kernels::add_fp32(a, b, out, 2);
  EXPECT_EQ(kernels::bits_to_float(out[0]), 3.5f);
  EXPECT_EQ(kernels::bits_to_float(out[1]), 2e30f);
}

TEST(ReduceMath, CycleModel) {
  EXPECT_EQ(kernels::reduce_cycles(2048), 64u);  // one bf16 tile
  EXPECT_EQ(kernels::reduce_cycles(1), 1u);
  EXPECT_EQ(kernels::reduce_cycles(0), 0u);
}

TEST(ReduceArgs, Builder) {
  const kargs::KernelArgs args = kargs::build_reduce_args({0, 1, 2, kernels::reduce::kDataFormatFloat32, 3, 4});
  EXPECT_EQ(args.compile_time[kernels::reduce::kCtDataFormat], 0u);
  EXPECT_EQ(args.runtime[kernels::reduce::kRtNumBlocks], 3u);
  EXPECT_EQ(args.runtime[kernels::reduce::kRtPagesPerBlock], 4u);
  EXPECT_THROW(kargs::build_reduce_args({0, 1, 2, 2, 1, 1}), kargs::KernelArgsError);  // bfp8
  EXPECT_THROW(kargs::build_reduce_args({0, 1, 2, 0, 1, 0}), kargs::KernelArgsError);
}

}  // namespace
