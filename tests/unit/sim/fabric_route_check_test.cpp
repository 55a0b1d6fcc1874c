// Fabric routes checked at the sender (sim/device/fabric_route_check.hpp, docs/sim_device.md):
// a packet whose hops run past its line's end, or round its ring, faults the kernel that sent
// it, naming the kernel, its command, the hops and the line's or ring's extent. Before session
// 45 a ring wrap completed with the data on chip (origin + hops) mod N, and a line overrun
// faulted in the router at the end, which could not say who sent the packet.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <iterator>
#include <string>
#include <vector>

#include "kernels/host/command_encoder.hpp"
#include "kernels/host/micro_ops.hpp"
#include "runtime/ccl/common/fabric_mux.hpp"
#include "runtime/fabric/fabric_plan.hpp"
#include "sim/device/fabric_route_check.hpp"
#include "tests/unit/sim/device_error_util.hpp"
#include "tests/unit/sim/device_test_util.hpp"

namespace cclmesh::sim::device {
namespace {

using namespace testing;
using runtime::DeviceError;
using ::testing::HasSubstr;
namespace ccl = runtime::ccl;

// "chip 3 core (1,2)": Tensix (0,0) of `chip`, as a kernel's name gives it.
std::string core_name(SimMeshDevice& device, runtime::ChipId chip) {
  const runtime::Noc0Coord noc0 = device.core_map(chip).tensix_noc0({0, 0});
  return fmt::format("chip {} core ({},{})", chip, noc0.x, noc0.y);
}

// One interpreter on Tensix (0,0) of `chip`, connected forward, that runs `command` once.
std::string fault_of_one_command(SimMeshDevice& device, runtime::ChipId chip, const cmd::Command& command) {
  kargs::InterpreterSpec spec;
  spec.packet_header_cb_id = ccl::kPacketHeaderCbId;
  spec.semaphore_ids = {0};
  spec.forward_connection = device.fabric_plan().worker_connection(chip, true, 1, 2, 3);
  spec.streams = {kargs::InterpreterStreamSpec{std::nullopt, cmd::encode_command(command), 1}};
  device.enqueue_workload(interpreter_workload("route mistake", chip, {0, 0}, spec, 0, 0, {0, 1, 2, 3}));
  return expect_device_error([&] { device.finish(); }, DeviceError::Kind::Fault);
}

TEST(FabricRouteCheck, AUnicastOfRingSizeHopsFaultsAtTheSender) {
  SimMeshDevice device(topo::build_t3k(), fabric_options(runtime::FabricMode::Ring));
  const runtime::FabricPlan& plan = device.fabric_plan();
  const std::vector<runtime::ChipId>& ring = plan.chips();
  ASSERT_EQ(ring.size(), 8u);
  // 9 hops on a ring of 8: it would land on the next chip, having passed the sender.
  const std::string text =
      fault_of_one_command(device, ring[0], cmd::fabric_unicast_semaphore_inc(cmd::SemaphoreId{0}, 1, 1, 2, cmd::ChipUnicast{9, true}));
  EXPECT_THAT(text, HasSubstr(fmt::format("{} [tensix (0,0) dm0] ccl_interpreter: ccl_interpreter fault ROUTE_WRAPS_RING",
                                          core_name(device, ring[0]))))
      << text;
  EXPECT_THAT(text, HasSubstr("stream 0 #0 ATOMIC_INC")) << text;
  EXPECT_THAT(text, HasSubstr(fmt::format("; unicast of 9 hops forward from chip {} on {}: the ring has 8 chips, so a "
                                          "route may go 7 hops at most; 9 would pass the sender and land on chip {} "
                                          "(simulator check at the sender)",
                                          ring[0], plan.lines()[0].to_string(), ring[1])))
      << text;
}

TEST(FabricRouteCheck, AMulticastRoundTheRingFaultsAtTheSender) {
  SimMeshDevice device(topo::build_t3k(), fabric_options(runtime::FabricMode::Ring));
  const runtime::FabricPlan& plan = device.fabric_plan();
  const std::vector<runtime::ChipId>& ring = plan.chips();
  // 8 chips forward of the sender on a ring of 8: the last is the sender itself.
  // The multicast's own chip's increment comes first: at the sender's own semaphore.
  const runtime::Noc0Coord self = device.core_map(ring[2]).tensix_noc0({0, 0});
  const std::string text = fault_of_one_command(
      device, ring[2], cmd::fabric_multicast_semaphore_inc(cmd::SemaphoreId{0}, 1, self.x, self.y, cmd::ChipMulticast{8, 0}));
  EXPECT_THAT(text, HasSubstr(fmt::format("{} [tensix (0,0) dm0] ccl_interpreter: ccl_interpreter fault ROUTE_WRAPS_RING",
                                          core_name(device, ring[2]))))
      << text;
  EXPECT_THAT(text, HasSubstr(fmt::format("; multicast to hops 1..8 forward from chip {} on {}: the ring has 8 chips, so "
                                          "a route may go 7 hops at most; 8 would pass the sender and land on chip {}",
                                          ring[2], plan.lines()[0].to_string(), ring[2])))
      << text;
}

// The boundaries: a ring of 8 (reach 7) takes 7 hops and a multicast to the 7 others, not 8;
// a routing byte with a zero field is left to the router (BAD_PACKET_HEADER).
TEST(FabricRouteCheck, RoutesFitUpToTheReach) {
  FabricEntryPoint e;
  e.reach = 7;
  EXPECT_TRUE(route_fits(e, api::unicast_routing(7)));
  EXPECT_FALSE(route_fits(e, api::unicast_routing(8)));
  EXPECT_TRUE(route_fits(e, api::multicast_routing(1, 7)));
  EXPECT_FALSE(route_fits(e, api::multicast_routing(1, 8)));
  EXPECT_FALSE(route_fits(e, api::multicast_routing(2, 7)));
  EXPECT_TRUE(route_fits(e, api::multicast_routing(0, 15)));
  EXPECT_TRUE(route_fits(e, api::multicast_routing(9, 0)));
}

// The per-node table in front of the scan (session 45, for speed) passes over only cores with no
// entry point: a write to a slot start is found on the entry point's core and no other, also
// where coordinates of 16 and more share a table slot ((1,0), (17,16), (1,16), (17,0) all do).
TEST(FabricRouteCheck, ASlotWriteIsFoundOnlyAtItsEntryPointsCore) {
  FabricEntryPoints entries;
  for (const CoreCoord core : {CoreCoord{1, 0}, CoreCoord{17, 16}}) {
    FabricEntryPoint e;
    e.core = core;
    e.slots_begin = 0x1000;
    e.slots_end = 0x1000 + 4 * 0x100;
    e.slot_size_bytes = 0x100;
    entries.push_back(e);
  }
  const std::uint32_t header = api::kPacketHeaderSizeBytes;
  EXPECT_EQ(entries.packet_slot_written(CoreCoord{1, 0}, 0x1200, header), &*entries.begin());
  EXPECT_EQ(entries.packet_slot_written(CoreCoord{17, 16}, 0x1300, header), &*std::next(entries.begin()));
  EXPECT_EQ(entries.packet_slot_written(CoreCoord{1, 0}, 0x1210, header), nullptr);  // not a slot's start
  EXPECT_EQ(entries.packet_slot_written(CoreCoord{1, 0}, 0x1400, header), nullptr);  // past the slots
  EXPECT_EQ(entries.packet_slot_written(CoreCoord{2, 0}, 0x1200, header), nullptr);
  EXPECT_EQ(entries.packet_slot_written(CoreCoord{1, 16}, 0x1200, header), nullptr);  // same table slot as (1,0)
  EXPECT_EQ(entries.packet_slot_written(CoreCoord{17, 0}, 0x1200, header), nullptr);  // same table slot as (1,0)
  EXPECT_EQ(entries.packet_slot_written(CoreCoord{1, 0}, 0x1200, header - 1), nullptr);  // too small for a header
}

// Before session 45 the router at the line's end faulted (fabric_router fault ROUTE_PAST_END,
// after the sender had finished): it stays as the backstop (kernels_e2e_test's
// RouterFaultsOnAPacketRoutedPastTheLineEnd), the sender is named first.
TEST(FabricRouteCheck, AUnicastPastTheLineEndFaultsAtTheSender) {
  SimMeshDevice device(topo::build_n300(), fabric_options(runtime::FabricMode::Line));
  const runtime::FabricPlan& plan = device.fabric_plan();
  const runtime::ChipId first = plan.chips()[0];
  const std::string text =
      fault_of_one_command(device, first, cmd::fabric_unicast_semaphore_inc(cmd::SemaphoreId{0}, 1, 1, 2, cmd::ChipUnicast{3, true}));
  EXPECT_THAT(text, HasSubstr(fmt::format("{} [tensix (0,0) dm0] ccl_interpreter: ccl_interpreter fault ROUTE_PAST_END",
                                          core_name(device, first))))
      << text;
  EXPECT_THAT(text, HasSubstr("stream 0 #0 ATOMIC_INC")) << text;
  EXPECT_THAT(text, HasSubstr(fmt::format("; unicast of 3 hops forward from chip {} on {}: the line ends 1 hop forward "
                                          "of chip {} (simulator check at the sender)",
                                          first, plan.lines()[0].to_string(), first)))
      << text;
  EXPECT_THAT(text, Not(HasSubstr("fabric_router fault"))) << text;
}

TEST(FabricRouteCheck, AMulticastPastTheLineEndFaultsAtTheSender) {
  SimMeshDevice device(topo::build_n300(), fabric_options(runtime::FabricMode::Line));
  const runtime::FabricPlan& plan = device.fabric_plan();
  const runtime::ChipId first = plan.chips()[0];
  const runtime::Noc0Coord self = device.core_map(first).tensix_noc0({0, 0});
  const std::string text = fault_of_one_command(
      device, first, cmd::fabric_multicast_semaphore_inc(cmd::SemaphoreId{0}, 1, self.x, self.y, cmd::ChipMulticast{2, 0}));
  EXPECT_THAT(text, HasSubstr("ccl_interpreter fault ROUTE_PAST_END")) << text;
  EXPECT_THAT(text, HasSubstr(fmt::format("; multicast to hops 1..2 forward from chip {} on {}: the line ends 1 hop "
                                          "forward of chip {}",
                                          first, plan.lines()[0].to_string(), first)))
      << text;
}

// Through a fabric mux the client is named, not the mux, which would have forwarded it.
TEST(FabricRouteCheck, AMuxClientsRoutePastTheLineEndFaultsAtTheClient) {
  SimMeshDevice device(topo::build_n300(), fabric_options(runtime::FabricMode::Line));
  const runtime::FabricPlan& plan = device.fabric_plan();
  const runtime::ChipId chip = plan.chips()[0];
  const runtime::CoreCoord mux_core{3, 0};
  const runtime::CoreCoord client{0, 0};
  const runtime::Noc0Coord mux_noc0 = device.core_map(chip).tensix_noc0(mux_core);
  runtime::Program program;
  const std::vector<api::FabricConnectionConfig> clients =
      ccl::add_fabric_mux(program, plan, runtime::FabricPort{0, 0}, chip, mux_core, true, mux_noc0, 1);
  kargs::InterpreterSpec spec;
  spec.packet_header_cb_id = ccl::kPacketHeaderCbId;
  spec.semaphore_ids = {0};
  spec.streams = {kargs::InterpreterStreamSpec{
      std::nullopt,
      cmd::encode_command(cmd::fabric_unicast_semaphore_inc(cmd::SemaphoreId{0}, 1, 1, 2, cmd::ChipUnicast{2, true})), 1}};
  ccl::connect_to_fabric_mux(program, spec, client, true, clients[0]);
  program.circular_buffers.push_back(ccl::packet_header_cb(client));
  program.semaphores.push_back(ccl::tensix_semaphore(client, 0));
  program.kernels.push_back(ccl::interpreter_kernel(client, spec));
  runtime::MeshWorkload workload;
  workload.name = "mux client too far";
  workload.programs[chip] = std::move(program);
  device.enqueue_workload(workload);
  const std::string text = expect_device_error([&] { device.finish(); }, DeviceError::Kind::Fault);
  EXPECT_THAT(text, HasSubstr(fmt::format("{} [tensix (0,0) dm0] ccl_interpreter: ccl_interpreter fault ROUTE_PAST_END",
                                          core_name(device, chip))))
      << text;
  EXPECT_THAT(text, HasSubstr(fmt::format("; unicast of 2 hops forward from chip {} (through the fabric mux at NoC0 "
                                          "({},{})) on {}: the line ends 1 hop forward of chip {}",
                                          chip, mux_noc0.x, mux_noc0.y, plan.lines()[0].to_string(), chip)))
      << text;
}

}  // namespace
}  // namespace cclmesh::sim::device
