#pragma once
// Bad command-line input: the CLI prints the message on one line and exits with code 2.

#include <stdexcept>
#include <string>

namespace cclmesh::cli {

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Exit codes, a contract with scripts and CI (issue 7): 0 ok, 1 data did not verify,
// 2 bad input, 3 simulated hang or fault stopped the op, 4 cclmesh itself failed (an internal
// error, or a `sweep -j` point's process that died without a result).
inline constexpr int kExitOk = 0;
inline constexpr int kExitDataMismatch = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitHangOrFault = 3;
inline constexpr int kExitInternalError = 4;

}  // namespace cclmesh::cli
