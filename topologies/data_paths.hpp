#pragma once
// Where topologies/ finds its data files at run time, from any working directory. The build
// bakes in the source paths; an environment variable overrides each one, for an installed tool
// or a relocated checkout.

#include <filesystem>

namespace cclmesh::topo {

// The built-in systems' YAML files: $CCLMESH_TOPOLOGIES_DIR, else <source>/topologies/systems.
std::filesystem::path systems_dir();

// The shared folder beside the repository (ecosystem/ lives there): $CCLMESH_SHARED_DIR, else
// the CMake cache variable CCLMESH_SHARED_DIR.
std::filesystem::path shared_dir();

}  // namespace cclmesh::topo
