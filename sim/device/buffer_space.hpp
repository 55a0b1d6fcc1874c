#pragma once
// Which bytes of each DRAM bank and of each Tensix core's L1 the live buffers and global
// semaphores hold, so that a NoC access through a raw address can be checked against them
// (noc_access_check.hpp): the simulator as a memory sanitizer for the mesh.
//
// Buffer space, where every access must lie wholly inside one allocation on its bank or core:
//   DRAM bank:  [kDramBufferBase, the bank's end)      (below: never a buffer, unchecked)
//   Tensix L1:  [the lowest live L1 allocation, L1 end) (below: the programs' CBs and
//               semaphores, program-managed, unchecked; the allocator refuses a CB that reaches
//               the lowest allocation, require_circular_buffers_fit)
// ERISC L1 holds no buffers (semaphores and the kernel region, program-managed): unchecked.
//
// An allocation's extent is per bank / core: an interleaved buffer's bank b holds only its own
// pages (fewer in the last banks), a sharded buffer only the shards of its grid, a global
// semaphore only its cores. Allocations do not overlap, so the one an address can lie in is the
// one at the greatest address not above it: one ordered-map lookup per access.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "runtime/device/types.hpp"

namespace cclmesh::sim::device {

enum class MemorySpace : std::uint8_t { Dram, TensixL1 };

// Where an access lands: a DRAM bank, or a Tensix core by its logical coordinate.
struct AccessTarget {
  MemorySpace space = MemorySpace::Dram;
  std::uint32_t dram_bank = 0;
  runtime::CoreCoord core;
};

// Addresses [begin, end) at one target that are allowed for one reason: one allocation's extent
// there, or memory outside buffer space. Any access inside it is allowed while the allocations
// stay as they were (BufferSpace::generation()), so a caller may remember it (noc_access_check.hpp).
struct AllowedSpan {
  std::uint64_t begin = 1;
  std::uint64_t end = 0;  // end < begin: holds nothing (not even 0 bytes at 0)
  bool holds(std::uint64_t address, std::uint64_t bytes) const { return address >= begin && address + bytes <= end; }
};

class BufferSpace {
 public:
  BufferSpace(runtime::CoreCoord worker_grid, std::uint32_t dram_banks, std::uint64_t dram_bank_bytes,
              std::uint64_t tensix_l1_bytes);

  void add_buffer(const runtime::BufferHandle& buffer);
  void add_global_semaphore(const runtime::GlobalSemaphore& semaphore, std::uint64_t bytes);
  void remove(MemorySpace space, std::uint64_t address);

  // Whether [address, address + bytes) at `target` is outside buffer space or inside one
  // allocation's extent there; if so and `span` is given, the span it was allowed by. Called
  // for checked NoC accesses the caller has not remembered a span for: no allocation.
  bool allows(const AccessTarget& target, std::uint64_t address, std::uint64_t bytes,
              AllowedSpan* span = nullptr) const;
  // Changes on every allocation and free: a remembered AllowedSpan holds while this is unchanged.
  std::uint64_t generation() const { return generation_; }
  // Why it does not (allows() false): "0x11800..0x12800 runs 0x800 past the end of buffer #3
  // (0x11000..0x12000 here, 4096 B, DRAM interleaved)", "0x.. lies in unallocated memory ...".
  std::string describe_refusal(const AccessTarget& target, std::uint64_t address, std::uint64_t bytes) const;

 private:
  struct Allocation {
    std::string what;  // "buffer #3", "global semaphore #1"
    std::string kind;  // "DRAM interleaved", "L1 height-sharded", "L1 word"
    std::uint64_t address = 0;
    std::uint64_t allocated_bytes = 0;  // per bank or core, as the allocator reserved it
    // Buffers: bytes from `address` the buffer's pages reach, per DRAM bank or per L1 core
    // (row-major over the common worker grid).
    std::vector<std::uint64_t> bytes_by_target;
    std::vector<runtime::CoreRange> cores;  // global semaphores: the cores holding one
  };
  using Allocations = std::map<std::uint64_t, Allocation>;  // by address

  const Allocations& allocations(MemorySpace space) const { return space == MemorySpace::Dram ? dram_ : l1_; }
  // Where buffer space starts in `space`.
  std::uint64_t floor(MemorySpace space) const;
  std::uint64_t bytes_at(const Allocation& allocation, const AccessTarget& target) const;
  std::string describe(const Allocation& allocation, const AccessTarget& target) const;

  runtime::CoreCoord worker_grid_;
  std::uint32_t dram_banks_ = 0;
  std::uint64_t dram_bank_bytes_ = 0;
  std::uint64_t tensix_l1_bytes_ = 0;
  Allocations dram_;
  Allocations l1_;
  std::uint64_t generation_ = 0;
};

}  // namespace cclmesh::sim::device
