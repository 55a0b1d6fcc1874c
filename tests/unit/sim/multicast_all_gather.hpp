#pragma once
// All-gather by multicast on a simulated device's whole-system fabric, built by hand from
// interpreter commands (REFERENCE 4.12's interpreter all-gather): the chip at fabric position p
// writes its input into row p of every chip's output, multicasts +1 on semaphore 0 (which also
// counts locally) and waits until all n chips have counted; then every chip's output is
// checked byte for byte. The fabric tests run it as a workload, the fault tests to provoke
// and report hangs.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/host/command_encoder.hpp"
#include "kernels/host/micro_ops.hpp"
#include "tests/unit/sim/device_test_util.hpp"

namespace cclmesh::sim::device::testing {

struct MulticastAllGather {
  std::uint32_t pages_per_chip = 1;
  std::uint32_t page_size = 2048;
  std::uint32_t packet_pages = 1;  // pages per fabric packet
  // On a ring: every chip multicasts all the way round forward (the flood that deadlocks a ring
  // without deadlock avoidance) instead of n/2 forward and (n - 1)/2 backward.
  bool ring_one_way = false;
};

inline void multicast_all_gather(SimMeshDevice& device, const MulticastAllGather& ag) {
  const runtime::FabricPlan& plan = device.fabric_plan();
  const auto n = static_cast<std::uint32_t>(plan.chips().size());
  const std::uint32_t pages = ag.pages_per_chip;
  const runtime::BufferHandle in = device.create_buffer(dram_buffer(std::uint64_t{pages} * ag.page_size, ag.page_size));
  const runtime::BufferHandle out =
      device.create_buffer(dram_buffer(std::uint64_t{n} * pages * ag.page_size, ag.page_size));
  const runtime::CoreCoord core{0, 0};
  runtime::MeshWorkload workload{"all_gather", {}, {}};
  for (std::uint32_t p = 0; p < n; ++p) {
    const runtime::ChipId chip = plan.chips()[p];
    device.write_buffer(chip, in, pattern(in.config.size_bytes, chip));
    cmd::ChipMulticast mcast{plan.reach(chip, true), plan.reach(chip, false)};
    if (plan.mode() == runtime::FabricMode::Ring) {
      mcast = ag.ring_one_way ? cmd::ChipMulticast{n - 1, 0} : cmd::ChipMulticast{n / 2, (n - 1) / 2};
    }
    const runtime::Noc0Coord worker = device.core_map(chip).tensix_noc0(core);
    const api::TensorSlice out_slice{{1, 1, n, pages}, {1, 1, 1, pages}, {0, 0, p, 0}, {1, 1, 1, pages}, {0, 0, 0, 0}};
    const std::vector<cmd::Command> writer{
        cmd::fabric_write_cb_to_tensor_slice(out_slice, 0, mcast),
        cmd::fabric_multicast_semaphore_inc(cmd::SemaphoreId{0}, 1, worker.x, worker.y, mcast),
        cmd::local_semaphore_wait(cmd::SemaphoreId{0}, n)};
    kargs::InterpreterSpec spec;
    spec.packet_header_cb_id = runtime::ccl::kPacketHeaderCbId;
    spec.packet_size_in_pages = ag.packet_pages;
    spec.semaphore_ids = {0};
    std::vector<std::uint32_t> semaphores{0};
    if (mcast.num_targets_forward > 0) {
      spec.forward_connection = plan.worker_connection(chip, true, 1, 2, 3);
      semaphores.insert(semaphores.end(), {1, 2, 3});
    }
    if (mcast.num_targets_backward > 0) {
      spec.backward_connection = plan.worker_connection(chip, false, 4, 5, 6);
      semaphores.insert(semaphores.end(), {4, 5, 6});
    }
    spec.streams = {
        kargs::InterpreterStreamSpec{tensor_args(device, in, chip),
                                     cmd::encode_command(cmd::read_tensor_slice_to_cb(whole({1, 1, 1, pages}), 0)), 1},
        kargs::InterpreterStreamSpec{tensor_args(device, out, chip), cmd::encode_stream(writer), 3}};
    runtime::MeshWorkload one = interpreter_workload("all_gather", chip, core, spec, ag.page_size, 4, semaphores);
    workload.programs[chip] = std::move(one.programs.at(chip));
  }
  device.enqueue_workload(workload);
  device.finish();
  for (std::uint32_t c = 0; c < n; ++c) {
    const std::vector<std::byte> got = read_back(device, plan.chips()[c], out);
    for (std::uint32_t p = 0; p < n; ++p) {
      const std::vector<std::byte> expected = pattern(in.config.size_bytes, plan.chips()[p]);
      EXPECT_TRUE(std::equal(expected.begin(), expected.end(), got.begin() + std::ptrdiff_t{p} * in.config.size_bytes))
          << "chip " << plan.chips()[c] << " row " << p;
    }
  }
}

}  // namespace cclmesh::sim::device::testing
