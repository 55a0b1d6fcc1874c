// l1_read_bytes on the simulated device returns exactly the bytes the kernel's L1 holds, for
// every size and alignment: the direct path copies 16-64 bytes by two overlapping moves
// (sim/device/dataflow_api_sim.cpp, copy_from_l1), other sizes and reads across a page through
// memcpy or the region. A kernel reads every size from 1 to 80 bytes at 48 offsets, with guard
// bytes around its buffer, and counts what differs.
#include <gtest/gtest.h>

#include <cstdint>

#include "kernels/api/dataflow_api.hpp"
#include "tests/unit/sim/device_test_util.hpp"

namespace cclmesh::sim::device {
namespace {

using namespace testing;

constexpr std::uint32_t kPattern = 0x40000;  // L1 of the kernel
constexpr std::uint32_t kPatternBytes = 1024;
constexpr std::uint32_t kResult = 0x60000;
constexpr std::uint32_t kMaxRead = 80;
constexpr std::uint32_t kGuard = 16;
constexpr std::uint8_t kGuardByte = 0xa5;

std::uint8_t pattern_byte(std::uint32_t at) { return static_cast<std::uint8_t>(at * 13 + (at >> 8) + 1); }

void read_every_size() {
  uint8_t bytes[kPatternBytes];
  for (uint32_t i = 0; i < kPatternBytes; ++i) bytes[i] = pattern_byte(i);
  l1_write_bytes(kPattern, bytes, kPatternBytes);
  uint32_t wrong = 0;
  uint8_t out[kGuard + kMaxRead + kGuard];
  for (uint32_t offset = 0; offset < 48; ++offset) {
    for (uint32_t size = 1; size <= kMaxRead; ++size) {
      for (uint8_t& b : out) b = kGuardByte;
      l1_read_bytes(kPattern + offset, out + kGuard, size);
      for (uint32_t i = 0; i < sizeof out; ++i) {
        const bool inside = i >= kGuard && i < kGuard + size;
        const uint8_t expected = inside ? pattern_byte(offset + i - kGuard) : kGuardByte;
        if (out[i] != expected) ++wrong;
      }
    }
  }
  l1_write_u32(kResult, wrong);
}

TEST(L1ReadBytes, EverySizeAndOffsetReadsExactlyTheBytesHeld) {
  SimMeshDevice device(topo::build_n300());
  device.register_kernel("read_every_size", &read_every_size, false);
  device.enqueue_workload(one_kernel_workload("l1_read_bytes", "read_every_size"));
  device.finish();
  const runtime::Noc0Coord core = device.core_map(0).tensix_noc0({0, 0});
  const MemoryRegion& l1 = device.system().chip(0).l1({static_cast<int>(core.x), static_cast<int>(core.y)});
  EXPECT_EQ(l1.read_u32(kResult), 0u) << "bytes read wrong";
}

}  // namespace
}  // namespace cclmesh::sim::device
