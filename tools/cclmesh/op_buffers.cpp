#include "tools/cclmesh/op_buffers.hpp"

#include <exception>

namespace cclmesh::cli {

runtime::BufferHandle OpBuffers::create(const runtime::BufferConfig& config) {
  const runtime::BufferHandle buffer = device_.create_buffer(config);
  created_.push_back(buffer);
  return buffer;
}

runtime::GlobalSemaphore OpBuffers::create_semaphore(const std::vector<runtime::CoreRange>& cores,
                                                    runtime::CoreKind kind, std::uint32_t initial_value) {
  const runtime::GlobalSemaphore semaphore = device_.create_global_semaphore(cores, kind, initial_value);
  semaphores_.push_back(semaphore);
  return semaphore;
}

std::uint64_t OpBuffers::bytes_per_chip() const {
  std::uint64_t bytes = 0;
  for (const runtime::BufferHandle& buffer : created_) bytes += buffer.config.size_bytes;
  return bytes;
}

std::uint64_t OpBuffers::first_buffer_bytes_per_chip() const {
  return created_.empty() ? 0 : created_.front().config.size_bytes;
}

std::uint64_t OpBuffers::buffer_bytes_per_chip(std::size_t index) const {
  return index < created_.size() ? created_[index].config.size_bytes : 0;
}

void OpBuffers::free_all() {
  while (!semaphores_.empty()) {
    device_.deallocate_global_semaphore(semaphores_.back());
    semaphores_.pop_back();
  }
  while (!created_.empty()) {
    device_.deallocate_buffer(created_.back());
    created_.pop_back();
  }
}

namespace {

// Calls `free` on each of `handles`, newest first, and forgets them all, keeping quiet about a
// refusal: the op's own error is the one the user needs, and what stays is the device's to
// reclaim (on its reset).
template <class Handle, class Free>
void free_each_quietly(std::vector<Handle>& handles, Free free) noexcept {
  for (auto it = handles.rbegin(); it != handles.rend(); ++it) {
    try {
      free(*it);
    } catch (const std::exception&) {
      continue;  // quiet, as said above
    }
  }
  handles.clear();
}

}  // namespace

void OpBuffers::free_all_quietly() noexcept {
  free_each_quietly(semaphores_, [this](const runtime::GlobalSemaphore& s) { device_.deallocate_global_semaphore(s); });
  free_each_quietly(created_, [this](const runtime::BufferHandle& b) { device_.deallocate_buffer(b); });
}

}  // namespace cclmesh::cli
