#include "tests/source_tree.hpp"

#if !defined(CCLMESH_SOURCE_DIR) || !defined(CCLMESH_SHARED_DIR)
#error "tests/CMakeLists.txt defines CCLMESH_SOURCE_DIR and CCLMESH_SHARED_DIR for this file"
#endif

namespace cclmesh::testing {

std::filesystem::path source_dir() { return CCLMESH_SOURCE_DIR; }
std::filesystem::path shared_dir() { return CCLMESH_SHARED_DIR; }

}  // namespace cclmesh::testing
