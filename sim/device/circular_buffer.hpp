#pragma once
// A circular buffer of one program on one core, shared by the core's kernels (tt-metal's CB):
// `num_pages` pages of `page_size` bytes at `base` in the core's L1, with the two counters
// tt-metal keeps in L1 (pages received = pushed by the producer, pages acked = popped by the
// consumer). Reserve and wait park the calling fiber until the counters allow them; a push or
// pop wakes the waiters, which re-check.

#include <cstdint>
#include <string>

#include "sim/engine/fiber.hpp"
#include "sim/engine/wait_queue.hpp"

namespace cclmesh::sim::device {

class CircularBuffer final : public WaitTarget {
 public:
  CircularBuffer(std::string owner, std::uint32_t id, std::uint32_t base, std::uint32_t page_size,
                 std::uint32_t num_pages);
  CircularBuffer(const CircularBuffer&) = delete;
  CircularBuffer& operator=(const CircularBuffer&) = delete;

  std::uint32_t id() const { return id_; }
  std::uint32_t base() const { return base_; }
  std::uint32_t page_size() const { return page_size_; }
  std::uint32_t num_pages() const { return num_pages_; }
  std::uint32_t pages_received() const { return received_; }
  std::uint32_t pages_acked() const { return acked_; }

  bool reservable(std::uint32_t pages) const { return pages <= num_pages_ && num_pages_ - (received_ - acked_) >= pages; }
  bool available(std::uint32_t pages) const { return received_ - acked_ >= pages; }

  // From a kernel fiber: park until the condition holds.
  void reserve_back_blocking(std::uint32_t pages);
  void wait_front_blocking(std::uint32_t pages);
  void push_back(std::uint32_t pages);
  void pop_front(std::uint32_t pages);

  std::uint32_t write_ptr() const { return base_ + (received_ % num_pages_) * page_size_; }
  std::uint32_t read_ptr() const { return base_ + (acked_ % num_pages_) * page_size_; }

  // detail > 0: waiting for that many pages at the front; < 0: for that much room at the back.
  std::string describe_wait(std::int64_t detail) const override;
  std::string state() const;

 private:
  class Park {
   public:
    Park(CircularBuffer& cb, std::int64_t detail) : cb_(cb), detail_(detail) {}
    bool await_ready() const { return false; }
    void await_suspend(std::coroutine_handle<>) { cb_.waiters_.park(record_, detail_, &cb_); }
    void await_resume() const {}

   private:
    CircularBuffer& cb_;
    std::int64_t detail_;
    WaitRecord record_;
  };

  std::string owner_;
  std::uint32_t id_;
  std::uint32_t base_;
  std::uint32_t page_size_;
  std::uint32_t num_pages_;
  std::uint32_t received_ = 0;
  std::uint32_t acked_ = 0;
  WaitQueue waiters_;
};

}  // namespace cclmesh::sim::device
