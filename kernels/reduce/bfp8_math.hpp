#pragma once
// bfp8_b (block floating point, 8-bit exponent) tiles for the reduce kernel: unpack to fp32,
// add in fp32, pack back. The host reference (runtime/ccl/common/host_reference.cpp) calls the
// same functions in the same order, so a device sum and the reference agree bit for bit.
//
// The tile (REFERENCE 7.1: 1088 B = 1024 mantissa bytes + 64 B of shared exponents; a 32x32
// tile is four 16x16 faces). Byte layout, as tt-metal's host packer
// (pack_fp32_vec_as_bfp8_tiles) lays it out (inferred; REFERENCE gives only the sizes):
//   bytes [0, 64)      64 shared exponents, one per block of 16 values: face 0 rows 0..15,
//                      then faces 1, 2, 3 (so exponent k covers face k / 16, row k % 16);
//   bytes [64, 1088)   1024 element bytes in the same order, 16 per block: element byte
//                      64 + 16 k + j is value j of block k.
// The sums below are element-wise, so only the pairing of each exponent with its 16 element
// bytes matters, not where a block sits in the 32x32 tile.
//
// An element byte is sign (bit 7) and a 7-bit magnitude m with an explicit leading bit; with
// shared exponent E (biased by 127, as fp32 and bf16, hence "_b"):
//   value = (-1)^sign x m / 64 x 2^(E - 127).
// Unpacking is exact except where the fp32 result would be subnormal (E < 7): flushed to
// signed zero, as the Tensix flushes denormals. E = 255 with m = 64 is infinity, E = 255 with
// another leading-bit magnitude NaN (the fp32 bit pattern the formula gives).
//
// Packing rule (stated; the hardware packer's exact rounding is unconfirmed, REFERENCE 13):
//   1. The shared exponent is the largest fp32 exponent in the block (0 when every value is
//      zero or subnormal; subnormals count as zero).
//   2. Each value's 24-bit significand is shifted right to the shared exponent and rounded to
//      7 bits, to nearest, ties to even.
//   3. If a value rounds up to m = 128 (only values at the shared exponent can), the shared
//      exponent goes up by one and step 2 is redone from the original values, so every value
//      is the nearest representable one in the block's format.
//   4. A zero magnitude is stored as +0 (no sign); NaN is stored as magnitude 127 at shared
//      exponent 255, infinity as 64 (both unpack back to NaN / infinity). An exponent that
//      step 3 pushes to 255 turns the block's largest values into infinity, as bf16 overflow
//      does.
//
// Device-clean: <cstdint> only.

#include <cstdint>

#include "kernels/reduce/reduce_math.hpp"

namespace cclmesh::kernels {

inline constexpr uint32_t kBfp8TileBytes = 1088;
inline constexpr uint32_t kBfp8ExponentBytes = 64;
inline constexpr uint32_t kBfp8BlockValues = 16;
inline constexpr uint32_t kBfp8BlocksPerTile = kBfp8ExponentBytes;

// One element byte at shared exponent `shared_exponent`, as fp32 bits.
constexpr uint32_t bfp8_element_to_fp32_bits(uint8_t element, uint8_t shared_exponent) {
  const uint32_t sign = uint32_t{element & 0x80u} << 24;
  const uint32_t magnitude = element & 0x7Fu;
  if (magnitude == 0) {
    return sign;
  }
  const auto lead = static_cast<uint32_t>(31 - __builtin_clz(magnitude));  // highest set bit, 0..6
  const int32_t exponent = static_cast<int32_t>(shared_exponent) - 6 + static_cast<int32_t>(lead);
  if (exponent <= 0) {
    return sign;  // would be subnormal: flushed
  }
  const uint32_t fraction = (magnitude << (23 - lead)) & 0x007FFFFFu;
  return sign | (static_cast<uint32_t>(exponent) << 23) | fraction;
}

// `significand` (24 bits, leading bit set) shifted right by `shift` and rounded to nearest,
// ties to even. A shift of 25 or more leaves less than half of the last place: zero.
constexpr uint32_t shift_right_rne(uint32_t significand, uint32_t shift) {
  if (shift == 0) {
    return significand;
  }
  if (shift >= 25) {
    return 0;
  }
  const uint32_t kept = significand >> shift;
  const uint32_t rest = significand & ((1u << shift) - 1u);
  const uint32_t half = 1u << (shift - 1u);
  return (rest > half || (rest == half && (kept & 1u) != 0)) ? kept + 1u : kept;
}

// The 7-bit magnitude of fp32 `bits` at shared exponent `shared_exponent` (rule steps 2 and 4);
// may be 128 when the value rounds past the block's range (rule step 3 handles it).
constexpr uint32_t bfp8_magnitude_of(uint32_t bits, uint32_t shared_exponent) {
  const uint32_t exponent = (bits >> 23) & 0xFFu;
  const uint32_t fraction = bits & 0x007FFFFFu;
  if (exponent == 0) {
    return 0;  // zero or subnormal
  }
  if (exponent == 0xFFu) {
    return fraction != 0 ? 127u : 64u;  // NaN, infinity (shared exponent is 255 then)
  }
  // 1.fraction x 2^(exponent) -> m / 64 x 2^(shared): m = significand >> (17 + shared - exponent).
  return shift_right_rne(fraction | 0x00800000u, 17u + shared_exponent - exponent);
}

// Packs 16 fp32 values (bits) into one shared exponent and 16 element bytes.
inline void pack_bfp8_block(const uint32_t* values, uint8_t* shared_exponent, uint8_t* elements) {
  uint32_t shared = 0;
  for (uint32_t i = 0; i < kBfp8BlockValues; ++i) {
    const uint32_t exponent = (values[i] >> 23) & 0xFFu;
    shared = exponent > shared ? exponent : shared;
  }
  uint32_t magnitudes[kBfp8BlockValues];
  bool overflow = false;
  for (uint32_t i = 0; i < kBfp8BlockValues; ++i) {
    magnitudes[i] = bfp8_magnitude_of(values[i], shared);
    overflow = overflow || magnitudes[i] > 0x7Fu;
  }
  if (overflow) {  // rule step 3 (never at 255: NaN and infinity magnitudes are 127 and 64)
    ++shared;
    for (uint32_t i = 0; i < kBfp8BlockValues; ++i) {
      magnitudes[i] = bfp8_magnitude_of(values[i], shared);
    }
  }
  *shared_exponent = static_cast<uint8_t>(shared);
  for (uint32_t i = 0; i < kBfp8BlockValues; ++i) {
    // At shared exponent 255 a finite value's magnitude is at most 64 (shift >= 18), and 64
    // there unpacks as infinity: the overflow of rule step 4.
    const uint32_t sign = magnitudes[i] != 0 ? (values[i] >> 24) & 0x80u : 0u;
    elements[i] = static_cast<uint8_t>(sign | magnitudes[i]);
  }
}

// One block of the sum: unpack both operands' 16 values, add in fp32, pack.
inline void add_bfp8_block(uint8_t exponent_a, const uint8_t* elements_a, uint8_t exponent_b,
                           const uint8_t* elements_b, uint8_t* exponent_out, uint8_t* elements_out) {
  uint32_t sums[kBfp8BlockValues];
  for (uint32_t i = 0; i < kBfp8BlockValues; ++i) {
    sums[i] = fp32_add_bits(bfp8_element_to_fp32_bits(elements_a[i], exponent_a),
                            bfp8_element_to_fp32_bits(elements_b[i], exponent_b));
  }
  pack_bfp8_block(sums, exponent_out, elements_out);
}

// A whole tile (kBfp8TileBytes each): out = a + b, block by block.
inline void add_bfp8_tile(const uint8_t* a, const uint8_t* b, uint8_t* out) {
  for (uint32_t k = 0; k < kBfp8BlocksPerTile; ++k) {
    const uint32_t values = kBfp8ExponentBytes + k * kBfp8BlockValues;
    add_bfp8_block(a[k], a + values, b[k], b + values, out + k, out + values);
  }
}

}  // namespace cclmesh::kernels
