#pragma once
// Element-wise sums for the reduce kernel: fp32, and bf16 with the sum rounded to nearest,
// ties to even, as tt-metal's packer rounds fp32 results to bf16. Both inputs are widened to
// fp32 (exact for bf16), added in fp32, then rounded once to bf16.
//
// Device-clean: <cstdint> only; bit casts with __builtin_memcpy (no <cstring>, no <bit>).

#include <cstdint>

namespace cclmesh::kernels {

inline float bits_to_float(uint32_t bits) {
  float f = 0.0f;
  __builtin_memcpy(&f, &bits, sizeof(f));
  return f;
}

inline uint32_t float_to_bits(float f) {
  uint32_t bits = 0;
  __builtin_memcpy(&bits, &f, sizeof(bits));
  return bits;
}

constexpr uint32_t bf16_to_fp32_bits(uint16_t bf16) { return uint32_t{bf16} << 16; }

// Round-to-nearest-even of an fp32 bit pattern to bf16. NaN stays NaN (quietened, so the
// rounding carry can never turn it into infinity); overflow rounds to infinity.
constexpr uint16_t fp32_bits_to_bf16_rne(uint32_t bits) {
  const bool is_nan = (bits & 0x7F800000u) == 0x7F800000u && (bits & 0x007FFFFFu) != 0;
  if (is_nan) {
    return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  }
  const uint32_t lsb = (bits >> 16) & 1u;
  return static_cast<uint16_t>((bits + 0x7FFFu + lsb) >> 16);
}

inline uint16_t bf16_add(uint16_t a, uint16_t b) {
  const float sum = bits_to_float(bf16_to_fp32_bits(a)) + bits_to_float(bf16_to_fp32_bits(b));
  return fp32_bits_to_bf16_rne(float_to_bits(sum));
}

inline uint32_t fp32_add_bits(uint32_t a, uint32_t b) { return float_to_bits(bits_to_float(a) + bits_to_float(b)); }

// out[i] = a[i] + b[i] over `count` elements (little-endian element storage, as in L1).
inline void add_bf16(const uint16_t* a, const uint16_t* b, uint16_t* out, uint32_t count) {
  for (uint32_t i = 0; i < count; ++i) {
    out[i] = bf16_add(a[i], b[i]);
  }
}

// The same over bf16 elements packed two per little-endian 32-bit word (element 2k in the
// low half of word k), as they sit in L1; `count` may be odd.
inline void add_bf16_packed(const uint32_t* a, const uint32_t* b, uint32_t* out, uint32_t count) {
  for (uint32_t i = 0; i < count; ++i) {
    const uint32_t shift = (i & 1u) * 16u;
    const auto x = static_cast<uint16_t>(a[i / 2] >> shift);
    const auto y = static_cast<uint16_t>(b[i / 2] >> shift);
    const uint32_t keep = out[i / 2] & ~(0xFFFFu << shift);
    out[i / 2] = keep | (uint32_t{bf16_add(x, y)} << shift);
  }
}

inline void add_fp32(const uint32_t* a, const uint32_t* b, uint32_t* out, uint32_t count) {
  for (uint32_t i = 0; i < count; ++i) {
    out[i] = fp32_add_bits(a[i], b[i]);
  }
}

// The modelled arithmetic cost of reducing `bytes` of output: one cycle per 32 output bytes,
// i.e. ~32 B/cycle (~32 GB/s at 1 GHz) per core, or 64 cycles per 2 KiB bf16 tile. That is
// above a core's NoC injection (28 B/c) and 2.5x an ethernet link (12.5 GB/s), so, as
// REFERENCE §7.5 reports for real CCLs, the reduction never limits; no Tensix throughput figure
// was published (REFERENCE §13), so this keeps arithmetic visible in traces without letting it
// set the pace.
constexpr uint32_t kReduceBytesPerCycle = 32;
constexpr uint32_t reduce_cycles(uint32_t output_bytes) {
  return (output_bytes + kReduceBytesPerCycle - 1) / kReduceBytesPerCycle;
}

}  // namespace cclmesh::kernels
