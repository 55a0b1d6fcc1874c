// Enqueue-ordered host writes and reads (MeshDevice::enqueue_write_buffer / enqueue_read_buffer)
// on the simulated and the planning device: a loop of write, all_gather, read with one finish()
// gives every iteration's own output; a read before a workload sees the old bytes and one after
// it the new; a buffer a queued host command names is in use until finish(); a failed finish()
// writes no read and reset() drops what was queued; timing-only devices move what their
// immediate writes and reads move; host commands take no simulated time.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/ccl/all_gather/allocate.hpp"
#include "runtime/ccl/common/collective.hpp"
#include "runtime/ccl/common/host_reference.hpp"
#include "sim/device/planning_mesh_device.hpp"
#include "sim/device/sim_mesh_device.hpp"
#include "tests/refusal.hpp"
#include "topologies/system_loader.hpp"

namespace cclmesh::sim::device {
namespace {

using cclmesh::testing::refusal;
using runtime::BufferConfig;
using runtime::BufferHandle;
using runtime::BufferType;
using runtime::ChipId;
using Bytes = std::vector<std::byte>;
namespace ag = runtime::ccl::all_gather;

BufferConfig dram(std::uint64_t bytes) { return {BufferType::Dram, bytes, 2048}; }
BufferConfig l1(std::uint64_t bytes) { return {BufferType::L1, bytes, 2048}; }

SimMeshDeviceOptions ring_options(DataMode data = DataMode::Functional) {
  SimMeshDeviceOptions options;
  options.fabric.mode = runtime::FabricMode::Ring;
  options.data_mode = data;
  return options;
}

Bytes random_bytes(std::size_t size, std::mt19937_64& random) {
  Bytes bytes(size);
  for (std::byte& b : bytes) b = static_cast<std::byte>(random() & 0xFF);
  return bytes;
}

// A small all_gather on the T3K ring with its buffers, done semaphore and entry barrier (so
// that, enqueued back to back, an op writes into a chip only once that chip has started it:
// after the host commands queued on the chip before it).
struct AllGather {
  ag::Params params;
  std::vector<ChipId> ranks;
};

AllGather all_gather_on(runtime::MeshDevice& device) {
  AllGather op;
  op.params.input.shape = {1, 1, 32, 256};
  op.params.dim = 3;
  op.params.fabric = device.fabric();
  ag::allocate(device, op.params);
  op.params.barrier_semaphore =
      device.create_global_semaphore(ag::semaphore_cores(op.params, device.topology()), runtime::CoreKind::Tensix, 0);
  op.ranks = runtime::ccl::resolve_groups(op.params.groups, device.topology(), op.params.fabric).front();
  return op;
}

// The loop a tt-metal user writes: per iteration, every chip's input enqueued, the all_gather,
// every chip's output read enqueued; one finish() at the end. The same buffers every
// iteration, so only the queue's order gives each read its own iteration's gather.
TEST(DeviceHostQueue, ALoopOfWriteAllGatherReadNeedsOneFinish) {
  SimMeshDevice device(topo::load_system("t3k"), ring_options());
  const AllGather op = all_gather_on(device);
  const runtime::MeshWorkload workload = ag::build(op.params, device.topology());
  constexpr int kIterations = 5;
  std::mt19937_64 random(15);
  std::vector<Bytes> expected;                 // per iteration
  std::vector<std::vector<Bytes>> outputs(kIterations);  // per iteration, per rank
  for (int i = 0; i < kIterations; ++i) {
    std::vector<Bytes> inputs;
    Bytes staging;  // one host vector for every write: each write copied it at the call
    for (ChipId chip : op.ranks) {
      staging = random_bytes(op.params.input_buffer.config.size_bytes, random);
      device.enqueue_write_buffer(chip, op.params.input_buffer, staging);
      inputs.push_back(staging);
    }
    expected.push_back(runtime::ccl::reference::concat(inputs, op.params.input, op.params.dim));
    device.enqueue_workload(workload);
    outputs[i].assign(op.ranks.size(), Bytes(op.params.output_buffer.config.size_bytes, std::byte{0xEE}));
    for (std::size_t r = 0; r < op.ranks.size(); ++r) {
      device.enqueue_read_buffer(op.ranks[r], op.params.output_buffer, outputs[i][r]);
    }
  }
  // Nothing is delivered before finish(), even the reads that ran already.
  EXPECT_EQ(outputs[0][0], Bytes(op.params.output_buffer.config.size_bytes, std::byte{0xEE}));
  device.finish();
  for (int i = 0; i < kIterations; ++i) {
    for (std::size_t r = 0; r < op.ranks.size(); ++r) {
      EXPECT_TRUE(outputs[i][r] == expected[i]) << "iteration " << i << " chip " << op.ranks[r];
    }
  }
  for (int i = 1; i < kIterations; ++i) EXPECT_NE(expected[i], expected[i - 1]);
}

// The write copies the caller's bytes at the call: changing them afterwards changes nothing.
TEST(DeviceHostQueue, AnEnqueuedWriteCopiesTheBytesAtTheCall) {
  SimMeshDevice device(topo::load_system("n300"));
  const BufferHandle b = device.create_buffer(dram(12 * 2048));
  std::mt19937_64 random(1);
  Bytes data = random_bytes(b.config.size_bytes, random);
  const Bytes written = data;
  runtime::MeshWorkload idle;
  idle.name = "idle";
  idle.programs[1] = runtime::Program{};
  idle.buffers = {b};
  device.enqueue_workload(idle);  // chip 1's queue is busy: the write waits behind it
  device.enqueue_write_buffer(1, b, data);
  std::fill(data.begin(), data.end(), std::byte{0});
  device.finish();
  Bytes back(b.config.size_bytes);
  device.read_buffer(1, b, back);
  EXPECT_TRUE(back == written);
}

// On one chip: a read enqueued before a workload sees the bytes from before it, one after it
// the workload's; a write enqueued after a workload lands after it (the workload's own output
// is overwritten by it, not the other way round).
TEST(DeviceHostQueue, ReadsAndWritesKeepTheirPlaceBesideAWorkload) {
  SimMeshDevice device(topo::load_system("t3k"), ring_options());
  const AllGather op = all_gather_on(device);
  const std::size_t out_bytes = op.params.output_buffer.config.size_bytes;
  std::mt19937_64 random(2);
  std::vector<Bytes> inputs;
  for (ChipId chip : op.ranks) {
    inputs.push_back(random_bytes(op.params.input_buffer.config.size_bytes, random));
    device.write_buffer(chip, op.params.input_buffer, inputs.back());
  }
  const Bytes gathered = runtime::ccl::reference::concat(inputs, op.params.input, op.params.dim);
  const ChipId chip = op.ranks[3];
  const Bytes old_bytes = random_bytes(out_bytes, random);
  const Bytes overwrite = random_bytes(out_bytes, random);
  device.write_buffer(chip, op.params.output_buffer, old_bytes);
  Bytes before(out_bytes);
  Bytes after(out_bytes);
  Bytes after_write(out_bytes);
  device.enqueue_read_buffer(chip, op.params.output_buffer, before);
  device.enqueue_workload(ag::build(op.params, device.topology()));
  device.enqueue_read_buffer(chip, op.params.output_buffer, after);
  device.enqueue_write_buffer(chip, op.params.output_buffer, overwrite);
  device.enqueue_read_buffer(chip, op.params.output_buffer, after_write);
  device.finish();
  EXPECT_TRUE(before == old_bytes);
  EXPECT_TRUE(after == gathered);
  EXPECT_TRUE(after_write == overwrite);
  Bytes now(out_bytes);
  device.read_buffer(chip, op.params.output_buffer, now);
  EXPECT_TRUE(now == overwrite);
  // Another chip's output is the gather's: the write was chip `chip`'s only.
  device.read_buffer(op.ranks[4], op.params.output_buffer, now);
  EXPECT_TRUE(now == gathered);
}

// Host commands take no simulated time (REFERENCE has no host-to-device figure): the loop's
// profile, event count and clock are those of the same workloads enqueued without them.
TEST(DeviceHostQueue, HostCommandsTakeNoSimulatedTime) {
  std::vector<runtime::KernelProfile> profiles[2];
  SimTime clocks[2];
  std::uint64_t events[2] = {0, 0};
  for (const bool with_host_io : {false, true}) {
    SimMeshDevice device(topo::load_system("t3k"), ring_options());
    const AllGather op = all_gather_on(device);
    const runtime::MeshWorkload workload = ag::build(op.params, device.topology());
    const Bytes input(op.params.input_buffer.config.size_bytes, std::byte{3});
    std::vector<Bytes> outputs(3 * op.ranks.size(), Bytes(op.params.output_buffer.config.size_bytes));
    std::size_t next = 0;
    for (int i = 0; i < 3; ++i) {
      if (with_host_io) {
        for (ChipId chip : op.ranks) device.enqueue_write_buffer(chip, op.params.input_buffer, input);
      }
      device.enqueue_workload(workload);
      if (with_host_io) {
        for (ChipId chip : op.ranks) device.enqueue_read_buffer(chip, op.params.output_buffer, outputs[next++]);
      }
    }
    device.finish();
    profiles[with_host_io ? 1 : 0] = device.profile();
    clocks[with_host_io ? 1 : 0] = device.now();
    events[with_host_io ? 1 : 0] = device.stats().events_executed;
  }
  ASSERT_FALSE(profiles[0].empty());
  EXPECT_TRUE(profiles[0] == profiles[1]);
  EXPECT_EQ(clocks[0], clocks[1]);
  EXPECT_EQ(events[0], events[1]);
}

// A buffer a queued host command names is in use until finish(): not freed, not written or
// read by the immediate calls (they would not be in the queue's order). Enqueueing more host
// I/O of it is the point, and allowed.
TEST(DeviceHostQueue, ABufferAQueuedHostCommandNamesIsInUseUntilFinish) {
  SimMeshDevice device(topo::load_system("n300"));
  const BufferHandle b = device.create_buffer(dram(12 * 2048));
  const BufferHandle other = device.create_buffer(dram(12 * 2048));
  Bytes data(b.config.size_bytes, std::byte{5});
  Bytes out(b.config.size_bytes);
  device.enqueue_read_buffer(1, b, out);  // chip 1 is idle: it runs at once, and still holds b
  EXPECT_EQ(refusal([&] { device.deallocate_buffer(b); }),
            "deallocate_buffer: buffer 1 is used by an enqueue_read_buffer on chip 1, enqueued and not finished; call "
            "finish() first");
  const std::string io = "buffer 1 is used by an enqueue_read_buffer on chip 1, enqueued and not finished: host writes "
                         "and reads happen when called, not in order with enqueued work; call finish() first, or "
                         "enqueue them (enqueue_write_buffer, enqueue_read_buffer)";
  EXPECT_EQ(refusal([&] { device.write_buffer(0, b, data); }), "write_buffer: " + io);
  EXPECT_EQ(refusal([&] { device.read_buffer(0, b, data); }), "read_buffer: " + io);
  device.enqueue_write_buffer(0, b, data);
  device.write_buffer(0, other, data);  // a buffer no queued command names
  device.deallocate_buffer(other);
  device.finish();
  device.read_buffer(0, b, out);
  EXPECT_TRUE(out == data);
  device.deallocate_buffer(b);
  EXPECT_EQ(device.allocator().live_buffer_count(), 0u);
}

// Bad arguments are refused at the call and enqueue nothing.
TEST(DeviceHostQueue, BadArgumentsAreRefusedAtTheCall) {
  SimMeshDevice device(topo::load_system("n300"));
  const BufferHandle b = device.create_buffer(dram(4096));
  Bytes short_data(100);
  Bytes data(4096);
  EXPECT_EQ(refusal([&] { device.enqueue_write_buffer(0, b, short_data); }),
            "enqueue_write_buffer: 100 B for a buffer of 4096 B");
  EXPECT_EQ(refusal([&] { device.enqueue_read_buffer(0, b, short_data); }),
            "enqueue_read_buffer: 100 B for a buffer of 4096 B");
  EXPECT_EQ(refusal([&] { device.enqueue_read_buffer(7, b, data); }), "enqueue_read_buffer: no chip 7 on this device");
  EXPECT_EQ(refusal([&] { device.enqueue_read_buffer(0, BufferHandle{9, 0, dram(4096)}, data); }),
            "enqueue_read_buffer: buffer 9 was not created on this device");
  device.deallocate_buffer(b);  // nothing above holds it
  EXPECT_EQ(refusal([&] { device.enqueue_write_buffer(0, b, data); }),
            "enqueue_write_buffer: buffer 1 was freed already (deallocate_buffer)");
}

// An all_gather whose chip 0 runs nothing: its peers wait forever for chip 0's data.
runtime::MeshWorkload all_gather_without_chip_0(const AllGather& op, const topo::Topology& topology) {
  runtime::MeshWorkload w = ag::build(op.params, topology);
  w.programs.erase(0);
  return w;
}

// A workload that hangs: finish() throws, and no enqueued read's `out` is written, neither
// those queued behind the hang (which never ran) nor one that ran before it; the hang report
// counts the host commands left waiting; reset() drops them, and the device then runs a loop
// as a fresh one.
TEST(DeviceHostQueue, AFailedFinishWritesNoReadAndResetDropsTheQueue) {
  SimMeshDevice device(topo::load_system("t3k"), ring_options());
  const AllGather op = all_gather_on(device);
  const std::size_t out_bytes = op.params.output_buffer.config.size_bytes;
  const Bytes untouched(out_bytes, std::byte{0xAB});
  const ChipId chip = op.ranks[2];
  ASSERT_NE(chip, 0u);
  Bytes ran_before = untouched;
  Bytes behind = untouched;
  device.enqueue_read_buffer(chip, op.params.output_buffer, ran_before);  // idle chip: runs now
  device.enqueue_workload(all_gather_without_chip_0(op, device.topology()));
  device.enqueue_write_buffer(chip, op.params.input_buffer, Bytes(op.params.input_buffer.config.size_bytes));
  device.enqueue_read_buffer(chip, op.params.output_buffer, behind);
  try {
    device.finish();
    FAIL() << "finish() returned on a workload that cannot complete";
  } catch (const runtime::DeviceError& e) {
    EXPECT_EQ(e.kind(), runtime::DeviceError::Kind::Hang);
    EXPECT_NE(std::string(e.what()).find(fmt::format(
                  "  chip {}: 2 enqueued host write(s), read(s) or semaphore reset(s) waiting behind its programs "
                  "(not run)\n",
                  chip)),
              std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(ran_before == untouched);
  EXPECT_TRUE(behind == untouched);
  EXPECT_THROW(device.enqueue_read_buffer(chip, op.params.output_buffer, behind), runtime::DeviceError);
  EXPECT_THROW(device.finish(), runtime::DeviceError);
  device.reset();
  device.finish();  // nothing queued survived the reset
  EXPECT_TRUE(behind == untouched);
  EXPECT_TRUE(ran_before == untouched);
  // The device as new: the loop runs and reads what it should.
  const AllGather again = all_gather_on(device);
  const Bytes input(again.params.input_buffer.config.size_bytes, std::byte{9});
  for (ChipId c : again.ranks) device.enqueue_write_buffer(c, again.params.input_buffer, input);
  device.enqueue_workload(ag::build(again.params, device.topology()));
  Bytes out(out_bytes);
  device.enqueue_read_buffer(chip, again.params.output_buffer, out);
  device.finish();
  EXPECT_TRUE(out == Bytes(out_bytes, std::byte{9}));
}

// Timing-only: an enqueued write and read move what the immediate ones move there (DRAM stores
// nothing and reads zeros; L1, where control state lives, keeps its bytes).
TEST(DeviceHostQueue, TimingOnlyMovesWhatTheImmediateCallsMove) {
  SimMeshDeviceOptions options;
  options.data_mode = DataMode::TimingOnly;
  SimMeshDevice device(topo::load_system("n300"), options);
  for (const BufferConfig& config : {dram(12 * 2048), l1(64 * 2048)}) {
    SCOPED_TRACE(config.type == BufferType::Dram ? "dram" : "l1");
    const BufferHandle queued = device.create_buffer(config);
    const BufferHandle immediate = device.create_buffer(config);
    const Bytes data(config.size_bytes, std::byte{0x5A});
    device.enqueue_write_buffer(1, queued, data);
    Bytes queued_back(config.size_bytes, std::byte{0xEE});
    device.enqueue_read_buffer(1, queued, queued_back);
    device.finish();
    device.write_buffer(1, immediate, data);
    Bytes immediate_back(config.size_bytes, std::byte{0xEE});
    device.read_buffer(1, immediate, immediate_back);
    EXPECT_TRUE(queued_back == immediate_back);
    EXPECT_TRUE(queued_back == (config.type == BufferType::Dram ? Bytes(config.size_bytes) : data));
  }
}

// The planning device checks and holds as the simulated one does (the same refusals, in the
// same calls), stores nothing, and fills a read's `out` with zeros at finish().
TEST(DeviceHostQueue, PlanningAndSimulatedDevicesQueueAlike) {
  const topo::Topology t3k = topo::load_system("t3k");
  SimMeshDevice device(t3k, ring_options(DataMode::TimingOnly));
  PlanningMeshDevice planner(t3k, ring_options().fabric, {}, DataMode::TimingOnly);
  std::vector<std::string> trail[2];
  Bytes outs[2];
  int side = 0;
  for (runtime::MeshDevice* d : {static_cast<runtime::MeshDevice*>(&device), static_cast<runtime::MeshDevice*>(&planner)}) {
    std::vector<std::string>& notes = trail[side];
    Bytes& out = outs[side++];
    const BufferHandle a = d->create_buffer(dram(12 * 2048));
    Bytes data(a.config.size_bytes, std::byte{1});
    out.assign(a.config.size_bytes, std::byte{0xEE});
    notes.push_back(refusal([&] { d->enqueue_write_buffer(0, a, Bytes(3)); }));
    notes.push_back(refusal([&] { d->enqueue_read_buffer(8, a, out); }));
    d->enqueue_write_buffer(0, a, data);
    d->enqueue_read_buffer(5, a, out);
    notes.push_back(refusal([&] { d->deallocate_buffer(a); }));
    d->finish();
    notes.push_back(refusal([&] { d->deallocate_buffer(a); }));
    notes.push_back(refusal([&] { d->enqueue_read_buffer(5, a, out); }));
  }
  EXPECT_EQ(trail[0], trail[1]);
  ASSERT_EQ(trail[0].size(), 5u);
  EXPECT_EQ(trail[0][2],
            "deallocate_buffer: buffer 1 is used by an enqueue_write_buffer on chip 0, enqueued and not finished; call "
            "finish() first");
  EXPECT_EQ(trail[0][3], "");
  EXPECT_EQ(trail[0][4], "enqueue_read_buffer: buffer 1 was freed already (deallocate_buffer)");
  EXPECT_TRUE(outs[0] == outs[1]);  // zeros: timing-only DRAM reads, and the planner's
  EXPECT_TRUE(outs[1] == Bytes(12 * 2048));
}

}  // namespace
}  // namespace cclmesh::sim::device
