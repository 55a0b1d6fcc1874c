#pragma once
// A counting semaphore with strict FIFO fairness: a waiter asking for more than is available
// holds back those behind it. Release schedules the waiters it satisfies; it never runs them.

#include <cstdint>
#include <string>

#include "sim/engine/check.hpp"
#include "sim/engine/fiber.hpp"
#include "sim/engine/wait_queue.hpp"

namespace cclmesh::sim {

class Semaphore final : public WaitTarget {
 public:
  explicit Semaphore(std::int64_t initial = 0, std::string name = "semaphore")
      : count_(initial), name_(std::move(name)) {
    CCLMESH_CHECK(initial >= 0, "semaphore '" + name_ + "' with a negative initial count");
  }

  std::int64_t count() const { return count_; }
  std::size_t waiters() const { return waiters_.size(); }
  const std::string& name() const { return name_; }

  bool try_acquire(std::int64_t amount = 1) {
    CCLMESH_CHECK(amount > 0, "acquire of a non-positive amount");
    if (!waiters_.empty() || count_ < amount) return false;
    count_ -= amount;
    return true;
  }

  void release(std::int64_t amount = 1) {
    CCLMESH_CHECK(amount > 0, "release of a non-positive amount");
    count_ += amount;
    while (!waiters_.empty() && waiters_.front().amount <= count_) {
      count_ -= waiters_.front().amount;
      waiters_.grant_front();
    }
  }

  class Acquire {
   public:
    Acquire(Semaphore& semaphore, std::int64_t amount) : semaphore_(semaphore), amount_(amount) {}
    bool await_ready() { return semaphore_.try_acquire(amount_); }
    void await_suspend(std::coroutine_handle<>) { semaphore_.waiters_.park(record_, amount_, &semaphore_); }
    void await_resume() const {}

   private:
    Semaphore& semaphore_;
    std::int64_t amount_;
    WaitRecord record_;
  };

  // `co_await sem.acquire(n)` in a process.
  Acquire acquire(std::int64_t amount = 1) { return Acquire{*this, amount}; }
  // The same from a fiber.
  void acquire_blocking(std::int64_t amount = 1) { block_on(acquire(amount)); }

  std::string describe_wait(std::int64_t amount) const override;

 private:
  std::int64_t count_;
  std::string name_;
  WaitQueue waiters_;
};

}  // namespace cclmesh::sim
