#include "tools/cclmesh/output_check.hpp"

#include <fmt/format.h>

#include <zlib.h>

#include <algorithm>
#include <limits>

#include "sim/engine/check.hpp"

namespace cclmesh::cli {

// CRC-32 (IEEE 802.3, reflected, as zip and PNG use it), in zlib's chunks of at most uInt.
std::uint32_t crc32_of(const std::vector<std::byte>& bytes) {
  uLong crc = crc32(0L, Z_NULL, 0);
  const auto* data = reinterpret_cast<const Bytef*>(bytes.data());
  for (std::size_t done = 0; done < bytes.size();) {
    const std::size_t chunk = std::min<std::size_t>(bytes.size() - done, std::numeric_limits<uInt>::max());
    crc = crc32(crc, data + done, static_cast<uInt>(chunk));
    done += chunk;
  }
  return static_cast<std::uint32_t>(crc);
}

void OutputCheck::add_chip(runtime::ChipId chip, const std::string& buffer, const std::vector<std::byte>& expected,
                           const std::vector<std::byte>& actual, std::uint32_t page_bytes,
                           std::uint32_t element_bytes) {
  CCLMESH_CHECK(expected.size() == actual.size() && page_bytes > 0 && element_bytes > 0,
                "output check: sizes differ or zero page / element size");
  // Nearly every output is right: one comparison of the whole buffer, and one CRC for both sides.
  if (expected == actual) {
    const std::uint32_t crc = crc32_of(expected);
    checksums.push_back({chip, buffer, crc, crc});
    return;
  }
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
