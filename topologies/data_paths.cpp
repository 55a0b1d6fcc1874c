#include "topologies/data_paths.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <system_error>

#if !defined(CCLMESH_TOPOLOGIES_SYSTEMS_DIR) || !defined(CCLMESH_TOPOLOGIES_SHARED_DIR) || \
    !defined(CCLMESH_TOPOLOGIES_ARCH_DIR) || !defined(CCLMESH_INSTALL_DATA_DIR)
#error "topologies/CMakeLists.txt names the source and installed data folders"
#endif

namespace cclmesh::topo {
namespace {

const char* env(const char* variable) {
  const char* value = std::getenv(variable);
  return value != nullptr && *value != '\0' ? value : nullptr;
}

bool is_dir(const std::filesystem::path& path) {
  std::error_code ec;
  return std::filesystem::is_directory(path, ec);
}

// <dir of the running program>/../share/cclmesh; empty when the program's path is unknown.
std::filesystem::path beside_program() {
  std::error_code ec;
  const std::filesystem::path program = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec || program.empty()) return {};
  return program.parent_path().parent_path() / "share" / "cclmesh";
}

// The lookup order of data_paths.hpp for one folder: `variable`, then `installed` under an
// installed data folder, the build's `source` folder, and the configured install prefix's.
std::filesystem::path find_dir(const char* variable, const std::filesystem::path& installed, const char* source) {
  if (const char* value = env(variable)) return value;
  if (const char* data = env("CCLMESH_DATA_DIR")) return std::filesystem::path(data) / installed;
  const std::filesystem::path program_data = beside_program();
  if (!program_data.empty() && is_dir(program_data / installed)) return program_data / installed;
  if (is_dir(source)) return source;
  return std::filesystem::path(CCLMESH_INSTALL_DATA_DIR) / installed;
}

}  // namespace

std::filesystem::path systems_dir() {
  return find_dir("CCLMESH_TOPOLOGIES_DIR", "systems", CCLMESH_TOPOLOGIES_SYSTEMS_DIR);
}

std::filesystem::path shared_dir() {
  // The installed data folder stands in for shared/: its ecosystem/ holds the SoC descriptors.
  return find_dir("CCLMESH_SHARED_DIR", "", CCLMESH_TOPOLOGIES_SHARED_DIR);
}

std::filesystem::path arch_dir() { return find_dir("CCLMESH_ARCH_DIR", "arch", CCLMESH_TOPOLOGIES_ARCH_DIR); }

std::optional<std::string> data_dir_variable_problem() {
  struct Variable {
    const char* name;
    const char* expected;
  };
  static constexpr Variable kVariables[] = {
      {"CCLMESH_DATA_DIR", "an installed data folder, <prefix>/share/cclmesh"},
      {"CCLMESH_TOPOLOGIES_DIR", "the folder of the built-in systems' YAML files"},
      {"CCLMESH_SHARED_DIR", "the shared folder whose ecosystem/soc_descriptors holds the SoC descriptors"},
      {"CCLMESH_ARCH_DIR", "the folder of the architecture parameter files (wormhole_b0.yaml, blackhole.yaml)"},
  };
  for (const Variable& variable : kVariables) {
    const char* value = env(variable.name);
    if (value != nullptr && !is_dir(value)) {
      return fmt::format("{}: '{}' is not a directory; expected {} (docs/library.md, \"Data files at run time\")", variable.name,
                         value, variable.expected);
    }
  }
  return std::nullopt;
}

}  // namespace cclmesh::topo
