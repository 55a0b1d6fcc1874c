// The CLI's output files (--json, --trace, --report, --csv, --plot, --svg, --dot): a file is
// replaced whole or not at all, and what the user's path names survives being written: a
// symlink stays a link (its target is written), a pipe or device is written in place (not
// replaced by a regular file), an existing file keeps its permissions, and a file of the user's
// that happens to be named like our temporary is not touched. Review (session 10).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "tools/cclmesh/cli_error.hpp"
#include "tools/cclmesh/output_file.hpp"

namespace cclmesh::cli {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class OutputFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fmt_dir_name();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static std::string fmt_dir_name() {
    return "cclmesh_output_file_test_" + std::to_string(::getpid()) + "_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
  }
  static std::string read(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  static void write(const fs::path& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }
  // Every entry of the directory but the ones named: no temporary may be left behind.
  std::size_t entries() const {
    std::size_t n = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir_)) ++n;
    return n;
  }

  fs::path dir_;
};

TEST_F(OutputFile, ReplacesAnExistingFileWhole) {
  const fs::path file = dir_ / "out.json";
  write(file, "an older and much longer result that must not survive in part");
  write_output(file.string(), "{}", "--json");
  EXPECT_EQ(read(file), "{}");
  EXPECT_EQ(entries(), 1u);
}

TEST_F(OutputFile, WritesThroughASymlinkAndKeepsIt) {
  const fs::path target = dir_ / "results" / "run.json";
  fs::create_directories(target.parent_path());
  write(target, "old");
  const fs::path link = dir_ / "latest.json";
  fs::create_symlink(fs::path("results") / "run.json", link);
  write_output(link.string(), "new", "--json");
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(link))) << "the user's link was replaced by a regular file";
  EXPECT_EQ(read(target), "new");
  EXPECT_EQ(entries(), 2u);  // the link and the results directory; no temporary left
  std::size_t in_results = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(target.parent_path())) ++in_results;
  EXPECT_EQ(in_results, 1u);
}

// A pipe (a shell's >(...) or a named FIFO) cannot be replaced by renaming a file over it: the
// reader would never see the output, and the pipe would be gone. The same holds for /dev/null
// and /dev/stdout, which are not touched here (as root the old behaviour replaced them).
TEST_F(OutputFile, WritesIntoAPipeInPlace) {
  const fs::path fifo = dir_ / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  write_output(fifo.string(), "through the pipe", "--trace");
  char buffer[64] = {};
  const ssize_t got = ::read(reader, buffer, sizeof buffer - 1);
  ::close(reader);
  EXPECT_EQ(std::string(buffer, got > 0 ? static_cast<std::size_t>(got) : 0), "through the pipe");
  EXPECT_TRUE(fs::is_fifo(fs::status(fifo))) << "the pipe was replaced by a regular file";
  EXPECT_EQ(entries(), 1u);
}

// `run --json /dev/stdout > log` and `--json log >> log`: the path names the file stdout is open
// on, so the JSON goes after the table stdout already printed there. Replacing the file by a
// renamed temporary left the file holding the JSON alone (the table, and with `>>` the log's
// earlier lines, gone; bug bash, session 31).
TEST_F(OutputFile, APathNamingStdoutsOwnFileIsWrittenAfterWhatStdoutPrinted) {
  const fs::path log = dir_ / "log.txt";
  write(log, "earlier line\n");
  for (const std::string& path : {std::string("/dev/stdout"), log.string()}) {
    std::cout.flush();
    const int saved_stdout = ::dup(STDOUT_FILENO);
    ASSERT_GE(saved_stdout, 0);
    const int appended = ::open(log.c_str(), O_WRONLY | O_APPEND);
    ASSERT_GE(appended, 0);
    ASSERT_EQ(::dup2(appended, STDOUT_FILENO), STDOUT_FILENO);
    ::close(appended);
    std::cout << "the table\n" << std::flush;
    check_output_path(path, "--json");
    write_output(path, "{\"json\": 1}\n", "--json");
    std::cout.flush();
    ASSERT_EQ(::dup2(saved_stdout, STDOUT_FILENO), STDOUT_FILENO);
    ::close(saved_stdout);
  }
  EXPECT_EQ(read(log), "earlier line\nthe table\n{\"json\": 1}\nthe table\n{\"json\": 1}\n");
  EXPECT_EQ(entries(), 1u) << "a temporary was left, or the log replaced";
}

TEST_F(OutputFile, APathNamingStderrsOwnFileIsWrittenThroughStderr) {
  const fs::path log = dir_ / "err.txt";
  write(log, "earlier\n");
  std::cerr.flush();
  const int saved_stderr = ::dup(STDERR_FILENO);
  ASSERT_GE(saved_stderr, 0);
  const int appended = ::open(log.c_str(), O_WRONLY | O_APPEND);
  ASSERT_GE(appended, 0);
  ASSERT_EQ(::dup2(appended, STDERR_FILENO), STDERR_FILENO);
  ::close(appended);
  write_output("/dev/stderr", "a,b\n", "--csv");
  ASSERT_EQ(::dup2(saved_stderr, STDERR_FILENO), STDERR_FILENO);
  ::close(saved_stderr);
  EXPECT_EQ(read(log), "earlier\na,b\n");
}

TEST_F(OutputFile, KeepsAnExistingFilesPermissions) {
  const fs::path file = dir_ / "private.json";
  write(file, "old");
  fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write, fs::perm_options::replace);
  write_output(file.string(), "new", "--json");
  EXPECT_EQ(read(file), "new");
  EXPECT_EQ(fs::status(file).permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write);
}

TEST_F(OutputFile, LeavesAUserFileNamedLikeATemporaryAlone) {
  const fs::path file = dir_ / "out.json";
  write(dir_ / "out.json.tmp", "the user's own file");
  write_output(file.string(), "{}", "--json");
  EXPECT_EQ(read(file), "{}");
  ASSERT_TRUE(fs::exists(dir_ / "out.json.tmp"));
  EXPECT_EQ(read(dir_ / "out.json.tmp"), "the user's own file");
  EXPECT_EQ(entries(), 2u);
}

TEST_F(OutputFile, RefusesADirectoryOrAMissingOneNamingTheOption) {
  try {
    write_output(dir_.string(), "{}", "--json");
    FAIL() << "a directory was accepted";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("--json"));
    EXPECT_THAT(e.what(), HasSubstr(dir_.string()));
  }
  const fs::path missing = dir_ / "no_such_dir" / "out.json";
  try {
    write_output(missing.string(), "{}", "--trace");
    FAIL() << "a missing directory was accepted";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("--trace"));
    EXPECT_THAT(e.what(), HasSubstr(missing.string()));
  }
  EXPECT_EQ(entries(), 0u);
}

// The check the commands run before simulating, so a bad path costs no simulation.
TEST_F(OutputFile, PathsAreCheckedBeforeAnythingIsWritten) {
  EXPECT_NO_THROW(check_output_path("-", "--json"));
  EXPECT_NO_THROW(check_output_path((dir_ / "new.json").string(), "--json"));
  EXPECT_THROW(check_output_path((dir_ / "missing" / "new.json").string(), "--json"), UsageError);
  EXPECT_THROW(check_output_path(dir_.string(), "--report"), UsageError);
  EXPECT_EQ(entries(), 0u);
}

// Bug bash, session 44: a directory whose mode bits let root write but which takes no new file
// (/proc; an NFS export that squashes root) passed the check, and the run failed only when it
// wrote its result. It is refused before, and the check leaves nothing behind.
TEST_F(OutputFile, ADirectoryThatTakesNoNewFileIsRefusedBeforeTheRun) {
  if (!fs::is_directory("/proc/self")) GTEST_SKIP() << "no /proc";
  try {
    check_output_path("/proc/cclmesh_output_file_test.json", "--json");
    FAIL() << "/proc was accepted";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("--json: cannot write '/proc/cclmesh_output_file_test.json'"));
  }
  check_output_path((dir_ / "new.json").string(), "--json");
  EXPECT_EQ(entries(), 0u);
}

// Two outputs of one command naming one file: the last written would replace the other.
TEST_F(OutputFile, TwoOutputsNamingOneFileAreRefused) {
  EXPECT_NO_THROW(require_distinct_outputs({{"a.json", "--trace"}, {"b.json", "--json"}, {"", "--report"}}));
  // Two on stdout would print one after the other (stdout_outputs_test; session 28, before: passed).
  EXPECT_THROW(require_distinct_outputs({{"-", "--csv"}, {"-", "--json"}}), UsageError);
  try {
    require_distinct_outputs({{"out/r.json", "--trace"}, {"", "--report"}, {"out/./r.json", "--json"}});
    FAIL() << "one file named twice was accepted";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "--json: 'out/./r.json' is also --trace's file; give each output its own file");
  }
}

}  // namespace
}  // namespace cclmesh::cli
