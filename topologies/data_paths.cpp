#include "topologies/data_paths.hpp"

#include <cstdlib>

namespace cclmesh::topo {
namespace {

std::filesystem::path from_env_or(const char* variable, const char* fallback) {
  const char* value = std::getenv(variable);
  if (value != nullptr && *value != '\0') return value;
  return fallback;
}

}  // namespace

std::filesystem::path systems_dir() {
  return from_env_or("CCLMESH_TOPOLOGIES_DIR", CCLMESH_TOPOLOGIES_SYSTEMS_DIR);
}

std::filesystem::path shared_dir() {
  return from_env_or("CCLMESH_SHARED_DIR", CCLMESH_TOPOLOGIES_SHARED_DIR);
}

}  // namespace cclmesh::topo
