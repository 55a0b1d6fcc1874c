// cli::ServedFaultEffects, the fault lines `cclmesh serve` gives each client op: a `drop` fault's
// line counts the frames that op lost, not every frame lost in the device's life (the device's
// own fault_effects() counts from its start, which is a local run's one op).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "runtime/ccl/all_gather/all_gather.hpp"
#include "runtime/ccl/common/ccl_common.hpp"
#include "sim/device/sim_mesh_device.hpp"
#include "tests/integration/ccl/ccl_test_util.hpp"
#include "tools/cclmesh/fault_spec.hpp"
#include "tools/cclmesh/served_fault_effects.hpp"
#include "topologies/system_loader.hpp"

namespace cclmesh::cli {
namespace {

namespace ccl = runtime::ccl;
namespace ag = ccl::all_gather;
using runtime::BufferType;
using runtime::CoreKind;
using runtime::FabricMode;

// A seed whose two ops each lose frames and complete (a lost data packet would hang the op).
constexpr const char* kDrop = "drop:0.0002:9";

// One all_gather of 128 KiB a chip over the T3K ring; what it gathers does not matter here.
void all_gather_once(sim::device::SimMeshDevice& device) {
  ag::Params p;
  p.input = ccltest::tile({1, 1, 32, 2048});
  p.dim = 3;
  p.topology = ccl::CclTopology::Ring;
  p.fabric = device.options().fabric;
  p.input_buffer = device.create_buffer(ccl::interleaved_buffer_config(p.input, BufferType::Dram));
  p.output_buffer =
      device.create_buffer(ccl::interleaved_buffer_config(ag::output_spec(p, device.topology()), BufferType::Dram));
  p.done_semaphore = device.create_global_semaphore(ag::semaphore_cores(p, device.topology()), CoreKind::Tensix, 0);
  ag::run(device, p);
}

TEST(ServedFaultEffects, ADropLineCountsTheOpsOwnLostFrames) {
  RunFaults faults;
  add_fault_spec(faults, kDrop);
  sim::device::SimMeshDeviceOptions options;
  options.fabric.mode = FabricMode::Ring;
  options.faults = faults.plan;
  sim::device::SimMeshDevice device(topo::load_system("t3k"), options);
  ServedFaultEffects effects(device);
  for (int op = 0; op < 2; ++op) {
    SCOPED_TRACE(fmt::format("op {}", op));
    const std::int64_t before = device.frames_dropped();
    all_gather_once(device);
    const std::int64_t lost = device.frames_dropped() - before;
    // Both ops must lose frames, or the test would not tell the op's count from the life's.
    ASSERT_GT(lost, 0);
    const std::vector<std::string> lines = effects.effects();
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_THAT(lines[0], ::testing::StartsWith(fmt::format("{}: {} frame(s) lost, and the op completed", kDrop, lost)))
        << lines[0];
  }
  // The device's own line counts the whole life.
  ASSERT_EQ(device.fault_effects().size(), 1u);
  EXPECT_THAT(device.fault_effects()[0],
              ::testing::StartsWith(fmt::format("{}: {} frame(s) lost", kDrop, device.frames_dropped())));
}

}  // namespace
}  // namespace cclmesh::cli
