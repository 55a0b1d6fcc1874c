// `run --device` against a served device that fails mid-run (the backend throws what is not a
// device error, which crosses the wire as a RemoteDeviceError, as a server that goes away does):
// exit 4, and the --report page and --json say the op did not complete with that exit code
// (session 31: the page said "exit code 3", the code of a hang or fault). And a server stopped
// while the op runs (cclmesh serve abandons it on SIGTERM): exit 4 too, the server having gone
// away, not the device's op (session 31: the abandoned op's timeout report came back, exit 3).
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "runtime/device/mesh_device.hpp"
#include "runtime/remote/remote_device_server.hpp"
#include "sim/device/sim_mesh_device.hpp"
#include "tests/remote/forwarding_mesh_device.hpp"
#include "tests/unit/cli/cli_test_util.hpp"
#include "topologies/system_loader.hpp"

namespace cclmesh::cli {
namespace {

using testing_util::read_file;
using testing_util::run_cli;

// The simulated device, but a backend whose finish() fails with what is not a DeviceError.
class FailingFinish final : public runtime::remote::ForwardingMeshDevice {
 public:
  using ForwardingMeshDevice::ForwardingMeshDevice;
  void finish() override { throw std::runtime_error("the backend lost the board"); }
};

// The simulated device, but finish() is interrupted by the server stopping, as `cclmesh serve`'s
// SIGTERM abandons the op in progress: stop() and then the device's abandoned-op error.
class StoppedDuringFinish final : public runtime::remote::ForwardingMeshDevice {
 public:
  using ForwardingMeshDevice::ForwardingMeshDevice;
  runtime::remote::RemoteDeviceServer* server = nullptr;
  void finish() override {
    server->stop();
    throw runtime::DeviceError(runtime::DeviceError::Kind::Timeout,
                               "abandoned at simulated time 1 us while running the enqueued workloads");
  }
};

class ServedDeviceFailure : public testing_util::TempDirTest {};

TEST_F(ServedDeviceFailure, ReportAndJsonSayTheRunEndedWithExitFour) {
  sim::device::SimMeshDeviceOptions options;
  options.fabric.mode = runtime::FabricMode::Line;
  sim::device::SimMeshDevice simulated(topo::load_system("n300"), options);
  FailingFinish device(simulated);
  runtime::remote::RemoteDeviceServer server(device, {});
  std::thread serving([&server] { server.serve(); });
  const std::string report = (dir_ / "run.html").string();
  const std::string json = (dir_ / "run.json").string();
  const int exit_code = run_cli({"run", "--device", "127.0.0.1:" + std::to_string(server.port()), "--op", "all_gather",
                                 "--size", "64KiB", "--report", report, "--json", json});
  server.stop();
  serving.join();
  EXPECT_EQ(exit_code, 4);
  const std::string page = read_file(report);
  EXPECT_NE(page.find("did not complete (exit code 4)"), std::string::npos) << page;
  EXPECT_NE(page.find("the backend lost the board"), std::string::npos) << page;
  EXPECT_EQ(page.find("exit code 3"), std::string::npos) << page;
  EXPECT_NE(read_file(json).find("\"outcome\": \"did not complete\""), std::string::npos);
}

TEST_F(ServedDeviceFailure, AServerStoppedMidOpEndsTheRunWithExitFour) {
  sim::device::SimMeshDeviceOptions options;
  options.fabric.mode = runtime::FabricMode::Line;
  sim::device::SimMeshDevice simulated(topo::load_system("n300"), options);
  StoppedDuringFinish device(simulated);
  std::vector<std::string> log;
  runtime::remote::RemoteServerOptions server_options;
  server_options.log = [&log](const std::string& line) { log.push_back(line); };
  runtime::remote::RemoteDeviceServer server(device, server_options);
  device.server = &server;
  std::thread serving([&server] { server.serve(); });
  const std::string json = (dir_ / "run.json").string();
  const int exit_code = run_cli({"run", "--device", "127.0.0.1:" + std::to_string(server.port()), "--op", "all_gather",
                                 "--size", "64KiB", "--json", json});
  serving.join();  // the device stopped it
  EXPECT_EQ(exit_code, 4);
  const std::string written = read_file(json);
  EXPECT_NE(written.find("\"outcome\": \"did not complete\""), std::string::npos) << written;
  EXPECT_NE(written.find("the server stopped while this call ran"), std::string::npos) << written;
  EXPECT_EQ(written.find("abandoned at simulated time"), std::string::npos) << written;
  // No next client: the failed device is not reset for one, which only delayed the exit.
  EXPECT_EQ(std::count_if(log.begin(), log.end(),
                          [](const std::string& line) { return line.find("device reset") != std::string::npos; }),
            0)
      << log.back();
  EXPECT_EQ(log.back(), "server stopped");
}

}  // namespace
}  // namespace cclmesh::cli
