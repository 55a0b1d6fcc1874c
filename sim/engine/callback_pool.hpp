#pragma once
// Fixed-size storage for scheduled callbacks. Models schedule millions of small lambdas;
// a free list of equal blocks, reused in LIFO order, replaces two heap allocations per event
// (the std::function and its holder). Single-threaded, like the engine that owns it.

#include <cstddef>
#include <memory>
#include <vector>

namespace cclmesh::sim {

class CallbackPool {
 public:
  // Callables up to this size (and max_align_t alignment) fit a block; larger ones go to the heap.
  static constexpr std::size_t kStorageBytes = 112;

  CallbackPool() = default;
  CallbackPool(const CallbackPool&) = delete;
  CallbackPool& operator=(const CallbackPool&) = delete;

  // Uninitialised storage of kStorageBytes. Inline: one per scheduled callback.
  void* allocate() {
    if (free_ == nullptr) [[unlikely]] grow();
    Block* block = free_;
    free_ = block->next_free;
    return block->storage;
  }
  // Returns storage from allocate() to the pool that made it (the object in it destroyed).
  static void release(void* storage);

 private:
  struct Block {
    CallbackPool* pool;
    Block* next_free;
    alignas(std::max_align_t) unsigned char storage[kStorageBytes];
  };
  static constexpr std::size_t kBlocksPerChunk = 1024;
  void grow();  // a chunk of free blocks

  std::vector<std::unique_ptr<Block[]>> chunks_;
  Block* free_ = nullptr;
};

}  // namespace cclmesh::sim
