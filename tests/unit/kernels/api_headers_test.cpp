// kernels/api is the device contract: its headers may include nothing but <cstdint>,
// <cstddef> and each other (DESIGN.md). The device-compile check target
// (kernels_api_device_check) additionally builds each header alone as C++17 without
// exceptions or RTTI.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "tests/source_tree.hpp"

namespace {

TEST(ApiHeaders, IncludeOnlyFixedWidthTypesAndEachOther) {
  const std::filesystem::path api_dir = cclmesh::testing::source_dir() / "kernels" / "api";
  const std::regex include_line(R"(^\s*#\s*include\s*([<"])([^>"]+)[>"])");
  int headers = 0;
  for (const auto& entry : std::filesystem::directory_iterator(api_dir)) {
    if (entry.path().extension() != ".hpp") {
      continue;
    }
    ++headers;
    std::ifstream in(entry.path());
    std::string line;
    while (std::getline(in, line)) {
      std::smatch m;
      if (!std::regex_search(line, m, include_line)) {
        continue;
      }
      const std::string target = m[2];
      const bool allowed = target == "cstdint" || target == "cstddef" ||
                           (m[1] == "\"" && target.rfind("kernels/api/", 0) == 0);
      EXPECT_TRUE(allowed) << entry.path().filename() << " includes " << target;
    }
  }
  EXPECT_GE(headers, 6);
}

}  // namespace
