#pragma once
// 64-bit NoC addresses (Wormhole B0 layout, as tt-metal's NOC_XY_ADDR / NOC_MULTICAST_ADDR):
//   bits 35:0  local address in the target core's L1 or the bank
//   bits 41:36 x (NoC0 coordinate)
//   bits 47:42 y (NoC0 coordinate)
// Multicast additionally places the rectangle's start corner in bits 53:48 (x) and 59:54 (y),
// with the end corner in the unicast x / y fields.
// Fabric packet headers and command core descriptors carry NoC0 coordinates (REFERENCE §1.2,
// §4.11); a NoC1 kernel converts with noc1_to_noc0_x / _y before packing.
//
// Device-clean: <cstdint> only.

#include <cstdint>

namespace cclmesh::api {

constexpr uint32_t kNocAddrLocalBits = 36;
constexpr uint32_t kNocAddrNodeIdBits = 6;
constexpr uint64_t kNocAddrLocalMask = (uint64_t{1} << kNocAddrLocalBits) - 1;
constexpr uint32_t kNocAddrNodeIdMask = (uint32_t{1} << kNocAddrNodeIdBits) - 1;

// Wormhole NoC grid (REFERENCE §1.1); the NoC1 mirror map depends on it.
constexpr uint32_t kWormholeNocGridX = 10;
constexpr uint32_t kWormholeNocGridY = 12;

constexpr uint64_t noc_xy_addr(uint32_t x, uint32_t y, uint64_t local_address) {
  return (uint64_t{y & kNocAddrNodeIdMask} << (kNocAddrLocalBits + kNocAddrNodeIdBits)) |
         (uint64_t{x & kNocAddrNodeIdMask} << kNocAddrLocalBits) | (local_address & kNocAddrLocalMask);
}

constexpr uint32_t noc_addr_x(uint64_t noc_address) {
  return static_cast<uint32_t>(noc_address >> kNocAddrLocalBits) & kNocAddrNodeIdMask;
}
constexpr uint32_t noc_addr_y(uint64_t noc_address) {
  return static_cast<uint32_t>(noc_address >> (kNocAddrLocalBits + kNocAddrNodeIdBits)) & kNocAddrNodeIdMask;
}
constexpr uint64_t noc_addr_local(uint64_t noc_address) { return noc_address & kNocAddrLocalMask; }

constexpr uint64_t noc_multicast_addr(uint32_t x_start, uint32_t y_start, uint32_t x_end, uint32_t y_end,
                                      uint64_t local_address) {
  return (uint64_t{x_start & kNocAddrNodeIdMask} << (kNocAddrLocalBits + 2 * kNocAddrNodeIdBits)) |
         (uint64_t{y_start & kNocAddrNodeIdMask} << (kNocAddrLocalBits + 3 * kNocAddrNodeIdBits)) |
         noc_xy_addr(x_end, y_end, local_address);
}
constexpr uint32_t noc_mcast_addr_x_start(uint64_t noc_address) {
  return static_cast<uint32_t>(noc_address >> (kNocAddrLocalBits + 2 * kNocAddrNodeIdBits)) & kNocAddrNodeIdMask;
}
constexpr uint32_t noc_mcast_addr_y_start(uint64_t noc_address) {
  return static_cast<uint32_t>(noc_address >> (kNocAddrLocalBits + 3 * kNocAddrNodeIdBits)) & kNocAddrNodeIdMask;
}

// NoC1 coordinates are the NoC0 ones mirrored (REFERENCE §1.2); the map is its own inverse.
constexpr uint32_t noc1_to_noc0_x(uint32_t x1, uint32_t grid_x = kWormholeNocGridX) { return grid_x - 1 - x1; }
constexpr uint32_t noc1_to_noc0_y(uint32_t y1, uint32_t grid_y = kWormholeNocGridY) { return grid_y - 1 - y1; }

static_assert(noc_addr_x(noc_xy_addr(9, 11, 0x12345)) == 9, "x round trip");
static_assert(noc_addr_y(noc_xy_addr(9, 11, 0x12345)) == 11, "y round trip");
static_assert(noc_addr_local(noc_xy_addr(9, 11, 0x12345)) == 0x12345, "local round trip");

}  // namespace cclmesh::api
