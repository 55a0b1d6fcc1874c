// Bad input and simulated failures end a run with a DeviceError, never a crash (DESIGN.md
// errors, issues 5 and 8): a malformed command stream faults naming chip, core, command index
// and the disassembled command; a missing semaphore increment hangs with a report naming the
// parked kernel and the semaphore with its expected and current values; workloads that cannot
// be placed are rejected before anything runs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>

#include "kernels/api/ccl_command.hpp"
#include "kernels/host/command_encoder.hpp"
#include "kernels/host/micro_ops.hpp"
#include "runtime/ccl/send_recv/send_recv.hpp"
#include "runtime/device/l1_map.hpp"
#include "tests/unit/sim/device_error_util.hpp"
#include "tests/unit/sim/device_test_util.hpp"

namespace cclmesh::sim::device {
namespace {

using namespace testing;
using runtime::DeviceError;
using ::testing::HasSubstr;

struct MalformedCase {
  const char* name;
  std::function<std::vector<std::uint32_t>()> stream;
  std::uint32_t num_commands;
  std::vector<std::string> expected;  // substrings of the error
};

std::vector<std::uint32_t> two_commands_with_second_header(std::function<std::uint32_t(std::uint32_t)> patch) {
  std::vector<std::uint32_t> s = cmd::encode_command(cmd::local_core_semaphore_inc(cmd::SemaphoreId{0}, 1));
  const std::size_t second = s.size();
  const std::vector<std::uint32_t> again = cmd::encode_command(cmd::local_semaphore_wait(cmd::SemaphoreId{0}, 1));
  s.insert(s.end(), again.begin(), again.end());
  s[second] = patch(s[second]);
  return s;
}

TEST(DeviceErrors, MalformedStreamsFaultNamingChipCoreAndCommand) {
  const api::Shape4D shape{1, 1, 1, 4};
  const std::vector<MalformedCase> cases{
      {"unknown opcode",
       [] {
         return two_commands_with_second_header([](std::uint32_t w) {
           return (w & ~api::kHeaderCodeMask) | (api::kNumCommandCodes & api::kHeaderCodeMask);
         });
       },
       2,
       {"UNKNOWN_OPCODE", "#1"}},
      {"wrong argument count",
       [] {
         return two_commands_with_second_header([](std::uint32_t w) {
           return (w & ~(api::kHeaderArgCountMask << api::kHeaderArgCountShift)) |
                  (api::kHeaderArgCountMask << api::kHeaderArgCountShift);
         });
       },
       2,
       {"ARG_COUNT_MISMATCH", "#1"}},
      {"slice outside the tensor",
       [shape] {
         std::vector<std::uint32_t> s = cmd::encode_command(cmd::read_tensor_slice_to_cb(whole(shape), 0));
         s[s.size() - 17 + 3] = 2;  // shrink the tensor's x under the slice
         return s;
       },
       1,
       {"SLICE_OUTSIDE_TENSOR", "#0 STREAM_TENSOR_TO_CB"}},
      {"unallocated semaphore",
       [] {
         return cmd::encode_stream(std::vector<cmd::Command>{cmd::local_core_semaphore_inc(cmd::SemaphoreId{0}, 1),
                                                             cmd::local_semaphore_wait(cmd::SemaphoreId{6}, 1)});
       },
       2,
       {"UNKNOWN_SEMAPHORE", "#1 WAIT_VALUE"}},
      {"address outside L1",
       [] {
         return cmd::encode_stream(std::vector<cmd::Command>{
             cmd::local_core_semaphore_inc(cmd::SemaphoreId{0}, 1),
             cmd::inline_write(0x7FFFFFF0, 7, 1, 2, cmd::LocalOnly{})});
       },
       2,
       {"out of range", "0x7ffffff0", "#1 RAW_INLINE_WRITE_BYTES"}},
  };
  for (const MalformedCase& c : cases) {
    SCOPED_TRACE(c.name);
    SimMeshDevice device(topo::build_n150());
    const runtime::BufferHandle in = device.create_buffer(dram_buffer(4 * 64, 64));
    kargs::InterpreterSpec spec;
    spec.packet_header_cb_id = runtime::ccl::kPacketHeaderCbId;
    spec.semaphore_ids = {0};
    spec.streams = {kargs::InterpreterStreamSpec{tensor_args(device, in, 0), c.stream(), c.num_commands}};
    device.enqueue_workload(interpreter_workload("malformed", 0, {0, 0}, spec, 64, 4, {0}));
    const std::string text = expect_device_error([&] { device.finish(); }, DeviceError::Kind::Fault);
    EXPECT_THAT(text, HasSubstr("chip 0 core (1,2) [tensix (0,0) dm0] ccl_interpreter")) << text;
    for (const std::string& part : c.expected) EXPECT_THAT(text, HasSubstr(part)) << text;
    EXPECT_EQ(text.find('\n'), std::string::npos) << "one line: " << text;
  }
}

TEST(DeviceErrors, TensorOutsideDramFaultsNamingTheAccess) {
  SimMeshDevice device(topo::build_n150());
  runtime::BufferHandle bogus{99, 0xF0000000, dram_buffer(4 * 64, 64)};  // never allocated
  const runtime::BufferHandle out = device.create_buffer(dram_buffer(4 * 64, 64));
  kargs::InterpreterSpec spec;
  spec.packet_header_cb_id = runtime::ccl::kPacketHeaderCbId;
  const api::TensorSlice slice = whole({1, 1, 1, 4});
  spec.streams = {
      kargs::InterpreterStreamSpec{tensor_args(device, bogus, 0), cmd::encode_command(cmd::read_tensor_slice_to_cb(slice, 0)), 1},
      kargs::InterpreterStreamSpec{tensor_args(device, out, 0), cmd::encode_command(cmd::local_write_cb_to_tensor_slice(slice, 0)), 1}};
  device.enqueue_workload(interpreter_workload("bad address", 0, {0, 0}, spec, 64, 4, {}));
  const std::string text = expect_device_error([&] { device.finish(); }, DeviceError::Kind::Fault);
  EXPECT_THAT(text, HasSubstr("chip 0 core (1,2)"));
  EXPECT_THAT(text, HasSubstr("DRAM channel"));
  EXPECT_THAT(text, HasSubstr("out of range"));
  EXPECT_THAT(text, HasSubstr("stream 0 #0 STREAM_TENSOR_TO_CB"));
  // The device stays broken: the same error again, and no new work.
  const std::string again = expect_device_error([&] { device.finish(); }, DeviceError::Kind::Fault);
  EXPECT_EQ(again, text);
}

// The compute processor (the TRISCs) has no NoC: a kernel placed there that reads a tensor
// fails at its first NoC request, naming the kernel and why, instead of moving data.
TEST(DeviceErrors, ComputeKernelCannotUseTheNoc) {
  SimMeshDevice device(topo::build_n150());
  const runtime::BufferHandle in = device.create_buffer(dram_buffer(4 * 64, 64));
  kargs::InterpreterSpec spec;
  spec.packet_header_cb_id = runtime::ccl::kPacketHeaderCbId;
  spec.streams = {kargs::InterpreterStreamSpec{
      tensor_args(device, in, 0), cmd::encode_command(cmd::read_tensor_slice_to_cb(whole({1, 1, 1, 4}), 0)), 1}};
  runtime::MeshWorkload w = interpreter_workload("on compute", 0, {0, 0}, spec, 64, 4, {});
  w.programs.at(0).kernels.front().processor = runtime::DataMovementProcessor::Compute;
  device.enqueue_workload(w);
  const std::string text = expect_device_error([&] { device.finish(); }, DeviceError::Kind::Fault);
  EXPECT_THAT(text, HasSubstr("[tensix (0,0) compute] ccl_interpreter"));
  EXPECT_THAT(text, HasSubstr("a compute kernel cannot issue NoC requests"));
}

TEST(DeviceErrors, MissingSemaphoreIncrementHangsWithAReport) {
  SimMeshDevice device(topo::build_n150());
  kargs::InterpreterSpec spec;
  spec.packet_header_cb_id = runtime::ccl::kPacketHeaderCbId;
  spec.semaphore_ids = {2};
  spec.streams = {kargs::InterpreterStreamSpec{
      std::nullopt,
      cmd::encode_stream(std::vector<cmd::Command>{cmd::local_core_semaphore_set(cmd::SemaphoreId{2}, 1),
                                                   cmd::local_semaphore_wait(cmd::SemaphoreId{2}, 4)}),
      2}};
  device.enqueue_workload(interpreter_workload("waits forever", 0, {0, 0}, spec, 0, 0, {2}));
  const std::string text = expect_device_error([&] { device.finish(); }, DeviceError::Kind::Hang);
  EXPECT_THAT(text, HasSubstr("hang at"));
  EXPECT_THAT(text, HasSubstr("chip 0 core (1,2) [tensix (0,0) dm0] ccl_interpreter: blocked in noc_semaphore_wait_min("
                              "semaphore id 2 at 0x20020 >= 4, now 1)"));
  EXPECT_THAT(text, HasSubstr("command stream 0 #1 WAIT_VALUE"));
  EXPECT_THAT(text, HasSubstr("engine at"));
  EXPECT_THAT(text, HasSubstr("L1 word 0x20020 to be >= 4 (now 1)"));
}

// Over the fabric: the receiver of a send/recv whose sender never runs. The report names the
// receiver's wait and lists the idle routers.
TEST(DeviceErrors, ReceiverWithoutSenderHangsAndTheRoutersAreListed) {
  const ReceiverWithoutSender hang = run_receiver_without_sender();
  const std::string& text = hang.report;
  EXPECT_THAT(text, HasSubstr(fmt::format("chip {} core", hang.receiver)));
  EXPECT_THAT(text, HasSubstr("noc_semaphore_wait_min(semaphore id 0 at 0x20000 >= 1, now 0)"));
  EXPECT_THAT(text, HasSubstr("fabric routers:"));
  EXPECT_THAT(text, HasSubstr("fabric routers:\n  14 idle in wait_for_l1_activity: chip"));
  EXPECT_THAT(text, HasSubstr("fabric_router' waits for condition"));  // the engine's own list
}

// REFERENCE 11.8: traffic after the fabric was torn down. The sender fills its channel's
// slots and waits for credits no router will return; the report says it waits for a slot.
TEST(DeviceErrors, TrafficAfterTheFabricIsTornDownWaitsForAFabricSlot) {
  SimMeshDeviceOptions options;
  options.fabric.mode = runtime::FabricMode::Line;
  SimMeshDevice device(topo::build_t3k(), options);
  device.terminate_fabric(api::TerminationSignal::IMMEDIATELY_TERMINATE);
  const runtime::BufferHandle in = device.create_buffer(dram_buffer(32 * 2048, 2048));
  const runtime::BufferHandle out = device.create_buffer(dram_buffer(32 * 2048, 2048));
  runtime::ccl::send_recv::Params params =
      send_recv_params(device.fabric_plan().chips()[1], device.fabric_plan().chips()[4], in, out, options.fabric);
  device.enqueue_workload(runtime::ccl::send_recv::build(params, device.topology()));
  const std::string text = expect_device_error([&] { device.finish(); }, DeviceError::Kind::Hang);
  const runtime::FabricRouterSite* router = device.fabric_plan().router(params.sender, true);
  EXPECT_THAT(text, HasSubstr(fmt::format("[tensix (0,0) dm0] ccl_interpreter: blocked in noc_semaphore_wait_min("
                                          "semaphore id 1 at 0x20010 >= 1, now 0: a free slot in the forward fabric "
                                          "connection's sender channel (8 slots, router at NoC0 ({},{})))",
                                          router->noc0.x, router->noc0.y)))
      << text;
  EXPECT_THAT(text, HasSubstr("command stream 0 #0 STREAM_CB_TO_TENSOR dest=UNICAST hops=3 fwd")) << text;
  EXPECT_THAT(text, HasSubstr("semaphore id 0 at 0x20000 >= 1, now 0")) << text;  // the receiver
  EXPECT_THAT(text, ::testing::Not(HasSubstr("fabric routers:"))) << text;       // all gone
}

// The router at the line's end faulted here before session 45 (fabric_router fault
// ROUTE_PAST_END, once the worker had finished), unable to say who sent the packet: the
// simulator now checks the route as the worker hands the packet over and faults the worker
// (fabric_route_check_test.cpp has the other routes). The router's check stays as the backstop
// (kernels_e2e_test.cpp, RouterFaultsOnAPacketRoutedPastTheLineEnd).
TEST(DeviceErrors, APacketRoutedPastTheLineEndFaultsItsSender) {
  SimMeshDeviceOptions options;
  options.fabric.mode = runtime::FabricMode::Line;
  SimMeshDevice device(topo::build_n300(), options);
  const runtime::ChipId first = device.fabric_plan().chips()[0];
  kargs::InterpreterSpec spec;
  spec.packet_header_cb_id = runtime::ccl::kPacketHeaderCbId;
  spec.semaphore_ids = {0};
  spec.forward_connection = device.fabric_plan().worker_connection(first, true, 1, 2, 3);
  spec.streams = {kargs::InterpreterStreamSpec{
      std::nullopt,
      cmd::encode_command(cmd::fabric_unicast_semaphore_inc(cmd::SemaphoreId{0}, 1, 1, 2, cmd::ChipUnicast{3, true})), 1}};
  device.enqueue_workload(interpreter_workload("too far", first, {0, 0}, spec, 0, 0, {0, 1, 2, 3}));
  const std::string text = expect_device_error([&] { device.finish(); }, DeviceError::Kind::Fault);
  const runtime::Noc0Coord worker = device.core_map(first).tensix_noc0({0, 0});
  EXPECT_THAT(text, HasSubstr(fmt::format("chip {} core ({},{}) [tensix (0,0) dm0] ccl_interpreter: ccl_interpreter "
                                          "fault ROUTE_PAST_END",
                                          first, worker.x, worker.y)))
      << text;
  EXPECT_THAT(text, HasSubstr("stream 0 #0 ATOMIC_INC")) << text;
  EXPECT_THAT(text, HasSubstr(fmt::format("unicast of 3 hops forward from chip {}", first))) << text;
  EXPECT_THAT(text, Not(HasSubstr("fabric_router fault"))) << text;
}

TEST(DeviceErrors, WatchdogStopsALongRun) {
  SimMeshDeviceOptions options;
  options.max_simulated_time = SimTime::from_us(10);
  SimMeshDevice device(topo::build_n150(), options);
  const runtime::BufferHandle in = device.create_buffer(dram_buffer(1 << 20, 2048));
  const runtime::BufferHandle out = device.create_buffer(dram_buffer(1 << 20, 2048));
  const runtime::ccl::send_recv::Params params = send_recv_params(0, 0, in, out);  // a copy on chip 0
  device.enqueue_workload(runtime::ccl::send_recv::build(params, device.topology()));
  const std::string text = expect_device_error([&] { device.finish(); }, DeviceError::Kind::Timeout);
  EXPECT_THAT(text, HasSubstr("timeout: simulated time passed the limit of 10.000 us"));
  EXPECT_THAT(text, HasSubstr("[tensix (0,0) dm1] ccl_interpreter: blocked in noc_async_read_barrier(NoC1); "
                              "command stream 0 #0 STREAM_TENSOR_TO_CB"));
}

// A failed device's enqueued work never finishes (finish() throws the failure again), so the
// refusal of a buffer that work holds names the way out, reset(), rather than "call finish()
// first", which sent a caller round in a loop (session 39's bug bash: read_buffer of the output
// after a timed-out all_gather).
TEST(DeviceErrors, ABufferHeldByFailedWorkIsRefusedNamingReset) {
  SimMeshDeviceOptions options;
  options.max_simulated_time = SimTime::from_us(10);
  SimMeshDevice device(topo::build_n150(), options);
  const runtime::BufferHandle in = device.create_buffer(dram_buffer(1 << 20, 2048));
  const runtime::BufferHandle out = device.create_buffer(dram_buffer(1 << 20, 2048));
  device.enqueue_workload(runtime::ccl::send_recv::build(send_recv_params(0, 0, in, out), device.topology()));
  (void)expect_device_error([&] { device.finish(); }, DeviceError::Kind::Timeout);
  std::vector<std::byte> bytes(1 << 20);
  const std::string failed = "the device failed (a timeout) and that work will not finish: finish() throws the "
                             "failure again; call reset() first";
  try {
    device.read_buffer(0, out, bytes);
    ADD_FAILURE() << "read a buffer a failed workload holds";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "read_buffer: buffer 2 is used by workload 'send_recv', enqueued and not "
                                     "finished: " + failed);
  }
  try {
    device.deallocate_buffer(in);
    ADD_FAILURE() << "freed a buffer a failed workload holds";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "deallocate_buffer: buffer 1 is used by workload 'send_recv', enqueued and not "
                                     "finished; " + failed);
  }
  device.reset();  // the way back: a fresh device, whose refusals advise finish() again
  const runtime::BufferHandle again = device.create_buffer(dram_buffer(1 << 20, 2048));
  const runtime::BufferHandle into = device.create_buffer(dram_buffer(1 << 20, 2048));
  device.enqueue_workload(runtime::ccl::send_recv::build(send_recv_params(0, 0, again, into), device.topology()));
  try {
    device.read_buffer(0, again, bytes);
    ADD_FAILURE() << "read a buffer an enqueued workload holds";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("call finish() first, or enqueue them"));
  }
}

// A hung kernel stays parked on its word until reset(), and a workload that names its buffers
// lets the others be freed after the failure. One parked on a word of a buffer it does not name
// (a wait at an absolute address, as a client's command stream can make) must not turn that
// buffer's free into an internal error: the free succeeds, and the buffer's bytes stay until
// reset() (a failed device's storage goes with it).
TEST(DeviceErrors, ABufferAHungKernelWaitsInIsFreedAfterTheFailure) {
  SimMeshDevice device(topo::build_n150());
  const runtime::BufferHandle named = device.create_buffer(dram_buffer(2048, 2048));
  const runtime::BufferConfig l1_page{runtime::BufferType::L1, 2048, 2048};
  const runtime::BufferHandle waited_in = device.create_buffer(l1_page);  // one page: on core (0,0)
  kargs::InterpreterSpec spec;
  spec.packet_header_cb_id = runtime::ccl::kPacketHeaderCbId;
  spec.streams = {kargs::InterpreterStreamSpec{
      std::nullopt,
      cmd::encode_stream(std::vector<cmd::Command>{
          cmd::local_semaphore_wait(cmd::GlobalSemaphoreAddress{static_cast<std::uint32_t>(waited_in.address)}, 4)}),
      1}};
  runtime::MeshWorkload workload = interpreter_workload("waits in a buffer", 0, {0, 0}, spec, 0, 0, {});
  workload.buffers = {named};
  device.enqueue_workload(workload);
  const std::string text = expect_device_error([&] { device.finish(); }, DeviceError::Kind::Hang);
  EXPECT_THAT(text, HasSubstr(fmt::format("L1 word {:#x} to be >= 4 (now 0)", waited_in.address)));
  EXPECT_NO_THROW(device.deallocate_buffer(waited_in));
  EXPECT_THROW(device.deallocate_buffer(named), std::invalid_argument);  // the failed work's
  device.reset();
}

// watchdogs_per_finish (a served device): each finish() gets the simulated-time budget from its
// own start, so op after op runs past the budget in total; counted from construction (a local
// run's), the same budget stops the third op.
TEST(DeviceErrors, WatchdogPerFinishGivesEachFinishItsBudget) {
  const auto copy_on_chip_0 = [](SimMeshDevice& device) {
    const runtime::BufferHandle in = device.create_buffer(dram_buffer(64 * 2048, 2048));
    const runtime::BufferHandle out = device.create_buffer(dram_buffer(64 * 2048, 2048));
    device.enqueue_workload(runtime::ccl::send_recv::build(send_recv_params(0, 0, in, out), device.topology()));
    device.finish();
  };
  SimMeshDevice unwatched(topo::build_n150(), SimMeshDeviceOptions{});
  const SimTime before = unwatched.now();
  copy_on_chip_0(unwatched);
  const SimTime one_copy = unwatched.now() - before;
  ASSERT_GT(one_copy.ps(), 0);
  SimMeshDeviceOptions options;
  options.max_simulated_time = SimTime::from_ps(one_copy.ps() * 5 / 4);  // one copy fits, two do not
  options.watchdogs_per_finish = true;
  SimMeshDevice per_finish(topo::build_n150(), options);
  for (int i = 0; i < 3; ++i) copy_on_chip_0(per_finish);
  EXPECT_GT(per_finish.now().ps(), options.max_simulated_time->ps() * 2);
  options.watchdogs_per_finish = false;
  SimMeshDevice whole_life(topo::build_n150(), options);
  const std::string text = expect_device_error(
      [&] {
        for (int i = 0; i < 3; ++i) copy_on_chip_0(whole_life);
      },
      DeviceError::Kind::Timeout);
  EXPECT_THAT(text, HasSubstr("timeout: simulated time passed the limit of ")) << text;
  EXPECT_THAT(text, Not(HasSubstr("a budget of"))) << text;
}

TEST(DeviceErrors, WorkloadsThatCannotBePlacedAreRejectedBeforeRunning) {
  SimMeshDeviceOptions options;
  options.fabric.mode = runtime::FabricMode::Line;
  SimMeshDevice device(topo::build_n300(), options);
  const auto workload_with = [](runtime::KernelSpec kernel) {
    runtime::Program program;
    program.kernels.push_back(std::move(kernel));
    return runtime::MeshWorkload{"bad", {{0, program}}, {}};
  };
  runtime::KernelSpec unknown;
  unknown.kernel = "no_such_kernel";
  unknown.cores = {{{0, 0}, {0, 0}}};
  EXPECT_THROW(device.enqueue_workload(workload_with(unknown)), std::invalid_argument);
  runtime::KernelSpec outside;
  outside.kernel = "ccl_interpreter";
  outside.cores = {{{9, 9}, {9, 9}}};
  EXPECT_THROW(device.enqueue_workload(workload_with(outside)), std::invalid_argument);
  runtime::KernelSpec on_router;
  on_router.kernel = "legacy_edm";
  on_router.core_kind = runtime::CoreKind::Ethernet;
  const std::uint32_t channel = device.fabric_plan().router(0, true)->channel;
  on_router.cores = {{{channel, 0}, {channel, 0}}};
  try {
    device.enqueue_workload(workload_with(on_router));
    ADD_FAILURE() << "accepted a kernel on a router's core";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("runs the persistent fabric router"));
  }
  runtime::KernelSpec wrong_kind;
  wrong_kind.kernel = "fabric_router";
  wrong_kind.cores = {{{0, 0}, {0, 0}}};
  EXPECT_THROW(device.enqueue_workload(workload_with(wrong_kind)), std::invalid_argument);
  device.finish();  // nothing was enqueued
  EXPECT_TRUE(device.profile().empty());
}

}  // namespace
}  // namespace cclmesh::sim::device
