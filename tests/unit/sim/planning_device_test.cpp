// A PlanningMeshDevice places what an op asks for exactly as the SimMeshDevice of the same
// topology and options would (same handles, same refusals with the same messages) without
// building a chip, so that `cclmesh run` decides bad input on it before building the device.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "runtime/device/buffer_layout.hpp"
#include "runtime/device/l1_map.hpp"
#include "sim/device/planning_mesh_device.hpp"
#include "sim/device/sim_mesh_device.hpp"
#include "topologies/system_loader.hpp"

namespace cclmesh::sim::device {
namespace {

runtime::FabricOptions line_fabric(std::uint32_t links = 1) {
  runtime::FabricOptions fabric;
  fabric.mode = runtime::FabricMode::Line;
  fabric.num_links = links;
  return fabric;
}

SimMeshDeviceOptions timing_only(const runtime::FabricOptions& fabric, const FaultPlan& faults = {}) {
  SimMeshDeviceOptions options;
  options.data_mode = DataMode::TimingOnly;
  options.fabric = fabric;
  options.faults = faults;
  return options;
}

// The message `make` throws, or "" when it does not throw.
std::string refusal_of(const std::function<void()>& make) {
  try {
    make();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

runtime::BufferConfig dram(std::uint64_t bytes) { return {runtime::BufferType::Dram, bytes, 2048, runtime::TensorMemoryLayout::Interleaved, std::nullopt}; }
runtime::BufferConfig l1(std::uint64_t bytes) { return {runtime::BufferType::L1, bytes, 2048, runtime::TensorMemoryLayout::Interleaved, std::nullopt}; }

TEST(PlanningMeshDevice, GivesTheSimulatedDevicesHandlesAndSemaphores) {
  const topo::Topology t3k = topo::load_system("t3k");
  SimMeshDevice device(t3k, timing_only(line_fabric()));
  PlanningMeshDevice planner(t3k, line_fabric(), {}, DataMode::TimingOnly);
  EXPECT_EQ(planner.worker_grid(), device.worker_grid());
  EXPECT_EQ(planner.chips(), device.chips());
  EXPECT_EQ(planner.active_ethernet_channels(3), device.active_ethernet_channels(3));
  const std::vector<runtime::CoreRange> cores{runtime::CoreRange{{0, 0}, {1, 1}}};
  for (const runtime::BufferConfig& config : {dram(1 << 20), l1(64 * 1024), dram(6144), l1(100352)}) {
    EXPECT_EQ(planner.create_buffer(config), device.create_buffer(config));
  }
  EXPECT_EQ(planner.create_global_semaphore(cores, runtime::CoreKind::Tensix, 0),
            device.create_global_semaphore(cores, runtime::CoreKind::Tensix, 0));
  const std::vector<runtime::CoreRange> channel{runtime::CoreRange{{0, 0}, {0, 0}}};
  EXPECT_EQ(planner.create_global_semaphore(channel, runtime::CoreKind::Ethernet, 0),
            device.create_global_semaphore(channel, runtime::CoreKind::Ethernet, 0));
  EXPECT_EQ(planner.create_buffer(l1(4096)), device.create_buffer(l1(4096)));
}

// After reset() both place as if nothing had been placed: the same handles and semaphores as
// before, and a semaphore created before is no longer theirs.
TEST(PlanningMeshDevice, ResetForgetsWhatWasPlacedAsTheDeviceDoes) {
  const topo::Topology t3k = topo::load_system("t3k");
  SimMeshDevice device(t3k, timing_only(line_fabric()));
  PlanningMeshDevice planner(t3k, line_fabric(), {}, DataMode::TimingOnly);
  const std::vector<runtime::CoreRange> cores{runtime::CoreRange{{0, 0}, {1, 1}}};
  const runtime::BufferHandle first = planner.create_buffer(dram(1 << 20));
  const runtime::GlobalSemaphore semaphore = planner.create_global_semaphore(cores, runtime::CoreKind::Tensix, 0);
  EXPECT_EQ(device.create_buffer(dram(1 << 20)), first);
  EXPECT_EQ(device.create_global_semaphore(cores, runtime::CoreKind::Tensix, 0), semaphore);
  planner.create_buffer(l1(64 * 1024));
  device.create_buffer(l1(64 * 1024));
  planner.reset();
  device.reset();
  EXPECT_THROW(planner.reset_global_semaphore(semaphore, 1), std::invalid_argument);
  EXPECT_THROW(device.reset_global_semaphore(semaphore, 1), std::invalid_argument);
  EXPECT_EQ(planner.create_buffer(dram(1 << 20)), first);
  EXPECT_EQ(device.create_buffer(dram(1 << 20)), first);
  EXPECT_EQ(planner.create_global_semaphore(cores, runtime::CoreKind::Tensix, 0), semaphore);
  EXPECT_EQ(device.create_global_semaphore(cores, runtime::CoreKind::Tensix, 0), semaphore);
}

TEST(PlanningMeshDevice, RefusesABufferThatDoesNotFitAsTheDeviceDoes) {
  const topo::Topology n300 = topo::load_system("n300");
  SimMeshDevice device(n300, timing_only(line_fabric()));
  PlanningMeshDevice planner(n300, line_fabric(), {}, DataMode::TimingOnly);
  for (const runtime::BufferConfig& config : {l1(std::uint64_t{200} << 20), dram(std::uint64_t{64} << 30)}) {
    const std::string refused = refusal_of([&] { device.create_buffer(config); });
    ASSERT_NE(refused, "");
    EXPECT_EQ(refusal_of([&] { planner.create_buffer(config); }), refused);
    EXPECT_THROW(planner.create_buffer(config), runtime::BufferConfigError);
  }
}

TEST(PlanningMeshDevice, RefusesACircularBufferAboveTheL1BuffersAsTheDeviceDoes) {
  const topo::Topology n300 = topo::load_system("n300");
  SimMeshDevice device(n300, timing_only(line_fabric()));
  PlanningMeshDevice planner(n300, line_fabric(), {}, DataMode::TimingOnly);
  // Most of every core's L1 in buffers, then a CB bigger than what is left below them.
  EXPECT_EQ(planner.create_buffer(l1(std::uint64_t{1200} * 1024 * 64)),
            device.create_buffer(l1(std::uint64_t{1200} * 1024 * 64)));
  runtime::MeshWorkload workload;
  workload.name = "too_big_cb";
  workload.programs[1].circular_buffers.push_back(
      runtime::CircularBufferSpec{0, {runtime::CoreRange{{0, 0}, {0, 0}}}, 100, 4096});
  const std::string refused = refusal_of([&] { device.enqueue_workload(workload); });
  ASSERT_NE(refused, "");
  EXPECT_EQ(refusal_of([&] { planner.enqueue_workload(workload); }), refused);
  EXPECT_THROW(planner.enqueue_workload(workload), runtime::WorkloadPlacementError);
  // One that fits is placed (and nothing runs).
  workload.programs[1].circular_buffers.front().num_pages = 2;
  EXPECT_NO_THROW(planner.enqueue_workload(workload));
}

TEST(PlanningMeshDevice, RefusesLinksAHopLacksAsTheDeviceDoes) {
  const topo::Topology mesh = topo::load_system("mesh:4x4");
  const std::string refused = refusal_of([&] { SimMeshDevice(mesh, timing_only(line_fabric(5))); });
  ASSERT_NE(refused, "");
  EXPECT_EQ(refusal_of([&] { PlanningMeshDevice(mesh, line_fabric(5), {}, DataMode::TimingOnly); }), refused);
}

// A ring no other ring avoids a down link by runs as a line around it (session 22: until then
// this one link was refused); two cut it.
TEST(PlanningMeshDevice, OpensARingNoOtherRingAvoidsADownLinkByAsTheDeviceDoes) {
  const topo::Topology ring = topo::load_system("ring:8");
  runtime::FabricOptions fabric;
  fabric.mode = runtime::FabricMode::Ring;
  FaultPlan faults;
  faults.link_down.push_back(LinkDownFault{0, 1, SimTime::zero(), "link-down:0-1"});
  SimMeshDevice device(ring, timing_only(fabric, faults));
  PlanningMeshDevice planner(ring, fabric, faults, DataMode::TimingOnly);
  EXPECT_EQ(planner.fabric().down_edges, (std::vector<std::pair<runtime::ChipId, runtime::ChipId>>{{0, 1}}));
  EXPECT_EQ(planner.fabric(), device.options().fabric);
}

// Without a fabric (legacy mode) the device names every link down from the start in its
// options' down_edges, whichever group they cut (session 25): the op lays its own groups around
// them (runtime/ccl/common/legacy_groups.hpp), local or served (the hello carries them). Two on
// one ring are the op's refusal, not the device's.
TEST(PlanningMeshDevice, NamesTheLinksDownFromTheStartWithoutAFabricAsTheDeviceDoes) {
  const topo::Topology ring = topo::load_system("ring:8");
  runtime::FabricOptions none;
  none.mode = runtime::FabricMode::None;
  FaultPlan faults;
  faults.link_down.push_back(LinkDownFault{0, 1, SimTime::zero(), "link-down:0-1"});
  faults.link_down.push_back(LinkDownFault{4, 5, SimTime::zero(), "link-down:4-5"});
  faults.link_down.push_back(LinkDownFault{2, 3, SimTime::from_us(10), "link-down:2-3@10us"});  // later: not named
  SimMeshDevice device(ring, timing_only(none, faults));
  PlanningMeshDevice planner(ring, none, faults, DataMode::TimingOnly);
  EXPECT_EQ(planner.fabric().down_edges, (std::vector<std::pair<runtime::ChipId, runtime::ChipId>>{{0, 1}, {4, 5}}));
  EXPECT_EQ(planner.fabric(), device.options().fabric);
  EXPECT_EQ(device.fabric().mode, runtime::FabricMode::None);
}

TEST(PlanningMeshDevice, RefusesARingCutByTwoDownLinksAsTheDeviceDoes) {
  const topo::Topology ring = topo::load_system("ring:8");
  runtime::FabricOptions fabric;
  fabric.mode = runtime::FabricMode::Ring;
  FaultPlan faults;
  faults.link_down.push_back(LinkDownFault{0, 1, SimTime::zero(), "link-down:0-1"});
  faults.link_down.push_back(LinkDownFault{4, 5, SimTime::zero(), "link-down:4-5"});
  const std::string refused = refusal_of([&] { SimMeshDevice(ring, timing_only(fabric, faults)); });
  ASSERT_NE(refused, "");
  EXPECT_EQ(refusal_of([&] { PlanningMeshDevice(ring, fabric, faults, DataMode::TimingOnly); }), refused);
  EXPECT_THROW(PlanningMeshDevice(ring, fabric, faults, DataMode::TimingOnly), runtime::DeviceError);
}

TEST(PlanningMeshDevice, ReEmbedsTheFabricAroundADownLinkAsTheDeviceDoes) {
  const topo::Topology t3k = topo::load_system("t3k");
  FaultPlan faults;
  faults.link_down.push_back(LinkDownFault{0, 2, SimTime::zero(), "link-down:0-2"});
  SimMeshDevice device(t3k, timing_only(line_fabric(), faults));
  PlanningMeshDevice planner(t3k, line_fabric(), faults, DataMode::TimingOnly);
  EXPECT_FALSE(planner.fabric().chip_order.empty());
  EXPECT_EQ(planner.fabric().chip_order, device.options().fabric.chip_order);
}

TEST(PlanningMeshDevice, HoldsNoData) {
  const topo::Topology n300 = topo::load_system("n300");
  PlanningMeshDevice planner(n300, line_fabric(), {}, DataMode::TimingOnly);
  const runtime::BufferHandle buffer = planner.create_buffer(dram(4096));
  std::vector<std::byte> bytes(4096);
  EXPECT_ANY_THROW(planner.write_buffer(0, buffer, bytes));
  EXPECT_ANY_THROW(planner.read_buffer(0, buffer, bytes));
}

// Nothing runs, so the profile is empty; a range past it refused as the simulated device refuses it.
TEST(PlanningMeshDevice, HasAnEmptyProfileAndRefusesARangePastItAsTheDeviceDoes) {
  const topo::Topology n300 = topo::load_system("n300");
  SimMeshDevice device(n300, timing_only(line_fabric()));
  PlanningMeshDevice planner(n300, line_fabric(), {}, DataMode::TimingOnly);
  EXPECT_EQ(planner.profile_size(), 0u);
  EXPECT_TRUE(planner.profile_since(0).empty());
  EXPECT_TRUE(planner.profile().empty());
  const std::string refused = refusal_of([&] { (void)planner.profile_since(1); });
  EXPECT_EQ(refused, refusal_of([&] { (void)device.profile_since(1); }));
  EXPECT_EQ(refused, "profile_since: entry 1 is past the profile's 0 entries; expected at most profile_size() (an "
                     "index taken before a reset?)");
}

}  // namespace
}  // namespace cclmesh::sim::device
