#include "tools/cclmesh/op_buffers.hpp"

#include <exception>

namespace cclmesh::cli {

runtime::BufferHandle OpBuffers::create(const runtime::BufferConfig& config) {
  const runtime::BufferHandle buffer = device_.create_buffer(config);
  created_.push_back(buffer);
  return buffer;
}

void OpBuffers::free_all() {
  while (!created_.empty()) {
    device_.deallocate_buffer(created_.back());
    created_.pop_back();
  }
}

void OpBuffers::free_all_quietly() noexcept {
  for (auto it = created_.rbegin(); it != created_.rend(); ++it) {
    try {
      device_.deallocate_buffer(*it);
    } catch (const std::exception&) {
      // Kept quiet: the op's own error is the one the user needs, and this buffer is the device's
      // to reclaim (on its reset).
    }
  }
  created_.clear();
}

}  // namespace cclmesh::cli
