#pragma once
// The bytes a packet carries between its sampling at the source and its landing at the target
// (a NoC write or read response, an ethernet packet), in storage recycled through a free list:
// every data packet of a run sampled into a fresh std::vector cost a malloc and a free, and
// the allocator's bookkeeping ran for each (about 5% of a timing-only run's host time, where
// ERISC L1s still hold their slots' bytes). The contents are always written whole before they
// are read, so which block a packet gets cannot show in any result.
//
// Empty (no storage) means "nothing sampled": one side stores no bytes, and the packet lands
// as zeros. Move-only; clone() makes the copy a duplicated packet needs.
//
// Zero runs: stretches the source memory knew to be all zero (MemoryRegion's zero blocks) are
// recorded as (offset, length) instead of copied, and land as zeros; their bytes in data() are
// unspecified until materialise() writes them. In a timing-only run most payload bytes are
// such zeros (DRAM reads give zeros), so a packet copies little more than its header.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <utility>
#include <vector>

namespace cclmesh::sim {

class PayloadBuffer {
 public:
  PayloadBuffer() = default;
  // `bytes` of storage whose contents the caller fills (through data()) before anyone reads.
  static PayloadBuffer uninitialised(std::size_t bytes) {
    PayloadBuffer b;
    b.block_ = take_block(bytes);
    b.size_ = bytes;
    return b;
  }
  PayloadBuffer(PayloadBuffer&& other) noexcept
      : block_(std::exchange(other.block_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  PayloadBuffer& operator=(PayloadBuffer&& other) noexcept {
    if (this != &other) {
      give_back();
      block_ = std::exchange(other.block_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }
  PayloadBuffer(const PayloadBuffer&) = delete;
  PayloadBuffer& operator=(const PayloadBuffer&) = delete;
  ~PayloadBuffer() { give_back(); }

  PayloadBuffer clone() const {
    if (block_ == nullptr) return {};
    PayloadBuffer copy = uninitialised(size_);
    std::memcpy(copy.data(), data(), size_);
    copy.block_->zero_runs = block_->zero_runs;
    return copy;
  }

  // Records that [offset, offset + length) is all zero (runs come in ascending order; a run
  // that continues the previous one extends it).
  void add_zero_run(std::size_t offset, std::size_t length) {
    auto& runs = block_->zero_runs;
    if (!runs.empty() && runs.back().first + runs.back().second == offset) {
      runs.back().second += length;
    } else {
      runs.emplace_back(offset, length);
    }
  }
  // The zero runs, ascending and disjoint (empty for a buffer without storage).
  const std::vector<std::pair<std::size_t, std::size_t>>& zero_runs() const {
    static const std::vector<std::pair<std::size_t, std::size_t>> kNone;
    return block_ == nullptr ? kNone : block_->zero_runs;
  }
  // Writes the zero runs' bytes, so data() holds every byte (for code that inspects or
  // changes them: fault injection).
  void materialise() {
    if (block_ == nullptr) return;
    for (const auto& [offset, length] : block_->zero_runs) std::memset(data() + offset, 0, length);
    block_->zero_runs.clear();
  }

  bool empty() const { return block_ == nullptr; }
  std::size_t size() const { return size_; }
  std::uint8_t* data() { return block_ == nullptr ? nullptr : block_->bytes.get(); }
  const std::uint8_t* data() const { return block_ == nullptr ? nullptr : block_->bytes.get(); }
  // Every byte only when zero_runs() is empty (see materialise()).
  std::span<std::uint8_t> span() { return {data(), size_}; }
  std::span<const std::uint8_t> span() const { return {data(), size_}; }

 private:
  struct Block {
    std::unique_ptr<std::uint8_t[]> bytes;
    std::size_t capacity = 0;
    std::vector<std::pair<std::size_t, std::size_t>> zero_runs;  // (offset, length), ascending
  };
  // Per thread, like the engine that runs the models: no locking. Blocks are reused last in,
  // first out, so a steady run keeps a handful of them warm in the cache.
  struct Pool {
    std::vector<std::unique_ptr<Block>> free;
  };
  static Pool& pool() {
    static thread_local Pool p;
    return p;
  }
  static Block* take_block(std::size_t bytes) {
    Pool& p = pool();
    Block* block;
    if (p.free.empty()) {
      block = new Block;
    } else {
      block = p.free.back().release();
      p.free.pop_back();
    }
    if (block->capacity < bytes) {
      block->bytes = std::make_unique_for_overwrite<std::uint8_t[]>(bytes);
      block->capacity = bytes;
    }
    block->zero_runs.clear();
    return block;
  }
  void give_back() {
    if (block_ == nullptr) return;
    pool().free.emplace_back(block_);
    block_ = nullptr;
    size_ = 0;
  }

  Block* block_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace cclmesh::sim
