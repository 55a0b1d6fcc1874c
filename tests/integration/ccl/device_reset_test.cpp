// SimMeshDevice::reset(): a device that an op hung under a fault (a link going down mid-op) runs
// again after reset() as a device just built with the same options does: the all_gather after it
// checks bit for bit against the host reference, and its profile, event count, trace hash, clock
// and buffer addresses are a fresh device's, so nothing of the failed run is left over.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "runtime/ccl/all_gather/all_gather.hpp"
#include "tests/integration/ccl/ccl_runners.hpp"
#include "topologies/system_loader.hpp"

namespace cclmesh::ccltest {
namespace {

namespace ag = runtime::ccl::all_gather;
using runtime::DeviceError;

// A T3K ring whose link between chips 0 and 2 goes down at 30 us: a 1 MiB all_gather (~55 us)
// hangs on it, a 16 KiB one (~8 us, after the fabric's start-up) completes before it.
sim::device::SimMeshDeviceOptions ring_losing_a_link_at_30us() {
  sim::device::SimMeshDeviceOptions options;
  options.fabric.mode = FabricMode::Ring;
  options.faults.link_down.push_back({0, 2, sim::SimTime::from_us(30), "link-down:0-2@30us"});
  return options;
}

ag::Params all_gather_of(const runtime::ccl::TensorSpec& input) {
  ag::Params p;
  p.input = input;
  p.dim = 3;
  p.topology = CclTopology::Ring;
  return p;
}

// What a run leaves that a left-over of an earlier run would change.
struct Fingerprint {
  std::vector<runtime::KernelProfile> profile;
  std::uint64_t events = 0;
  std::uint64_t trace_hash = 0;
  sim::SimTime now;
};

Fingerprint fingerprint(const sim::device::SimMeshDevice& device) {
  return {device.profile(), device.stats().events_executed, device.trace_hash(), device.now()};
}

void expect_same(const Fingerprint& after_reset, const Fingerprint& fresh) {
  ASSERT_EQ(after_reset.profile.size(), fresh.profile.size());
  ASSERT_FALSE(fresh.profile.empty());
  for (std::size_t i = 0; i < fresh.profile.size(); ++i) {
    EXPECT_EQ(after_reset.profile[i], fresh.profile[i]) << "profile entry " << i << ": " << fresh.profile[i].kernel;
  }
  EXPECT_EQ(after_reset.events, fresh.events);
  EXPECT_EQ(after_reset.trace_hash, fresh.trace_hash);
  EXPECT_EQ(after_reset.now, fresh.now);
}

TEST(DeviceReset, AHungDeviceRunsAsAFreshOneAfterReset) {
  const topo::Topology t3k = topo::load_system("t3k");
  sim::device::SimMeshDevice device(t3k, ring_losing_a_link_at_30us());
  try {
    run_all_gather(device, all_gather_of(tile({1, 1, 512, 1024})), {}, {});
    FAIL() << "the all_gather completed across a link that went down under it";
  } catch (const DeviceError& e) {
    EXPECT_EQ(e.kind(), DeviceError::Kind::Hang) << e.what();
  }
  EXPECT_THROW(device.finish(), DeviceError);  // failed, until reset
  const std::size_t hung_profile = device.profile().size();

  device.reset();
  EXPECT_EQ(device.now(), device.fabric_ready_time());  // the fabric started again, from zero
  EXPECT_TRUE(device.profile().empty()) << hung_profile << " entries before the reset";
  const runtime::BufferHandle first_after_reset =
      device.create_buffer(runtime::ccl::interleaved_buffer_config(tile({1, 1, 64, 128}), runtime::BufferType::Dram));
  const RunOutcome after_reset = run_all_gather(device, all_gather_of(tile({1, 1, 64, 128})), {}, {});
  EXPECT_TRUE(after_reset.verified);  // every chip's output equals the host reference's

  sim::device::SimMeshDevice fresh(t3k, ring_losing_a_link_at_30us());
  EXPECT_EQ(device.fabric_ready_time(), fresh.fabric_ready_time());
  const runtime::BufferHandle first_fresh =
      fresh.create_buffer(runtime::ccl::interleaved_buffer_config(tile({1, 1, 64, 128}), runtime::BufferType::Dram));
  EXPECT_EQ(first_after_reset, first_fresh);  // the hung run's buffers are gone: the same id and address
  const RunOutcome fresh_run = run_all_gather(fresh, all_gather_of(tile({1, 1, 64, 128})), {}, {});
  EXPECT_TRUE(fresh_run.verified);
  expect_same(fingerprint(device), fingerprint(fresh));

  // The fault is the device's setting, so it is armed again: a long op hangs again after 30 us.
  EXPECT_THROW(run_all_gather(device, all_gather_of(tile({1, 1, 512, 1024})), {}, {}), DeviceError);
}

// An op that hangs after another completed on the same device: its hang report is about its own
// kernels. Until session 28 the earlier op's kernels stayed on the device, and a wait-for chain
// through a CB took the earlier op's finished kernel on that core for the one that pops it ("<- ...
// ccl_interpreter: it has finished"), so the headline counted 8 of the 32 parked workers as
// waiting on the link that went down instead of all 32 (seen on `cclmesh serve --fault
// link-down:0-2@80us`, the second client's all_gather).
TEST(DeviceReset, AHangAfterACompletedOpIsReportedOnItsOwnKernels) {
  sim::device::SimMeshDeviceOptions options;
  options.fabric.mode = FabricMode::Ring;
  options.faults.link_down.push_back({0, 2, sim::SimTime::from_us(80), "link-down:0-2@80us"});
  sim::device::SimMeshDevice device(topo::load_system("t3k"), options);
  const runtime::ccl::TensorSpec one_mib = tile({1, 1, 32, 2048});  // gathered: 1 MiB, ~54 us
  ASSERT_TRUE(run_all_gather(device, all_gather_of(one_mib), {}, {}).verified);
  try {
    run_all_gather(device, all_gather_of(one_mib), {}, {});
    FAIL() << "the all_gather completed across a link that went down under it";
  } catch (const DeviceError& e) {
    const std::string report = e.what();
    EXPECT_EQ(report.find("it has finished"), std::string::npos) << report;
    EXPECT_TRUE(std::regex_search(report, std::regex(R"(\b(\d+) of the \1 parked worker kernels)"))) << report;
  }
}

}  // namespace
}  // namespace cclmesh::ccltest
