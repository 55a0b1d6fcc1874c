#include "sim/engine/check.hpp"

#include <fmt/format.h>

namespace cclmesh {

void fail_invariant(const char* condition, const std::string& message, const char* file, int line) {
  throw InvariantError(fmt::format("internal error at {}:{}: {} (check `{}` failed)", file, line, message,
                                   condition));
}

}  // namespace cclmesh
