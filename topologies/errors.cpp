#include "topologies/errors.hpp"

#include <fmt/format.h>

namespace cclmesh::topo {

void fail_internal(const char* condition, std::string_view message, const char* file, int line) {
  throw InternalError(fmt::format("internal error at {}:{}: check '{}' failed: {}", file, line,
                                  condition, message));
}

}  // namespace cclmesh::topo
