// REFERENCE 11's failure modes that device_faults_test does not build: each scenario as a
// workload on SimMeshDevice, and what its report (or refusal) says.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "kernels/kernel_args.hpp"
#include "kernels/api/dataflow_api.hpp"
#include "kernels/host/command_encoder.hpp"
#include "kernels/host/micro_ops.hpp"
#include "runtime/ccl/send_recv/send_recv.hpp"
#include "tests/unit/sim/device_error_util.hpp"
#include "tests/unit/sim/device_test_util.hpp"

namespace cclmesh::sim::device {
namespace {

using namespace testing;
using runtime::DeviceError;
using ::testing::HasSubstr;

// Writes `signal` into the termination word of every router on `chips`, as the host's teardown
// does (SimMeshDevice::terminate_fabric writes it to all of them at once).
void signal_routers(SimMeshDevice& device, api::TerminationSignal signal, const std::vector<runtime::ChipId>& chips) {
  for (const runtime::FabricRouterSite& site : device.fabric_plan().routers()) {
    if (std::find(chips.begin(), chips.end(), site.chip) == chips.end()) continue;
    device.system()
        .chip(site.chip)
        .l1(CoreCoord{static_cast<std::int32_t>(site.noc0.x), static_cast<std::int32_t>(site.noc0.y)})
        .write_u32(kernels::make_fabric_router_layout(site.config).termination_signal, static_cast<std::uint32_t>(signal));
  }
}

// A 512 KiB send_recv three hops down a T3K line fabric (fabric positions 0 -> 3), with the
// termination `signal` written to the routers of `chips_at(line)` 15 us into it, while packets
// are on their way. Returns the hang report.
template <typename ChipsAt>
std::string teardown_during_a_send(api::TerminationSignal signal, ChipsAt chips_at) {
  SimMeshDeviceOptions options;
  options.fabric.mode = runtime::FabricMode::Line;
  SimMeshDevice device(topo::build_t3k(), options);
  const std::vector<runtime::ChipId> line = device.fabric_plan().chips();
  const runtime::BufferHandle in = device.create_buffer(dram_buffer(256 * 2048, 2048));
  const runtime::BufferHandle out = device.create_buffer(dram_buffer(256 * 2048, 2048));
  const runtime::ccl::send_recv::Params params = send_recv_params(line[0], line[3], in, out, options.fabric);
  device.enqueue_workload(runtime::ccl::send_recv::build(params, device.topology()));
  const std::vector<runtime::ChipId> chips = chips_at(line);
  device.engine().schedule_at(device.now() + SimTime::from_us(15),
                              [&device, signal, chips] { signal_routers(device, signal, chips); });
  return expect_device_error([&] { device.finish(); }, DeviceError::Kind::Hang);
}

// REFERENCE 11.8, termination before the channels drained: every router is told to stop at
// once mid-transfer. The sender's router exits with the worker's packets in its channel; the
// chain ends there, naming the signal and the teardown.
TEST(FailureModes, ATeardownWithTrafficInFlightIsNamedWhereTheChainEnds) {
  const std::string text = teardown_during_a_send(api::TerminationSignal::IMMEDIATELY_TERMINATE,
                                                  [](const std::vector<runtime::ChipId>& line) { return line; });
  EXPECT_THAT(text, HasSubstr("a free slot in the forward fabric connection's sender channel")) << text;
  EXPECT_THAT(text, ::testing::ContainsRegex(
                        "sender channel 0 \\(from workers\\): 8 of 8 slots in use \\([0-9]+ packets written, [0-9]+ "
                        "freed\\); the router has terminated \\(IMMEDIATELY_TERMINATE: it exited without draining its "
                        "channels\\): nothing frees its slots any more: the fabric was torn down with traffic in flight"))
      << text;
  EXPECT_THAT(text, HasSubstr("REFERENCE 6.8 / 11.8")) << text;
  EXPECT_THAT(text, ::testing::Not(HasSubstr("fabric routers:"))) << text;  // every router has exited
}

// REFERENCE 11.8, the wrong order: the routers nearer the receiver (fabric positions 1 and 2)
// are told to terminate gracefully while the sender's (position 0) still sends through them.
// They drain what they hold and exit; what the sender's router sends on lands in slots nobody
// serves, so its credits run out. The chain crosses the link and ends at that receiver.
TEST(FailureModes, RoutersTerminatedNearestFirstStrandTrafficFromFartherOnesAndAreNamed) {
  const std::string text =
      teardown_during_a_send(api::TerminationSignal::GRACEFULLY_TERMINATE, [](const std::vector<runtime::ChipId>& line) {
        return std::vector<runtime::ChipId>{line[1], line[2]};
      });
  EXPECT_THAT(text, HasSubstr("fabric routers:")) << text;  // the sender's routers still run
  EXPECT_THAT(text, ::testing::ContainsRegex(
                        "sender channel 0 \\(from workers\\): 8 of 8 slots in use [^\n]*; its slots free when router "
                        "chip [0-9]+ ch [0-9]+ acknowledges them\n *<- router chip [0-9]+ ch [0-9]+ receiver: [1-9][0-9]* "
                        "of 16 slots hold packets; the router has terminated \\(GRACEFULLY_TERMINATE: it drained its "
                        "own channels first\\), and these arrived after it had: nothing forwards or acknowledges them: "
                        "the fabric was torn down with traffic in flight"))
      << text;
}

// REFERENCE 11.5: two workers on one sender channel. Two interpreters on an N300's first chip
// are both given the forward router's channel 0 and each sends 20 one-packet increments to
// the next chip: each counts the channel's 8 slots as its own, so together they write more
// packets than it has slots. The router faults on the overrun, and the report names both.
TEST(FailureModes, TwoWorkersOnOneSenderChannelOverrunItAndAreNamed) {
  SimMeshDeviceOptions options;
  options.fabric.mode = runtime::FabricMode::Line;
  SimMeshDevice device(topo::build_n300(), options);
  const runtime::ChipId first = device.fabric_plan().chips()[0];
  runtime::MeshWorkload workload;
  workload.name = "two workers on one channel";
  for (const runtime::CoreCoord core : {runtime::CoreCoord{0, 0}, runtime::CoreCoord{1, 0}}) {
    kargs::InterpreterSpec spec;
    spec.packet_header_cb_id = runtime::ccl::kPacketHeaderCbId;
    spec.semaphore_ids = {0};
    spec.forward_connection = device.fabric_plan().worker_connection(first, true, 1, 2, 3);
    std::vector<std::uint32_t> stream;
    constexpr std::uint32_t kPackets = 20;
    for (std::uint32_t p = 0; p < kPackets; ++p) {
      const std::vector<std::uint32_t> one = cmd::encode_command(
          cmd::fabric_unicast_semaphore_inc(cmd::SemaphoreId{0}, 1, core.x + 1, 2, cmd::ChipUnicast{1, true}));
      stream.insert(stream.end(), one.begin(), one.end());
    }
    spec.streams = {kargs::InterpreterStreamSpec{std::nullopt, stream, kPackets}};
    runtime::MeshWorkload one = interpreter_workload("worker", first, core, spec, 0, 0, {0, 1, 2, 3});
    runtime::Program& program = workload.programs[first];
    for (auto& cb : one.programs[first].circular_buffers) program.circular_buffers.push_back(cb);
    for (auto& sem : one.programs[first].semaphores) program.semaphores.push_back(sem);
    for (auto& k : one.programs[first].kernels) program.kernels.push_back(k);
  }
  device.enqueue_workload(workload);
  const std::string text = expect_device_error(
      [&] {
        device.finish();
        device.drain();
      },
      DeviceError::Kind::Fault);
  EXPECT_THAT(text, HasSubstr("fabric_router fault WORKER_PROTOCOL_VIOLATION")) << text;
  EXPECT_THAT(text, HasSubstr(fmt::format(
                        "channel 0's worker overran its credits (more packets or buffers than the channel gave it); 2 "
                        "kernels were connected to its sender channel 0 at once: chip {0} core (1,3) [tensix (0,0) dm0] "
                        "ccl_interpreter, chip {0} core (2,3) [tensix (1,0) dm0] ccl_interpreter (a sender channel "
                        "serves one worker at a time",
                        first)))
      << text;
  EXPECT_THAT(text, HasSubstr("REFERENCE 6.3 / 11.5)")) << text;
}

// Test kernel (REFERENCE 11.7): its semaphore 0 is still at 2 from an earlier use nobody reset
// (two increments), and this use waits for it to equal 1, as a legacy worker's
// noc_semaphore_wait does.
void overcounted_waiter() {
  const uint32_t sem = get_semaphore(0);
  l1_write_u32(sem, 2);
  noc_semaphore_wait(reinterpret_cast<volatile uint32_t*>(static_cast<uintptr_t>(sem)), 1);
}

// REFERENCE 11.7, an over-count never matches: an equality wait on a word already past its
// target. The chain says so instead of "the increment is missing".
TEST(FailureModes, AnEqualityWaitOnAnOverCountedSemaphoreIsNamed) {
  SimMeshDevice device(topo::build_n150(), SimMeshDeviceOptions{});
  device.register_kernel("overcounted_waiter", &overcounted_waiter, false);
  runtime::Program program;
  program.semaphores.push_back(runtime::ccl::tensix_semaphore({0, 0}, 0));
  runtime::KernelSpec k;
  k.kernel = "overcounted_waiter";
  k.cores = {{{0, 0}, {0, 0}}};
  program.kernels.push_back(k);
  runtime::MeshWorkload workload;
  workload.name = "over-count";
  workload.programs[0] = std::move(program);
  device.enqueue_workload(workload);
  const std::string text = expect_device_error([&] { device.finish(); }, DeviceError::Kind::Hang);
  EXPECT_THAT(text, HasSubstr("overcounted_waiter is blocked in noc_semaphore_wait(semaphore id 0 at 0x20000 == 1, "
                              "now 2); the word is at 2, past the 1 it waits to equal, and nothing sets it back: "
                              "increments only raise it, so the wait never matches (an over-count: a semaphore reused "
                              "without a reset"))
      << text;
  EXPECT_THAT(text, HasSubstr("REFERENCE 4.8 / 11.7)")) << text;
  EXPECT_THAT(text, ::testing::Not(HasSubstr("the increment is missing"))) << text;
}

// REFERENCE 11.6, an 8-bit inline value that overflowed: a writer meant to add 300 to a
// semaphore, and what an encoder that truncates to 8 bits leaves in the command is 300 & 0xFF =
// 44; the waiter waits for 100 (which fits). The chain names the shortfall. (The encoder
// refuses values above 255 instead, kernels_command_stream_test EncoderRejects; this stream is
// written as if it had truncated.)
TEST(FailureModes, IncrementsThatNeverReachTheWaitTargetAreNamed) {
  SimMeshDevice device(topo::build_n150(), SimMeshDeviceOptions{});
  kargs::InterpreterSpec spec;
  spec.packet_header_cb_id = runtime::ccl::kPacketHeaderCbId;
  spec.semaphore_ids = {0};
  std::vector<std::uint32_t> stream = cmd::encode_command(cmd::local_core_semaphore_inc(cmd::SemaphoreId{0}, 300 & 0xFF));
  const std::vector<std::uint32_t> wait = cmd::encode_command(cmd::local_semaphore_wait(cmd::SemaphoreId{0}, 100));
  stream.insert(stream.end(), wait.begin(), wait.end());
  spec.streams = {kargs::InterpreterStreamSpec{std::nullopt, stream, 2}};
  device.enqueue_workload(interpreter_workload("truncated increment", 0, {0, 0}, spec, 0, 0, {0}));
  const std::string text = expect_device_error([&] { device.finish(); }, DeviceError::Kind::Hang);
  EXPECT_THAT(text, HasSubstr("noc_semaphore_wait_min(semaphore id 0 at 0x20000 >= 100, now 44)")) << text;
  EXPECT_THAT(text, HasSubstr("the command streams add 44 to it in total (1 command(s)), never the 100 it waits for"))
      << text;
}

}  // namespace
}  // namespace cclmesh::sim::device
