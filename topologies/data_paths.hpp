#pragma once
// Where cclmesh finds its data files at run time, from any working directory, in a build tree
// and in an installed one (docs/library.md, "Data files"). Each folder is, in this order:
//   1. its own environment variable, if set (CCLMESH_TOPOLOGIES_DIR, CCLMESH_SHARED_DIR,
//      CCLMESH_ARCH_DIR);
//   2. under $CCLMESH_DATA_DIR, if set: an installed data folder moved elsewhere;
//   3. under <dir of the running program>/../share/cclmesh, if the folder is there: an installed
//      program (the cclmesh binary, or a user's program installed into the same prefix);
//   4. the source tree the library was built from, if the folder is there: the build tree;
//   5. under the data folder of the install prefix configured at build time
//      (<CMAKE_INSTALL_PREFIX>/share/cclmesh): a program built elsewhere against an installed
//      cclmesh whose source tree is gone.
// The installed data folder holds systems/, arch/ and ecosystem/soc_descriptors/ (cmake/install.cmake).

#include <filesystem>
#include <optional>
#include <string>

namespace cclmesh::topo {

// The built-in systems' YAML files (source: topologies/systems; installed: systems/).
std::filesystem::path systems_dir();

// The shared folder beside the repository, whose ecosystem/ holds the SoC descriptors (source:
// the CMake cache variable CCLMESH_SHARED_DIR; installed: the data folder itself).
std::filesystem::path shared_dir();

// The simulator's per-architecture parameter files (source: sim/model/arch; installed: arch/).
std::filesystem::path arch_dir();

// Bad input in the environment: the first of CCLMESH_DATA_DIR, CCLMESH_TOPOLOGIES_DIR,
// CCLMESH_SHARED_DIR and CCLMESH_ARCH_DIR that is set but names no directory, as one line
// (variable, value, what was expected); nullopt when every one set is a directory. A program
// reports it before it reads a data file, so the user hears of the variable, not of a file
// missing under it.
std::optional<std::string> data_dir_variable_problem();

}  // namespace cclmesh::topo
