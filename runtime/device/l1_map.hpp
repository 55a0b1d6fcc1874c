#pragma once
// Where the device contract puts things in a core's L1, on every backend: per-program
// semaphores and circular buffers, the ERISC region kernels (fabric routers, legacy EDMs) may
// use, and the room left for L1 buffers and global semaphores. Op builders need the ERISC
// kernel region (router and EDM layouts are built on the host); backends place per-program
// semaphores and CBs here and check that a workload's L1 fits.
//
// Tensix L1 (bytes from 0):
//   [0, kTensixProgramBase)                       firmware, mailboxes, kernel binaries (reserved)
//   [kTensixProgramBase, + kProgramSemaphoreBytes) per-program semaphore id i at base + 16 i
//   [kTensixCircularBufferBase, ...)              the program's CBs, bottom up, 32 B aligned, each
//                                                 above the CBs already on its cores (cb_placement.hpp)
//   [..., L1 end)                                 L1 buffers and global semaphores, top down
// ERISC L1 (REFERENCE 1.4: the unreserved region 256 KiB - U .. 256 KiB, U = 106 KiB by default
// (base 0x25800), up to 150 KiB (base 0x1A800); EriscL1Map below):
//   [unreserved_base, + 512)                      per-program semaphore id i at base + 16 i
//   [+ 512, + 1024)                               global semaphores, bottom up
//   [kernel_base, 256 KiB)                        kernel region (router / EDM)

#include <cstdint>

namespace cclmesh::runtime {

// (our choice) 128 KiB for firmware and kernel text; tt-metal's unreserved base is ~100 KiB.
inline constexpr std::uint32_t kTensixProgramBase = 0x20000;
inline constexpr std::uint32_t kProgramSemaphoreStride = 16;
inline constexpr std::uint32_t kMaxProgramSemaphores = 32;  // ids 0..31 (the interpreter's mask)
inline constexpr std::uint32_t kProgramSemaphoreBytes = kProgramSemaphoreStride * kMaxProgramSemaphores;
inline constexpr std::uint32_t kTensixCircularBufferBase = kTensixProgramBase + kProgramSemaphoreBytes;
inline constexpr std::uint32_t kCircularBufferAlignment = 32;

// ERISC L1 is 256 KiB (REFERENCE 1.1 / 1.4: eth_l1_size 262144, the SoC descriptor's figure;
// a layout test checks the two agree). The unreserved region kernels may use runs from
// kEriscL1Bytes - unreserved bytes to the end of L1, so a larger region grows downwards.
inline constexpr std::uint32_t kEriscL1Bytes = 256 * 1024;
// REFERENCE 1.4 / 13 (unconfirmed): [ETHMAP]'s address map says 106 KB unreserved (from 0x18000
// + 54 KiB = 0x25800 to the end), [CDG] says ~150 KB. The size is a parameter in that range;
// the default is the address-map figure until REFERENCE confirms one.
inline constexpr std::uint32_t kEriscUnreservedMinBytes = 106 * 1024;
inline constexpr std::uint32_t kEriscUnreservedMaxBytes = 150 * 1024;
inline constexpr std::uint32_t kEriscUnreservedDefaultBytes = kEriscUnreservedMinBytes;
inline constexpr std::uint32_t kEriscGlobalSemaphoreBytes = 512;

// The ERISC L1 layout for one unreserved size: every backend and host builder that places
// something in ERISC L1 derives it from this (the device's FabricOptions::erisc_unreserved_bytes).
struct EriscL1Map {
  std::uint32_t unreserved_bytes = kEriscUnreservedDefaultBytes;

  constexpr std::uint32_t unreserved_base() const { return kEriscL1Bytes - unreserved_bytes; }
  constexpr std::uint32_t program_semaphore_address(std::uint32_t id) const {
    return unreserved_base() + id * kProgramSemaphoreStride;
  }
  constexpr std::uint32_t global_semaphore_base() const { return unreserved_base() + kProgramSemaphoreBytes; }
  constexpr std::uint32_t kernel_base() const { return global_semaphore_base() + kEriscGlobalSemaphoreBytes; }
  constexpr std::uint32_t kernel_bytes() const { return kEriscL1Bytes - kernel_base(); }
  constexpr bool operator==(const EriscL1Map&) const = default;
};

// Whether `bytes` is an unreserved size the model accepts (kEriscUnreservedMinBytes ..
// kEriscUnreservedMaxBytes, a multiple of 16 B so semaphores stay aligned).
constexpr bool valid_erisc_unreserved_bytes(std::uint64_t bytes) {
  return bytes >= kEriscUnreservedMinBytes && bytes <= kEriscUnreservedMaxBytes && bytes % kProgramSemaphoreStride == 0;
}

// The default map (106 KiB): for tests and tools that pin the address-map figure. Code that runs
// with a configured size takes an EriscL1Map instead.
inline constexpr EriscL1Map kDefaultEriscL1Map{};
inline constexpr std::uint32_t kEriscUnreservedBase = kDefaultEriscL1Map.unreserved_base();
inline constexpr std::uint32_t kEriscUnreservedBytes = kDefaultEriscL1Map.unreserved_bytes;
inline constexpr std::uint32_t kEriscGlobalSemaphoreBase = kDefaultEriscL1Map.global_semaphore_base();
inline constexpr std::uint32_t kEriscKernelBase = kDefaultEriscL1Map.kernel_base();
inline constexpr std::uint32_t kEriscKernelBytes = kDefaultEriscL1Map.kernel_bytes();

// Buffer pages are stored at this alignment (tt-metal: DRAM 32 B, L1 16 B; one value here).
inline constexpr std::uint32_t kBufferAlignment = 32;
// DRAM buffers start above this per-bank offset (our choice: address 0 is never a buffer).
inline constexpr std::uint32_t kDramBufferBase = 0x10000;

// Address of per-program semaphore `id` (the same on every core of one kind).
constexpr std::uint32_t tensix_program_semaphore_address(std::uint32_t id) {
  return kTensixProgramBase + id * kProgramSemaphoreStride;
}
// In the default ERISC map; a configured device uses EriscL1Map::program_semaphore_address.
constexpr std::uint32_t erisc_program_semaphore_address(std::uint32_t id) {
  return kDefaultEriscL1Map.program_semaphore_address(id);
}

}  // namespace cclmesh::runtime
