#pragma once
// Kernel fibers (Boost.Context): a device kernel is a plain function that makes blocking calls
// (barrier, semaphore wait, CB wait ...). A blocking call parks the fiber, switching back to
// the scheduler; the scheduler switches in again when the awaited condition holds. The engine
// owns every fiber; destroying a parked fiber unwinds its stack.

#include <boost/context/fiber.hpp>

#include <coroutine>
#include <cstddef>
#include <exception>
#include <functional>
#include <string>

#include "sim/engine/actor.hpp"
#include "sim/engine/check.hpp"
#include "sim/engine/engine.hpp"

namespace cclmesh::sim {

class Fiber;
namespace detail {
// The fiber running right now. constinit: no dynamic initialisation, so reading it from another
// translation unit is a plain thread-local load (the dataflow API asks on every call).
extern constinit thread_local Fiber* running_fiber;
}  // namespace detail

class Fiber final : public Actor {
 public:
  Fiber(std::function<void()> body, std::size_t stack_bytes);
  ~Fiber() override;

  // The fiber running right now, or nullptr when the scheduler (or a coroutine) is running.
  static Fiber* current() { return detail::running_fiber; }
  // From inside this fiber: switch back to the scheduler until woken.
  void suspend();
  const std::exception_ptr& error() const { return error_; }

 protected:
  void resume_now() override;

 private:
  boost::context::fiber run_body(boost::context::fiber&& scheduler);
  void switch_in();   // scheduler -> fiber, and back when the fiber parks or ends
  void switch_out();  // fiber -> scheduler, and back when woken

  std::function<void()> body_;
  std::size_t stack_bytes_;
  boost::context::fiber context_;    // the fiber, seen from the scheduler
  boost::context::fiber scheduler_;  // the scheduler, seen from inside the fiber
  std::exception_ptr error_;
  bool started_ = false;
  bool unwinding_ = false;  // teardown: the next return from suspend() unwinds the stack
  // Stack bounds for AddressSanitizer's fiber-switch annotations (unused otherwise).
  const void* stack_bottom_ = nullptr;
  std::size_t stack_size_ = 0;
  const void* scheduler_stack_bottom_ = nullptr;
  std::size_t scheduler_stack_size_ = 0;
};

// From a fiber: waits on any awaiter (semaphore acquire, channel get, delay ...) by parking
// the fiber. One awaiter implementation thus serves coroutines and fibers alike.
template <typename Awaiter>
decltype(auto) block_on(Awaiter&& awaiter) {
  if (!awaiter.await_ready()) {
    Fiber* self = Fiber::current();
    CCLMESH_CHECK(self != nullptr, "a blocking wait was called outside a fiber");
    awaiter.await_suspend(std::noop_coroutine());
    self->suspend();
  }
  return awaiter.await_resume();
}

}  // namespace cclmesh::sim
