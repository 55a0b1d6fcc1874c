// An option a command does not take is named with the command and the way out (bug bash, session
// 38: CLI11 said "The following arguments were not expected: ring --topo"). The whole messages
// are the goldens run_unknown_option*, sweep_run_only_option*; this pins the guessing rule.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "tools/cclmesh/unknown_option_message.hpp"

namespace cclmesh::cli {
namespace {

struct Commands {
  CLI::App app{"test"};
  CLI::App* run = app.add_subcommand("run");
  CLI::App* sweep = app.add_subcommand("sweep");
  std::string value;
  Commands() {
    for (const char* name : {"--topology", "--links", "--link-rate", "--link-latency", "--op", "--size"}) {
      run->add_option(name, value);
    }
    sweep->add_option("-b,--minbytes", value);
    sweep->add_option("--csv", value);
    sweep->add_option("--op", value);
  }
};

TEST(ClosestOptionName, APrefixOfOneOptionNamesIt) {
  Commands c;
  EXPECT_EQ(closest_option_name(*c.run, "--topo"), std::optional<std::string>("--topology"));
}

TEST(ClosestOptionName, APrefixOfSeveralTakesTheNearestByEdits) {
  Commands c;
  EXPECT_EQ(closest_option_name(*c.run, "--link"), std::optional<std::string>("--links"));
  EXPECT_EQ(closest_option_name(*c.run, "--linkrate"), std::optional<std::string>("--link-rate"));
}

TEST(ClosestOptionName, NothingCloseAndShortOptionsGetNoGuess) {
  Commands c;
  EXPECT_EQ(closest_option_name(*c.run, "--xyzzy"), std::nullopt);
  EXPECT_EQ(closest_option_name(*c.run, "-x"), std::nullopt);   // two edits from --op's "op"
  EXPECT_EQ(closest_option_name(*c.run, "--ab"), std::nullopt);  // too short to guess from
}

TEST(UnknownOptionMessage, NamesTheCommandThatTakesAnotherCommandsOption) {
  Commands c;
  EXPECT_EQ(unknown_option_message(*c.run, {"-b", "1MiB"}),
            std::optional<std::string>("-b: not an option of `cclmesh run`, it is `cclmesh sweep`'s (`cclmesh run "
                                       "--help` lists its options)"));
}

TEST(UnknownOptionMessage, ReadsTheOptionOutOfNameEqualsValue) {
  Commands c;
  EXPECT_EQ(unknown_option_message(*c.run, {"--topo=ring"}),
            std::optional<std::string>("--topo: not an option of `cclmesh run`; did you mean --topology? (`cclmesh "
                                       "run --help` lists its options)"));
}

TEST(UnknownOptionMessage, LeavesAStrayValueOrNegativeNumberToCli11) {
  Commands c;
  EXPECT_EQ(unknown_option_message(*c.run, {"extra"}), std::nullopt);
  EXPECT_EQ(unknown_option_message(*c.run, {"-5"}), std::nullopt);
}

}  // namespace
}  // namespace cclmesh::cli
