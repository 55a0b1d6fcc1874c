#pragma once
// What the simulated-device error and fault tests share: catching the DeviceError a run ends
// with, and the simplest hang over the fabric (a send/recv whose sender never runs).

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "runtime/ccl/send_recv/send_recv.hpp"
#include "tests/unit/sim/device_test_util.hpp"

namespace cclmesh::sim::device::testing {

// Runs `action`, which must throw a DeviceError of `kind`; returns its report ("" if none).
inline std::string expect_device_error(const std::function<void()>& action, runtime::DeviceError::Kind kind) {
  try {
    action();
  } catch (const runtime::DeviceError& e) {
    EXPECT_EQ(static_cast<int>(e.kind()), static_cast<int>(kind)) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no DeviceError";
  return "";
}

// A one-page send/recv on a T3K line fabric from fabric position 0 to position 2, with the
// sender's program left out: the receiver waits for an increment nobody sends. Returns the
// hang report and the receiving chip.
struct ReceiverWithoutSender {
  std::string report;
  runtime::ChipId receiver = 0;
};

inline ReceiverWithoutSender run_receiver_without_sender() {
  SimMeshDeviceOptions options;
  options.fabric.mode = runtime::FabricMode::Line;
  SimMeshDevice device(topo::build_t3k(), options);
  const runtime::BufferHandle in = device.create_buffer(dram_buffer(2048, 2048));  // input first, then output
  const runtime::BufferHandle out = device.create_buffer(dram_buffer(2048, 2048));
  const runtime::ccl::send_recv::Params params =
      send_recv_params(device.fabric_plan().chips()[0], device.fabric_plan().chips()[2], in, out, options.fabric);
  runtime::MeshWorkload workload = runtime::ccl::send_recv::build(params, device.topology());
  workload.programs.erase(params.sender);  // the sender, who would increment, never runs
  device.enqueue_workload(workload);
  return {expect_device_error([&] { device.finish(); }, runtime::DeviceError::Kind::Hang), params.receiver};
}

}  // namespace cclmesh::sim::device::testing
