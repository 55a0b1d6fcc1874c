#pragma once
// Always-on invariant checks (DESIGN.md, error tier 2): unlike assert, they stay in release
// builds and throw with the place and the broken condition.

#include <stdexcept>
#include <string>

namespace cclmesh {

// A broken internal invariant: a bug in cclmesh, never a user error.
class InvariantError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

[[noreturn]] void fail_invariant(const char* condition, const std::string& message, const char* file,
                                 int line);

}  // namespace cclmesh

// The message is built inside a cold, never-inlined lambda: built inline, its string
// temporaries made GCC give every function holding a check a stack frame and saved registers
// on its common path (docs/performance.md, fourteenth pass: `Engine::wake_at`, `Fiber::suspend`,
// `Noc::requester_endpoint`). The lambda captures by reference, so the message still sees
// every local; the common path pays one compare and branch.
#define CCLMESH_CHECK(condition, message)                                                       \
  do {                                                                                          \
    if (!(condition)) [[unlikely]] {                                                            \
      [&]() __attribute__((cold, noinline, noreturn)) {                                         \
        ::cclmesh::fail_invariant(#condition, (message), __FILE__, __LINE__);                   \
      }();                                                                                      \
    }                                                                                           \
  } while (false)
