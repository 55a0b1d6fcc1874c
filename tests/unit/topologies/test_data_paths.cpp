// Where the data files are found (topologies/data_paths.hpp): the source tree in a build tree,
// the environment's folders over it, a folder's own variable over CCLMESH_DATA_DIR.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include "tests/source_tree.hpp"
#include "topologies/data_paths.hpp"

namespace cclmesh::topo {
namespace {

// Sets (or, with nullopt, unsets) an environment variable for one test, restoring it after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      ::setenv(name, value->c_str(), 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// No variable set: the build tree's tests read the source tree.
struct NoDataEnv {
  ScopedEnv data{"CCLMESH_DATA_DIR", std::nullopt};
  ScopedEnv arch{"CCLMESH_ARCH_DIR", std::nullopt};
  ScopedEnv shared{"CCLMESH_SHARED_DIR", std::nullopt};
  ScopedEnv systems{"CCLMESH_TOPOLOGIES_DIR", std::nullopt};
};

TEST(DataPaths, BuildTreeReadsTheSourceTree) {
  NoDataEnv env;
  const std::filesystem::path source = testing::source_dir();
  EXPECT_EQ(arch_dir(), source / "sim/model/arch");
  EXPECT_EQ(systems_dir(), source / "topologies/systems");
  EXPECT_EQ(shared_dir(), testing::shared_dir());
  EXPECT_TRUE(std::filesystem::exists(arch_dir() / "wormhole_b0.yaml"));
  EXPECT_TRUE(std::filesystem::exists(shared_dir() / "ecosystem/soc_descriptors/wormhole_b0_8x10.yaml"));
}

TEST(DataPaths, DataDirStandsForTheInstalledFolder) {
  NoDataEnv env;
  ScopedEnv data("CCLMESH_DATA_DIR", "/opt/elsewhere/share/cclmesh");
  EXPECT_EQ(arch_dir(), std::filesystem::path("/opt/elsewhere/share/cclmesh/arch"));
  EXPECT_EQ(systems_dir(), std::filesystem::path("/opt/elsewhere/share/cclmesh/systems"));
  EXPECT_EQ(shared_dir() / "ecosystem", std::filesystem::path("/opt/elsewhere/share/cclmesh/ecosystem"));
}

TEST(DataPaths, AFoldersOwnVariableWinsOverDataDir) {
  NoDataEnv env;
  ScopedEnv data("CCLMESH_DATA_DIR", "/opt/elsewhere/share/cclmesh");
  ScopedEnv arch("CCLMESH_ARCH_DIR", "/tmp/my_arch");
  ScopedEnv shared("CCLMESH_SHARED_DIR", "/tmp/my_shared");
  ScopedEnv systems("CCLMESH_TOPOLOGIES_DIR", "/tmp/my_systems");
  EXPECT_EQ(arch_dir(), std::filesystem::path("/tmp/my_arch"));
  EXPECT_EQ(shared_dir(), std::filesystem::path("/tmp/my_shared"));
  EXPECT_EQ(systems_dir(), std::filesystem::path("/tmp/my_systems"));
}

TEST(DataPaths, AnEmptyVariableIsUnset) {
  NoDataEnv env;
  ScopedEnv data("CCLMESH_DATA_DIR", "");
  ScopedEnv arch("CCLMESH_ARCH_DIR", "");
  EXPECT_EQ(arch_dir(), testing::source_dir() / "sim/model/arch");
}

TEST(DataPaths, AVariableNamingNoDirectoryIsReportedByName) {
  NoDataEnv env;
  EXPECT_EQ(data_dir_variable_problem(), std::nullopt);
  ScopedEnv shared("CCLMESH_SHARED_DIR", testing::shared_dir().string());  // a directory: fine
  EXPECT_EQ(data_dir_variable_problem(), std::nullopt);
  ScopedEnv arch("CCLMESH_ARCH_DIR", "/nonexistent/arch");
  const std::optional<std::string> problem = data_dir_variable_problem();
  ASSERT_TRUE(problem.has_value());
  EXPECT_NE(problem->find("CCLMESH_ARCH_DIR: '/nonexistent/arch' is not a directory"), std::string::npos) << *problem;
  ScopedEnv data("CCLMESH_DATA_DIR", "/nonexistent/share");  // reported first, as the lookup reads it first
  EXPECT_EQ(data_dir_variable_problem()->rfind("CCLMESH_DATA_DIR: '/nonexistent/share'", 0), 0u);
}

}  // namespace
}  // namespace cclmesh::topo
