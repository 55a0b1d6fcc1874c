// The persistent 1D fabric on a simulated T3K (kernels_e2e_test's fabric scenarios on the real
// backend): routers launched once at open, interpreters as workers, all-gathers by multicast
// on a line and a ring with every byte checked, credits that never overflow a slot, several
// ops through the same router channels, and termination.
#include <gtest/gtest.h>

#include <algorithm>

#include "kernels/api/fabric_packet_header.hpp"
#include "kernels/host/command_encoder.hpp"
#include "kernels/host/micro_ops.hpp"
#include "runtime/ccl/send_recv/send_recv.hpp"
#include "tests/unit/sim/device_test_util.hpp"
#include "tests/unit/sim/multicast_all_gather.hpp"

namespace cclmesh::sim::device {
namespace {

using namespace testing;
using runtime::ChipId;
using runtime::FabricMode;

MemoryRegion& router_l1(SimMeshDevice& device, const runtime::FabricRouterSite& site) {
  return device.system().chip(static_cast<ChipId>(site.chip)).l1({static_cast<int>(site.noc0.x), static_cast<int>(site.noc0.y)});
}

TEST(DeviceFabric, RoutersComeUpOnceAtOpen) {
  SimMeshDevice device(topo::build_t3k(), fabric_options(FabricMode::Line));
  const runtime::FabricPlan& plan = device.fabric_plan();
  ASSERT_EQ(plan.chips().size(), 8u);
  EXPECT_EQ(plan.routers().size(), 14u);  // 7 hops, a router at each end
  EXPECT_GT(device.fabric_ready_time(), SimTime::from_ns(3500));  // a dispatch, then the handshakes
  const auto layout = plan.layout();
  for (const runtime::FabricRouterSite& site : plan.routers()) {
    EXPECT_EQ(router_l1(device, site).read_u32(layout.status), static_cast<std::uint32_t>(api::EdmStatus::READY_FOR_TRAFFIC));
  }
  device.terminate_fabric();
  for (const runtime::FabricRouterSite& site : plan.routers()) {
    EXPECT_EQ(router_l1(device, site).read_u32(layout.status), static_cast<std::uint32_t>(api::EdmStatus::TERMINATED));
  }
}

// All-gather by multicast, two pages per packet (multicast_all_gather.hpp).
void all_gather(SimMeshDevice& device, std::uint32_t pages_per_chip, std::uint32_t page_size) {
  multicast_all_gather(device, MulticastAllGather{pages_per_chip, page_size, 2, false});
}

TEST(DeviceFabric, LineAllGatherByMulticastOnT3k) {
  SimMeshDevice device(topo::build_t3k(), fabric_options(FabricMode::Line));
  all_gather(device, 12, 1024);
}

TEST(DeviceFabric, RingAllGatherByMulticastOnT3k) {
  SimMeshDevice device(topo::build_t3k(), fabric_options(FabricMode::Ring));
  ASSERT_EQ(device.fabric_plan().routers().size(), 16u);
  all_gather(device, 16, 2048);
}

// A worker never has more packets in a router's sender channel than the channel has slots,
// even when it streams far more packets than that: a monitor checks every packet written.
TEST(DeviceFabric, CreditsNeverOverflowASlot) {
  SimMeshDeviceOptions options = fabric_options(FabricMode::Line);
  options.fabric.sender_slots = 2;
  options.fabric.receiver_slots = 2;
  options.fabric.max_payload_bytes = 1024;
  SimMeshDevice device(topo::build_t3k(), options);
  const runtime::FabricPlan& plan = device.fabric_plan();
  const ChipId sender = plan.chips()[0];
  const ChipId receiver = plan.chips()[3];
  const auto layout = plan.layout();

  std::uint32_t max_in_use[2] = {0, 0};
  std::uint32_t checks = 0;
  bool overflow = false;
  for (const runtime::FabricRouterSite& site : plan.routers()) {
    MemoryRegion* l1 = &router_l1(device, site);
    for (std::uint32_t channel = 0; channel < 2; ++channel) {
      device.engine().spawn_fiber("credit monitor", [&, l1, channel] {
        const auto& ch = layout.sender[channel];
        for (std::uint32_t seen = 1;; ++seen) {
          l1->wait_word_blocking(ch.packets_written, WordCondition::AtLeast, seen);
          const std::uint32_t in_use = l1->read_u32(ch.packets_written) - l1->read_u32(ch.packets_freed);
          max_in_use[channel] = std::max(max_in_use[channel], in_use);
          overflow |= in_use > ch.num_slots;
          ++checks;
        }
      });
    }
  }
  constexpr std::uint32_t kPage = 1024;
  constexpr std::uint32_t kPages = 96;
  const runtime::BufferHandle in = device.create_buffer(dram_buffer(kPages * kPage, kPage));
  const runtime::BufferHandle out = device.create_buffer(dram_buffer(kPages * kPage, kPage));
  device.write_buffer(sender, in, pattern(kPages * kPage, 5));
  runtime::ccl::send_recv::Params params = send_recv_params(sender, receiver, in, out, options.fabric);
  params.packet_size_in_pages = 1;
  runtime::ccl::send_recv::run(device, params);
  EXPECT_EQ(read_back(device, receiver, out), pattern(kPages * kPage, 5));
  EXPECT_FALSE(overflow);
  EXPECT_EQ(max_in_use[0], 2u);  // the worker filled its channel ...
  EXPECT_EQ(max_in_use[1], 2u);  // ... and so did the forwarding routers
  EXPECT_GE(checks, 3u * (kPages + 1));
  // Every packet (96 data + 1 increment) went through each hop's routers and was freed.
  const MemoryRegion& first = router_l1(device, *plan.router(sender, true));
  EXPECT_EQ(first.read_u32(layout.sender[0].packets_written), kPages + 1);
  EXPECT_EQ(first.read_u32(layout.sender[0].packets_freed), kPages + 1);
}

// An idle router sleeps through writes it does not read (a packet slot's bytes, announced by
// packets_written; memory outside its region) and wakes for a write to a control word it
// watches; either way it parks
// again having changed nothing but its counters.
TEST(DeviceFabric, AnIdleRouterWakesOnlyForTheWordsItWatches) {
  SimMeshDevice device(topo::build_t3k(), fabric_options(FabricMode::Line));
  const runtime::FabricPlan& plan = device.fabric_plan();
  const auto layout = plan.layout();
  MemoryRegion& l1 = router_l1(device, plan.routers().front());
  Engine& engine = device.engine();
  engine.run();  // what the start-up left in flight (the last handshake words' TX queue drains)
  const auto events_for = [&](std::uint64_t address) {
    const std::uint64_t before = engine.stats().events_executed;
    engine.schedule_in(SimTime::from_ns(10), [&l1, address] { l1.write_u32(address, 0); });
    engine.run();
    return engine.stats().events_executed - before;
  };
  const std::uint32_t slot_byte = layout.sender[0].buffer_base + 64;
  EXPECT_EQ(events_for(slot_byte), 1u);                           // the write alone
  EXPECT_EQ(events_for(layout.sender[0].packets_freed), 2u);      // the write and the router's resume
  EXPECT_EQ(events_for(layout.sender[1].buffer_base + 128), 1u);
  EXPECT_EQ(events_for(layout.end + 64), 1u);  // outside the router's region: not its business
  EXPECT_EQ(events_for(layout.termination_signal + 4), 2u);  // a watched field's spare word
  EXPECT_EQ(l1.read_u32(layout.status), static_cast<std::uint32_t>(api::EdmStatus::READY_FOR_TRAFFIC));
  device.terminate_fabric();
}

// Ops come and go; the routers stay: a later op's worker continues from the channel counters
// the earlier one left.
TEST(DeviceFabric, LaterOpsReuseTheRouterChannels) {
  SimMeshDevice device(topo::build_t3k(), fabric_options(FabricMode::Line));
  const runtime::FabricPlan& plan = device.fabric_plan();
  const ChipId sender = plan.chips()[1];
  const ChipId receiver = plan.chips()[2];
  constexpr std::uint32_t kPage = 2048;
  const runtime::BufferHandle in = device.create_buffer(dram_buffer(8 * kPage, kPage));
  const runtime::BufferHandle out = device.create_buffer(dram_buffer(8 * kPage, kPage));
  for (std::uint32_t op = 0; op < 3; ++op) {
    device.write_buffer(sender, in, pattern(8 * kPage, 20 + op));
    runtime::ccl::send_recv::Params params = send_recv_params(sender, receiver, in, out, device.options().fabric);
    params.packet_size_in_pages = 1;
    runtime::ccl::send_recv::run(device, params);
    EXPECT_EQ(read_back(device, receiver, out), pattern(8 * kPage, 20 + op)) << "op " << op;
  }
  const auto layout = plan.layout();
  EXPECT_EQ(router_l1(device, *plan.router(sender, true)).read_u32(layout.sender[0].packets_written), 3u * 9u);
}

}  // namespace
}  // namespace cclmesh::sim::device
