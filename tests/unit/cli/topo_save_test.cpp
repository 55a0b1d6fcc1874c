// `cclmesh topo --save FILE` writes like every other output file (output_file.hpp): a symlink's
// target is written and the link kept, a pipe is written in place (Review, session 10, left:
// it wrote through save_topology's temporary-and-rename, which replaced both).
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tools/cclmesh/cli_error.hpp"
#include "tests/unit/cli/cli_test_util.hpp"
#include "tools/cclmesh/commands.hpp"
#include "topologies/system_loader.hpp"
#include "topologies/topology_yaml.hpp"

namespace cclmesh::cli {
namespace {

namespace fs = std::filesystem;

using testing_util::read_file;
using testing_util::run_cli;
using testing_util::TempDirTest;

using TopoSave = TempDirTest;

TEST_F(TopoSave, WritesThroughASymlinkAndKeepsIt) {
  const fs::path target = dir_ / "systems" / "n300.yaml";
  fs::create_directories(target.parent_path());
  std::ofstream(target) << "an older file";
  const fs::path link = dir_ / "current.yaml";
  fs::create_symlink(fs::path("systems") / "n300.yaml", link);
  EXPECT_EQ(run_cli({"topo", "--system", "n300", "--save", link.string()}), kExitOk);
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(link))) << "the user's link was replaced by a regular file";
  EXPECT_EQ(read_file(target), topo::to_yaml(topo::load_system("n300")));
}

TEST_F(TopoSave, WritesIntoAPipeInPlace) {
  const fs::path fifo = dir_ / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  EXPECT_EQ(run_cli({"topo", "--system", "n150", "--save", fifo.string()}), kExitOk);
  std::string got;
  char buffer[4096];
  for (ssize_t n; (n = ::read(reader, buffer, sizeof buffer)) > 0;) got.append(buffer, static_cast<std::size_t>(n));
  ::close(reader);
  EXPECT_TRUE(fs::is_fifo(fs::status(fifo))) << "the pipe was replaced by a regular file";
  EXPECT_EQ(got, topo::to_yaml(topo::load_system("n150")));
}

}  // namespace
}  // namespace cclmesh::cli
