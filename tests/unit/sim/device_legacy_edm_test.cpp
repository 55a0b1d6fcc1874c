// The legacy per-op EDM on the simulated device (kernels_e2e_test's legacy scenarios on the real
// backend): an EDM launched with the op on each end of an N300 link, handshaking inside the op,
// with push and pull workers on both chips; every message is checked, and the EDM's per-op
// launch and handshake show in the profile.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kernels/api/legacy_edm_interface.hpp"
#include "kernels/host/kernel_args_builder.hpp"
#include "kernels/kernel_args.hpp"
#include "runtime/device/l1_map.hpp"
#include "tests/unit/sim/device_error_util.hpp"
#include "tests/unit/sim/device_test_util.hpp"

namespace cclmesh::sim::device {
namespace {

using namespace testing;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr std::uint32_t kMessageBytes = 512;
constexpr std::uint32_t kEdmTerminationSem = 4;
constexpr std::uint32_t kWorkerSem = 0;
constexpr std::uint32_t kSendFrom = 0x40000;
constexpr std::uint32_t kReceiveInto = 0x50000;

std::uint8_t message_byte(std::uint32_t chip, std::uint32_t message, std::uint32_t byte) {
  return static_cast<std::uint8_t>(chip * 71 + message * 13 + byte * 7 + 1);
}

// Test worker: push `messages` messages (a pattern by chip and index) into one EDM channel.
void legacy_sender_worker() {
  uint32_t at = 2;
  api::LegacyEdmWorkerChannel ch = api::LegacyEdmWorkerChannel::build_from_args(at, my_noc_index());
  const uint32_t messages = get_arg_val<uint32_t>(0);
  uint8_t buf[kMessageBytes];
  for (uint32_t m = 0; m < messages; ++m) {
    // The previous message's NoC write reads this L1 as it goes out: wait until it has left.
    noc_async_writes_flushed(my_noc_index());
    for (uint32_t b = 0; b < kMessageBytes; ++b) buf[b] = message_byte(my_chip_id(), m, b);
    l1_write_bytes(kSendFrom, buf, kMessageBytes);
    ch.wait_for_empty_buffer();
    ch.send(kSendFrom, kMessageBytes);
  }
  if (get_arg_val<uint32_t>(1) != 0) {
    const auto cfg = api::read_legacy_edm_channel_config(get_arg_ptr(2));
    api::signal_legacy_edm_termination(cfg.edm_noc_x, cfg.edm_noc_y, kEdmTerminationSem, my_noc_index());
  }
}

// Test worker: pull `messages` messages into consecutive L1.
void legacy_receiver_worker() {
  uint32_t at = 2;
  api::LegacyEdmWorkerChannel ch = api::LegacyEdmWorkerChannel::build_from_args(at, my_noc_index());
  const uint32_t messages = get_arg_val<uint32_t>(0);
  for (uint32_t m = 0; m < messages; ++m) {
    ch.wait_for_payload();
    ch.read_into(kReceiveInto + m * kMessageBytes, kMessageBytes);
    ch.release();
  }
  if (get_arg_val<uint32_t>(1) != 0) {
    const auto cfg = api::read_legacy_edm_channel_config(get_arg_ptr(2));
    api::signal_legacy_edm_termination(cfg.edm_noc_x, cfg.edm_noc_y, kEdmTerminationSem, my_noc_index());
  }
}

// Chip 0: EDM on channel 8, two senders (logical (0,0), (1,0)) and one receiver ((2,0)).
// Chip 1: EDM on channel 0, one sender and two receivers. Chip 0's senders pair with chip 1's
// receivers 1 and 2; chip 1's sender with chip 0's receiver.
void enqueue_legacy_pair(SimMeshDevice& device, std::uint32_t termination_mode, std::uint32_t messages,
                         std::uint32_t buffers) {
  device.register_kernel("legacy_sender_worker", &legacy_sender_worker, false);
  device.register_kernel("legacy_receiver_worker", &legacy_receiver_worker, false);
  const bool signal = termination_mode == kernels::legacy_edm::kTerminationWorkerInitiated;
  struct Side {
    runtime::ChipId chip;
    std::uint32_t channel;
    std::uint32_t senders;
    std::uint32_t receivers;
  };
  const Side sides[2] = {{0, 8, 2, 1}, {1, 0, 1, 2}};
  runtime::MeshWorkload workload{"legacy_pair", {}, {}};
  for (const Side& s : sides) {
    const runtime::ChipCoreMap& map = device.core_map(s.chip);
    const runtime::Noc0Coord edm = map.eth_noc0(s.channel);
    const runtime::CoreCoord edm_core{s.channel, 0};
    const kernels::LegacyEdmConfig cfg{s.chip == 0,     runtime::kEriscKernelBase, s.senders, s.receivers, buffers,
                                       kMessageBytes, termination_mode,          1000};
    runtime::Program program;
    std::vector<kargs::LegacyEdmChannelSpec> channels;
    for (std::uint32_t c = 0; c < s.senders + s.receivers; ++c) {
      const runtime::CoreCoord worker{c, 0};
      const runtime::Noc0Coord w = map.tensix_noc0(worker);
      channels.push_back({{w.x, w.y}, kWorkerSem, c, messages});
      program.semaphores.push_back(runtime::SemaphoreSpec{c, runtime::CoreKind::Ethernet, {{edm_core, edm_core}}, 0});
      program.semaphores.push_back(runtime::ccl::tensix_semaphore(worker, kWorkerSem));
      std::vector<std::uint32_t> rt{messages, signal ? 1u : 0u};
      rt.resize(2 + api::kLegacyEdmChannelArgWords);
      api::write_legacy_edm_channel_config(kargs::legacy_edm_worker_channel(cfg, c, edm.x, edm.y, c, kWorkerSem),
                                           rt.data() + 2);
      runtime::KernelSpec k;
      k.kernel = c < s.senders ? "legacy_sender_worker" : "legacy_receiver_worker";
      k.cores = {{worker, worker}};
      k.runtime_args[worker] = rt;
      program.kernels.push_back(k);
    }
    program.semaphores.push_back(
        runtime::SemaphoreSpec{kEdmTerminationSem, runtime::CoreKind::Ethernet, {{edm_core, edm_core}}, 0});
    const kargs::KernelArgs args = kargs::build_legacy_edm_args(cfg, kEdmTerminationSem, channels);
    runtime::KernelSpec edm_kernel;
    edm_kernel.kernel = kernels::kLegacyEdmKernelName;
    edm_kernel.core_kind = runtime::CoreKind::Ethernet;
    edm_kernel.cores = {{edm_core, edm_core}};
    edm_kernel.compile_time_args = args.compile_time;
    edm_kernel.common_runtime_args = args.runtime;
    program.kernels.push_back(edm_kernel);
    workload.programs[s.chip] = std::move(program);
  }
  device.enqueue_workload(workload);
}

void run_legacy_pair(std::uint32_t termination_mode, std::uint32_t messages, std::uint32_t buffers) {
  SimMeshDevice device(topo::build_n300());
  enqueue_legacy_pair(device, termination_mode, messages, buffers);
  device.finish();

  const auto check = [&](runtime::ChipId chip, std::uint32_t worker, runtime::ChipId from) {
    const runtime::Noc0Coord w = device.core_map(chip).tensix_noc0({worker, 0});
    const MemoryRegion& l1 = device.system().chip(static_cast<ChipId>(chip)).l1({static_cast<int>(w.x), static_cast<int>(w.y)});
    for (std::uint32_t m = 0; m < messages; ++m) {
      const std::vector<std::uint8_t> got = l1.read(kReceiveInto + m * kMessageBytes, kMessageBytes);
      for (std::uint32_t b = 0; b < kMessageBytes; ++b) {
        ASSERT_EQ(got[b], message_byte(from, m, b)) << "chip " << chip << " worker " << worker << " message " << m;
      }
    }
  };
  check(1, 1, 0);
  check(1, 2, 0);
  check(0, 2, 1);
  const auto layout = kernels::make_legacy_edm_layout(runtime::kEriscKernelBase, 3, buffers, kMessageBytes);
  const runtime::Noc0Coord e0 = device.core_map(0).eth_noc0(8);
  EXPECT_EQ(device.system().chip(0).l1({static_cast<int>(e0.x), static_cast<int>(e0.y)}).read_u32(layout.status),
            static_cast<std::uint32_t>(api::EdmStatus::TERMINATED));

  // Launched with the op: both EDMs start with it, one dispatch latency in, and are in the
  // profile; their run includes the handshake round trip over the link (> 2 x 500 ns).
  std::size_t edms = 0;
  for (const runtime::KernelProfile& k : device.profile()) {
    if (k.kernel != kernels::kLegacyEdmKernelName) continue;
    ++edms;
    EXPECT_EQ(k.start_ns, 3500u);
    EXPECT_GT(k.end_ns - k.start_ns, 1000u);
  }
  EXPECT_EQ(edms, 2u);
}

TEST(DeviceLegacyEdm, MessageCountTermination) {
  run_legacy_pair(kernels::legacy_edm::kTerminationMessageCountReached, 9, 2);
}

TEST(DeviceLegacyEdm, WorkerInitiatedTermination) {
  run_legacy_pair(kernels::legacy_edm::kTerminationWorkerInitiated, 5, 3);
}

TEST(DeviceLegacyEdm, SingleBuffer) { run_legacy_pair(kernels::legacy_edm::kTerminationMessageCountReached, 4, 1); }

// The link going down while the pair moves 64 messages each way: every worker waits on a
// semaphore only the EDM increments (no command stream writes it), and its wait-for chain goes
// on to the EDM's channel and ends at the down link, which the report's first line counts; the
// EDMs' own chains follow a channel. (Before, each chain ended at "the increment is missing",
// and the EDMs were counted among the parked workers.)
TEST(DeviceLegacyEdm, ALinkDownMidRunIsWhereTheWorkersChainsEndThroughTheEdm) {
  SimMeshDeviceOptions options;
  options.faults.link_down.push_back({0, 1, SimTime::from_us(10), "link-down:0-1@10us"});
  SimMeshDevice device(topo::build_n300(), options);
  enqueue_legacy_pair(device, kernels::legacy_edm::kTerminationMessageCountReached, 64, 2);
  const std::string text = expect_device_error([&] { device.finish(); }, runtime::DeviceError::Kind::Hang);
  EXPECT_THAT(text, HasSubstr("injected faults in effect: link 0-1 went down at 10.000 us (--fault link-down:0-1@10us): "
                              "6 of the 6 parked worker kernels (on 2 of the 2 chips with parked ones) wait on it"))
      << text;
  // A sender's chain: the EDM +1s its semaphore; the EDM's sender channel waits for acks.
  EXPECT_THAT(text, ContainsRegex("legacy EDM chip 0 ch 8 writes it: \\+1 when its sender channel 0 has a free buffer "
                                  "for the worker\n"
                                  "    <- legacy EDM chip 0 ch 8 sender channel 0 \\(worker chip 0 core \\([0-9]+,[0-9]+\\) "
                                  "\\[tensix \\(0,0\\) dm0\\] legacy_sender_worker\\): 2 buffers, [0-9]+ of 64 messages "
                                  "filled by its worker, [0-9]+ acknowledged by the peer, [0-9]+ completed; every buffer "
                                  "waits for the peer's level-1 ack across the link chip 0 ch 8 <-> chip 1 ch 0, which is "
                                  "down"))
      << text;
  // A receiver's: the EDM's receiver channel waits for data from across the link.
  EXPECT_THAT(text, ContainsRegex("legacy EDM chip 0 ch 8 receiver channel 2 \\(worker [^)]+\\) \\[tensix \\(2,0\\) "
                                  "dm0\\] legacy_receiver_worker\\): 2 buffers, [0-9]+ of 64 messages arrived, [0-9]+ "
                                  "pulled by its worker; its worker has pulled every message that arrived: it waits for "
                                  "the next from the peer across the link chip 0 ch 8 <-> chip 1 ch 0, which is down"))
      << text;
  EXPECT_THAT(text, Not(HasSubstr("the increment is missing"))) << text;
  EXPECT_THAT(text, Not(HasSubstr("each of its streams waits for another"))) << text;
}

}  // namespace
}  // namespace cclmesh::sim::device
