#include "sim/engine/fiber.hpp"

#include <boost/context/fixedsize_stack.hpp>
#include <boost/context/preallocated.hpp>

#include <cxxabi.h>
#include <fmt/format.h>
#include <unwind.h>

#include <cstdio>
#include <exception>
#include <utility>

#include "sim/engine/check.hpp"
#include "sim/engine/exception_message.hpp"

#if defined(CCLMESH_ASAN) || defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#define CCLMESH_FIBER_ASAN 1
#endif

namespace cclmesh::sim {

namespace detail {
constinit thread_local Fiber* running_fiber = nullptr;
}  // namespace detail

namespace {
using detail::running_fiber;

// A parked fiber being destroyed is resumed once more, and suspend() unwinds its stack from
// there (the waiter records on it unlink, its objects are destroyed) up to run_body's catch.
//
// The unwind is forced (_Unwind_ForcedUnwind of the Itanium C++ ABI's unwinder, as thread
// cancellation does): it runs the same cleanups as a thrown exception, without the search phase
// that first walks every frame for a handler, which was half of a teardown's cost (a parked
// router's ~7 frames; 4,096 routers on a 32x32 torus). Its exception object is foreign to C++,
// so only catch (...) sees it. libstdc++ cannot catch a foreign exception while another is
// being handled on the thread (it terminates), so a fiber destroyed inside a handler unwinds by
// a thrown FiberUnwind instead, as before.
struct FiberUnwind {};

// Whether the thread is inside a handler, of a C++ exception or a foreign one (another fiber's
// forced unwind): std::current_exception() is null for the latter. The Itanium C++ ABI (2.2.2)
// makes the stack of caught exceptions the first member of __cxa_eh_globals, which <cxxabi.h>
// declares without its members.
bool handling_an_exception() {
  return *reinterpret_cast<void* const*>(abi::__cxa_get_globals()) != nullptr;
}

constexpr _Unwind_Exception_Class kTeardownClass = 0x43434c4d46494252;  // "CCLMFIBR"

_Unwind_Reason_Code keep_unwinding(int, _Unwind_Action, _Unwind_Exception_Class, _Unwind_Exception*,
                                   _Unwind_Context*, void*) {
  return _URC_NO_REASON;
}

// Deleted by the catch (...) that ends the unwind.
void delete_teardown(_Unwind_Reason_Code, _Unwind_Exception* teardown) { delete teardown; }

// Out of line and cold: inlined, it made every suspend() dearer (+2.7M instructions on the T3K
// 8 MiB run, a larger frame for the common path).
[[noreturn, gnu::noinline, gnu::cold]] void unwind_stack() {
  if (handling_an_exception()) throw FiberUnwind{};
#ifdef CCLMESH_FIBER_ASAN
  // What ASan's __cxa_throw interceptor does before a throw: the frames the unwind leaves keep
  // no poisoned redzones for the cleanups that run below them (no interceptor for this entry).
  __asan_handle_no_return();
#endif
  auto* teardown = new _Unwind_Exception{};
  teardown->exception_class = kTeardownClass;
  teardown->exception_cleanup = delete_teardown;
  const _Unwind_Reason_Code failed = _Unwind_ForcedUnwind(teardown, keep_unwinding, nullptr);
  // Returns only when the stack has no frame to unwind through (no unwind tables).
  CCLMESH_CHECK(false, "a parked fiber's stack could not be unwound (unwinder code " +
                           std::to_string(static_cast<int>(failed)) + ")");
  std::terminate();
}

// A C++ exception left a fiber while it was torn down (a cleanup or a catch (...) handler that
// the forced unwind enters waited again, failing suspend()'s check): a bug, which the destructor
// that tore it down cannot throw on; the program ends naming it rather than drop it.
[[noreturn]] void fail_teardown(const std::string& fiber, const std::exception_ptr& error) {
  std::fputs(fmt::format("cclmesh: internal error: fiber '{}' threw while being torn down: {}\n", fiber,
                         exception_message(error))
                 .c_str(),
             stderr);
  std::terminate();
}

// AddressSanitizer must be told about every stack switch, or it reports false errors when an
// exception is thrown on a fiber stack (google/sanitizers#189).
void start_switch([[maybe_unused]] void** fake_stack, [[maybe_unused]] const void* bottom,
                  [[maybe_unused]] std::size_t size) {
#ifdef CCLMESH_FIBER_ASAN
  __sanitizer_start_switch_fiber(fake_stack, bottom, size);
#endif
}
void finish_switch([[maybe_unused]] void* fake_stack, [[maybe_unused]] const void** old_bottom,
                   [[maybe_unused]] std::size_t* old_size) {
#ifdef CCLMESH_FIBER_ASAN
  __sanitizer_finish_switch_fiber(fake_stack, old_bottom, old_size);
#endif
}

}  // namespace

Fiber::Fiber(std::function<void()> body, std::size_t stack_bytes)
    : Actor(Kind::Fiber), body_(std::move(body)), stack_bytes_(stack_bytes) {}

Fiber::~Fiber() {
  if (!context_) return;  // never started, or finished
  // Parked: resume it once more so suspend() throws FiberUnwind and the stack unwinds.
  unwinding_ = true;
  switch_in();
}


boost::context::fiber Fiber::run_body(boost::context::fiber&& scheduler) {
  finish_switch(nullptr, &scheduler_stack_bottom_, &scheduler_stack_size_);
  scheduler_ = std::move(scheduler);
  try {
    body_();
    set_state(State::Done);
  } catch (const FiberUnwind&) {
    // Teardown of a parked fiber: the stack has unwound; nothing to report.
  } catch (...) {
    // The teardown's forced unwind (unwind_stack) is foreign to C++: current_exception() is null
    // for it alone, and it ends here with nothing to report.
    std::exception_ptr error = std::current_exception();
    if (unwinding_) {
      if (error) fail_teardown(name(), error);
    } else {
      error_ = std::move(error);
      set_state(State::Failed);
    }
  }
  body_ = nullptr;
  // Leaving for good: a null fake-stack slot tells ASan this stack is going away.
  start_switch(nullptr, scheduler_stack_bottom_, scheduler_stack_size_);
  return std::move(scheduler_);
}

void Fiber::switch_in() {
  Fiber* outer = std::exchange(running_fiber, this);
  void* fake_stack = nullptr;
  start_switch(&fake_stack, stack_bottom_, stack_size_);
  context_ = std::move(context_).resume();
  finish_switch(fake_stack, nullptr, nullptr);
  running_fiber = outer;
}

void Fiber::resume_now() {
  if (!started_) {
    started_ = true;
    boost::context::fixedsize_stack allocator{stack_bytes_};
    boost::context::stack_context stack = allocator.allocate();
    stack_bottom_ = static_cast<char*>(stack.sp) - stack.size;
    stack_size_ = stack.size;
    context_ = boost::context::fiber{std::allocator_arg, boost::context::preallocated(stack.sp, stack.size, stack),
                                     allocator, [this](boost::context::fiber&& scheduler) {
                                       return run_body(std::move(scheduler));
                                     }};
  }
  CCLMESH_CHECK(static_cast<bool>(context_), "resuming a finished fiber '" + name() + "'");
  switch_in();
  if (!context_) {
    // Finished (normally or with an exception); the stack is gone.
    if (error_) engine()->report_failure(*this, error_);
  }
}

void Fiber::switch_out() {
  void* fake_stack = nullptr;
  start_switch(&fake_stack, scheduler_stack_bottom_, scheduler_stack_size_);
  scheduler_ = std::move(scheduler_).resume();
  finish_switch(fake_stack, &scheduler_stack_bottom_, &scheduler_stack_size_);
}

void Fiber::suspend() {
  CCLMESH_CHECK(running_fiber == this, "suspend() called from outside fiber '" + name() + "'");
  CCLMESH_CHECK(!unwinding_, "fiber '" + name() + "' tried to wait while being torn down");
  switch_out();
  if (unwinding_) unwind_stack();
}

}  // namespace cclmesh::sim
