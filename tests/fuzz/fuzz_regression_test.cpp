// Replays every input kept under tests/data/fuzz/<target>/ through its fuzz body, so a crash
// the fuzzer once found stays fixed. Runs in the normal suite (gcc, no libFuzzer needed).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_bodies.hpp"
#include "tests/source_tree.hpp"

namespace {

using Body = int (*)(const std::uint8_t*, std::size_t);

const std::map<std::string, Body>& bodies() {
  static const std::map<std::string, Body> table = {
      {"command_decoder", &cclmesh::fuzz::fuzz_command_decoder},
      {"cluster_descriptor", &cclmesh::fuzz::fuzz_cluster_descriptor},
      {"topology_yaml", &cclmesh::fuzz::fuzz_topology_yaml},
      {"cli_size", &cclmesh::fuzz::fuzz_cli_size},
      {"cli_fault_spec", &cclmesh::fuzz::fuzz_cli_fault_spec},
      {"command_interpreter", &cclmesh::fuzz::fuzz_command_interpreter},
      {"remote_protocol", &cclmesh::fuzz::fuzz_remote_protocol},
      {"remote_replies", &cclmesh::fuzz::fuzz_remote_replies},
  };
  return table;
}

std::vector<std::filesystem::path> inputs_of(const std::string& target) {
  std::vector<std::filesystem::path> files;
  const std::filesystem::path dir = cclmesh::testing::source_dir() / "tests/data/fuzz" / target;
  if (!std::filesystem::exists(dir)) return files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(FuzzRegression, EveryKeptInputIsHandled) {
  std::size_t replayed = 0;
  for (const auto& [target, body] : bodies()) {
    for (const auto& path : inputs_of(target)) {
      std::ifstream in(path, std::ios::binary);
      const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      SCOPED_TRACE(path.string());
      EXPECT_NO_THROW(body(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
      ++replayed;
    }
  }
  EXPECT_GT(replayed, 0u) << "tests/data/fuzz holds no inputs";
}

}  // namespace
