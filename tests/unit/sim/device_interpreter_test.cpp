// The command interpreter on one simulated chip (kernels_e2e_test's interpreter scenarios on
// the real backend): streams between DRAM, CBs and sharded L1 with the bytes checked,
// semaphore commands and bursts, dispatch order and profile, functional vs timing-only, and
// run-to-run determinism.
#include <gtest/gtest.h>

#include <cstring>

#include "kernels/host/command_encoder.hpp"
#include "kernels/host/micro_ops.hpp"
#include "runtime/ccl/send_recv/send_recv.hpp"
#include "runtime/device/l1_map.hpp"
#include "runtime/device/profile_range.hpp"
#include "tests/refusal.hpp"
#include "tests/unit/sim/device_test_util.hpp"

namespace cclmesh::sim::device {
namespace {

using namespace testing;
using runtime::CoreCoord;

// A program whose one command increments a local semaphore: a kernel that starts and ends, for
// tests of the order and the profile of programs rather than of what they do.
kargs::InterpreterSpec one_semaphore_increment() {
  kargs::InterpreterSpec spec;
  spec.packet_header_cb_id = runtime::ccl::kPacketHeaderCbId;
  spec.semaphore_ids = {0};
  spec.streams = {kargs::InterpreterStreamSpec{
      std::nullopt, cmd::encode_command(cmd::local_core_semaphore_inc(cmd::SemaphoreId{0}, 1)), 1}};
  return spec;
}

TEST(DeviceInterpreter, CopiesDramInterleavedToL1Sharded) {
  SimMeshDevice device(topo::build_n150());
  constexpr std::uint32_t kPage = 64;
  const runtime::BufferHandle in = device.create_buffer(dram_buffer(16 * kPage, kPage));
  runtime::BufferConfig sharded{runtime::BufferType::L1, 16 * kPage, kPage, runtime::TensorMemoryLayout::HeightSharded,
                                runtime::ShardSpec{{runtime::CoreRange{{1, 0}, {2, 0}}}, 1, 8, 8,
                                                   runtime::ShardOrientation::RowMajor}};
  const runtime::BufferHandle out = device.create_buffer(sharded);
  const std::vector<std::byte> data = pattern(16 * kPage, 3);
  device.write_buffer(0, in, data);

  kargs::InterpreterSpec spec;
  spec.packet_header_cb_id = runtime::ccl::kPacketHeaderCbId;
  spec.packet_size_in_pages = 2;
  const api::TensorSlice slice = whole({1, 1, 2, 8});
  spec.streams = {
      kargs::InterpreterStreamSpec{tensor_args(device, in, 0), cmd::encode_command(cmd::read_tensor_slice_to_cb(slice, 0)), 1},
      kargs::InterpreterStreamSpec{tensor_args(device, out, 0),
                                   cmd::encode_command(cmd::local_write_cb_to_tensor_slice(slice, 0)), 1}};
  device.enqueue_workload(interpreter_workload("copy", 0, {0, 0}, spec, kPage, 4, {}));
  device.finish();

  EXPECT_EQ(read_back(device, 0, out), data);
  // Shard 1 (pages 8..15) sits on logical core (2,0), its first page at the buffer address.
  std::vector<std::uint8_t> page(kPage);
  const runtime::Noc0Coord shard1 = device.core_map(0).tensix_noc0({2, 0});
  device.system().chip(0).l1({static_cast<int>(shard1.x), static_cast<int>(shard1.y)}).read(out.address, page);
  EXPECT_EQ(0, std::memcmp(page.data(), data.data() + 8 * kPage, kPage));

  const std::vector<runtime::KernelProfile> profile = device.profile();
  ASSERT_EQ(profile.size(), 1u);
  EXPECT_EQ(profile[0].kernel, "ccl_interpreter");
  EXPECT_EQ(profile[0].start_ns, 3500u);  // one dispatch latency after the enqueue at time 0
  EXPECT_GT(profile[0].end_ns, profile[0].start_ns);
}

TEST(DeviceInterpreter, SemaphoreCommandsAndBursts) {
  SimMeshDevice device(topo::build_n150());
  const runtime::ChipCoreMap& map = device.core_map(0);
  const auto noc0 = [&](CoreCoord c) { return map.tensix_noc0(c); };
  const auto l1 = [&](CoreCoord c) -> MemoryRegion& {
    const runtime::Noc0Coord n = noc0(c);
    return device.system().chip(0).l1({static_cast<int>(n.x), static_cast<int>(n.y)});
  };
  const CoreCoord a{0, 0}, b{1, 0}, src0{2, 0}, src1{3, 0}, dst{4, 0};
  std::vector<std::uint8_t> bytes(600);
  for (std::uint32_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::uint8_t>(i * 3 + 5);
  l1(src0).write(0x40000, std::span<const std::uint8_t>(bytes.data(), 400));
  l1(src1).write(0x40100, std::span<const std::uint8_t>(bytes.data() + 400, 200));

  // Core a: +5 on b's semaphore 0, write 0x2A at b:0x30000, wait for its semaphore 1 (b
  // answers), reset it. Core b, stream 0: wait for 5, gather two transfers into one CB packet,
  // answer a. Stream 1: write the packet to dst, fused with +3 on dst's semaphore 2.
  const std::vector<cmd::Command> a_cmds{
      cmd::local_chip_noc_semaphore_inc(noc0(b).x, noc0(b).y, cmd::SemaphoreId{0}, 5),
      cmd::inline_write(0x30000, 0x2A, noc0(b).x, noc0(b).y, cmd::LocalOnly{}),
      cmd::local_semaphore_wait(cmd::SemaphoreId{1}, 1), cmd::local_core_semaphore_set(cmd::SemaphoreId{1}, 0)};
  kargs::InterpreterSpec sa;
  sa.packet_header_cb_id = runtime::ccl::kPacketHeaderCbId;
  sa.semaphore_ids = {0, 1};
  sa.streams = {kargs::InterpreterStreamSpec{std::nullopt, cmd::encode_stream(a_cmds), 4}};
  const cmd::NocTransferBurstArg gather{
      0x40000, {{cmd::NocTransfer{0, noc0(src0).x, noc0(src0).y, 400}, cmd::NocTransfer{0x100, noc0(src1).x, noc0(src1).y, 200}}}};
  const cmd::NocTransferBurstArg scatter{0x50000, {{cmd::NocTransfer{0, noc0(dst).x, noc0(dst).y, 600}}}};
  const std::vector<cmd::Command> b0{cmd::local_semaphore_wait(cmd::SemaphoreId{0}, 5), cmd::noc_read_burst_to_cb(gather, 0),
                                     cmd::local_chip_noc_semaphore_inc(noc0(a).x, noc0(a).y, cmd::SemaphoreId{1}, 1)};
  const std::vector<cmd::Command> b1{cmd::noc_write_burst_and_semaphore_inc(scatter, 0, cmd::SemaphoreId{2}, 3,
                                                                            noc0(dst).x, noc0(dst).y, cmd::LocalOnly{})};
  kargs::InterpreterSpec sb;
  sb.packet_header_cb_id = runtime::ccl::kPacketHeaderCbId;
  sb.semaphore_ids = {0, 1, 2};
  sb.streams = {kargs::InterpreterStreamSpec{std::nullopt, cmd::encode_stream(b0), 3},
                kargs::InterpreterStreamSpec{std::nullopt, cmd::encode_stream(b1), 1}};

  runtime::Program program;
  for (CoreCoord c : {a, b}) program.circular_buffers.push_back(runtime::ccl::packet_header_cb(c));
  program.circular_buffers.push_back(runtime::ccl::data_cb(b, 1024, 4));
  for (std::uint32_t id : {0u, 1u}) program.semaphores.push_back(runtime::ccl::tensix_semaphore(a, id));
  for (std::uint32_t id : {0u, 1u, 2u}) program.semaphores.push_back(runtime::ccl::tensix_semaphore(b, id));
  program.semaphores.push_back(runtime::ccl::tensix_semaphore(dst, 2));
  program.kernels.push_back(runtime::ccl::interpreter_kernel(a, sa));
  program.kernels.push_back(runtime::ccl::interpreter_kernel(b, sb));
  device.enqueue_workload(runtime::MeshWorkload{"semaphores", {{0, program}}, {}});
  device.finish();

  EXPECT_EQ(l1(b).read_u32(runtime::tensix_program_semaphore_address(0)), 5u);  // wait-min never resets
  EXPECT_EQ(l1(b).read_u32(0x30000), 0x2Au);
  EXPECT_EQ(l1(a).read_u32(runtime::tensix_program_semaphore_address(1)), 0u);
  EXPECT_EQ(l1(dst).read_u32(runtime::tensix_program_semaphore_address(2)), 3u);
  EXPECT_EQ(l1(dst).read(0x50000, 600), bytes);
}

// A copy of `bytes` DRAM -> DRAM through one worker; returns the device for inspection.
struct CopyRun {
  SimTime end;
  std::uint64_t events;
  std::uint64_t trace_hash;
  std::vector<std::byte> output;
};

CopyRun run_copy(DataMode mode, std::uint64_t bytes) {
  SimMeshDeviceOptions options;
  options.data_mode = mode;
  SimMeshDevice device(topo::build_n150(), options);
  constexpr std::uint32_t kPage = 2048;
  const runtime::BufferHandle in = device.create_buffer(dram_buffer(bytes, kPage));
  const runtime::BufferHandle out = device.create_buffer(dram_buffer(bytes, kPage));
  device.write_buffer(0, in, pattern(bytes, 9));
  const runtime::ccl::send_recv::Params params = send_recv_params(0, 0, in, out);  // a copy on chip 0
  runtime::ccl::send_recv::run(device, params);
  return CopyRun{device.now(), device.stats().events_executed, device.trace_hash(), read_back(device, 0, out)};
}

TEST(DeviceInterpreter, LocalCopyMovesEveryByte) {
  const CopyRun run = run_copy(DataMode::Functional, 256 * 1024);
  EXPECT_EQ(run.output, pattern(256 * 1024, 9));
}

TEST(DeviceInterpreter, TimingOnlyRunsTheSameEventsAsFunctional) {
  const CopyRun functional = run_copy(DataMode::Functional, 256 * 1024);
  const CopyRun timing = run_copy(DataMode::TimingOnly, 256 * 1024);
  EXPECT_EQ(functional.end, timing.end);
  EXPECT_EQ(functional.events, timing.events);
  EXPECT_EQ(functional.trace_hash, timing.trace_hash);
  EXPECT_EQ(timing.output, std::vector<std::byte>(256 * 1024));  // DRAM stores nothing
}

TEST(DeviceInterpreter, IdenticalRunsGiveIdenticalTimesAndEventCounts) {
  const CopyRun first = run_copy(DataMode::Functional, 64 * 1024);
  const CopyRun second = run_copy(DataMode::Functional, 64 * 1024);
  EXPECT_EQ(first.end, second.end);
  EXPECT_EQ(first.events, second.events);
  EXPECT_EQ(first.trace_hash, second.trace_hash);
}

// Programs on one chip run in enqueue order, each one dispatch latency after the previous.
TEST(DeviceInterpreter, ProgramsOnAChipRunInOrderWithTheDispatchGap) {
  SimMeshDevice device(topo::build_n150());
  const kargs::InterpreterSpec spec = one_semaphore_increment();
  device.enqueue_workload(interpreter_workload("first", 0, {0, 0}, spec, 0, 0, {0}));
  device.enqueue_workload(interpreter_workload("second", 0, {0, 0}, spec, 0, 0, {0}));
  device.finish();
  const auto profile = device.profile();
  ASSERT_EQ(profile.size(), 2u);
  EXPECT_EQ(profile[0].start_ns, 3500u);
  EXPECT_EQ(profile[1].start_ns, profile[0].end_ns + 3500u);
}

// profile_since(K) is the profile from entry K on: an op's entries, read with the profile_size()
// taken before it. A range past the end is refused (an index from before a reset).
// forget_profile() drops the entries so far while the device runs on: the next kernel is entry
// 0, its clock not reset.
TEST(DeviceInterpreter, ProfileSinceReadsFromAnEntryAndForgetProfileDropsTheEntries) {
  SimMeshDevice device(topo::build_n150());
  const kargs::InterpreterSpec spec = one_semaphore_increment();
  EXPECT_EQ(device.profile_size(), 0u);
  EXPECT_TRUE(device.profile_since(0).empty());
  device.enqueue_workload(interpreter_workload("first", 0, {0, 0}, spec, 0, 0, {0}));
  device.finish();
  const std::size_t before_second = device.profile_size();
  EXPECT_EQ(before_second, 1u);
  device.enqueue_workload(interpreter_workload("second", 0, {0, 0}, spec, 0, 0, {0}));
  device.finish();
  const std::vector<runtime::KernelProfile> whole = device.profile();
  ASSERT_EQ(whole.size(), 2u);
  EXPECT_EQ(device.profile_size(), 2u);
  EXPECT_EQ(device.profile_since(before_second), std::vector<runtime::KernelProfile>{whole[1]});
  EXPECT_TRUE(device.profile_since(2).empty());
  EXPECT_EQ(cclmesh::testing::refusal([&] { (void)device.profile_since(3); }),
            "profile_since: entry 3 is past the profile's 2 entries; expected at most profile_size() (an index "
            "taken before a reset?)");

  device.forget_profile();
  EXPECT_EQ(device.profile_size(), 0u);
  device.enqueue_workload(interpreter_workload("third", 0, {0, 0}, spec, 0, 0, {0}));
  device.finish();
  const std::vector<runtime::KernelProfile> after = device.profile();
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0].start_ns, whole[1].end_ns + 3500u);  // the clock ran on: one dispatch gap later
}

// forget_profile_before(K) (a bounded served session's, session 31) drops the entries before K and
// keeps the numbering: profile_size() counts every entry, the kept ones read at their indices, and
// a range from a dropped entry is refused as ProfileEntriesDroppedError naming what is kept. Its
// message said "keeps entries K .. size" (one past the last, and a range when none was kept);
// found by session 31's review.
TEST(DeviceInterpreter, ForgetProfileBeforeKeepsTheNumberingAndRefusesDroppedEntries) {
  SimMeshDevice device(topo::build_n150());
  const kargs::InterpreterSpec spec = one_semaphore_increment();
  for (const char* name : {"first", "second", "third"}) {
    device.enqueue_workload(interpreter_workload(name, 0, {0, 0}, spec, 0, 0, {0}));
    device.finish();
  }
  const std::vector<runtime::KernelProfile> whole = device.profile();
  ASSERT_EQ(whole.size(), 3u);
  device.forget_profile_before(1);
  EXPECT_EQ(device.profile_size(), 3u);
  EXPECT_EQ(device.profile_since(1), (std::vector<runtime::KernelProfile>{whole[1], whole[2]}));
  EXPECT_EQ(cclmesh::testing::refusal([&] { (void)device.profile_since(0); }),
            "profile_since: entry 0 was dropped; the profile keeps entries 1 .. 2 of 3 only "
            "(forget_profile_before)");
  EXPECT_THROW((void)device.profile_since(0), runtime::ProfileEntriesDroppedError);
  device.forget_profile_before(3);
  EXPECT_EQ(device.profile_size(), 3u);
  EXPECT_TRUE(device.profile_since(3).empty());
  EXPECT_EQ(cclmesh::testing::refusal([&] { (void)device.profile_since(2); }),
            "profile_since: entry 2 was dropped; the profile keeps none of its 3 entries (forget_profile_before)");
  device.enqueue_workload(interpreter_workload("fourth", 0, {0, 0}, spec, 0, 0, {0}));
  device.finish();
  EXPECT_EQ(device.profile_size(), 4u);
  EXPECT_EQ(device.profile_since(3).size(), 1u);
  device.reset();  // the numbering starts again
  EXPECT_EQ(device.profile_size(), 0u);
  EXPECT_TRUE(device.profile().empty());
}

// Global semaphores: one L1 address on the given cores of every chip, set by the host and
// reused across ops; interpreter commands name them by address.
TEST(DeviceApi, GlobalSemaphoresAreSharedAcrossOpsAndResetByTheHost) {
  SimMeshDevice device(topo::build_n300());
  const runtime::CoreCoord a{0, 0};
  const runtime::CoreCoord b{1, 0};
  const runtime::GlobalSemaphore sem =
      device.create_global_semaphore({runtime::CoreRange{a, b}}, runtime::CoreKind::Tensix, 2);
  const auto value = [&](runtime::ChipId chip, runtime::CoreCoord c) {
    const runtime::Noc0Coord n = device.core_map(chip).tensix_noc0(c);
    return device.system().chip(static_cast<ChipId>(chip)).l1({static_cast<int>(n.x), static_cast<int>(n.y)}).read_u32(sem.address);
  };
  EXPECT_EQ(value(1, b), 2u);
  // Core b adds 3 to core a's global semaphore; core a waits for 5.
  const runtime::Noc0Coord a0 = device.core_map(0).tensix_noc0(a);
  kargs::InterpreterSpec waiter;
  waiter.packet_header_cb_id = runtime::ccl::kPacketHeaderCbId;
  waiter.streams = {kargs::InterpreterStreamSpec{
      std::nullopt, cmd::encode_command(cmd::local_semaphore_wait(cmd::GlobalSemaphoreAddress{sem.address}, 5)), 1}};
  kargs::InterpreterSpec adder;
  adder.packet_header_cb_id = runtime::ccl::kPacketHeaderCbId;
  adder.streams = {kargs::InterpreterStreamSpec{
      std::nullopt,
      cmd::encode_command(cmd::local_chip_noc_semaphore_inc(a0.x, a0.y, cmd::GlobalSemaphoreAddress{sem.address}, 3)),
      1}};
  runtime::Program program;
  for (runtime::CoreCoord c : {a, b}) program.circular_buffers.push_back(runtime::ccl::packet_header_cb(c));
  program.kernels.push_back(runtime::ccl::interpreter_kernel(a, waiter));
  program.kernels.push_back(runtime::ccl::interpreter_kernel(b, adder));
  device.enqueue_workload(runtime::MeshWorkload{"global semaphore", {{0, program}}, {}});
  device.finish();
  EXPECT_EQ(value(0, a), 5u);
  EXPECT_EQ(value(1, a), 2u);  // another chip's copy is its own
  device.reset_global_semaphore(sem, 0);
  for (runtime::ChipId chip : {0u, 1u}) {
    for (runtime::CoreCoord c : {a, b}) EXPECT_EQ(value(chip, c), 0u);
  }
}

TEST(DeviceApi, DescribesTheMeshAndRejectsWhatDoesNotFit) {
  SimMeshDevice device(topo::build_t3k());
  EXPECT_EQ(device.chips().size(), 8u);
  EXPECT_EQ(device.worker_grid(), (CoreCoord{8, 8}));
  EXPECT_EQ(device.active_ethernet_channels(0), (std::vector<std::uint32_t>{6, 7, 8, 9, 14, 15}));
  EXPECT_FALSE(device.fabric_plan().enabled());
  // L1 buffers come from the top down; CBs that would run into them are rejected at enqueue.
  const runtime::BufferHandle big = device.create_buffer(
      runtime::BufferConfig{runtime::BufferType::L1, 64 * 1024 * 1024, 64 * 1024, runtime::TensorMemoryLayout::Interleaved,
                            std::nullopt});
  EXPECT_EQ(big.address, 1499136u - 1024u * 1024u);
  runtime::Program program;
  program.circular_buffers.push_back(runtime::ccl::data_cb({0, 0}, 64 * 1024, 16));
  // ... as a WorkloadPlacementError: a consequence of the memory config, which the CLI reports
  // as bad input; other placement errors are not one (below: a CB declared twice).
  EXPECT_THROW(device.enqueue_workload(runtime::MeshWorkload{"too big", {{0, program}}, {}}),
               runtime::WorkloadPlacementError);
  runtime::Program twice;
  twice.circular_buffers.push_back(runtime::ccl::data_cb({0, 0}, 1024, 1));
  twice.circular_buffers.push_back(runtime::ccl::data_cb({0, 0}, 1024, 1));
  try {
    device.enqueue_workload(runtime::MeshWorkload{"twice", {{0, twice}}, {}});
    ADD_FAILURE() << "accepted a CB declared twice";
  } catch (const runtime::WorkloadPlacementError&) {
    ADD_FAILURE() << "a builder's bug reported as a memory-config problem";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("declared twice"), std::string::npos) << e.what();
  }
  EXPECT_THROW(device.create_buffer(dram_buffer(std::uint64_t{13} << 30, 2048)), runtime::BufferConfigError);
  EXPECT_THROW(device.write_buffer(0, big, std::vector<std::byte>(10)), std::invalid_argument);
}

}  // namespace
}  // namespace cclmesh::sim::device
