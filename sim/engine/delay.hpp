#pragma once
// `co_await delay(d)` from a process, or `block_on(delay(d))` from a fiber: resume d later.
// A zero delay still yields: the actor runs again after everything already due now.

#include "sim/engine/engine.hpp"

namespace cclmesh::sim {

class DelayAwaiter final : public WaitTarget {
 public:
  explicit DelayAwaiter(SimTime duration) : duration_(duration) {}
  bool await_ready() const { return false; }
  void await_suspend(std::coroutine_handle<>) {
    Engine& engine = Engine::current();
    Actor& self = engine.require_current_actor("delay");
    wake_time_ = engine.now() + duration_;
    engine.park_current(WaitInfo{this, 0, nullptr});
    engine.wake_at(self, wake_time_);
  }
  void await_resume() const {}
  std::string describe_wait(std::int64_t) const override { return "a delay until " + to_string(wake_time_); }

 private:
  SimTime duration_;
  SimTime wake_time_;
};

inline DelayAwaiter delay(SimTime duration) { return DelayAwaiter{duration}; }

}  // namespace cclmesh::sim
