// `run --device` builds its op from what the server's hello says (served_run_options): its
// fabric (chip_order, settings), faults and data mode. A hello no cclmesh serve would send is
// bad input from the peer, refused naming the server and the field (exit 2, as a peer that is not
// a cclmesh serve), never an internal error, a crash or a run on a fabric the device does not
// run (session 32). The server here is a real one whose backend's fabric() says what the test
// wants the hello to say; its device runs the fabric it was built with.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "runtime/remote/remote_device_server.hpp"
#include "sim/device/sim_mesh_device.hpp"
#include "tests/remote/forwarding_mesh_device.hpp"
#include "tests/unit/cli/cli_test_util.hpp"
#include "tools/cclmesh/cli_error.hpp"
#include "topologies/system_loader.hpp"

namespace cclmesh::cli {
namespace {

using runtime::FabricMode;
using runtime::FabricOptions;

// The simulated device, but its fabric() says `fabric`, as the hello then does.
class HelloFabric final : public runtime::remote::ForwardingMeshDevice {
 public:
  HelloFabric(MeshDevice& inner, FabricOptions fabric) : ForwardingMeshDevice(inner), fabric_(std::move(fabric)) {}
  const FabricOptions& fabric() const override { return fabric_; }

 private:
  FabricOptions fabric_;
};

// ring:8 (ring:8/4@wh: chip i's neighbours are i-1 and i+1, 4 links each) with a line fabric through every chip.
FabricOptions line_fabric() {
  FabricOptions fabric;
  fabric.mode = FabricMode::Line;
  return fabric;
}

// What `run --device` against a server for `device` ends with: the bad-input message (exit 2),
// or "exit N" for a run that returned, or "internal error: ..." (exit 4) for anything else.
std::string run_against(runtime::MeshDevice& device, runtime::remote::RemoteServerOptions server_options = {}) {
  runtime::remote::RemoteDeviceServer server(device, std::move(server_options));
  std::thread serving([&server] { server.serve(); });
  std::string outcome;
  try {
    const int exit_code = testing_util::run_cli(
        {"run", "--device", "127.0.0.1:" + std::to_string(server.port()), "--op", "all_gather", "--size", "64KiB"});
    outcome = "exit " + std::to_string(exit_code);
  } catch (const UsageError& e) {
    outcome = e.what();
  } catch (const std::exception& e) {
    outcome = std::string("internal error: ") + e.what();
  }
  server.stop();
  serving.join();
  return outcome;
}

class ServedHello : public ::testing::Test {
 protected:
  sim::device::SimMeshDevice simulated_{topo::load_system("ring:8"), [] {
                                          sim::device::SimMeshDeviceOptions options;
                                          options.fabric = line_fabric();
                                          return options;
                                        }()};

  // The refusal of a hello whose fabric is the device's with `change` made.
  template <class Change>
  std::string with_fabric(Change change) {
    FabricOptions fabric = simulated_.fabric();
    change(fabric);
    HelloFabric device(simulated_, fabric);
    return run_against(device);
  }
};

// The hello's own prefix: the server's address, the call, and the field.
::testing::AssertionResult refused_as(const std::string& outcome, const std::string& field_and_why) {
  const bool names_server = outcome.rfind("--device: remote device 127.0.0.1:", 0) == 0 &&
                            outcome.find(": hello: protocol error: ") != std::string::npos;
  if (names_server && outcome.find(field_and_why) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "expected a refusal of the hello saying \"" << field_and_why << "\", got: "
                                       << outcome;
}

TEST_F(ServedHello, TheDevicesOwnFabricRuns) {
  HelloFabric device(simulated_, simulated_.fabric());
  EXPECT_EQ(run_against(device), "exit 0");
}

TEST_F(ServedHello, ChipOrderNamingAChipTheTopologyLacksIsRefused) {
  EXPECT_TRUE(refused_as(with_fabric([](FabricOptions& f) { f.chip_order = {0, 1, 9}; }),
                         "hello reply.fabric.chip_order names chip 9, which its topology (ring:8/4@wh, chips 0..7) lacks"));
}

TEST_F(ServedHello, ChipOrderWithAChipTwiceIsRefused) {
  EXPECT_TRUE(refused_as(with_fabric([](FabricOptions& f) { f.chip_order = {0, 1, 2, 1}; }),
                         "hello reply.fabric: a fabric its topology (ring:8/4@wh, chips 0..7) cannot run: fabric: chip 1 "
                         "appears twice in chip_order"));
}

TEST_F(ServedHello, ChipOrderThatIsNoLineOfTheTopologyIsRefused) {
  EXPECT_TRUE(refused_as(with_fabric([](FabricOptions& f) { f.chip_order = {0, 1, 3, 4}; }),
                         "fabric: chip_order's line goes from chip 1 to chip 3, which are not neighbours"));
}

TEST_F(ServedHello, NoLinksIsRefused) {
  EXPECT_TRUE(refused_as(with_fabric([](FabricOptions& f) { f.num_links = 0; }),
                         "fabric: num_links 0 must be in 1..16"));
}

TEST_F(ServedHello, MoreLinksThanTheEdgesHaveIsRefused) {
  // ring:8/4@wh: 4 links on every edge.
  EXPECT_TRUE(refused_as(with_fabric([](FabricOptions& f) { f.num_links = 5; }),
                         "hello reply.fabric: a fabric its topology (ring:8/4@wh, chips 0..7) cannot run: "));
}

TEST_F(ServedHello, PayloadAboveTheLargestIsRefused) {
  EXPECT_TRUE(refused_as(with_fabric([](FabricOptions& f) { f.max_payload_bytes = runtime::kMaxFabricPayloadBytes + 16; }),
                         "hello reply.fabric.max_payload_bytes: 7632 B; expected 64..7616 B, what cclmesh serve "
                         "--fabric-payload takes (REFERENCE 6.2)"));
}

TEST_F(ServedHello, PayloadBelowTheSmallestIsRefused) {
  EXPECT_TRUE(refused_as(with_fabric([](FabricOptions& f) { f.max_payload_bytes = 16; }),
                         "hello reply.fabric.max_payload_bytes: 16 B; expected 64..7616 B"));
}

TEST_F(ServedHello, ReceiverPacketsInFlightPastTheSlotsAreRefused) {
  EXPECT_TRUE(refused_as(with_fabric([](FabricOptions& f) { f.receiver_packets_in_flight = 99; }),
                         "fabric: 99 receiver packets in flight; expected 1.."));
}

TEST_F(ServedHello, DownEdgeNamingAChipTheTopologyLacksIsRefused) {
  EXPECT_TRUE(refused_as(with_fabric([](FabricOptions& f) { f.down_edges = {{3, 12}}; }),
                         "hello reply.fabric.down_edges names chip 12, which its topology (ring:8/4@wh, chips 0..7) lacks"));
}

// Faults: parsed as serve parses --fault, and held to what serve checks of them.
TEST_F(ServedHello, AFaultThatDoesNotParseIsRefused) {
  runtime::remote::RemoteServerOptions options;
  options.faults = {"link-down:0"};
  const std::string outcome = run_against(simulated_, options);
  EXPECT_EQ(outcome.rfind("--device: the served device runs under fault 'link-down:0', which this cclmesh does not "
                          "read (",
                          0),
            0u)
      << outcome;
}

TEST_F(ServedHello, AFaultOnALinkTheTopologyLacksIsRefused) {
  runtime::remote::RemoteServerOptions options;
  options.faults = {"link-slow:0-9:0.5"};
  EXPECT_EQ(run_against(simulated_, options),
            "--device: the served device's hello: faults: --fault: 'link-slow:0-9:0.5': chip 9 is not on ring:8/4@wh; "
            "expected chips 0..7; expected the faults of a device serving that topology (a cclmesh serve's)");
  options.faults = {"link-slow:0-4:0.5"};
  const std::string outcome = run_against(simulated_, options);
  EXPECT_EQ(outcome.rfind("--device: the served device's hello: faults: --fault: 'link-slow:0-4:0.5': chips 0 and 4 "
                          "are not neighbours on ring:8/4@wh",
                          0),
            0u)
      << outcome;
}

TEST_F(ServedHello, ACorruptionOnATimingOnlyDeviceIsRefused) {
  runtime::remote::RemoteServerOptions options;
  options.faults = {"corrupt:0-1"};
  options.data_mode = runtime::remote::ServedDataMode::TimingOnly;
  const std::string outcome = run_against(simulated_, options);
  EXPECT_EQ(outcome.rfind("--device: the served device's hello: faults: --fault: 'corrupt:0-1' flips a bit of payload "
                          "data, which the served device (timing only) does not carry",
                          0),
            0u)
      << outcome;
}

}  // namespace
}  // namespace cclmesh::cli
