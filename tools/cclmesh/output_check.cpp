#include "tools/cclmesh/output_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/crc.hpp>

#include "sim/engine/check.hpp"

namespace cclmesh::cli {

std::uint32_t crc32_of(const std::vector<std::byte>& bytes) {
  boost::crc_32_type crc;
  crc.process_bytes(bytes.data(), bytes.size());
  return crc.checksum();
}

void OutputCheck::add_chip(runtime::ChipId chip, const std::string& buffer, const std::vector<std::byte>& expected,
                           const std::vector<std::byte>& actual, std::uint32_t page_bytes,
                           std::uint32_t element_bytes) {
  CCLMESH_CHECK(expected.size() == actual.size() && page_bytes > 0 && element_bytes > 0,
                "output check: sizes differ or zero page / element size");
  checksums.push_back({chip, buffer, crc32_of(actual), crc32_of(expected)});
  for (std::size_t i = 0; i < expected.size(); i += element_bytes) {
    const std::size_t end = std::min(expected.size(), i + element_bytes);
    if (std::equal(expected.begin() + i, expected.begin() + end, actual.begin() + i)) continue;
    ++wrong_elements;
    if (!first_mismatch.empty()) continue;
    std::size_t byte = i;
    while (byte < end && expected[byte] == actual[byte]) ++byte;
    first_mismatch = fmt::format("chip {} buffer '{}' page {} byte {}: expected 0x{:02x}, got 0x{:02x}", chip, buffer,
                                 byte / page_bytes, byte % page_bytes, static_cast<unsigned>(expected[byte]),
                                 static_cast<unsigned>(actual[byte]));
  }
}

}  // namespace cclmesh::cli
