// The legacy per-op EDM on the simulated device (kernels_e2e_test's legacy scenarios on the real
// backend): an EDM launched with the op on each end of an N300 link, handshaking inside the op,
// with push and pull workers on both chips; every message is checked, and the EDM's per-op
// launch and handshake show in the profile.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>

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
constexpr std::uint32_t kStallSem = 1;  // on each worker core; nothing writes it
constexpr std::uint32_t kSendFrom = 0x40000;
constexpr std::uint32_t kReceiveInto = 0x50000;

std::uint8_t message_byte(std::uint32_t chip, std::uint32_t message, std::uint32_t byte) {
  return static_cast<std::uint8_t>(chip * 71 + message * 13 + byte * 7 + 1);
}

// How a test worker ends after its last message (its runtime arg 1).
enum class WorkerEnd : std::uint32_t {
  Quietly = 0,                // no termination signal (MESSAGE_COUNT_REACHED EDMs need none)
  Signals = 1,                // WORKER_INITIATED: +1 on the EDM's termination semaphore
  StallsBeforeItsSignal = 2,  // waits for kStallSem, which nothing writes, instead of signalling
};

// The end of a test worker's channel: signal the EDM, or stall where its signal would be.
void end_worker(const api::LegacyEdmChannelConfig& cfg) {
  switch (static_cast<WorkerEnd>(get_arg_val<uint32_t>(1))) {
    case WorkerEnd::Quietly: return;
    case WorkerEnd::Signals:
      api::signal_legacy_edm_termination(cfg.edm_noc_x, cfg.edm_noc_y, kEdmTerminationSem, my_noc_index());
      return;
    case WorkerEnd::StallsBeforeItsSignal: noc_semaphore_wait(api::l1_word_ptr(get_semaphore(kStallSem)), 1); return;
  }
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
  end_worker(api::read_legacy_edm_channel_config(get_arg_ptr(2)));
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
  end_worker(api::read_legacy_edm_channel_config(get_arg_ptr(2)));
}

// Test worker: takes the first message the EDM announces, then stalls on kStallSem before
// pulling it, so the messages that arrive after it wait in the EDM's buffers.
void legacy_receiver_stalls_holding_a_message() {
  uint32_t at = 2;
  api::LegacyEdmWorkerChannel ch = api::LegacyEdmWorkerChannel::build_from_args(at, my_noc_index());
  ch.wait_for_payload();
  noc_semaphore_wait(api::l1_word_ptr(get_semaphore(kStallSem)), 1);
}

// The EDM kernel on its ethernet core, with the termination semaphore its workers signal.
void add_legacy_edm(runtime::Program& program, const kernels::LegacyEdmConfig& cfg,
                    const std::vector<kargs::LegacyEdmChannelSpec>& channels, const runtime::CoreCoord& edm_core) {
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
}

// A worker of the pair that is not the usual one: its kernel, or how it ends.
using ChannelOf = std::pair<runtime::ChipId, std::uint32_t>;  // chip, EDM channel
struct LegacyPairChanges {
  std::map<ChannelOf, std::string> kernels;
  std::map<ChannelOf, WorkerEnd> ends;
};

// Chip 0: EDM on channel 8, two senders (logical (0,0), (1,0)) and one receiver ((2,0)).
// Chip 1: EDM on channel 0, one sender and two receivers. Chip 0's senders pair with chip 1's
// receivers 1 and 2; chip 1's sender with chip 0's receiver. Channel c's worker is on core
// (c, 0); under WORKER_INITIATED each signals its end.
void enqueue_legacy_pair(SimMeshDevice& device, std::uint32_t termination_mode, std::uint32_t messages,
                         std::uint32_t buffers, const LegacyPairChanges& changes = {}) {
  device.register_kernel("legacy_sender_worker", &legacy_sender_worker, false);
  device.register_kernel("legacy_receiver_worker", &legacy_receiver_worker, false);
  device.register_kernel("legacy_receiver_stalls_holding_a_message", &legacy_receiver_stalls_holding_a_message, false);
  const WorkerEnd usual_end =
      termination_mode == kernels::legacy_edm::kTerminationWorkerInitiated ? WorkerEnd::Signals : WorkerEnd::Quietly;
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
      program.semaphores.push_back(runtime::ccl::tensix_semaphore(worker, kStallSem));
      const auto end = changes.ends.find({s.chip, c});
      std::vector<std::uint32_t> rt{messages, static_cast<std::uint32_t>(end == changes.ends.end() ? usual_end : end->second)};
      rt.resize(2 + api::kLegacyEdmChannelArgWords);
      api::write_legacy_edm_channel_config(kargs::legacy_edm_worker_channel(cfg, c, edm.x, edm.y, c, kWorkerSem),
                                           rt.data() + 2);
      runtime::KernelSpec k;
      const auto kernel = changes.kernels.find({s.chip, c});
      k.kernel = kernel != changes.kernels.end() ? kernel->second
                 : c < s.senders               ? "legacy_sender_worker"
                                               : "legacy_receiver_worker";
      k.cores = {{worker, worker}};
      k.runtime_args[worker] = rt;
      program.kernels.push_back(k);
    }
    add_legacy_edm(program, cfg, channels, edm_core);
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

// A relay worker's EDM messages go round: it pulls each message from its EDM's receiver channel
// and pushes it into the sender channel (runtime args: the message count, then both channels'
// blocks, receiver first), as a ring all-gather's worker relays its neighbour's slices on.
void legacy_relay_worker() {
  uint32_t at = 1;
  api::LegacyEdmWorkerChannel from = api::LegacyEdmWorkerChannel::build_from_args(at, my_noc_index());
  api::LegacyEdmWorkerChannel to = api::LegacyEdmWorkerChannel::build_from_args(at, my_noc_index());
  const uint32_t messages = get_arg_val<uint32_t>(0);
  for (uint32_t m = 0; m < messages; ++m) {
    from.wait_for_payload();
    from.read_into(kReceiveInto, kMessageBytes);
    from.release();
    to.wait_for_empty_buffer();
    to.send(kReceiveInto, kMessageBytes);
  }
}

// On each chip of an N300 an EDM with one sender channel (0) and one receiver channel (1), both
// served by one relay worker on core (0,0) (worker semaphores 0 and 1). Nothing seeds the ring:
// each worker waits for a message that only the other would send.
void enqueue_relay_pair_without_a_seed(SimMeshDevice& device, std::uint32_t messages) {
  device.register_kernel("legacy_relay_worker", &legacy_relay_worker, false);
  runtime::MeshWorkload workload{"legacy_relay_pair", {}, {}};
  for (const auto& [chip, eth_channel] : {std::pair<runtime::ChipId, std::uint32_t>{0, 8}, {1, 0}}) {
    const runtime::ChipCoreMap& map = device.core_map(chip);
    const runtime::Noc0Coord edm = map.eth_noc0(eth_channel);
    const runtime::CoreCoord edm_core{eth_channel, 0};
    const runtime::CoreCoord worker{0, 0};
    const runtime::Noc0Coord w = map.tensix_noc0(worker);
    const kernels::LegacyEdmConfig cfg{chip == 0,     runtime::kEriscKernelBase, 1, 1, 2,
                                       kMessageBytes, kernels::legacy_edm::kTerminationMessageCountReached, 1000};
    runtime::Program program;
    std::vector<kargs::LegacyEdmChannelSpec> channels;
    std::vector<std::uint32_t> rt{messages};
    rt.resize(1 + 2 * api::kLegacyEdmChannelArgWords);
    for (const std::uint32_t c : {1u, 0u}) {  // the receiver's block first
      channels.push_back({{w.x, w.y}, c, c, messages});
      program.semaphores.push_back(runtime::SemaphoreSpec{c, runtime::CoreKind::Ethernet, {{edm_core, edm_core}}, 0});
      program.semaphores.push_back(runtime::ccl::tensix_semaphore(worker, c));
      api::write_legacy_edm_channel_config(kargs::legacy_edm_worker_channel(cfg, c, edm.x, edm.y, c, c),
                                           rt.data() + 1 + (c == 1 ? 0 : api::kLegacyEdmChannelArgWords));
    }
    std::swap(channels[0], channels[1]);  // the EDM's channels in order: sender 0, receiver 1
    runtime::KernelSpec relay;
    relay.kernel = "legacy_relay_worker";
    relay.cores = {{worker, worker}};
    relay.runtime_args[worker] = rt;
    program.kernels.push_back(relay);
    add_legacy_edm(program, cfg, channels, edm_core);
    workload.programs[chip] = std::move(program);
  }
  device.enqueue_workload(workload);
}

std::string hang_report(SimMeshDevice& device) {
  return expect_device_error([&] { device.finish(); }, runtime::DeviceError::Kind::Hang);
}

// A receiver worker that took one message and stalls before pulling it: the messages behind it
// fill the EDM's receiver channel. The sending EDM's chain goes across the link (up) to that
// channel, which holds arrivals its worker has not pulled, and on to the worker; the sending
// channel names the level-2 acks it waits for (before, "the peer's level-1 ack", which had come
// for every message it had sent).
TEST(DeviceLegacyEdm, ArrivalsTheWorkerHasNotPulledLeadToTheWorker) {
  SimMeshDevice device(topo::build_n300());
  enqueue_legacy_pair(device, kernels::legacy_edm::kTerminationMessageCountReached, 4, 2,
                      {.kernels = {{{1, 1}, "legacy_receiver_stalls_holding_a_message"}}, .ends = {}});
  const std::string text = hang_report(device);
  EXPECT_THAT(text, HasSubstr("    <- legacy EDM chip 0 ch 8 sender channel 0 (worker chip 0 core (1,3) [tensix (0,0) dm0] "
                              "legacy_sender_worker): 2 buffers, 4 of 4 messages filled by its worker, 2 acknowledged by "
                              "the peer, 0 completed; every buffer waits for the peer's level-2 ack (sent once its worker "
                              "has pulled the message), from legacy EDM chip 1 ch 0 receiver channel 1\n"
                              "    <- legacy EDM chip 1 ch 0 receiver channel 1 (worker chip 1 core (2,3) [tensix (1,0) dm0] "
                              "legacy_receiver_stalls_holding_a_message): 2 buffers, 2 of 4 messages arrived, 0 pulled by "
                              "its worker; 2 message(s) arrived that its worker has not pulled\n"
                              "    <- chip 1 core (2,3) [tensix (1,0) dm0] legacy_receiver_stalls_holding_a_message "
                              "(followed in a chain above)\n"))
      << text;
}

// Two relay workers, each waiting for the message the other would relay: a cycle through both
// EDMs' channels, named by what it is made of, not as full router buffers (there are none).
TEST(DeviceLegacyEdm, RelayWorkersWaitingForEachOtherAreACycleThroughTheEdmChannels) {
  SimMeshDevice device(topo::build_n300());
  enqueue_relay_pair_without_a_seed(device, 3);
  const std::string text = hang_report(device);
  EXPECT_THAT(text, HasSubstr("    <- legacy EDM chip 0 ch 8 sender channel 0 (worker chip 0 core (1,3) [tensix (0,0) dm0] "
                              "legacy_relay_worker): 2 buffers, 0 of 3 messages filled by its worker, 0 acknowledged by the "
                              "peer, 0 completed; it has announced a free buffer its worker has not taken\n"
                              "    <- back to chip 0 core (1,3) [tensix (0,0) dm0] legacy_relay_worker: a cycle of 2 kernels "
                              "and 4 legacy EDM channels, each waiting for the next: a deadlock of kernels and legacy EDM "
                              "channels waiting for each other (a semaphore, a CB, a buffer of the EDM, a message or an ack "
                              "from its peer), not of full router buffers\n"))
      << text;
  // The other worker's chain, and each EDM's, joins the cycle.
  EXPECT_THAT(text, HasSubstr("legacy EDM chip 1 ch 0 writes it: +1 when a message has arrived on its receiver channel 1\n"
                              "    <- legacy EDM chip 1 ch 0 receiver channel 1 (followed in a chain above)\n"))
      << text;
  EXPECT_THAT(text, Not(HasSubstr("no kernel on that core uses the channel"))) << text;
}

// WORKER_INITIATED: an EDM ends once every channel's worker has signalled its end. A worker that
// stalls before its signal holds the EDM: the EDM's chain follows its first channel to the
// worker that has not signalled, the channel's own or another's.
TEST(DeviceLegacyEdm, AWorkerInitiatedEdmsChainGoesOnToTheWorkerThatHasNotSignalled) {
  for (const std::uint32_t stalling : {0u, 2u}) {
    SimMeshDevice device(topo::build_n300());
    enqueue_legacy_pair(device, kernels::legacy_edm::kTerminationWorkerInitiated, 3, 2,
                        {.kernels = {}, .ends = {{{1, stalling}, WorkerEnd::StallsBeforeItsSignal}}});
    const std::string text = hang_report(device);
    const std::string worker = stalling == 0 ? "chip 1 core (1,3) [tensix (0,0) dm0] legacy_sender_worker"
                                             : "chip 1 core (3,3) [tensix (2,0) dm0] legacy_receiver_worker";
    // Chip 0's EDM has its 3 signals and ends; chip 1's has 2.
    EXPECT_THAT(text, HasSubstr("    -- legacy EDM chip 1 ch 0 is blocked in wait_for_activity (waiting for a write to a "
                                "watched L1 word); each of its 3 channel(s) has moved what it was given: it ends once "
                                "every channel's worker has signalled its end (2 of 3 signals given); the chain follows "
                                "its sender channel 0\n"
                                "    <- legacy EDM chip 1 ch 0 sender channel 0 (worker chip 1 core (1,3) [tensix (0,0) dm0] "
                                "legacy_sender_worker): 2 buffers, 3 filled by its worker, 3 acknowledged by the peer, 3 "
                                "completed; it holds nothing: it ends once every channel's worker has signalled its end (2 "
                                "of 3 signals given)" +
                                std::string(stalling == 0 ? ": its worker has not finished\n"
                                                          : "; its worker has finished, receiver channel 2's worker has not\n") +
                                "    <- " + worker + " (followed in a chain above)\n"))
        << text;
    EXPECT_THAT(text, Not(HasSubstr("chip 0 ch 8 is blocked"))) << text;
  }
}

// WORKER_INITIATED workers that never signal: every channel has moved its messages and every
// worker has finished, so the EDMs' chains end at the signals that never came.
TEST(DeviceLegacyEdm, AWorkerInitiatedEdmWhoseWorkersNeverSignalEndsAtTheMissingSignals) {
  SimMeshDevice device(topo::build_n300());
  LegacyPairChanges quiet;
  for (const runtime::ChipId chip : {0u, 1u}) {
    for (std::uint32_t c = 0; c < 3; ++c) quiet.ends[{chip, c}] = WorkerEnd::Quietly;
  }
  enqueue_legacy_pair(device, kernels::legacy_edm::kTerminationWorkerInitiated, 3, 2, quiet);
  const std::string text = hang_report(device);
  for (const std::string edm : {"chip 0 ch 8", "chip 1 ch 0"}) {
    EXPECT_THAT(text, ContainsRegex("    <- legacy EDM " + edm + " sender channel 0 \\(worker [^\n]*\\): 2 buffers, 3 filled by "
                                    "its worker, 3 acknowledged by the peer, 3 completed; it holds nothing: it ends once "
                                    "every channel's worker has signalled its end \\(0 of 3 signals given\\); its worker "
                                    "has finished, as has every other channel's: 3 end signal\\(s\\) never came\n"))
        << text;
  }
}

}  // namespace
}  // namespace cclmesh::sim::device
