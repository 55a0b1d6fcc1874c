// Run's and sweep's whole-number options read decimal digits only (bug bash, session 28: CLI11's
// Range and conversion read "0150" as octal 104 and "0x100" as 256, and called "abc" and ""
// "not in range"): `--erisc-unreserved-kib 0150` is 150 KiB, `--links abc` says it is not a
// whole number, `--links ''` gets the empty-value message every other option gives.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/unit/cli/cli_test_util.hpp"
#include "tools/cclmesh/cli_error.hpp"

namespace cclmesh::cli {
namespace {

using testing_util::run_cli_output;

const std::vector<std::string> kRun = {"run", "--system", "t3k", "--op", "all_gather", "--size", "64K", "--no-data",
                                       "--json", "-"};

std::string error_of(std::vector<std::string> extra) {
  std::vector<std::string> args = kRun;
  args.insert(args.end(), extra.begin(), extra.end());
  try {
    run_cli_output(args);
  } catch (const CLI::ParseError& e) {
    return e.what();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

nlohmann::json settings_of(std::vector<std::string> extra) {
  std::vector<std::string> args = kRun;
  args.insert(args.end(), extra.begin(), extra.end());
  return nlohmann::json::parse(run_cli_output(args).second)["settings"];
}

TEST(WholeNumberOption, LeadingZerosAreDecimal) {
  EXPECT_EQ(settings_of({"--erisc-unreserved-kib", "0150"})["erisc_unreserved_bytes"], 150 * 1024);
  EXPECT_EQ(settings_of({"--fabric-payload", "04352"})["fabric_payload_bytes"], 4352);
}

TEST(WholeNumberOption, NonNumbersAndEmptyValuesAreNamedAsSuch) {
  EXPECT_EQ(error_of({"--links", "abc"}), "--links: 'abc' is not a whole number; expected 1 to 16");
  EXPECT_EQ(error_of({"--fabric-payload", "0x100"}), "--fabric-payload: '0x100' is not a whole number; expected 64 to 7616");
  EXPECT_EQ(error_of({"--cluster-axis", "-1"}), "--cluster-axis: '-1' is not a whole number; expected 0 to 1");
  EXPECT_EQ(error_of({"--dim", "1.5"}), "--dim: '1.5' is not a whole number; expected 0 to 3");
  EXPECT_EQ(error_of({"--rounds", "65537"}), "--rounds: 65537 is out of range; expected 1 to 65536");
  EXPECT_EQ(error_of({"--workers-per-link", "99999999999999999999"}),
            "--workers-per-link: 99999999999999999999 is out of range; expected 1 to 6");
  EXPECT_THAT(error_of({"--links", ""}), ::testing::HasSubstr("--links: an empty value; expected what"));
}

// Bug bash, session 44: `--cluster-axis 2` on torus:4x4x4, whose mesh has a third dimension, said
// "expected 0 to 1" and not why.
TEST(WholeNumberOption, AClusterAxisOutOfRangeSaysWhyAxesStopAtOne) {
  std::vector<std::string> args = {"run", "--system", "torus:4x4x4", "--op", "all_gather", "--size", "64K",
                                   "--no-data", "--cluster-axis", "2"};
  std::string error = "(no error)";
  try {
    run_cli_output(args);
  } catch (const CLI::ParseError& e) {
    error = e.what();
  }
  EXPECT_EQ(error,
            "--cluster-axis: 2 is out of range; expected 0 to 1: cluster_axis is a dimension of a 2D mesh, as "
            "tt-metal's (0: columns, 1: rows), so a 3D system such as torus:4x4x4 runs along its axes 0 and 1 only");
}

}  // namespace
}  // namespace cclmesh::cli
