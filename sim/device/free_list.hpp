#pragma once
// One range of bank addresses handed out in blocks and given back: the free blocks, ordered by
// address, neighbours merged when a block comes back. First fit, from the bottom (DRAM buffers)
// or from the top (Tensix L1 buffers and global semaphores): the lowest free block that holds
// the request, placed at its bottom, or the highest, placed at its top. The same calls give the
// same addresses (no hashing, no time).
//
// tt-metal's allocator, as we remember it (not in REFERENCE, not checked against its source),
// keeps a free list per bank kind too, DRAM bottom up and L1 top down, with a first- or
// best-fit policy: first fit is our choice (docs/sim_device.md, "Freeing").

#include <cstdint>
#include <map>
#include <optional>

namespace cclmesh::sim::device {

class FreeList {
 public:
  enum class From : std::uint8_t { Bottom, Top };

  FreeList() = default;
  // Every address of [begin, end) free; `alignment` (a power of two) divides begin, end and every
  // block's size, so every block starts aligned.
  FreeList(std::uint64_t begin, std::uint64_t end, std::uint64_t alignment);

  // The address of a new block of `bytes` (rounded up to the alignment), or nothing when no free
  // block holds it.
  std::optional<std::uint64_t> allocate(std::uint64_t bytes, From from);
  // Gives back a block allocate() returned (`bytes` as asked for then). Always-on check: the
  // block lies inside the range and overlaps no free block.
  void release(std::uint64_t address, std::uint64_t bytes);

  std::uint64_t begin() const { return begin_; }
  std::uint64_t end() const { return end_; }
  std::uint64_t free_bytes() const;
  std::uint64_t largest_free_block() const;
  std::size_t free_block_count() const { return free_.size(); }
  // The lowest address in use (end() when nothing is): what lies below it is free in one piece.
  std::uint64_t lowest_in_use() const;
  // The lowest address and the highest end any block ever had: how far the allocations reached.
  std::uint64_t lowest_ever_used() const { return lowest_ever_; }
  std::uint64_t highest_end_ever_used() const { return highest_end_ever_; }

 private:
  std::uint64_t rounded(std::uint64_t bytes) const;

  std::uint64_t begin_ = 0;
  std::uint64_t end_ = 0;
  std::uint64_t alignment_ = 1;
  std::map<std::uint64_t, std::uint64_t> free_;  // start -> end, disjoint, never adjacent
  std::uint64_t lowest_ever_ = 0;
  std::uint64_t highest_end_ever_ = 0;
};

}  // namespace cclmesh::sim::device
