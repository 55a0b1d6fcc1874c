// The settings a run on a served device records are the server's exactly (session 20): an
// ERISC unreserved L1 that is not whole KiB (valid in 16 B steps, as FabricOptions takes it, on
// a server other than `cclmesh serve`, whose flag is in KiB) was recorded as bytes / 1024,
// truncated, so the row claimed a figure the device did not run with.
#include <gtest/gtest.h>

#include <thread>

#include "runtime/device/l1_map.hpp"
#include "runtime/remote/remote_device_server.hpp"
#include "runtime/remote/remote_mesh_device.hpp"
#include "sim/device/sim_mesh_device.hpp"
#include "tools/cclmesh/op_runner.hpp"
#include "tools/cclmesh/result_table.hpp"
#include "topologies/system_loader.hpp"

namespace cclmesh::cli {
namespace {

TEST(ServedSettings, TheEriscL1IsTheServersFigureToTheByte) {
  constexpr std::uint32_t kNotWholeKiB = 110 * 1024 + runtime::kProgramSemaphoreStride;
  ASSERT_TRUE(runtime::valid_erisc_unreserved_bytes(kNotWholeKiB));
  sim::device::SimMeshDeviceOptions options;
  options.fabric.mode = runtime::FabricMode::Line;
  options.fabric.erisc_unreserved_bytes = kNotWholeKiB;
  sim::device::SimMeshDevice device(topo::load_system("n300"), options);
  runtime::remote::RemoteDeviceServer server(device, {});
  std::thread serving([&server] { server.serve(); });
  {
    runtime::remote::RemoteMeshDevice remote("127.0.0.1", server.port());
    ASSERT_EQ(remote.fabric().erisc_unreserved_bytes, kNotWholeKiB);
    const RunOptions served = served_run_options(RunOptions{}, remote);
    EXPECT_EQ(settings_json(served).at("erisc_unreserved_bytes"), kNotWholeKiB);
  }
  server.stop();
  serving.join();
}

}  // namespace
}  // namespace cclmesh::cli
