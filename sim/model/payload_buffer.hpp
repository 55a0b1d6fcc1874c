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
    return copy;
  }

  bool empty() const { return block_ == nullptr; }
  std::size_t size() const { return size_; }
  std::uint8_t* data() { return block_ == nullptr ? nullptr : block_->bytes.get(); }
  const std::uint8_t* data() const { return block_ == nullptr ? nullptr : block_->bytes.get(); }
  std::span<std::uint8_t> span() { return {data(), size_}; }
  std::span<const std::uint8_t> span() const { return {data(), size_}; }

 private:
  struct Block {
    std::unique_ptr<std::uint8_t[]> bytes;
    std::size_t capacity = 0;
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
