// Fabric packet header: routing-byte semantics hop by hop, field layout, NoC addresses.
#include "kernels/api/fabric_packet_header.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace cclmesh::api {
namespace {

struct HopTrace {
  std::vector<int> delivered_at;
  int last_hop = 0;  // the hop that did not forward
};

// Carries a packet hop by hop along a line as the routers do, up to 16 hops.
HopTrace trace(uint8_t routing) {
  HopTrace t;
  for (int hop = 1; hop <= 16; ++hop) {
    EXPECT_TRUE(routing_is_valid(routing)) << "hop " << hop;
    if (packet_must_be_consumed_locally(routing)) {
      t.delivered_at.push_back(hop);
    }
    if (!packet_must_be_forwarded(routing)) {
      t.last_hop = hop;
      return t;
    }
    routing = routing_after_hop(routing);
  }
  ADD_FAILURE() << "packet still forwarded after 16 hops";
  return t;
}

TEST(RoutingByte, Encodings) {
  EXPECT_EQ(unicast_routing(3), 0x13);
  EXPECT_EQ(unicast_routing(1), kLastMcastVal);
  EXPECT_EQ(multicast_routing(1, 3), 0x31);
  EXPECT_EQ(routing_start_distance(0x31), 1);
  EXPECT_EQ(routing_range(0x31), 3);
  EXPECT_EQ(kLastHopDistanceVal, 1);
  EXPECT_EQ(kLastChipInMcastVal, 0x10);
  EXPECT_EQ(kLastMcastVal, 0x11);
  EXPECT_FALSE(routing_is_valid(0x10));  // 0 hops
  EXPECT_FALSE(routing_is_valid(0x01));  // empty range
}

TEST(RoutingByte, UnicastThreeHopsIsDeliveredOnlyAtHopThree) {
  const HopTrace t = trace(unicast_routing(3));
  EXPECT_EQ(t.delivered_at, (std::vector<int>{3}));
  EXPECT_EQ(t.last_hop, 3);
}

TEST(RoutingByte, MulticastStartOneRangeThreeIsDeliveredAtHopsOneToThreeThenStops) {
  const HopTrace t = trace(multicast_routing(1, 3));
  EXPECT_EQ(t.delivered_at, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(t.last_hop, 3);
}

TEST(RoutingByte, EveryStartAndRangeUpToFifteenHops) {
  for (uint8_t start = 1; start <= kMaxRoutingHops; ++start) {
    for (uint8_t range = 1; start + range - 1 <= kMaxRoutingHops; ++range) {
      const HopTrace t = trace(multicast_routing(start, range));
      std::vector<int> expected;
      for (int hop = start; hop < start + range; ++hop) {
        expected.push_back(hop);
      }
      EXPECT_EQ(t.delivered_at, expected) << "start " << int{start} << " range " << int{range};
      EXPECT_EQ(t.last_hop, start + range - 1);
    }
  }
}

TEST(RoutingByte, PerHopDecrement) {
  EXPECT_EQ(routing_after_hop(0x13), 0x12);  // start counts down first
  EXPECT_EQ(routing_after_hop(0x12), 0x11);
  EXPECT_EQ(routing_after_hop(0x31), 0x21);  // then the range
  EXPECT_EQ(routing_after_hop(0x21), 0x11);
}

TEST(PacketHeader, LayoutAndBuilders) {
  static_assert(sizeof(PacketHeader) == 48);
  PacketHeader h = make_packet_header();
  h.to_chip_unicast(3).to_noc_unicast_write(noc_xy_addr(1, 2, 0x4000), 2048);
  h.src_ch_id = 1;
  uint8_t bytes[48];
  std::memcpy(bytes, &h, sizeof bytes);
  uint64_t addr = 0;
  std::memcpy(&addr, bytes, 8);
  EXPECT_EQ(addr, noc_xy_addr(1, 2, 0x4000));
  for (int i = 8; i < 40; ++i) EXPECT_EQ(bytes[i], 0) << "command byte " << i;  // no stale bytes on the wire
  EXPECT_EQ(bytes[40] | (bytes[41] << 8), 2048);  // little-endian payload size
  EXPECT_EQ(bytes[42], static_cast<uint8_t>(NocSendType::NOC_UNICAST_WRITE));
  EXPECT_EQ(bytes[43], 1);
  EXPECT_EQ(bytes[44], static_cast<uint8_t>(ChipSendType::CHIP_UNICAST));
  EXPECT_EQ(bytes[45], 0x13);
  EXPECT_EQ(bytes[46], 0);
  EXPECT_EQ(bytes[47], 0);

  h.to_chip_multicast(1, 3).to_noc_unicast_atomic_inc(noc_xy_addr(9, 0, 0x100), 255);
  EXPECT_EQ(h.get_chip_send_type(), ChipSendType::CHIP_MULTICAST);
  EXPECT_EQ(h.routing_fields, 0x31);
  EXPECT_EQ(h.get_noc_send_type(), NocSendType::NOC_UNICAST_ATOMIC_INC);
  EXPECT_EQ(h.command_fields.unicast_seminc.value, 255);
  EXPECT_EQ(h.command_fields.unicast_seminc.wrap, kDefaultAtomicIncWrap);
  EXPECT_EQ(h.command_fields.unicast_seminc.flush, 1);
  EXPECT_EQ(h.payload_size_bytes, 0);

  h.to_noc_unicast_inline_write(noc_xy_addr(1, 1, 0x200), 0xDEADBEEF);
  EXPECT_EQ(h.command_fields.unicast_inline_write.value, 0xDEADBEEFu);

  h.to_noc_fused_unicast_write_atomic_inc(noc_xy_addr(1, 1, 0x300), noc_xy_addr(1, 1, 0x10), 1, 4096);
  EXPECT_EQ(h.get_noc_send_type(), NocSendType::NOC_FUSED_UNICAST_WRITE_ATOMIC_INC);
  EXPECT_EQ(h.command_fields.unicast_seminc_fused.semaphore_noc_address, noc_xy_addr(1, 1, 0x10));
  EXPECT_EQ(h.payload_size_bytes, 4096);

  h.to_noc_multicast_write(NocMulticastCommandHeader{0x500, 1, 1, 4, 5}, 1024);
  EXPECT_EQ(h.command_fields.mcast_write.mcast_rect_size_y, 5);

  const uint64_t addresses[3] = {noc_xy_addr(1, 0, 0x1000), noc_xy_addr(2, 0, 0x1000), noc_xy_addr(3, 0, 0x1800)};
  const uint16_t sizes[3] = {2048, 2048, 1024};
  h.to_noc_unicast_scatter_write(addresses, sizes, 3);
  EXPECT_EQ(h.get_noc_send_type(), NocSendType::NOC_UNICAST_SCATTER_WRITE);
  EXPECT_EQ(h.payload_size_bytes, 5120);
  const auto& sc = h.command_fields.unicast_scatter_write;
  EXPECT_EQ(sc.chunk_count, 3);
  EXPECT_EQ(sc.noc_address[2], addresses[2]);
  EXPECT_EQ(sc.noc_address[3], 0u);
  EXPECT_EQ(sc.chunk_size[0], 2048);
  EXPECT_EQ(sc.chunk_size[1], 2048);
  EXPECT_EQ(sc.chunk_size[2], 0);  // the last chunk takes the rest of the payload
}

TEST(NocAddress, PackingMatchesWormholeLayout) {
  EXPECT_EQ(noc_xy_addr(1, 2, 0x4000), (uint64_t{2} << 42) | (uint64_t{1} << 36) | 0x4000);
  EXPECT_EQ(noc_addr_x(noc_xy_addr(9, 11, 0xFFFFFFFFF)), 9u);
  EXPECT_EQ(noc_addr_y(noc_xy_addr(9, 11, 0xFFFFFFFFF)), 11u);
  EXPECT_EQ(noc_addr_local(noc_xy_addr(9, 11, 0xFFFFFFFFF)), 0xFFFFFFFFFull);
  const uint64_t m = noc_multicast_addr(1, 2, 4, 5, 0x100);
  EXPECT_EQ(noc_mcast_addr_x_start(m), 1u);
  EXPECT_EQ(noc_mcast_addr_y_start(m), 2u);
  EXPECT_EQ(noc_addr_x(m), 4u);
  EXPECT_EQ(noc_addr_y(m), 5u);
  EXPECT_EQ(noc1_to_noc0_x(0), 9u);
  EXPECT_EQ(noc1_to_noc0_y(noc1_to_noc0_y(3)), 3u);
}

}  // namespace
}  // namespace cclmesh::api
