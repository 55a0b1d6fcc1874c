// The data-integrity check of `cclmesh run`: a corrupted output is named by chip, buffer,
// first differing page and byte, wrong elements are counted, and the checksums disagree.
#include "tools/cclmesh/output_check.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace cclmesh::cli {
namespace {

std::vector<std::byte> pattern(std::size_t bytes) {
  std::vector<std::byte> data(bytes);
  for (std::size_t i = 0; i < bytes; ++i) data[i] = static_cast<std::byte>((i * 7 + 3) & 0xFF);
  return data;
}

// The checksums in --json are CRC-32 as zip and PNG compute it: goldens and users' scripts
// compare them across versions, so the algorithm must not drift (the standard check value).
TEST(OutputCheck, ChecksumIsTheStandardCrc32) {
  const std::string text = "123456789";
  std::vector<std::byte> bytes(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) bytes[i] = static_cast<std::byte>(text[i]);
  EXPECT_EQ(crc32_of(bytes), 0xCBF43926u);
  EXPECT_EQ(crc32_of({}), 0u);
}

TEST(OutputCheck, EqualOutputsVerifyWithMatchingChecksums) {
  OutputCheck check;
  const auto expected = pattern(8192);
  check.add_chip(3, "output", expected, expected, 2048, 2);
  EXPECT_EQ(check.wrong_elements, 0u);
  EXPECT_TRUE(check.first_mismatch.empty());
  ASSERT_EQ(check.checksums.size(), 1u);
  EXPECT_EQ(check.checksums[0].crc32, check.checksums[0].expected_crc32);
  EXPECT_EQ(check.checksums[0].crc32, crc32_of(expected));
}

TEST(OutputCheck, NamesTheFirstDifferingChipPageAndByte) {
  OutputCheck check;
  const auto expected = pattern(8192);
  auto actual = expected;
  check.add_chip(0, "output", expected, actual, 2048, 2);  // chip 0 is fine
  actual[2048 * 2 + 13] ^= std::byte{0x40};                 // page 2, byte 13 (element 6's second byte)
  actual[2048 * 3 + 0] ^= std::byte{0x01};                  // a later one, also counted
  check.add_chip(5, "output", expected, actual, 2048, 2);
  EXPECT_EQ(check.wrong_elements, 2u);
  const unsigned want = static_cast<unsigned>(expected[2048 * 2 + 13]);
  const unsigned got = want ^ 0x40u;
  EXPECT_EQ(check.first_mismatch,
            fmt::format("chip 5 buffer 'output' page 2 byte 13: expected 0x{:02x}, got 0x{:02x}", want, got));
  ASSERT_EQ(check.checksums.size(), 2u);
  EXPECT_EQ(check.checksums[1].chip, 5u);
  EXPECT_NE(check.checksums[1].crc32, check.checksums[1].expected_crc32);
}

}  // namespace
}  // namespace cclmesh::cli
