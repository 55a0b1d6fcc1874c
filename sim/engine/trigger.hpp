#pragma once
// Trigger: a one-shot event. Waiters park until fire(); after that every wait returns at once.
// Condition: a notification without state. Waiters park until the next notify_all(); use
// wait_until(pred) in a loop-free way for "wake me when this holds". generation() counts the
// notifications, so a poller that was busy elsewhere can tell that one happened meanwhile
// (the lost-wake-up trap of wait_for_l1_activity, docs/kernels.md).

#include <cstdint>
#include <string>

#include "sim/engine/fiber.hpp"
#include "sim/engine/wait_queue.hpp"

namespace cclmesh::sim {

class Trigger final : public WaitTarget {
 public:
  explicit Trigger(std::string name = "trigger") : name_(std::move(name)) {}
  bool fired() const { return fired_; }
  void fire() {
    if (fired_) return;
    fired_ = true;
    waiters_.grant_all();
  }

  class Wait {
   public:
    explicit Wait(Trigger& trigger) : trigger_(trigger) {}
    bool await_ready() const { return trigger_.fired_; }
    void await_suspend(std::coroutine_handle<>) { trigger_.waiters_.park(record_, 0, &trigger_); }
    void await_resume() const {}

   private:
    Trigger& trigger_;
    WaitRecord record_;
  };
  Wait wait() { return Wait{*this}; }
  void wait_blocking() { block_on(wait()); }

  std::string describe_wait(std::int64_t) const override { return "trigger '" + name_ + "' to fire"; }

 private:
  std::string name_;
  bool fired_ = false;
  WaitQueue waiters_;
};

class Condition final : public WaitTarget {
 public:
  explicit Condition(std::string name = "condition") : name_(std::move(name)) {}
  void notify_all() {
    ++generation_;
    waiters_.grant_all();
  }
  std::size_t waiters() const { return waiters_.size(); }
  std::uint64_t generation() const { return generation_; }

  class Wait {
   public:
    explicit Wait(Condition& condition) : condition_(condition) {}
    bool await_ready() const { return false; }
    void await_suspend(std::coroutine_handle<>) { condition_.waiters_.park(record_, 0, &condition_); }
    void await_resume() const {}

   private:
    Condition& condition_;
    WaitRecord record_;
  };
  // Parks until the next notify_all().
  Wait wait() { return Wait{*this}; }
  void wait_blocking() { block_on(wait()); }
  // From a fiber: parks until `predicate()` holds, re-checking at each notify_all().
  template <typename Predicate>
  void wait_until_blocking(Predicate&& predicate) {
    while (!predicate()) wait_blocking();
  }

  std::string describe_wait(std::int64_t) const override { return "condition '" + name_ + "' to be notified"; }

 private:
  std::string name_;
  WaitQueue waiters_;
  std::uint64_t generation_ = 0;
};

}  // namespace cclmesh::sim
