// Option values the commands refused too late or not at all (session 18): every option of every
// command that takes a value refuses an empty one (the commands keep an empty value for "not
// given", so `--json ''` or `--trace "$UNSET"` ran and wrote nothing, with exit 0, and `serve
// --trace-dir ''` served with no traces); --seed refuses a negative number (CLI11 read "-1" as
// 2^64 - 1 and ran with it) and --root a word, naming what they expect.
#include <CLI/CLI.hpp>
#include <gmock/gmock.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "tools/cclmesh/cli_error.hpp"
#include "tools/cclmesh/commands.hpp"
#include "tools/cclmesh/op_runner.hpp"

namespace cclmesh::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// Thrown once every option has been parsed and validated, before the command runs.
struct Accepted {};

// The commands as `cclmesh` registers them, stopped after parsing (the top-level app's
// parse-complete callback runs before the commands' own): nothing simulates or serves whatever
// the options say.
struct ParseOnly {
  CLI::App app;
  CommandOutcome outcome;
  ParseOnly() {
    register_commands(app, outcome);
    app.parse_complete_callback([] { throw Accepted{}; });
  }
  // True when the arguments were accepted.
  bool parse(std::vector<std::string> args) {
    args.insert(args.begin(), "cclmesh");
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    try {
      app.parse(static_cast<int>(argv.size()), argv.data());
    } catch (const Accepted&) {
      return true;
    }
    return false;  // not reached: the callback always throws
  }
};

TEST(OptionValues, EveryValueOptionOfEveryCommandRefusesIt) {
  std::size_t checked = 0;
  const ParseOnly listing;
  for (const CLI::App* listed : listing.app.get_subcommands({})) {
    const std::string command = listed->get_name();
    for (const CLI::Option* option : listed->get_options()) {
      if (option->get_expected_max() == 0) continue;  // a flag takes no value
      const std::string name = option->get_name();
      std::vector<std::string> args{command, name, ""};
      if (name != "--system") args.insert(args.end(), {"--system", "t3k"});  // topo and serve require one
      ParseOnly cli;
      try {
        EXPECT_FALSE(cli.parse(args)) << "cclmesh " << command << " " << name << " '' was accepted";
      } catch (const CLI::ParseError& e) {  // main() prints it on one line and exits 2
        // An option with a list of values or a range of its own says so; every other one says
        // the value is empty and where the expected value is described.
        EXPECT_THAT(e.what(), StartsWith(name + ": ")) << command;
        const bool own_check = std::string(e.what()).find(" not in ") != std::string::npos;
        if (!own_check) {
          EXPECT_THAT(e.what(), HasSubstr(": an empty value; expected what `cclmesh " + command + " --help`"));
        }
      }
      ++checked;
    }
  }
  EXPECT_GT(checked, 60u);  // run, sweep, topo and serve together
}

TEST(OptionValues, GivenValuesAndLeftOutOptionsStillParse) {
  EXPECT_TRUE(ParseOnly().parse({"run", "--system", "n300", "--json", "-", "--trace", "t.json"}));
  EXPECT_TRUE(ParseOnly().parse({"topo", "--system", "t3k"}));
  EXPECT_TRUE(ParseOnly().parse({"serve", "--system", "t3k", "--trace-dir", "."}));
}

// The message main() prints for `cclmesh <args>`, or "" when they were accepted.
std::string refusal(std::vector<std::string> args) {
  try {
    if (ParseOnly().parse(std::move(args))) return "";
  } catch (const UsageError& e) {
    return e.what();
  } catch (const CLI::ParseError& e) {
    return e.what();
  }
  return "";
}

TEST(OptionValues, SeedAndRootAreWholeNumbersNamedWhenNot) {
  for (const char* command : {"run", "sweep"}) {
    EXPECT_EQ(refusal({command, "--seed", "-1"}),
              "--seed: invalid seed '-1': expected a whole number from 0 to 18446744073709551615")
        << command;
    EXPECT_EQ(refusal({command, "--seed", "18446744073709551616"}),
              "--seed: invalid seed '18446744073709551616': expected a whole number from 0 to 18446744073709551615");
    EXPECT_EQ(refusal({command, "--root", "abc"}), "--root: invalid rank 'abc': expected a rank 0 .. N-1 of a group of N chips");
    EXPECT_EQ(refusal({command, "--root", "-1"}), "--root: invalid rank '-1': expected a rank 0 .. N-1 of a group of N chips");
    EXPECT_THAT(refusal({command, "--root", "4294967296"}), StartsWith("--root: 4294967296 is not a rank of any group"));
    EXPECT_EQ(refusal({command, "--seed", "18446744073709551615", "--root", "7"}), "");
  }
}

// A --fabric-payload below one page was refused in the library's words alone ("page size 2048 B
// does not fit a fabric packet of 100 B"), naming no option (session 18's new-user pass).
TEST(OptionValues, AFabricPayloadBelowAPageIsNamed) {
  RunOptions o;
  o.system = "n300";
  o.size_bytes = 1 << 20;
  o.fabric_payload_bytes = 100;
  try {
    run_collective(o);
    ADD_FAILURE() << "ran with a 100 B fabric payload";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--fabric-payload: page size 2048 B does not fit a fabric packet of 100 B; expected a payload of at "
              "least the page");
  }
  o.fabric_payload_bytes = 2048;  // one page: runs
  EXPECT_EQ(run_collective(o).verified, true);
}

// A row-major page above the largest payload --fabric-payload takes was refused with the advice
// "expected a payload of at least the page", which no --fabric-payload could follow (session 32:
// rows of 6144 bf16, 12288 B, against the 7616 B maximum), and from then on with "--layout tile, or
// shorter rows". Since session 35 every op moves such rows in pieces (12288 B: 3 of 4096 B under
// the 4352 B payload, 2 of 6144 B under 7616 B), so the CLI runs them, verified.
TEST(OptionValues, APageAboveTheLargestPayloadRunsInPieces) {
  RunOptions o;
  o.system = "t3k";
  o.cluster_axis = 0;
  o.layout = "row_major";
  o.memory = "l1";
  o.shape = std::array<std::uint32_t, 4>{1, 1, 8, 6144};
  for (const CollectiveOp op : {CollectiveOp::AllReduce, CollectiveOp::AllBroadcast, CollectiveOp::AllGather,
                                CollectiveOp::ReduceScatter, CollectiveOp::AllToAll}) {
    o.op = op;
    o.dim = op == CollectiveOp::AllReduce || op == CollectiveOp::AllBroadcast ? std::nullopt
                                                                              : std::optional<std::uint32_t>{2};
    for (const std::uint32_t payload : {4352u, 7616u}) {
      o.fabric_payload_bytes = payload;
      EXPECT_EQ(run_collective(o).verified, true) << static_cast<int>(op) << " " << payload;
    }
  }
}

}  // namespace
}  // namespace cclmesh::cli
