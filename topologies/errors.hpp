#pragma once
// The two error tiers of topologies/ (DESIGN.md "Errors"): bad input from a user (files, system
// specs, chip sets) and broken invariants inside cclmesh. They never mix: a loader turns every
// problem in a file into an InputError before any value is built, so an InternalError is a bug.

#include <stdexcept>
#include <string>
#include <string_view>

namespace cclmesh::topo {

// Bad input: the one-line message names the file or spec, the entry, the value and what was
// expected. The CLI prints it and exits with status 2.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A requested embedding (line, ring, mesh shape) that the topology cannot provide. It is still
// bad input (the user asked for something the machine does not have), so it derives from
// InputError; the message says why.
class EmbeddingError : public InputError {
 public:
  using InputError::InputError;
};

// A broken internal invariant: a bug in cclmesh, never a user error.
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

[[noreturn]] void fail_internal(const char* condition, std::string_view message, const char* file,
                                int line);

}  // namespace cclmesh::topo

// Always on, unlike assert, which vanishes in release builds.
#define CCLMESH_TOPO_CHECK(condition, message)                                   \
  do {                                                                           \
    if (!(condition)) [[unlikely]] {                                             \
      ::cclmesh::topo::fail_internal(#condition, (message), __FILE__, __LINE__); \
    }                                                                            \
  } while (false)
