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

#define CCLMESH_CHECK(condition, message)                                          \
  do {                                                                             \
    if (!(condition)) [[unlikely]] {                                               \
      ::cclmesh::fail_invariant(#condition, (message), __FILE__, __LINE__);        \
    }                                                                              \
  } while (false)
