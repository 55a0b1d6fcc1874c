#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "test_paths.hpp"
#include "topologies/builtin_systems.hpp"
#include "topologies/data_paths.hpp"
#include "topologies/errors.hpp"
#include "topologies/system_loader.hpp"

namespace cclmesh::topo {
namespace {

using ::testing::HasSubstr;

TEST(SystemLoader, BuiltinNames) {
  EXPECT_EQ(load_system("t3k"), build_t3k());
  EXPECT_EQ(load_system("bh_galaxy"), build_bh_galaxy());
}

TEST(SystemLoader, ParametricSpecs) {
  const Topology t = load_system("torus:8x8/3@bh");
  EXPECT_EQ(t.name(), "torus:8x8/3@bh");
  EXPECT_EQ(t.chip_count(), 64u);
  EXPECT_THROW((void)load_system("torus:8x8/4@bh"), InputError);
}

TEST(SystemLoader, DetectsTheFileFormat) {
  const Topology umd = load_system(test::cluster_descriptor("t3k_cluster_desc.yaml").string());
  EXPECT_EQ(umd.name(), "t3k_cluster_desc");
  EXPECT_EQ(umd.chip_count(), 8u);
  const Topology own = load_system(test::builtin_yaml("tg").string());
  EXPECT_EQ(own, build_tg());
}

TEST(SystemLoader, SystemsDirectoryHoldsTheBuiltinFiles) {
  EXPECT_TRUE(std::filesystem::exists(systems_dir() / "t3k.yaml")) << systems_dir();
  EXPECT_TRUE(std::filesystem::exists(shared_dir() / "ecosystem")) << shared_dir();
}

TEST(SystemLoader, UnknownSpecSaysWhatWasExpected) {
  try {
    (void)load_system("t3000");
    FAIL() << "t3000 loaded";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("system 't3000': not a built-in system"));
    EXPECT_THAT(e.what(), HasSubstr("n150, n300, t3k, tg, galaxy, p150, p300, bh_galaxy"));
  }
}

// The specs the refusal offers as examples are ones a user can copy: each loads (session 39's bug
// bash: it offered torus:8x8/4@bh, which needs 16 channels per Blackhole chip and is refused).
TEST(SystemLoader, UnknownSpecsExamplesAllLoad) {
  std::string message;
  try {
    (void)load_system("t3000");
  } catch (const InputError& e) {
    message = e.what();
  }
  const std::string before = "a spec such as ";
  const std::string after = ", or the path of a YAML file";
  const std::size_t from = message.find(before);
  const std::size_t to = message.find(after);
  ASSERT_NE(from, std::string::npos) << message;
  ASSERT_NE(to, std::string::npos) << message;
  std::string examples = message.substr(from + before.size(), to - from - before.size());
  for (const std::string separator : {", ", " or "}) {
    for (std::size_t at = examples.find(separator); at != std::string::npos; at = examples.find(separator)) {
      examples.replace(at, separator.size(), " ");
    }
  }
  std::istringstream words(examples);
  int loaded = 0;
  for (std::string example; words >> example; ++loaded) {
    EXPECT_NO_THROW((void)load_system(example)) << example;
  }
  EXPECT_EQ(loaded, 3) << examples;
}

TEST(SystemLoader, YamlOfNeitherFormat) {
  try {
    (void)load_topology_any_format(test::fixture("neither_format.yaml").string());
    FAIL() << "loaded a file of no known format";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("neither_format.yaml:1: top level: neither a tt-umd cluster "
                                    "descriptor"));
  }
}

}  // namespace
}  // namespace cclmesh::topo
