#pragma once
// What the CLI tests that drive `cclmesh` in-process and look at the files it leaves share: the
// command run through the real command registration with its printing captured, a file read
// whole, and a fresh directory per test (named by suite, process and test, so parallel ctest
// runs and reruns never see each other's files).
#include <CLI/CLI.hpp>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tools/cclmesh/commands.hpp"

namespace cclmesh::cli::testing_util {

// Runs `cclmesh <args>` in-process; returns its exit code and what it printed on stdout (stderr
// is captured and dropped; both captures end also when parsing throws, so the next starts clean).
inline std::pair<int, std::string> run_cli_output(std::vector<std::string> args) {
  CLI::App app;
  CommandOutcome outcome;
  register_commands(app, outcome);
  args.insert(args.begin(), "cclmesh");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (...) {
    ::testing::internal::GetCapturedStdout();
    ::testing::internal::GetCapturedStderr();
    throw;
  }
  std::string printed = ::testing::internal::GetCapturedStdout();
  ::testing::internal::GetCapturedStderr();
  return {outcome.exit_code, std::move(printed)};
}

// The same, the exit code alone.
inline int run_cli(std::vector<std::string> args) { return run_cli_output(std::move(args)).first; }

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A test fixture with its own empty directory `dir_`, removed after the test.
class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() / ("cclmesh_" + std::string(info->test_suite_name()) + "_" +
                                                     std::to_string(::getpid()) + "_" + info->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

}  // namespace cclmesh::cli::testing_util
