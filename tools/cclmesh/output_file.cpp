#include "tools/cclmesh/output_file.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "tools/cclmesh/cli_error.hpp"

namespace cclmesh::cli {

void write_output(const std::string& path, std::string_view content, std::string_view option) {
  if (path == "-") {
    std::cout << content;
    if (!content.empty() && content.back() != '\n') std::cout << '\n';
    std::cout.flush();
    return;
  }
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) {
      throw UsageError(fmt::format("{}: cannot write '{}': {}", option, path, std::strerror(errno)));
    }
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    if (!out.flush()) {
      std::filesystem::remove(temporary);
      throw UsageError(fmt::format("{}: cannot write '{}': {}", option, path, std::strerror(errno)));
    }
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) {
    std::filesystem::remove(temporary);
    throw UsageError(fmt::format("{}: cannot write '{}': {}", option, path, error.message()));
  }
}

}  // namespace cclmesh::cli
