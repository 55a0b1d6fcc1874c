#include "sim/device/circular_buffer.hpp"

#include <fmt/format.h>

namespace cclmesh::sim::device {

CircularBuffer::CircularBuffer(std::string owner, std::uint32_t id, std::uint32_t base, std::uint32_t page_size,
                               std::uint32_t num_pages)
    : owner_(std::move(owner)), id_(id), base_(base), page_size_(page_size), num_pages_(num_pages) {}

void CircularBuffer::reserve_back_blocking(std::uint32_t pages) {
  while (!reservable(pages)) {
    Park park(*this, -static_cast<std::int64_t>(pages));
    block_on(park);
  }
}

void CircularBuffer::wait_front_blocking(std::uint32_t pages) {
  while (!available(pages)) {
    Park park(*this, static_cast<std::int64_t>(pages));
    block_on(park);
  }
}

void CircularBuffer::push_back(std::uint32_t pages) {
  received_ += pages;
  waiters_.grant_all();
}

void CircularBuffer::pop_front(std::uint32_t pages) {
  acked_ += pages;
  waiters_.grant_all();
}

std::string CircularBuffer::state() const {
  return fmt::format("{} pushed, {} popped, {} of {} pages filled", received_, acked_, received_ - acked_, num_pages_);
}

std::string CircularBuffer::describe_wait(std::int64_t detail) const {
  if (detail >= 0) {
    return fmt::format("{} CB {} to hold {} page(s) at the front (cb_wait_front; {})", owner_, id_, detail, state());
  }
  return fmt::format("{} CB {} to have room for {} page(s) at the back (cb_reserve_back; {})", owner_, id_, -detail,
                     state());
}

}  // namespace cclmesh::sim::device
