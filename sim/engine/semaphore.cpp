#include "sim/engine/semaphore.hpp"

#include <fmt/format.h>

namespace cclmesh::sim {

std::string Semaphore::describe_wait(std::int64_t amount) const {
  return fmt::format("semaphore '{}' (needs {}, has {}, {} waiting)", name_, amount, count_, waiters_.size());
}

}  // namespace cclmesh::sim
