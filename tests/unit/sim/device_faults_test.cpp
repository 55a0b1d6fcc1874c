// REFERENCE 11's known failure modes on the simulated device, and the report naming each cause
// (issue 8): a missing semaphore increment, credits never returned (asymmetric first-level
// acks), a ring without deadlock avoidance, mismatched router buffer sizes, a link going down
// mid-run, and the wall-time watchdog.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>

#include <algorithm>
#include <functional>
#include <optional>
#include <regex>
#include <utility>
#include <vector>

#include "kernels/host/command_encoder.hpp"
#include "kernels/host/micro_ops.hpp"
#include "runtime/ccl/common/fabric_mux.hpp"
#include "runtime/ccl/send_recv/send_recv.hpp"
#include "sim/device/fault_headline.hpp"
#include "tests/unit/sim/device_error_util.hpp"
#include "tests/unit/sim/device_test_util.hpp"
#include "tests/unit/sim/multicast_all_gather.hpp"
#include "topologies/embedding.hpp"
#include "topologies/parametric.hpp"

namespace cclmesh::sim::device {
namespace {

using namespace testing;
using runtime::ChipId;
using runtime::DeviceError;
using runtime::FabricMode;
using ::testing::HasSubstr;

ChipId chip_at(const topo::Embedding& embedding, std::size_t i) { return static_cast<ChipId>(embedding.chips.at(i)); }

// Each chip multicasts `pages` pages into every other chip's output, one page per packet, then
// +1 on semaphore 0 everywhere and waits for n (multicast_all_gather.hpp). `one_way` sends the
// whole way round a ring forward (the flood that deadlocks a ring without avoidance).
void multicast_all_gather(SimMeshDevice& device, std::uint32_t pages, std::uint32_t page_size, bool one_way) {
  cclmesh::sim::device::testing::multicast_all_gather(device, MulticastAllGather{pages, page_size, 1, one_way});
}

// A wait nobody's command stream satisfies: the chain ends at "the increment is missing".
TEST(DeviceFaults, MissingIncrementIsNamedInTheWaitForChain) {
  const ReceiverWithoutSender hang = run_receiver_without_sender();
  const std::string& text = hang.report;
  EXPECT_THAT(text, HasSubstr("wait-for chains (who would satisfy each wait):")) << text;
  EXPECT_THAT(text, HasSubstr(fmt::format("no command stream of any kernel writes L1 word 0x20000 of chip {}",
                                          hang.receiver)))
      << text;
  EXPECT_THAT(text, HasSubstr("the increment is missing")) << text;
}

// The receiver's increment comes from the sender, who is still waiting for its own input:
// the chain goes from the receiver's chip to the sender's chip and ends at the missing
// increment there.
TEST(DeviceFaults, ChainCrossesChipsToTheWriter) {
  SimMeshDeviceOptions options;
  options.fabric.mode = FabricMode::Line;
  SimMeshDevice device(topo::build_t3k(), options);
  const ChipId sender = device.fabric_plan().chips()[0];
  const ChipId receiver = device.fabric_plan().chips()[3];
  const runtime::Noc0Coord worker = device.core_map(receiver).tensix_noc0({0, 0});
  kargs::InterpreterSpec spec;
  spec.packet_header_cb_id = runtime::ccl::kPacketHeaderCbId;
  spec.semaphore_ids = {0};
  spec.forward_connection = device.fabric_plan().worker_connection(sender, true, 1, 2, 3);
  spec.streams = {kargs::InterpreterStreamSpec{
      std::nullopt,
      cmd::encode_stream(std::vector<cmd::Command>{
          cmd::local_semaphore_wait(cmd::SemaphoreId{0}, 1),  // never incremented
          cmd::fabric_unicast_semaphore_inc(cmd::SemaphoreId{0}, 1, worker.x, worker.y, cmd::ChipUnicast{3, true})}),
      2}};
  device.enqueue_workload(interpreter_workload("sender", sender, {0, 0}, spec, 0, 0, {0, 1, 2, 3}));
  kargs::InterpreterSpec wait;
  wait.packet_header_cb_id = runtime::ccl::kPacketHeaderCbId;
  wait.semaphore_ids = {0};
  wait.streams = {kargs::InterpreterStreamSpec{
      std::nullopt, cmd::encode_command(cmd::local_semaphore_wait(cmd::SemaphoreId{0}, 1)), 1}};
  device.enqueue_workload(interpreter_workload("receiver", receiver, {0, 0}, wait, 0, 0, {0}));
  const std::string text = expect_device_error([&] { device.finish(); }, DeviceError::Kind::Hang);
  EXPECT_THAT(text, HasSubstr(fmt::format("would be incremented by chip {} core", sender))) << text;
  EXPECT_THAT(text, HasSubstr("ATOMIC_INC")) << text;
  EXPECT_THAT(text, HasSubstr(fmt::format("writes L1 word 0x20000 of chip {}", sender))) << text;
}

// REFERENCE 11.1: a ring whose routers forward without bubble flow control, flooded one way
// round, fills every buffer on the cycle. The chain goes round the ring and comes back.
TEST(DeviceFaults, RingWithoutBubbleFlowControlDeadlocksAndTheCycleIsNamed) {
  SimMeshDeviceOptions options;
  options.fabric.mode = FabricMode::Ring;
  options.fabric.bubble_flow_control = false;
  options.fabric.sender_slots = 1;
  options.fabric.receiver_slots = 2;
  options.fabric.max_payload_bytes = 1024;
  SimMeshDevice device(topo::build_parametric(topo::parse_parametric_spec("ring:4")), options);
  const std::string text =
      expect_device_error([&] { multicast_all_gather(device, 48, 1024, true); }, DeviceError::Kind::Hang);
  EXPECT_THAT(text, HasSubstr("a cycle of full router buffers")) << text;
  EXPECT_THAT(text, HasSubstr("ring without bubble flow control")) << text;
}

// Two kernels, each waiting for an increment the other sends only after its own wait: a cycle
// with no router on it. The chain names what it is made of, and does not call it a channel-
// dependency deadlock of full router buffers, which it called every cycle until session 21 (a
// fabric mux and its client worker too). The chain into it from a kernel outside the cycle
// counts only the cycle's steps.
TEST(DeviceFaults, ACycleOfKernelsIsNamedByWhatItIsMadeOf) {
  SimMeshDevice device(topo::build_n150());
  const runtime::CoreCoord a{0, 0};
  const runtime::CoreCoord b{1, 0};
  const runtime::CoreCoord outside{2, 0};
  const runtime::Noc0Coord a_noc = device.core_map(0).tensix_noc0(a);
  const runtime::Noc0Coord b_noc = device.core_map(0).tensix_noc0(b);
  const runtime::Noc0Coord outside_noc = device.core_map(0).tensix_noc0(outside);
  // Waits for its semaphore 0, then increments semaphore 0 of the cores at `next`.
  const auto waits_then_increments = [](const std::vector<runtime::Noc0Coord>& next) {
    std::vector<cmd::Command> commands{cmd::local_semaphore_wait(cmd::SemaphoreId{0}, 1)};
    for (const runtime::Noc0Coord& n : next) {
      commands.push_back(cmd::local_chip_noc_semaphore_inc(n.x, n.y, cmd::SemaphoreId{0}, 1));
    }
    kargs::InterpreterSpec spec;
    spec.packet_header_cb_id = runtime::ccl::kPacketHeaderCbId;
    spec.semaphore_ids = {0};
    spec.streams = {kargs::InterpreterStreamSpec{std::nullopt, cmd::encode_stream(commands),
                                                 static_cast<std::uint32_t>(commands.size())}};
    return spec;
  };
  runtime::Program program;
  // The kernel outside the cycle waits for `a`, which waits for `b`, which waits for `a`.
  const std::vector<std::pair<runtime::CoreCoord, std::vector<runtime::Noc0Coord>>> kernels{
      {outside, {}}, {a, {b_noc, outside_noc}}, {b, {a_noc}}};
  for (const auto& [core, next] : kernels) {
    program.circular_buffers.push_back(runtime::ccl::packet_header_cb(core));
    program.semaphores.push_back(runtime::ccl::tensix_semaphore(core, 0));
    program.kernels.push_back(runtime::ccl::interpreter_kernel(core, waits_then_increments(next)));
  }
  runtime::MeshWorkload workload;
  workload.name = "two kernels waiting for each other";
  workload.programs[0] = std::move(program);
  device.enqueue_workload(workload);
  const std::string text = expect_device_error([&] { device.finish(); }, DeviceError::Kind::Hang);
  EXPECT_THAT(text, HasSubstr("    <- back to chip 0 core (1,2) [tensix (0,0) dm0] ccl_interpreter: a cycle of 2 "
                              "kernels, each waiting for the next: a deadlock of kernels waiting for each other (a "
                              "semaphore, a CB), not of full router buffers\n"))
      << text;
  EXPECT_THAT(text, Not(HasSubstr("channel-dependency"))) << text;
}

// The two kernels of such a cycle as the clients of one fabric mux: they opened their
// connections and wait for each other before sending, so the mux holds no packet and waits for
// a client to close. The mux's chain goes on to its first client, into the kernels' cycle, which
// is named as the kernels': the loop a report shows between a mux and a worker is the workers'
// deadlock, not the routers'.
TEST(DeviceFaults, ACycleOfAFabricMuxsClientsIsNamedAsTheKernels) {
  SimMeshDeviceOptions options;
  options.fabric.mode = FabricMode::Line;
  SimMeshDevice device(topo::build_n300(), options);
  const ChipId chip = device.fabric_plan().chips()[0];
  const runtime::CoreCoord mux_core{3, 0};
  const runtime::CoreCoord a{0, 0};
  const runtime::CoreCoord b{1, 0};
  const runtime::Noc0Coord a_noc = device.core_map(chip).tensix_noc0(a);
  const runtime::Noc0Coord b_noc = device.core_map(chip).tensix_noc0(b);
  runtime::Program program;
  const std::vector<api::FabricConnectionConfig> clients =
      runtime::ccl::add_fabric_mux(program, device.fabric_plan(), runtime::FabricPort{0, 0}, chip, mux_core, true,
                                   device.core_map(chip).tensix_noc0(mux_core), 2);
  const std::vector<std::pair<runtime::CoreCoord, runtime::Noc0Coord>> workers{{a, b_noc}, {b, a_noc}};
  for (std::size_t i = 0; i < workers.size(); ++i) {
    const auto& [core, next] = workers[i];
    kargs::InterpreterSpec spec;
    spec.packet_header_cb_id = runtime::ccl::kPacketHeaderCbId;
    spec.semaphore_ids = {0};
    const std::vector<cmd::Command> commands{cmd::local_semaphore_wait(cmd::SemaphoreId{0}, 1),
                                             cmd::local_chip_noc_semaphore_inc(next.x, next.y, cmd::SemaphoreId{0}, 1)};
    spec.streams = {kargs::InterpreterStreamSpec{std::nullopt, cmd::encode_stream(commands), 2}};
    runtime::ccl::connect_to_fabric_mux(program, spec, core, true, clients[i]);
    program.circular_buffers.push_back(runtime::ccl::packet_header_cb(core));
    program.semaphores.push_back(runtime::ccl::tensix_semaphore(core, 0));
    program.kernels.push_back(runtime::ccl::interpreter_kernel(core, spec));
  }
  runtime::MeshWorkload workload;
  workload.name = "two mux clients waiting for each other";
  workload.programs[chip] = std::move(program);
  device.enqueue_workload(workload);
  const std::string text = expect_device_error([&] { device.finish(); }, DeviceError::Kind::Hang);
  EXPECT_THAT(text, HasSubstr(": a cycle of 2 kernels, each waiting for the next: a deadlock of kernels waiting for "
                              "each other (a semaphore, a CB), not of full router buffers\n"))
      << text;
  // Both clients still run: the chain follows the first, and says there was a choice.
  EXPECT_THAT(text, HasSubstr("    -- fabric mux chip 0 core (4,3) (2 client(s), 8 slots each): 0 slot(s) in use (0, 0); it "
                              "holds no packet: it waits for its clients to send or to close; client 0 (chip 0 core (1,3) "
                              "[tensix (0,0) dm0] ccl_interpreter) has not closed (of 2 that have not closed: the chain "
                              "follows the first)\n"))
      << text;
  EXPECT_THAT(text, Not(HasSubstr("channel-dependency"))) << text;
}

TEST(DeviceFaults, TheSameFloodCompletesWithBubbleFlowControl) {
  SimMeshDeviceOptions options;
  options.fabric.mode = FabricMode::Ring;
  options.fabric.bubble_flow_control = true;
  options.fabric.sender_slots = 1;
  options.fabric.receiver_slots = 2;
  options.fabric.max_payload_bytes = 1024;
  SimMeshDevice device(topo::build_parametric(topo::parse_parametric_spec("ring:4")), options);
  EXPECT_NO_THROW(multicast_all_gather(device, 48, 1024, true));
}

// REFERENCE 11.3: first-level acks on one end of a link only: the sender waits for acks the
// receiver never sends, its credits drain and the worker blocks on a slot.
TEST(DeviceFaults, AsymmetricFirstLevelAcksDrainCreditsAndAreNamed) {
  SimMeshDeviceOptions options;
  options.fabric.mode = FabricMode::Line;
  const ChipId second = chip_at(topo::find_system_line(topo::build_t3k()), 1);
  options.adjust_router_config = [second](const runtime::FabricRouterSite& site, kernels::FabricRouterConfig& config) {
    if (site.chip == second && !site.forward) config.first_level_acks = false;
  };
  SimMeshDevice device(topo::build_t3k(), options);
  const std::string text =
      expect_device_error([&] { multicast_all_gather(device, 64, 2048, false); }, DeviceError::Kind::Hang);
  EXPECT_THAT(text, HasSubstr("asymmetric first-level acks")) << text;
}

// A sender configured for more receiver slots than its peer has (REFERENCE 6.2: the layout is
// shared): packets land in slots the receiver never reads.
TEST(DeviceFaults, MismatchedBufferSizesAreNamed) {
  SimMeshDeviceOptions options;
  options.fabric.mode = FabricMode::Line;
  const ChipId second = chip_at(topo::find_system_line(topo::build_t3k()), 1);
  options.adjust_router_config = [second](const runtime::FabricRouterSite& site, kernels::FabricRouterConfig& config) {
    if (site.chip == second && !site.forward) {
      config.receiver_slots = 4;
      config.receiver_packets_in_flight = 4;  // a consistent router of its own, only smaller
    }
  };
  SimMeshDevice device(topo::build_t3k(), options);
  std::string text;
  try {
    multicast_all_gather(device, 64, 2048, false);
    ADD_FAILURE() << "the run completed";
  } catch (const DeviceError& e) {
    text = e.what();
  }
  EXPECT_THAT(text, HasSubstr("mismatched buffer sizes")) << text;
}

// The hang report of a line all-gather on a T3K whose link between the line's 4th and 5th chips
// goes down at 10 us.
std::string line_link_down_at_10us_report(const topo::Embedding& line) {
  SimMeshDeviceOptions options;
  options.fabric.mode = FabricMode::Line;
  options.faults.link_down.push_back({chip_at(line, 3), chip_at(line, 4), SimTime::from_us(10), "link-down:x@10us"});
  SimMeshDevice device(topo::build_t3k(), options);
  return expect_device_error([&] { multicast_all_gather(device, 64, 2048, false); }, DeviceError::Kind::Hang);
}

// A link down in the middle of a run: the hang report names it, when, and what was dropped.
TEST(DeviceFaults, LinkDownMidRunIsNamedWithItsTime) {
  const topo::Embedding line = topo::find_system_line(topo::build_t3k());
  const std::string text = line_link_down_at_10us_report(line);
  EXPECT_THAT(text, HasSubstr("injected faults:")) << text;
  EXPECT_THAT(text, HasSubstr(fmt::format("link-down:x@10us: every link between chips {} and {} down at 10.000 us",
                                          line.chips[3], line.chips[4])))
      << text;
  EXPECT_THAT(text, HasSubstr("which is down (see the injected faults)")) << text;
  EXPECT_THAT(text, HasSubstr("dropped: link down")) << text;
}

// The report's first line under its headline: the fault that took effect and on how many chips
// kernels wait on its link (here every chip's: the line's traffic backs up into it from both
// sides).
TEST(DeviceFaults, AHangReportLeadsWithTheFaultThatTookEffect) {
  const topo::Embedding line = topo::find_system_line(topo::build_t3k());
  const std::string text = line_link_down_at_10us_report(line);
  const std::size_t first_end = text.find('\n');
  ASSERT_NE(first_end, std::string::npos) << text;
  EXPECT_THAT(text.substr(0, first_end), HasSubstr("hang at")) << text;
  const std::string second = text.substr(first_end + 1, text.find('\n', first_end + 1) - first_end - 1);
  EXPECT_EQ(second, fmt::format("injected faults in effect: link {}-{} went down at 10.000 us (--fault link-down:x@10us): "
                                "8 of the 8 parked worker kernels (on 8 of the 8 chips with parked ones) wait on it (their "
                                "wait-for chains end there)",
                                line.chips[3], line.chips[4]))
      << text;
}

// A second link going down long after the run hung: the engine runs on to it once every kernel
// has parked, so it is down when the report is written, but no kernel saw it. The report's
// first lines put it after the last progress (the last time any kernel ran) and say it dropped
// nothing; the link that went down at 10 us stays the one the chains end at.
TEST(DeviceFaults, ALinkDownAfterTheLastProgressIsNotWhyTheRunHung) {
  const topo::Embedding line = topo::find_system_line(topo::build_t3k());
  SimMeshDeviceOptions options;
  options.fabric.mode = FabricMode::Line;
  options.faults.link_down.push_back({chip_at(line, 3), chip_at(line, 4), SimTime::from_us(10), "link-down:x@10us"});
  options.faults.link_down.push_back({chip_at(line, 0), chip_at(line, 1), SimTime::from_ms(5), "link-down:late@5ms"});
  SimMeshDevice device(topo::build_t3k(), options);
  const std::string text =
      expect_device_error([&] { multicast_all_gather(device, 64, 2048, false); }, DeviceError::Kind::Hang);
  std::vector<std::string> lines;
  for (std::size_t at = 0; at < text.size() && lines.size() < 3;) {
    const std::size_t end = text.find('\n', at);
    lines.push_back(text.substr(at, end - at));
    at = end == std::string::npos ? text.size() : end + 1;
  }
  ASSERT_EQ(lines.size(), 3u) << text;
  EXPECT_THAT(lines[0], ::testing::StartsWith("hang at 5.000 ms:")) << text;  // the engine ran on to the late fault
  EXPECT_EQ(lines[1], fmt::format("injected faults in effect: link {}-{} went down at 10.000 us (--fault "
                                  "link-down:x@10us): 8 of the 8 parked worker kernels (on 8 of the 8 chips with parked "
                                  "ones) wait on it (their wait-for chains end there)",
                                  line.chips[3], line.chips[4]))
      << text;
  EXPECT_THAT(lines[2], ::testing::MatchesRegex(fmt::format("injected faults after the last progress \\(the last time any kernel "
                                                 "ran, at [0-9.]+ us\\): link {}-{} went down at 5\\.000 ms \\(--fault "
                                                 "link-down:late@5ms\\) and dropped nothing: not why the run hung",
                                                 line.chips[0], line.chips[1])))
      << text;
  // No chain ends at the late link: one that passes it says it went down after.
  for (const auto& [a, b] : {std::pair{line.chips[0], line.chips[1]}, std::pair{line.chips[1], line.chips[0]}}) {
    EXPECT_FALSE(std::regex_search(text, std::regex(fmt::format("chip {} ch [0-9]+ <-> chip {} ch [0-9]+, which is down", a, b))))
        << text;
  }
}

// A link that went down while no parked worker's chain ends at it (here every chain ends
// elsewhere): the headline says none of them waits on it, and claims no chain ends there. The
// fabric mux's chain is not counted.
TEST(DeviceFaults, AFaultNoChainEndsAtIsOneNoParkedWorkerWaitsOn) {
  FaultPlan plan;
  plan.link_down.push_back({0, 1, SimTime::from_us(10), "link-down:0-1@10us"});
  const std::vector<std::unique_ptr<EthLink>> links;
  const std::vector<std::unique_ptr<PacketCorruption>> corruptions;
  const std::vector<ChainEnd> ends{{0, nullptr, LinkBreak::Down, ParkedKernel::Worker},
                                   {1, nullptr, LinkBreak::Down, ParkedKernel::Worker},
                                   {1, nullptr, LinkBreak::Down, ParkedKernel::Worker},
                                   {2, nullptr, LinkBreak::Down, ParkedKernel::FabricMux}};
  const FaultHeadlineInput input{&plan, SimTime::from_us(50), SimTime::from_us(40), &links, &corruptions, &ends};
  EXPECT_EQ(fault_headline(input),
            "injected faults in effect: link 0-1 went down at 10.000 us (--fault link-down:0-1@10us): none of the 3 "
            "parked worker kernels (on 2 chips) waits on it\n");
}

// An interpreter with two streams left parks in wait_for_l1_activity, its wait naming no word
// or CB, and waits in both streams. Built so it is known which one holds the run up: stream 0
// waits for semaphore 0, which no command writes; stream 1 fills CB 0, which the core's other
// kernel drains only after semaphore 1, which stream 0 increments after its wait. The chain
// follows stream 0 to the missing increment; stream 1's wait is named, and that its chain comes
// back to the kernel. (Followed by the stream that reported last, stream 1, the chain went
// round to the kernel again and called it a cycle of full router buffers.)
TEST(DeviceFaults, AKernelParkedOnTwoStreamsIsFollowedByTheStreamThatHoldsItUp) {
  SimMeshDevice device(topo::build_n150());
  const runtime::BufferHandle in = device.create_buffer(dram_buffer(8 * 64, 64));
  const runtime::BufferHandle out = device.create_buffer(dram_buffer(8 * 64, 64));
  const api::TensorSlice slice = testing::whole({1, 1, 1, 8});
  kargs::InterpreterSpec reader;
  reader.packet_header_cb_id = runtime::ccl::kPacketHeaderCbId;
  reader.semaphore_ids = {0, 1};
  reader.streams = {
      kargs::InterpreterStreamSpec{std::nullopt,
                                   cmd::encode_stream(std::vector<cmd::Command>{
                                       cmd::local_semaphore_wait(cmd::SemaphoreId{0}, 1),  // never incremented
                                       cmd::local_core_semaphore_inc(cmd::SemaphoreId{1}, 1)}),
                                   2},
      kargs::InterpreterStreamSpec{tensor_args(device, in, 0), cmd::encode_command(cmd::read_tensor_slice_to_cb(slice, 0)),
                                   1}};
  kargs::InterpreterSpec writer;
  writer.packet_header_cb_id = runtime::ccl::kPacketHeaderCbId;
  writer.semaphore_ids = {0, 1};
  writer.streams = {kargs::InterpreterStreamSpec{
      tensor_args(device, out, 0),
      cmd::encode_stream(std::vector<cmd::Command>{cmd::local_semaphore_wait(cmd::SemaphoreId{1}, 1),
                                                   cmd::local_write_cb_to_tensor_slice(slice, 0)}),
      2}};
  const runtime::CoreCoord core{0, 0};
  runtime::Program program;
  program.circular_buffers.push_back(runtime::ccl::packet_header_cb(core));
  program.circular_buffers.push_back(runtime::ccl::data_cb(core, 64, 2));
  for (const std::uint32_t id : {0u, 1u}) program.semaphores.push_back(runtime::ccl::tensix_semaphore(core, id));
  program.kernels.push_back(runtime::ccl::interpreter_kernel(core, reader, runtime::DataMovementProcessor::Riscv1));
  program.kernels.push_back(runtime::ccl::interpreter_kernel(core, writer, runtime::DataMovementProcessor::Riscv0));
  runtime::MeshWorkload workload;
  workload.name = "two streams";
  workload.programs[0] = std::move(program);
  device.enqueue_workload(workload);
  const std::string text = expect_device_error([&] { device.finish(); }, DeviceError::Kind::Hang);
  const std::string reader_name = "chip 0 core (1,2) [tensix (0,0) dm1] ccl_interpreter";
  EXPECT_THAT(text, HasSubstr(reader_name + ": blocked in wait_for_l1_activity")) << text;
  EXPECT_THAT(text, HasSubstr("its stream 0 (at #0 WAIT_VALUE")) << text;
  EXPECT_THAT(text, HasSubstr("waits for L1 word 0x20000 >= 1 (now 0)")) << text;
  EXPECT_THAT(text, HasSubstr("its stream 1 waits for room in CB 0 (2 pushed, 0 popped, 2 of 2 pages filled), which "
                              "chip 0 core (1,2) [tensix (0,0) dm0] ccl_interpreter pops (and that chain comes back to "
                              "this kernel)"))
      << text;
  EXPECT_THAT(text, HasSubstr("no command stream of any kernel writes L1 word 0x20000 of chip 0 core (1,2) so as to "
                              "satisfy the wait: the increment is missing"))
      << text;
  EXPECT_THAT(text, Not(HasSubstr("a cycle of full router buffers"))) << text;
  EXPECT_THAT(text, Not(HasSubstr("a guess"))) << text;
  // The other kernel's wait: semaphore 1, which the reader's stream 0 has still to increment.
  EXPECT_THAT(text, HasSubstr("would be incremented by " + reader_name + " stream 0 #1")) << text;
}

// Two streams that both wait on something outside the kernel, neither coming back to it: the
// chain follows the first, and the report says that is a guess.
TEST(DeviceFaults, WhichOfTwoWaitingStreamsHoldsTheRunUpIsMarkedAsAGuess) {
  SimMeshDevice device(topo::build_n150());
  kargs::InterpreterSpec spec;
  spec.packet_header_cb_id = runtime::ccl::kPacketHeaderCbId;
  spec.semaphore_ids = {0, 1};
  spec.streams = {
      kargs::InterpreterStreamSpec{std::nullopt, cmd::encode_command(cmd::local_semaphore_wait(cmd::SemaphoreId{0}, 1)), 1},
      kargs::InterpreterStreamSpec{std::nullopt, cmd::encode_command(cmd::local_semaphore_wait(cmd::SemaphoreId{1}, 1)), 1}};
  device.enqueue_workload(interpreter_workload("two waits", 0, {0, 0}, spec, 0, 0, {0, 1}));
  const std::string text = expect_device_error([&] { device.finish(); }, DeviceError::Kind::Hang);
  EXPECT_THAT(text, HasSubstr("waits for L1 word 0x20000 >= 1 (now 0); its stream 1 waits for L1 word 0x20010 >= 1 "
                              "(now 0); 2 of its streams wait on something outside this kernel: the chain follows "
                              "stream 0 alone (a guess: any of them may be why it hangs); no command stream of any "
                              "kernel writes L1 word 0x20000"))
      << text;
}

// A link down from the start on a 4x4 mesh: the ring is re-embedded around it and the
// all-gather completes with every byte right; on a T3K (2x4: one ring only) it cannot be.
TEST(DeviceFaults, LinkDownFromTheStartIsAvoidedByAnotherRing) {
  const topo::Topology mesh = topo::build_parametric(topo::parse_parametric_spec("mesh:4x4/1"));
  const topo::Embedding ring = topo::find_system_ring(mesh);
  SimMeshDeviceOptions options;
  options.fabric.mode = FabricMode::Ring;
  const ChipId a0 = chip_at(ring, 1);  // not a corner: a corner chip keeps a single neighbour
  const ChipId b0 = chip_at(ring, 2);
  options.faults.link_down.push_back({a0, b0, SimTime::zero(), "link-down:first-hop"});
  SimMeshDevice device(mesh, options);
  const std::vector<ChipId>& order = device.fabric_plan().chips();
  ASSERT_EQ(order.size(), 16u);
  for (std::size_t i = 0; i < order.size(); ++i) {
    const ChipId a = order[i];
    const ChipId b = order[(i + 1) % order.size()];
    EXPECT_FALSE((a == a0 && b == b0) || (a == b0 && b == a0));
  }
  multicast_all_gather(device, 4, 2048, false);  // every byte checked
}

// The T3K's only ring with a link down from the start runs as a line around it, from the chip
// after it (session 22; until then it was refused as the fault): the ring's order is kept as the
// ranks' (opened_from), and the plan's line is the ring's chips from 2 round to 0.
TEST(DeviceFaults, LinkDownOnTheOnlyRingRunsItAsALineAroundTheLink) {
  SimMeshDeviceOptions options;
  options.fabric.mode = FabricMode::Ring;
  options.faults.link_down.push_back({0, 2, SimTime::zero(), "link-down:0-2"});
  SimMeshDevice device(topo::build_t3k(), options);
  ASSERT_EQ(device.fabric_plan().lines().size(), 1u);
  const runtime::FabricLine& line = device.fabric_plan().lines().front();
  EXPECT_EQ(line.mode, FabricMode::Line);
  EXPECT_EQ(line.chips, (std::vector<ChipId>{2, 6, 7, 3, 1, 5, 4, 0}));
  EXPECT_EQ(line.opened_at, (std::pair<ChipId, ChipId>{0, 2}));
  EXPECT_EQ(line.opened_from, (std::vector<ChipId>{4, 0, 2, 6, 7, 3, 1, 5}));
  EXPECT_EQ(device.options().fabric.down_edges, (std::vector<std::pair<ChipId, ChipId>>{{0, 2}}));
}

// Two links down on the only ring cut it: no ring avoids them and no line around one does; the
// fault names both and why.
TEST(DeviceFaults, TwoLinksDownOnTheOnlyRingAreAFaultNamingThem) {
  SimMeshDeviceOptions options;
  options.fabric.mode = FabricMode::Ring;
  options.faults.link_down.push_back({0, 2, SimTime::zero(), "link-down:0-2"});
  options.faults.link_down.push_back({6, 7, SimTime::zero(), "link-down:6-7"});
  const std::string text =
      expect_device_error([&] { SimMeshDevice device(topo::build_t3k(), options); }, DeviceError::Kind::Fault);
  EXPECT_THAT(text, HasSubstr("fault link-down:0-2, link-down:6-7 at 0 s: the ring fabric 4-0-2-6-7-3-1-5-4 crosses "
                              "the down link"))
      << text;
  EXPECT_THAT(text, HasSubstr("the ring runs as a line around one down link, not 2 (0-2, 6-7)")) << text;
}

TEST(DeviceFaults, WallWatchdogStopsARunAsATimeout) {
  SimMeshDeviceOptions options;
  options.fabric.mode = FabricMode::Line;
  options.max_wall_seconds = 1e-9;
  const std::string text =
      expect_device_error([&] { SimMeshDevice device(topo::build_t3k(), options); }, DeviceError::Kind::Timeout);
  EXPECT_THAT(text, HasSubstr("timeout: the wall-time limit of 1e-09 s passed at simulated time")) << text;
}

// The abandon flag (`cclmesh serve`: a client gone mid-call, SIGTERM) stops a run as the wall
// watchdog does, a timeout; cleared, a reset device starts and runs again.
TEST(DeviceFaults, AnAbandonedRunStopsAsATimeout) {
  std::atomic<bool> abandon{false};
  SimMeshDeviceOptions options;
  options.fabric.mode = FabricMode::Line;
  options.abandon = &abandon;
  SimMeshDevice device(topo::build_t3k(), options);
  abandon = true;
  const std::string text = expect_device_error([&] { device.drain(); }, DeviceError::Kind::Timeout);
  EXPECT_THAT(text, HasSubstr("abandoned at simulated time")) << text;
  abandon = false;
  device.reset();
  EXPECT_NO_THROW(device.drain());
}

// Skew is drawn per chip from the seed: the same seed, the same delays; they stay within MAX.
TEST(DeviceFaults, LaunchSkewIsSeededAndBounded) {
  SimMeshDeviceOptions options;
  options.fabric.mode = FabricMode::Line;
  options.faults.skew = LaunchSkewFault{SimTime::from_us(40), 7, "skew:40us:7"};
  SimMeshDevice a(topo::build_t3k(), options);
  SimMeshDevice b(topo::build_t3k(), options);
  EXPECT_EQ(a.launch_skew(), b.launch_skew());
  ASSERT_EQ(a.launch_skew().size(), 8u);
  bool any_late = false;
  for (const auto& [chip, delay] : a.launch_skew()) {
    EXPECT_LE(delay, SimTime::from_us(40));
    any_late = any_late || delay > SimTime::zero();
  }
  EXPECT_TRUE(any_late);
}

// REFERENCE 1.8 / 11.12: an op without an entry barrier does not absorb launch skew. This
// hand-written all-gather increments its peers' semaphores as soon as it starts; a chip that
// launches later re-initialises its semaphore at launch and loses the early increments, so it
// waits for ever. (The op builders' all-gather has the barrier and completes under the same
// skew: cli_fault_run_test.) The report shows the skew that caused it, and the wait-for chain
// says what happened to the increments: they landed before the waiting chip's program launched
// and its semaphore initialisation overwrote them.
TEST(DeviceFaults, SkewHangsAnOpWithoutAnEntryBarrier) {
  SimMeshDeviceOptions options;
  options.fabric.mode = FabricMode::Line;
  options.faults.skew = LaunchSkewFault{SimTime::from_us(40), 7, "skew:40us:7"};
  SimMeshDevice device(topo::build_t3k(), options);
  const std::string text =
      expect_device_error([&] { multicast_all_gather(device, 8, 2048, false); }, DeviceError::Kind::Hang);
  EXPECT_THAT(text, HasSubstr("skew:40us:7: chip launch delays 0: ")) << text;
  EXPECT_THAT(text, HasSubstr("WAIT_VALUE")) << text;
  EXPECT_THAT(text, HasSubstr("and the launch initialised it to 0")) << text;
  EXPECT_THAT(text, HasSubstr("arrived before the waiting program started and were lost")) << text;
  EXPECT_THAT(text, HasSubstr("launch skew, REFERENCE 11.12")) << text;
  // The chip that launched first receives every increment after its launch: it completes and
  // has no chain; every chip that waits lost some at its own launch.
  const auto first = std::min_element(device.launch_skew().begin(), device.launch_skew().end(),
                                      [](const auto& a, const auto& b) { return a.second < b.second; });
  EXPECT_THAT(text, Not(HasSubstr(fmt::format("before chip {}'s program launched", first->first)))) << text;
}

}  // namespace
}  // namespace cclmesh::sim::device
