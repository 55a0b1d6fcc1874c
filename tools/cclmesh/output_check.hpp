#pragma once
// Comparing a chip's output buffer with the host reference: wrong elements counted, the first
// difference named by chip, buffer, page and byte, and a CRC-32 of both sides per chip.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/device/types.hpp"
#include "tools/cclmesh/run_options.hpp"

namespace cclmesh::cli {

struct OutputCheck {
  std::uint64_t wrong_elements = 0;
  std::string first_mismatch;  // "chip 3 buffer 'output' page 7 byte 12: expected 0x.., got 0x.."
  std::vector<OutputChecksum> checksums;

  // Compares `actual` with `expected` element by element (`element_bytes` each) and records the
  // chip's checksums. The sizes must match.
  void add_chip(runtime::ChipId chip, const std::string& buffer, const std::vector<std::byte>& expected,
                const std::vector<std::byte>& actual, std::uint32_t page_bytes, std::uint32_t element_bytes);
};

std::uint32_t crc32_of(const std::vector<std::byte>& bytes);

}  // namespace cclmesh::cli
