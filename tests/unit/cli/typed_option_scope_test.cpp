// An option that applies to some ops, topologies or modes only is refused when typed for another,
// whatever its value. Until session 31 the checks compared values with the defaults, so
// `run --op all_gather --root 3` exited 2 while `--root 0` (the default, typed) ran, and so did
// `--ag-ring-algorithm auto --op reduce` and the other algorithm options at their defaults.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/unit/cli/cli_test_util.hpp"
#include "tools/cclmesh/cli_error.hpp"
#include "tools/cclmesh/run_option_checks.hpp"

namespace cclmesh::cli {
namespace {

using testing_util::run_cli;
using ::testing::HasSubstr;

// The UsageError `cclmesh <args>` ends with (exit 2 from main), or "" when it ran.
std::string refusal(std::vector<std::string> args) {
  try {
    run_cli(std::move(args));
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

std::vector<std::string> run_args(const std::string& op, std::vector<std::string> extra) {
  std::vector<std::string> args{"run", "--system", "t3k", "--op", op, "--size", "64KiB", "--no-data"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

TEST(TypedOptionScope, RootZeroTypedForAnOpWithoutARootIsRefusedAsAnyRootIs) {
  EXPECT_EQ(refusal(run_args("all_gather", {"--root", "0"})),
            "--root: 0 given for all_gather; --root applies to --op reduce");
  EXPECT_EQ(refusal(run_args("all_gather", {"--root", "3"})),
            "--root: 3 given for all_gather; --root applies to --op reduce");
  EXPECT_EQ(refusal(run_args("reduce", {"--root", "0"})), "");
  EXPECT_EQ(refusal(run_args("reduce", {})), "");
}

TEST(TypedOptionScope, SweepRefusesRootZeroForAnOpWithoutARoot) {
  // Every point is skipped for the same reason, so the sweep is bad input (exit 2).
  EXPECT_EQ(refusal({"sweep", "--system", "t3k", "--op", "all_gather", "-b", "64KiB", "-e", "64KiB", "--no-data",
                     "--root", "0"}),
            "--root: 0 given for all_gather; --root applies to --op reduce");
}

TEST(TypedOptionScope, AlgorithmOptionsAtTheirDefaultsTypedForAnotherOpAreRefused) {
  struct Case {
    std::string op;
    std::vector<std::string> option;
    std::string message;
  };
  const std::vector<Case> cases{
      {"all_gather", {"--all-reduce-algo", "auto"}, "--all-reduce-algo: 'auto' given for all_gather; it applies to --op all_reduce"},
      {"reduce", {"--ag-ring-algorithm", "auto"}, "--ag-ring-algorithm: 'auto' asked for reduce; it applies to all_gather and all_reduce"},
      {"all_gather", {"--rs-line-algorithm", "two_sided"}, "--rs-line-algorithm: 'two_sided' given for all_gather"},
      {"reduce_scatter", {"--topology", "line", "--rs-ring-algorithm", "auto"}, "--rs-ring-algorithm: 'auto' given for reduce_scatter on a line"},
      {"all_reduce", {"--all-reduce-algo", "composite", "--rs-ring-algorithm", "auto"}, "--rs-ring-algorithm: 'auto' given with --all-reduce-algo composite"},
      {"all_gather", {"--bcast-ring-algorithm", "auto"}, "--bcast-ring-algorithm: 'auto' given for all_gather on a ring"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op + " " + c.option.front());
    EXPECT_THAT(refusal(run_args(c.op, c.option)), HasSubstr(c.message));
  }
}

TEST(TypedOptionScope, AlgorithmOptionsAtTheirDefaultsRunWhereTheyApply) {
  EXPECT_EQ(refusal(run_args("all_reduce", {"--all-reduce-algo", "auto", "--ag-ring-algorithm", "auto",
                                            "--rs-ring-algorithm", "auto"})),
            "");
  EXPECT_EQ(refusal(run_args("reduce_scatter", {"--topology", "line", "--rs-line-algorithm", "two_sided"})), "");
  EXPECT_EQ(refusal(run_args("broadcast", {"--bcast-ring-algorithm", "auto"})), "");
}

// The legacy all_gather relays through its per-op EDMs: --ag-ring-algorithm auto or multicast
// typed with --mode legacy ran the same op as without it (75.87 us, t3k 1 MiB) until session
// 31's review, though the option applies to a fabric ring only; relay had its own refusal.
TEST(TypedOptionScope, AgRingAlgorithmTypedInLegacyModeIsRefusedWhateverItsValue) {
  for (const std::string op : {"all_gather", "all_reduce"}) {
    for (const std::string algorithm : {"auto", "multicast"}) {
      SCOPED_TRACE(op + " " + algorithm);
      EXPECT_EQ(refusal(run_args(op, {"--mode", "legacy", "--ag-ring-algorithm", algorithm})),
                "--ag-ring-algorithm: '" + algorithm +
                    "' given in legacy mode, whose all_gather relays through its per-op EDMs whatever the "
                    "algorithm; it applies in fabric mode (--mode fabric)");
    }
  }
  // The local refusal has the served one's form (tests/remote/cli_serve_test.cpp), with the
  // options a local run takes.
  EXPECT_EQ(refusal(run_args("all_gather", {"--mode", "legacy", "--ag-ring-algorithm", "relay"})),
            "--ag-ring-algorithm: 'relay' relays through workers on a fabric ring; this is a ring in legacy mode (a "
            "line multicasts, legacy mode relays through its EDMs); expected --topology ring --mode fabric");
  EXPECT_EQ(refusal(run_args("all_gather", {"--topology", "line", "--ag-ring-algorithm", "relay"})),
            "--ag-ring-algorithm: 'relay' relays through workers on a fabric ring; this is a line in fabric mode (a "
            "line multicasts, legacy mode relays through its EDMs); expected --topology ring --mode fabric");
  EXPECT_EQ(refusal(run_args("all_gather", {"--ag-ring-algorithm", "multicast"})), "");
  // A served device's mode is the server's: the refusal does not ask for --mode, which `run
  // --device` refuses.
  RunOptions served;
  served.device = "127.0.0.1:1";
  served.mode = "legacy";
  served.op = CollectiveOp::AllGather;
  served.algorithms_typed.ag_ring = true;
  try {
    detail::reject_unsupported(served, 8);
    ADD_FAILURE() << "taken";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--ag-ring-algorithm: 'auto' given in legacy mode, whose all_gather relays through its per-op EDMs "
              "whatever the algorithm; it applies in fabric mode (a server started with --mode fabric)");
  }
}

// --ag-bidirectional-mode (session 45) applies to the all_gather op on a fabric ring: typed for
// another op, on a line or in legacy mode (whose ring is full-tensor), whatever its value, it is
// refused naming itself (the library would take full-tensor there silently, and refuse
// split-tensor naming no option).
TEST(TypedOptionScope, BidirectionalModeTypedForAnotherOpOrOnALineIsRefused) {
  for (const std::string op : {"reduce_scatter", "all_reduce", "broadcast"}) {
    SCOPED_TRACE(op);
    EXPECT_EQ(refusal(run_args(op, {"--ag-bidirectional-mode", "auto"})),
              "--ag-bidirectional-mode: 'auto' asked for " + op +
                  "; it applies to all_gather (all_reduce's all_gather half takes the rule)");
  }
  for (const std::string mode : {"auto", "full-tensor", "split-tensor"}) {
    SCOPED_TRACE(mode);
    EXPECT_EQ(refusal(run_args("all_gather", {"--topology", "line", "--ag-bidirectional-mode", mode})),
              "--ag-bidirectional-mode: '" + mode +
                  "' asked on a line; a line is always full-tensor (each chip sends its input to the chips before "
                  "and after it, REFERENCE 7.3); it applies on a ring (--topology ring)");
    EXPECT_EQ(refusal(run_args("all_gather", {"--ag-bidirectional-mode", mode})), "");
    EXPECT_EQ(refusal(run_args("all_gather", {"--mode", "legacy", "--ag-bidirectional-mode", mode})),
              "--ag-bidirectional-mode: '" + mode +
                  "' given in legacy mode, whose ring all_gather is always full-tensor (REFERENCE 7.3); it applies "
                  "in fabric mode (--mode fabric)");
    EXPECT_EQ(refusal(run_args("all_gather", {"--ag-ring-algorithm", "multicast", "--ag-bidirectional-mode", mode})),
              "");
  }
  try {
    run_cli(run_args("all_gather", {"--ag-bidirectional-mode", "both"}));
    ADD_FAILURE() << "taken";
  } catch (const std::exception& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("--ag-bidirectional-mode: both not in {auto,split-tensor,full-tensor}"));
  }
}

// Legacy mode runs no fabric router: until session 31's review, `--fabric-rx-in-flight` and
// `--fabric-payload` were taken with any value there and the run's figures were those without
// them (the legacy EDMs size their buffers from the ERISC's L1). The payload still sizes the
// legacy composite all_reduce's local-sum packet (docs/collectives.md), so it is taken for
// all_reduce unless --all-reduce-algo rs-ag leaves it nothing to size.
TEST(TypedOptionScope, FabricReceiverOptionTypedInLegacyModeIsRefusedWhateverItsValue) {
  for (const std::string op : {"all_gather", "reduce_scatter", "all_reduce"}) {
    SCOPED_TRACE(op);
    EXPECT_EQ(refusal(run_args(op, {"--mode", "legacy", "--fabric-rx-in-flight", "16"})),
              "--fabric-rx-in-flight: 16 given in legacy mode, which runs no fabric router (the op's own EDMs carry "
              "its packets); it applies in fabric mode (--mode fabric)");
  }
  EXPECT_EQ(refusal(run_args("all_gather", {"--fabric-rx-in-flight", "1"})), "");
}

TEST(TypedOptionScope, FabricPayloadTypedInLegacyModeIsRefusedWhereNothingReadsIt) {
  const std::string why =
      " in legacy mode, which runs no fabric: its EDMs size their buffers from the ERISC's L1 "
      "(--erisc-unreserved-kib); it applies in fabric mode, and in legacy mode to all_reduce's composite local sum "
      "(--all-reduce-algo composite or auto)";
  EXPECT_EQ(refusal(run_args("all_gather", {"--mode", "legacy", "--fabric-payload", "4352"})),
            "--fabric-payload: 4352 B given for all_gather" + why);
  EXPECT_EQ(refusal(run_args("reduce_scatter", {"--mode", "legacy", "--fabric-payload", "6144"})),
            "--fabric-payload: 6144 B given for reduce_scatter" + why);
  EXPECT_EQ(refusal(run_args("all_reduce", {"--mode", "legacy", "--all-reduce-algo", "rs-ag", "--fabric-payload",
                                            "6144"})),
            "--fabric-payload: 6144 B given for all_reduce --all-reduce-algo rs-ag" + why);
  EXPECT_EQ(refusal(run_args("all_reduce", {"--mode", "legacy", "--all-reduce-algo", "composite",
                                            "--fabric-payload", "6144"})),
            "");
  EXPECT_EQ(refusal(run_args("all_reduce", {"--mode", "legacy", "--fabric-payload", "6144"})), "");
  EXPECT_EQ(refusal(run_args("all_gather", {"--fabric-payload", "6144"})), "");
  EXPECT_EQ(refusal(run_args("all_gather", {"--mode", "legacy"})), "");
}

TEST(TypedOptionScope, SweepInLegacyModeSkipsThePointsAFabricOptionDoesNothingFor) {
  // Every point skipped for the same reason: bad input (exit 2).
  EXPECT_EQ(refusal({"sweep", "--system", "t3k", "--mode", "legacy", "--op", "all_gather", "-b", "64KiB", "-e",
                     "64KiB", "--no-data", "--fabric-rx-in-flight", "2"}),
            "--fabric-rx-in-flight: 2 given in legacy mode, which runs no fabric router (the op's own EDMs carry "
            "its packets); it applies in fabric mode (--mode fabric)");
  // all_reduce's points run (the composite's local sum reads the payload), all_gather's are skipped.
  const auto [code, table] = testing_util::run_cli_output({"sweep", "--system", "t3k", "--mode", "legacy", "--op",
                                                            "all_gather,all_reduce", "-b", "64KiB", "-e", "64KiB",
                                                            "--no-data", "--fabric-payload", "6144"});
  EXPECT_EQ(code, 0);
  EXPECT_THAT(table, HasSubstr("# all_gather at 65536 B skipped: --fabric-payload: 6144 B given for all_gather in "
                               "legacy mode"));
  EXPECT_THAT(table, HasSubstr("all_reduce on t3k"));
}

}  // namespace
}  // namespace cclmesh::cli
