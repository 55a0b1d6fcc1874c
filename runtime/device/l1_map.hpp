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
// ERISC L1 (REFERENCE 1.4: the unreserved region 0x25800 .. 256 KiB, 106 KiB):
//   [kEriscUnreservedBase, + 512)                 per-program semaphore id i at base + 16 i
//   [+ 512, + 1024)                               global semaphores, bottom up
//   [kEriscKernelBase, kEriscKernelBase + kEriscKernelBytes)  kernel region (router / EDM)

#include <cstdint>

namespace cclmesh::runtime {

// (our choice) 128 KiB for firmware and kernel text; tt-metal's unreserved base is ~100 KiB.
inline constexpr std::uint32_t kTensixProgramBase = 0x20000;
inline constexpr std::uint32_t kProgramSemaphoreStride = 16;
inline constexpr std::uint32_t kMaxProgramSemaphores = 32;  // ids 0..31 (the interpreter's mask)
inline constexpr std::uint32_t kProgramSemaphoreBytes = kProgramSemaphoreStride * kMaxProgramSemaphores;
inline constexpr std::uint32_t kTensixCircularBufferBase = kTensixProgramBase + kProgramSemaphoreBytes;
inline constexpr std::uint32_t kCircularBufferAlignment = 32;

// REFERENCE 1.4 [ETHMAP]: unreserved from 0x18000 + 54 KiB = 0x25800 to the end of 256 KiB
// (the [CDG] ~150 KB figure is unconfirmed; this is the smaller one).
inline constexpr std::uint32_t kEriscUnreservedBase = 0x25800;
inline constexpr std::uint32_t kEriscUnreservedBytes = 108544;
inline constexpr std::uint32_t kEriscGlobalSemaphoreBase = kEriscUnreservedBase + kProgramSemaphoreBytes;
inline constexpr std::uint32_t kEriscGlobalSemaphoreBytes = 512;
inline constexpr std::uint32_t kEriscKernelBase = kEriscGlobalSemaphoreBase + kEriscGlobalSemaphoreBytes;
inline constexpr std::uint32_t kEriscKernelBytes = kEriscUnreservedBase + kEriscUnreservedBytes - kEriscKernelBase;

// Buffer pages are stored at this alignment (tt-metal: DRAM 32 B, L1 16 B; one value here).
inline constexpr std::uint32_t kBufferAlignment = 32;
// DRAM buffers start above this per-bank offset (our choice: address 0 is never a buffer).
inline constexpr std::uint32_t kDramBufferBase = 0x10000;

// Address of per-program semaphore `id` (the same on every core of one kind).
constexpr std::uint32_t tensix_program_semaphore_address(std::uint32_t id) {
  return kTensixProgramBase + id * kProgramSemaphoreStride;
}
constexpr std::uint32_t erisc_program_semaphore_address(std::uint32_t id) {
  return kEriscUnreservedBase + id * kProgramSemaphoreStride;
}

}  // namespace cclmesh::runtime
