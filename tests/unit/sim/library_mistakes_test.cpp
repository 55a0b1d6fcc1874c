// A CCL developer's mistakes in a hand-written command stream (session 44's bug bash of the
// library): the ring shift of examples/custom_command_stream.cpp, each time with one thing done
// wrong. Each must end in a DeviceError naming the core, the command and the cause, never in a
// crash, a silent wrong result or a report that points elsewhere.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/host/interpreter_stream.hpp"
#include "kernels/host/micro_ops.hpp"
#include "runtime/ccl/common/ccl_common.hpp"
#include "runtime/device/chip_buffers.hpp"
#include "runtime/device/core_map.hpp"
#include "runtime/fabric/fabric_plan.hpp"
#include "tests/unit/sim/device_error_util.hpp"
#include "tests/unit/sim/device_test_util.hpp"

namespace cclmesh::sim::device {
namespace {

using namespace testing;
using runtime::DeviceError;
using ::testing::HasSubstr;
namespace ccl = runtime::ccl;

constexpr runtime::CoreCoord kSender{0, 0};
constexpr runtime::CoreCoord kReceiver{0, 1};
constexpr std::uint32_t kPageBytes = 2048;
constexpr std::uint32_t kBufferBytes = 64 * 1024;

// What the developer gets wrong; the defaults are the example's ring shift, which completes.
struct Mistake {
  std::uint32_t cb_pages = 0;      // data CB pages (0: two packets, as the example)
  bool connect = true;             // connect the sender to its fabric router
  bool writer_tensor = true;       // give the writer stream its tensor
  std::uint32_t extra_count = 0;   // commands counted beyond those encoded
};

runtime::Program ring_shift_program(const topo::Topology& topology, const runtime::FabricPlan& plan,
                                    runtime::ChipId chip, runtime::ChipId next, const runtime::BufferHandle& input,
                                    const runtime::BufferHandle& output, const Mistake& m) {
  const runtime::FabricRoute route = plan.route(chip, next);
  runtime::Program program;
  const cmd::SemaphoreId done{ccl::kDoneSemaphoreId};
  const cmd::ChipUnicast to_next{route.hops, route.forward};
  const api::TensorSlice whole = ccl::whole_buffer_slice(input);
  const runtime::Noc0Coord next_receiver = runtime::chip_core_map(topology, next).tensix_noc0(kReceiver);
  const std::vector<cmd::Command> reader_commands = {cmd::read_tensor_slice_to_cb(whole, ccl::kDataCbId)};
  const std::vector<cmd::Command> writer_commands = {
      cmd::fabric_write_cb_to_tensor_slice(whole, ccl::kDataCbId, to_next),
      cmd::fabric_unicast_semaphore_inc(done, 1, next_receiver.x, next_receiver.y, to_next)};
  const kargs::InterpreterStreamSpec reader =
      kargs::interpreter_stream(runtime::ChipBuffers(topology, chip).interpreter_args(input), reader_commands);
  kargs::InterpreterStreamSpec writer = kargs::interpreter_stream(
      m.writer_tensor ? std::optional(runtime::ChipBuffers(topology, next).interpreter_args(output)) : std::nullopt,
      writer_commands);
  writer.num_commands += m.extra_count;
  kargs::InterpreterSpec sender;
  sender.packet_header_cb_id = ccl::kPacketHeaderCbId;
  sender.packet_size_in_pages = ccl::packet_size_in_pages(0, kPageBytes, plan.options().max_payload_bytes);
  sender.semaphore_ids = {ccl::kDoneSemaphoreId};
  if (m.connect)
    ccl::connect_to_fabric(program, sender, plan, runtime::FabricPort{route.line, 0}, chip, kSender, route.forward,
                           !route.forward);
  program.circular_buffers.push_back(ccl::packet_header_cb(kSender));
  program.circular_buffers.push_back(
      ccl::data_cb(kSender, kPageBytes, m.cb_pages > 0 ? m.cb_pages : 2 * sender.packet_size_in_pages));
  program.semaphores.push_back(ccl::tensix_semaphore(kSender, ccl::kDoneSemaphoreId));
  ccl::add_copy_kernels(program, kSender, sender, reader, writer, /*split=*/true);
  kargs::InterpreterSpec waiter;
  waiter.packet_header_cb_id = ccl::kPacketHeaderCbId;
  waiter.semaphore_ids = {ccl::kDoneSemaphoreId};
  waiter.streams = {kargs::interpreter_stream(std::nullopt, std::vector<cmd::Command>{cmd::local_semaphore_wait(done, 1)})};
  program.circular_buffers.push_back(ccl::packet_header_cb(kReceiver));
  program.semaphores.push_back(ccl::tensix_semaphore(kReceiver, ccl::kDoneSemaphoreId));
  program.kernels.push_back(ccl::interpreter_kernel(kReceiver, waiter));
  return program;
}

// Runs the ring shift with `m` on a T3K ring; returns the DeviceError's text ("" and a test
// failure when the run completes, with every chip's output checked).
std::string ring_shift_error(const Mistake& m, DeviceError::Kind kind) {
  SimMeshDevice device(topo::build_t3k(), fabric_options(runtime::FabricMode::Ring));
  const runtime::FabricPlan& plan = device.fabric_plan();
  const std::vector<runtime::ChipId>& ring = plan.chips();
  const runtime::BufferHandle input = device.create_buffer(dram_buffer(kBufferBytes, kPageBytes));
  const runtime::BufferHandle output = device.create_buffer(dram_buffer(kBufferBytes, kPageBytes));
  runtime::MeshWorkload workload;
  workload.name = "ring_shift";
  workload.buffers = {input, output};
  for (std::size_t i = 0; i < ring.size(); ++i) {
    device.write_buffer(ring[i], input, pattern(kBufferBytes, static_cast<std::uint32_t>(i)));
    const runtime::ChipId next = ring[(i + 1) % ring.size()];
    workload.programs[ring[i]] = ring_shift_program(device.topology(), plan, ring[i], next, input, output, m);
  }
  device.enqueue_workload(workload);
  return expect_device_error([&] { device.finish(); }, kind);
}

TEST(LibraryMistakes, TheRingShiftItselfCompletes) {
  SimMeshDevice device(topo::build_t3k(), fabric_options(runtime::FabricMode::Ring));
  const std::vector<runtime::ChipId>& ring = device.fabric_plan().chips();
  const runtime::BufferHandle input = device.create_buffer(dram_buffer(kBufferBytes, kPageBytes));
  const runtime::BufferHandle output = device.create_buffer(dram_buffer(kBufferBytes, kPageBytes));
  runtime::MeshWorkload workload;
  for (std::size_t i = 0; i < ring.size(); ++i) {
    device.write_buffer(ring[i], input, pattern(kBufferBytes, static_cast<std::uint32_t>(i)));
    workload.programs[ring[i]] = ring_shift_program(device.topology(), device.fabric_plan(), ring[i],
                                                    ring[(i + 1) % ring.size()], input, output, {});
  }
  device.enqueue_workload(workload);
  ASSERT_NO_THROW(device.finish());
  for (std::size_t i = 0; i < ring.size(); ++i)
    EXPECT_EQ(read_back(device, ring[(i + 1) % ring.size()], output), pattern(kBufferBytes, static_cast<std::uint32_t>(i)));
}

// A data CB of 1 page where the reader reserves a packet (2 pages of 2048 B): the reserve can
// never succeed. Before session 44 this was a hang whose wait-for chain called it "a cycle of 2
// kernels, each waiting for the next" (the reader for room the writer would pop, the writer for
// pages the reader would push), which points at the wrong thing; now the reserve faults naming
// the CB's size.
TEST(LibraryMistakes, ACircularBufferSmallerThanAPacketFaultsNamingItsSize) {
  Mistake m;
  m.cb_pages = 1;
  const std::string text = ring_shift_error(m, DeviceError::Kind::Fault);
  EXPECT_THAT(text, HasSubstr("[tensix (0,0) dm1] ccl_interpreter: cb_reserve_back(CB 0, 2 pages) on a circular "
                              "buffer of 1 page(s) of 2048 B can never be satisfied"))
      << text;
  EXPECT_THAT(text, HasSubstr("stream 0 #0 STREAM_TENSOR_TO_CB")) << text;
  EXPECT_THAT(text, Not(HasSubstr("a cycle of"))) << text;
}

// The consumer side alone: a kernel that waits for more pages than the CB holds.
TEST(LibraryMistakes, AWaitForMorePagesThanTheCircularBufferHoldsFaults) {
  SimMeshDevice device(topo::build_n150());
  const runtime::BufferHandle out = device.create_buffer(dram_buffer(4 * 64, 64));
  kargs::InterpreterSpec spec;
  spec.packet_header_cb_id = ccl::kPacketHeaderCbId;
  spec.packet_size_in_pages = 4;
  spec.streams = {kargs::interpreter_stream(
      tensor_args(device, out, 0),
      std::vector<cmd::Command>{cmd::local_write_cb_to_tensor_slice(ccl::whole_buffer_slice(out), ccl::kDataCbId)})};
  device.enqueue_workload(interpreter_workload("consumer", 0, {0, 0}, spec, 64, 3, {}));
  const std::string text = expect_device_error([&] { device.finish(); }, DeviceError::Kind::Fault);
  EXPECT_THAT(text, HasSubstr("chip 0 core (1,2) [tensix (0,0) dm0] ccl_interpreter: cb_wait_front(CB 0, 4 pages) on "
                              "a circular buffer of 3 page(s) of 64 B can never be satisfied"))
      << text;
  EXPECT_THAT(text, HasSubstr("stream 0 #0 STREAM_CB_TO_TENSOR")) << text;
}

// The writer's slice is the 64 KiB input's whole buffer, its tensor args a 32 KiB output's: the
// device would write 16 pages past the output, into the next buffer, on every chip (found by
// session 44's bug bash: the run completed, a third buffer overwritten, no error). Refused when
// the writer's args are built, naming the stream, the command and the pages.
TEST(LibraryMistakes, ASliceLargerThanItsBufferIsRefusedWhenTheArgsAreBuilt) {
  SimMeshDevice device(topo::build_t3k(), fabric_options(runtime::FabricMode::Ring));
  const runtime::FabricPlan& plan = device.fabric_plan();
  const std::vector<runtime::ChipId>& ring = plan.chips();
  const runtime::BufferHandle input = device.create_buffer(dram_buffer(kBufferBytes, kPageBytes));
  const runtime::BufferHandle output = device.create_buffer(dram_buffer(kBufferBytes / 2, kPageBytes));
  try {
    (void)ring_shift_program(device.topology(), plan, ring[0], ring[1], input, output, {});
    ADD_FAILURE() << "a 32-page slice written into a 16-page buffer was accepted";
  } catch (const kargs::KernelArgsError& e) {
    EXPECT_THAT(e.what(), HasSubstr("interpreter stream 0 command 0 (STREAM_CB_TO_TENSOR): its run reaches tensor "
                                    "page 31 of a tensor of 32 pages, past the 16 page(s) of the buffer"))
        << e.what();
  }
}

// Held (no defect): the other mistakes of the bash, each with the report it gives today.
TEST(LibraryMistakes, AFabricWriteWithoutAConnectionFaultsNamingTheCommand) {
  Mistake m;
  m.connect = false;
  const std::string text = ring_shift_error(m, DeviceError::Kind::Fault);
  EXPECT_THAT(text, HasSubstr("[tensix (0,0) dm0] ccl_interpreter: ccl_interpreter fault NO_FABRIC_CONNECTION")) << text;
  EXPECT_THAT(text, HasSubstr("stream 0 #0 STREAM_CB_TO_TENSOR dest=UNICAST hops=1 fwd")) << text;
}

TEST(LibraryMistakes, AStreamingCommandWithoutATensorFaults) {
  Mistake m;
  m.writer_tensor = false;
  const std::string text = ring_shift_error(m, DeviceError::Kind::Fault);
  EXPECT_THAT(text, HasSubstr("ccl_interpreter fault NO_TENSOR")) << text;
  EXPECT_THAT(text, HasSubstr("stream 0 #0 STREAM_CB_TO_TENSOR")) << text;
}

TEST(LibraryMistakes, ACommandCountBeyondTheStreamFaultsAtItsEnd) {
  Mistake m;
  m.extra_count = 1;
  const std::string text = ring_shift_error(m, DeviceError::Kind::Fault);
  EXPECT_THAT(text, HasSubstr("[tensix (0,0) dm0] ccl_interpreter: ccl_interpreter fault TRUNCATED")) << text;
  EXPECT_THAT(text, HasSubstr("in command #2")) << text;
}

// Two cores, each waiting for the other's increment before giving its own.
TEST(LibraryMistakes, TwoCoresWaitingForEachOtherAreReportedAsACycle) {
  SimMeshDevice device(topo::build_n150());
  runtime::Program program;
  for (std::uint32_t i = 0; i < 2; ++i) {
    const runtime::CoreCoord me{0, i};
    const runtime::Noc0Coord other = device.core_map(0).tensix_noc0({0, 1 - i});
    kargs::InterpreterSpec spec;
    spec.packet_header_cb_id = ccl::kPacketHeaderCbId;
    spec.semaphore_ids = {0};
    spec.streams = {kargs::interpreter_stream(
        std::nullopt, std::vector<cmd::Command>{cmd::local_semaphore_wait(cmd::SemaphoreId{0}, 1),
                                                cmd::local_chip_noc_semaphore_inc(other.x, other.y, cmd::SemaphoreId{0}, 1)})};
    program.circular_buffers.push_back(ccl::packet_header_cb(me));
    program.semaphores.push_back(ccl::tensix_semaphore(me, 0));
    program.kernels.push_back(ccl::interpreter_kernel(me, spec));
  }
  runtime::MeshWorkload workload;
  workload.name = "deadlock";
  workload.programs[0] = program;
  device.enqueue_workload(workload);
  const std::string text = expect_device_error([&] { device.finish(); }, DeviceError::Kind::Hang);
  EXPECT_THAT(text, HasSubstr("would be incremented by chip 0 core (1,3) [tensix (0,1) dm0] ccl_interpreter stream 0 "
                              "#1 ATOMIC_INC"))
      << text;
  EXPECT_THAT(text, HasSubstr("a cycle of 2 kernels, each waiting for the next")) << text;
}

}  // namespace
}  // namespace cclmesh::sim::device
