#include "sim/engine/fiber.hpp"

#include <boost/context/fixedsize_stack.hpp>

#include <utility>

#include "sim/engine/check.hpp"

namespace cclmesh::sim {

namespace {
thread_local Fiber* running_fiber = nullptr;
}

Fiber::Fiber(std::function<void()> body, std::size_t stack_bytes)
    : Actor(Kind::Fiber), body_(std::move(body)), stack_bytes_(stack_bytes) {}

Fiber::~Fiber() {
  // A parked fiber's destructor resumes it with an unwinding exception, so the objects on its
  // stack (waiter records among them) are destroyed properly.
  Fiber* outer = std::exchange(running_fiber, this);
  context_ = boost::context::fiber{};
  running_fiber = outer;
}

Fiber* Fiber::current() { return running_fiber; }

boost::context::fiber Fiber::run_body(boost::context::fiber&& scheduler) {
  scheduler_ = std::move(scheduler);
  try {
    body_();
    set_state(State::Done);
  } catch (const boost::context::detail::forced_unwind&) {
    throw;  // teardown of a parked fiber: let Boost.Context unwind the stack
  } catch (...) {
    error_ = std::current_exception();
    set_state(State::Failed);
  }
  body_ = nullptr;
  return std::move(scheduler_);
}

void Fiber::resume_now() {
  if (!started_) {
    started_ = true;
    context_ = boost::context::fiber{std::allocator_arg, boost::context::fixedsize_stack{stack_bytes_},
                                     [this](boost::context::fiber&& scheduler) {
                                       return run_body(std::move(scheduler));
                                     }};
  }
  CCLMESH_CHECK(static_cast<bool>(context_), "resuming a finished fiber '" + name() + "'");
  Fiber* outer = std::exchange(running_fiber, this);
  context_ = std::move(context_).resume();
  running_fiber = outer;
  if (!context_) {
    // Finished (normally or with an exception); the stack is gone.
    if (error_) engine()->report_failure(*this, error_);
  }
}

void Fiber::suspend() {
  CCLMESH_CHECK(running_fiber == this, "suspend() called from outside fiber '" + name() + "'");
  scheduler_ = std::move(scheduler_).resume();
}

}  // namespace cclmesh::sim
