#include "sim/engine/callback_pool.hpp"

#include <cstddef>

namespace cclmesh::sim {

void CallbackPool::grow() {
  auto chunk = std::make_unique<Block[]>(kBlocksPerChunk);
  for (std::size_t i = 0; i < kBlocksPerChunk; ++i) {
    chunk[i].pool = this;
    chunk[i].next_free = free_;
    free_ = &chunk[i];
  }
  chunks_.push_back(std::move(chunk));
}

void CallbackPool::release(void* storage) {
  auto* block = reinterpret_cast<Block*>(static_cast<unsigned char*>(storage) - offsetof(Block, storage));
  block->next_free = block->pool->free_;
  block->pool->free_ = block;
}

}  // namespace cclmesh::sim
