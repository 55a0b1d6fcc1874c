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
// ERISC L1 (REFERENCE 1.4: the unreserved region 256 KiB - U .. 256 KiB, U = 150 KiB by default
// (base 0x1A800), down to 106 KiB (base 0x25800); EriscL1Map below):
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
// + 54 KiB = 0x25800 to the end), [CDG] says ~150 KB. The size is a parameter in that range
// (--erisc-unreserved-kib). The default is [CDG]'s 150 KiB: REFERENCE 13 still lists both as
// unconfirmed, but 150 is the better supported of the two, for three reasons:
//  1. REFERENCE 6.2 [TCO]: the typical 2025-26 line fabric is 2 sender channels x 8 slots + one
//     16-slot receiver. At the default 4352 B payload that is 32 slots of 4416 B = 141312 B plus
//     the control fields; choose_fabric_router_slots (kernels/host) first-fits {8, 16} into the
//     150 KiB map's 152576 B kernel region, but not into the 106 KiB map's 107520 B, where it
//     falls back to {8, 8} (24 slots = 105984 B): 106 KiB cannot hold the typical line router.
//  2. REFERENCE 6.7's "T3K short of ERISC L1 for ring buffering" (#22636 / #22678) is of the
//     mid-2025 dateline era, when a ring router had 3 sender channels and 2 receivers (6.1's
//     table). The calibration (REFERENCE 14) is of the bubble-flow-control era (2 senders + 1
//     receiver), so that shortfall does not argue for 106 KiB there.
//  3. The calibration's 8-ring all_gather reaches 10.40 GB/s per link (REFERENCE 14). At 106 KiB
//     a 6144 B payload leaves 4 slots per sender channel (the ring's {4, 8}), and with the
//     model's ~4 us slot cycle that pipeline cannot carry it (docs/performance.md, "The 8-ring's
//     forwarding chain"); 150 KiB holds {8, 8}.
// The 106 KiB address-map figure stays available as a what-if (--erisc-unreserved-kib 106).
inline constexpr std::uint32_t kEriscUnreservedMinBytes = 106 * 1024;
inline constexpr std::uint32_t kEriscUnreservedMaxBytes = 150 * 1024;
inline constexpr std::uint32_t kEriscUnreservedDefaultBytes = kEriscUnreservedMaxBytes;
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

// The default map (150 KiB): for tests and tools that use the default figure. Code that runs
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
