#pragma once
// A first-in first-out queue in one growing circular buffer: push at the back, take from the
// front, no allocation once it has grown to the most it held (std::deque allocates and frees a
// block every few elements as the queue moves along, which a queue that is filled and drained
// all the time, like a NoC port's line of packets waiting for their NIU, pays per packet).
// T must be default-constructible and nothrow-movable.

#include <cstddef>
#include <type_traits>
#include <utility>
#include <vector>

#include "sim/engine/check.hpp"

namespace cclmesh::sim {

template <typename T>
class RingQueue {
  static_assert(std::is_nothrow_move_constructible_v<T> && std::is_nothrow_move_assignable_v<T>,
                "RingQueue moves its elements when it grows");

 public:
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }

  T& front() {
    CCLMESH_CHECK(size_ > 0, "front of an empty RingQueue");
    return slots_[head_];
  }
  void push_back(T value) {
    if (size_ == slots_.size()) grow();
    slots_[(head_ + size_) & (slots_.size() - 1)] = std::move(value);
    ++size_;
  }
  // Removes the front element, leaving a moved-from or default value in its slot.
  void pop_front() {
    CCLMESH_CHECK(size_ > 0, "pop_front of an empty RingQueue");
    slots_[head_] = T{};
    head_ = (head_ + 1) & (slots_.size() - 1);
    --size_;
  }

 private:
  // Doubles the buffer (a power of two, so positions wrap with a mask), front first.
  void grow() {
    std::vector<T> larger(slots_.empty() ? 8 : slots_.size() * 2);
    for (std::size_t i = 0; i < size_; ++i) larger[i] = std::move(slots_[(head_ + i) & (slots_.size() - 1)]);
    slots_ = std::move(larger);
    head_ = 0;
  }

  std::vector<T> slots_;
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

}  // namespace cclmesh::sim
