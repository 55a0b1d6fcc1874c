#pragma once
// Writes an output file atomically: to a temporary beside it, then renamed, so a failure never
// leaves a half-written file. "-" means standard output.

#include <string>
#include <string_view>

namespace cclmesh::cli {

void write_output(const std::string& path, std::string_view content, std::string_view option);

}  // namespace cclmesh::cli
