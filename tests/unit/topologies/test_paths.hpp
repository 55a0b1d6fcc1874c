#pragma once
// Where the tests find the shared ecosystem files and their own fixtures, from any directory.

#include <filesystem>
#include <string>

#include "tests/source_tree.hpp"

namespace cclmesh::topo::test {

inline std::filesystem::path shared_file(const std::string& relative) {
  return cclmesh::testing::shared_dir() / "ecosystem" / relative;
}

inline std::filesystem::path cluster_descriptor(const std::string& file) {
  return shared_file("cluster_descriptors/" + file);
}

inline std::filesystem::path fixture(const std::string& file) {
  return cclmesh::testing::source_dir() / "tests" / "data" / "topologies" / file;
}

inline std::filesystem::path builtin_yaml(const std::string& name) {
  return cclmesh::testing::source_dir() / "topologies" / "systems" / (name + ".yaml");
}

}  // namespace cclmesh::topo::test
