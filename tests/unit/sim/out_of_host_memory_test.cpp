// A std::bad_alloc while the simulation runs is the host's memory, not a fault of the simulated
// mesh: the device's report says so and what to do (review41, session 41: it read "simulation
// error at 1.130 ms: std::bad_alloc", a run with data under a memory limit). A kernel that throws
// std::bad_alloc stands in for an allocation failing mid-run (exception_message words it for the
// engine's failures and the run loop's alike).
#include <gtest/gtest.h>

#include <new>
#include <string>

#include "runtime/device/mesh_device.hpp"
#include "tests/unit/sim/device_test_util.hpp"

namespace cclmesh::sim::device {
namespace {

using namespace testing;

void allocate_past_the_host() { throw std::bad_alloc(); }

// What finish() reports when a kernel of a device made with `options` runs out of host memory.
std::string out_of_memory_report(const SimMeshDeviceOptions& options) {
  SimMeshDevice device(topo::build_n300(), options);
  device.register_kernel("allocate_past_the_host", &allocate_past_the_host, false);
  device.enqueue_workload(one_kernel_workload("out_of_host_memory", "allocate_past_the_host"));
  try {
    device.finish();
  } catch (const runtime::DeviceError& e) {
    return e.what();
  }
  ADD_FAILURE() << "finish() returned";
  return {};
}

TEST(OutOfHostMemory, ABadAllocMidRunIsReportedAsTheHostsMemory) {
  const std::string what = out_of_memory_report({});
  EXPECT_NE(what.find("allocate_past_the_host: the host ran out of memory (std::bad_alloc): this process holds "
                      "every chip's buffers (with data, their bytes), its kernels and its events; expected a smaller "
                      "size, fewer chips, or no data (timing only)"),
            std::string::npos)
      << what;
}

// A timing-only device holds no data: its way out is a smaller mesh or size, not the --no-data it
// already runs with (session 42: it was told "or no data (timing only)" too).
TEST(OutOfHostMemory, ATimingOnlyDeviceIsNotToldToDropItsData) {
  SimMeshDeviceOptions options;
  options.data_mode = DataMode::TimingOnly;
  const std::string what = out_of_memory_report(options);
  EXPECT_NE(what.find("allocate_past_the_host: the host ran out of memory (std::bad_alloc): this process holds "
                      "every chip's state, its kernels and its events (timing only: no data); expected a smaller "
                      "mesh (fewer chips) or a smaller size"),
            std::string::npos)
      << what;
  EXPECT_EQ(what.find("no data (timing only)"), std::string::npos) << what;
}

}  // namespace
}  // namespace cclmesh::sim::device
