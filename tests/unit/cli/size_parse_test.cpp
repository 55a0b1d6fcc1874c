#include "tools/cclmesh/size_parse.hpp"

#include <gtest/gtest.h>

#include <string>

#include "tools/cclmesh/cli_error.hpp"

namespace cclmesh::cli {
namespace {
using namespace sim::literals;

TEST(ParseSize, PlainBytesAndBinarySuffixes) {
  EXPECT_EQ(parse_size_bytes("4096", "--size"), 4096u);
  EXPECT_EQ(parse_size_bytes("64K", "--size"), 65536u);
  EXPECT_EQ(parse_size_bytes("16MiB", "--size"), 16u << 20);
  EXPECT_EQ(parse_size_bytes("16m", "--size"), 16u << 20);
  EXPECT_EQ(parse_size_bytes("1GiB", "--size"), 1ull << 30);
  EXPECT_EQ(parse_size_bytes("1.5KiB", "--size"), 1536u);
  EXPECT_EQ(parse_size_bytes("8G", "-e"), 8ull << 30);
}

// KB, MB and GB are nccl-tests' K, M and G, powers of two (the size column prints the bytes; the
// help says so since session 41's new-user pass, where `--size 1GB` read as 1e9 B beside the
// table's "GB = 1e9 B" for bandwidth).
TEST(ParseSize, DecimalLookingSuffixesArePowersOfTwo) {
  EXPECT_EQ(parse_size_bytes("1GB", "--size"), 1ull << 30);
  EXPECT_EQ(parse_size_bytes("16MB", "--size"), 16u << 20);
  EXPECT_EQ(parse_size_bytes("4kb", "--size"), 4096u);
}

void expect_usage_error(const std::string& text, const std::string& needle) {
  try {
    parse_size_bytes(text, "--size");
    FAIL() << "accepted '" << text << "'";
  } catch (const UsageError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("--size"), std::string::npos) << message;
    EXPECT_NE(message.find("'" + text + "'"), std::string::npos) << message;
    EXPECT_NE(message.find(needle), std::string::npos) << message;
  }
}

TEST(ParseSize, RejectsBadInputNamingOptionAndValue) {
  expect_usage_error("", "not a number");
  expect_usage_error("abc", "not a number");
  // Session 28's bug bash: a sign and exponent notation are said as such ("not a number" and
  // "unknown suffix" before).
  expect_usage_error("-5", "a sign is not accepted");
  expect_usage_error("+5", "a sign is not accepted");
  expect_usage_error("1e6", "exponent notation is not accepted");
  expect_usage_error("2E+3", "exponent notation is not accepted");
  expect_usage_error("12XB", "unknown suffix");
  expect_usage_error("0", "must be positive");
  expect_usage_error("1.3", "not a whole number");
  expect_usage_error("99999999999999999999999", "not a number");
  expect_usage_error("17179869184G", "too large");
  expect_usage_error("1.", "not a number");
}

// A sign's reason said "expected a positive number" before the message's own "expected ..."
// (session 32): what is expected is said once.
TEST(ParseSize, ASignIsRefusedSayingWhatIsExpectedOnce) {
  try {
    parse_size_bytes("-5", "--size");
    ADD_FAILURE() << "took -5";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--size: invalid size '-5': a sign is not accepted; expected bytes with an optional suffix K, M, G, "
              "KiB, MiB or GiB (powers of two), e.g. 16MiB");
  }
  try {
    parse_sim_time("-5us", "--max-sim-time");
    ADD_FAILURE() << "took -5us";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--max-sim-time: invalid time '-5us': a sign is not accepted; expected a number with a unit ps, ns, "
              "us, ms or s, e.g. 50us");
  }
}

TEST(ParseTime, UnitsAreRequired) {
  EXPECT_EQ(parse_sim_time("50us", "--max-sim-time"), 50_us);
  EXPECT_EQ(parse_sim_time("2ms", "x"), 2_ms);
  EXPECT_EQ(parse_sim_time("1.5ns", "x"), 1500_ps);
  EXPECT_EQ(parse_sim_time("3s", "x"), 3000_ms);
  EXPECT_THROW(parse_sim_time("50", "x"), UsageError);
  EXPECT_THROW(parse_sim_time("50 parsecs", "x"), UsageError);
  EXPECT_THROW(parse_sim_time("0.0001ps", "x"), UsageError);
  try {
    parse_sim_time("5e3ns", "--max-sim-time");
    ADD_FAILURE() << "accepted 5e3ns";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("exponent notation is not accepted"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace cclmesh::cli

// Review (session 10): CLI11 read "-2" into an unsigned option as 2^64 - 2.
namespace cclmesh::cli {
namespace {
TEST(WholeNumber, DigitsOnlyAndAtLeastTheMinimum) {
  EXPECT_EQ(parse_whole_number("2", "-f", 2, "factor", "at least 2"), 2u);
  EXPECT_EQ(parse_whole_number("18446744073709551615", "-f", 2, "factor", "at least 2"), 18446744073709551615ull);
  for (const char* bad : {"-2", "+2", "2.5", "", "1", "0x10", "2 ", "18446744073709551616"}) {
    try {
      parse_whole_number(bad, "-f", 2, "factor", "a whole number of at least 2");
      ADD_FAILURE() << "'" << bad << "' was accepted";
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()), "-f: invalid factor '" + std::string(bad) + "': expected a whole number of at least 2");
    }
  }
}
}  // namespace
}  // namespace cclmesh::cli
