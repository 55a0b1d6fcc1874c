#pragma once
// Simulation processes as C++20 coroutines that read top to bottom:
//
//   Process<void> producer(Channel<int>& out) {
//     for (int i = 0; i < 4; ++i) { co_await delay(10_ns); co_await out.put(i); }
//   }
//
// A Process is lazy: it starts when spawned on the engine or awaited by another process, and
// always through the scheduler, never inline. An exception leaving a process reaches the
// process that awaits it; for a spawned (top-level) process it stops the run and names it.

#include <coroutine>
#include <exception>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/engine/actor.hpp"
#include "sim/engine/check.hpp"
#include "sim/engine/engine.hpp"

namespace cclmesh::sim {

namespace detail {

// Told when a child process finishes; lets single awaits and all_of / any_of share one path.
class JoinObserver {
 public:
  virtual void child_finished(std::size_t index) = 0;

 protected:
  ~JoinObserver() = default;
};

class PromiseBase : public Actor, public WaitTarget {
 public:
  PromiseBase() : Actor(Kind::Process) {}

  std::suspend_always initial_suspend() noexcept { return {}; }
  void unhandled_exception() noexcept { error_ = std::current_exception(); }

  std::string describe_wait(std::int64_t) const override { return "process '" + name() + "' to finish"; }

  // Starts this (not yet started) process with `observer` told when it ends.
  void start_joined(Engine& engine, std::string name, JoinObserver* observer, std::size_t index) {
    CCLMESH_CHECK(state() == State::Created, "a process can be started only once");
    observer_ = observer;
    join_index_ = index;
    engine.adopt(*this, std::move(name));
    engine.wake(*this);
  }
  void start_detached(Engine& engine, std::string name) {
    CCLMESH_CHECK(state() == State::Created, "a process can be started only once");
    detached_ = true;
    engine.adopt(*this, std::move(name));
    engine.wake(*this);
  }
  bool finished() const { return state() == State::Done || state() == State::Failed; }
  const std::exception_ptr& error() const { return error_; }
  void forget_observer() { observer_ = nullptr; }

  struct FinalAwaiter {
    bool await_ready() const noexcept { return false; }
    template <typename Promise>
    void await_suspend(std::coroutine_handle<Promise> handle) noexcept {
      PromiseBase& promise = handle.promise();
      promise.finish(handle.address());
    }
    void await_resume() const noexcept {}
  };
  FinalAwaiter final_suspend() noexcept { return {}; }

 protected:
  void finish(void* frame) noexcept {
    set_state(error_ ? State::Failed : State::Done);
    if (detached_) {
      Engine* owner = engine();
      if (error_) owner->report_failure(*this, error_);
      owner->release_detached(frame);  // destroys this frame: touch nothing after
      return;
    }
    if (observer_ != nullptr) observer_->child_finished(join_index_);
  }

 private:
  std::exception_ptr error_;
  JoinObserver* observer_ = nullptr;
  std::size_t join_index_ = 0;
  bool detached_ = false;
};

template <typename T>
class Promise : public PromiseBase {
 public:
  template <typename U>
  void return_value(U&& value) {
    value_.emplace(std::forward<U>(value));
  }
  T take_value() {
    CCLMESH_CHECK(value_.has_value(), "process finished without a value");
    return std::move(*value_);
  }

 private:
  std::optional<T> value_;
};

template <>
class Promise<void> : public PromiseBase {
 public:
  void return_void() noexcept {}
  void take_value() {}
};

}  // namespace detail

template <typename T = void>
class [[nodiscard]] Process {
 public:
  struct promise_type : detail::Promise<T> {
    Process get_return_object() { return Process{Handle::from_promise(*this)}; }
    void resume_now() override { Handle::from_promise(*this).resume(); }
  };
  using Handle = std::coroutine_handle<promise_type>;

  Process() = default;
  Process(Process&& other) noexcept : handle_(std::exchange(other.handle_, {})) {}
  Process& operator=(Process&& other) noexcept {
    if (this != &other) {
      reset();
      handle_ = std::exchange(other.handle_, {});
    }
    return *this;
  }
  ~Process() { reset(); }

  // Destroys the frame; a running process is cancelled (its waits and wake-ups are withdrawn).
  void reset() {
    if (handle_) std::exchange(handle_, {}).destroy();
  }
  bool valid() const { return static_cast<bool>(handle_); }
  bool finished() const { return handle_ && handle_.promise().finished(); }

  // Sub-process name used when awaited (default: "<parent>/sub").
  Process&& named(std::string name) && {
    name_ = std::move(name);
    return std::move(*this);
  }

  auto operator co_await() && { return Awaiter{this}; }

  // --- used by Engine::spawn and the join helpers -----------------------------------------
  promise_type& promise() const { return handle_.promise(); }
  Handle release() { return std::exchange(handle_, {}); }
  std::string take_name(const Actor& parent) {
    return name_.empty() ? parent.name() + "/sub" : std::move(name_);
  }
  T result() {
    if (handle_.promise().error()) std::rethrow_exception(handle_.promise().error());
    return handle_.promise().take_value();
  }

 private:
  explicit Process(Handle handle) : handle_(handle) {}

  struct Awaiter final : detail::JoinObserver {
    Process* process;
    Actor* parent = nullptr;
    explicit Awaiter(Process* p) : process(p) {}
    bool await_ready() const { return false; }
    void await_suspend(std::coroutine_handle<>) {
      Engine& engine = Engine::current();
      parent = &engine.require_current_actor("co_await process");
      CCLMESH_CHECK(process->valid(), "awaiting an empty process");
      process->promise().start_joined(engine, process->take_name(*parent), this, 0);
      engine.park_current(WaitInfo{&process->promise(), 0, nullptr});
    }
    T await_resume() { return process->result(); }
    void child_finished(std::size_t) override { parent->engine()->wake(*parent); }
  };

  Handle handle_;
  std::string name_;
};

}  // namespace cclmesh::sim
