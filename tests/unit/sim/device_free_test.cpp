// MeshDevice::deallocate_buffer and deallocate_global_semaphore on the simulated and the planning
// device: a freed handle is dead for every call, a buffer or semaphore an unfinished workload may
// use is not freed, a freed semaphore's word is the next one's (Tensix L1 and the ERISC's
// region), both devices give the same handles and refusals, reset() after frees gives a fresh
// device's, and library loops of all_gathers that free what they create run in the same memory
// every time with the right bytes (the semaphores' past what the ERISC region holds). A freed
// buffer's simulated pages are given back: the next buffer there reads zeros, and a loop's
// pages stay bounded.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <array>
#include <functional>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/ccl/all_gather/allocate.hpp"
#include "runtime/ccl/common/collective.hpp"
#include "runtime/ccl/common/host_reference.hpp"
#include "runtime/device/l1_map.hpp"
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
using runtime::CoreKind;
using runtime::CoreRange;
using runtime::GlobalSemaphore;
using Bytes = std::vector<std::byte>;
namespace ag = runtime::ccl::all_gather;

const std::vector<CoreRange> kWorkers{CoreRange{{0, 0}, {1, 0}}};
const std::vector<CoreRange> kChannel0{CoreRange{{0, 0}, {0, 0}}};

BufferConfig dram(std::uint64_t bytes) { return {BufferType::Dram, bytes, 2048}; }
BufferConfig l1(std::uint64_t bytes) { return {BufferType::L1, bytes, 2048}; }

runtime::FabricOptions ring_fabric() {
  runtime::FabricOptions fabric;
  fabric.mode = runtime::FabricMode::Ring;
  return fabric;
}

// A workload that runs nothing on chip 0 and names `buffers` and `semaphores` (none: it does
// not say).
runtime::MeshWorkload naming(std::vector<BufferHandle> buffers, std::vector<GlobalSemaphore> semaphores = {}) {
  runtime::MeshWorkload w;
  w.name = "idle";
  w.programs[0] = runtime::Program{};
  w.buffers = std::move(buffers);
  w.global_semaphores = std::move(semaphores);
  return w;
}

// The same calls on a timing-only simulated T3K and a planning one, both with a ring fabric:
// what `calls` noted on each.
std::array<std::vector<std::string>, 2> trails_on_both_devices(
    const std::function<void(runtime::MeshDevice&, std::vector<std::string>&)>& calls) {
  const topo::Topology t3k = topo::load_system("t3k");
  SimMeshDeviceOptions options;
  options.data_mode = DataMode::TimingOnly;
  options.fabric = ring_fabric();
  SimMeshDevice device(t3k, options);
  PlanningMeshDevice planner(t3k, ring_fabric(), {}, DataMode::TimingOnly);
  std::array<std::vector<std::string>, 2> trails;
  calls(device, trails[0]);
  calls(planner, trails[1]);
  return trails;
}

// A library loop's device and op: a T3K with a ring fabric, and an all_gather of 1x1x32x`width`
// along dim 3 on it (the caller's loop allocates its buffers).
struct GatherLoop {
  explicit GatherLoop(std::uint32_t width) : device(topo::load_system("t3k"), with_ring_fabric()) {
    params.input.shape = {1, 1, 32, width};
    params.dim = 3;
    params.fabric = device.fabric();
  }
  static SimMeshDeviceOptions with_ring_fabric() {
    SimMeshDeviceOptions options;
    options.fabric = ring_fabric();
    return options;
  }
  SimMeshDevice device;
  ag::Params params;
};

// One all_gather of a library loop on `device`: random inputs written on every rank, its
// workloads (naming `extra` semaphores too) enqueued, `while_running` called before finish(),
// and every rank's output checked against the host reference.
void gather_and_check(SimMeshDevice& device, const ag::Params& params, std::mt19937_64& random, std::uint32_t iteration,
                      const std::vector<GlobalSemaphore>& extra = {},
                      const std::function<void()>& while_running = [] {}) {
  const std::vector<runtime::ChipId> ranks =
      runtime::ccl::resolve_groups(params.groups, device.topology(), params.fabric).front();
  std::vector<Bytes> inputs;
  for (runtime::ChipId chip : ranks) {
    Bytes input(params.input_buffer.config.size_bytes);
    for (std::byte& b : input) b = static_cast<std::byte>(random() & 0xFF);
    device.write_buffer(chip, params.input_buffer, input);
    inputs.push_back(std::move(input));
  }
  for (runtime::MeshWorkload w : ag::build_workloads(params, device.topology())) {
    w.global_semaphores.insert(w.global_semaphores.end(), extra.begin(), extra.end());
    device.enqueue_workload(w);
  }
  while_running();
  device.finish();
  const Bytes expected = runtime::ccl::reference::concat(inputs, params.input, params.dim);
  Bytes output(params.output_buffer.config.size_bytes);
  for (runtime::ChipId chip : ranks) {
    device.read_buffer(chip, params.output_buffer, output);
    EXPECT_TRUE(output == expected) << "iteration " << iteration << " chip " << chip;
  }
}

// The semaphore's value on chip `chip`'s first Tensix core of `semaphore`.
std::uint32_t value_on(SimMeshDevice& device, runtime::ChipId chip, const GlobalSemaphore& semaphore) {
  const runtime::Noc0Coord n = device.core_map(chip).tensix_noc0(semaphore.cores.front().start);
  return device.system()
      .chip(chip)
      .l1(CoreCoord{static_cast<std::int32_t>(n.x), static_cast<std::int32_t>(n.y)})
      .read_u32(semaphore.address);
}

// Pages the simulated memories hold on every chip: each DRAM channel's and each Tensix L1's.
std::size_t resident_dram_and_l1_pages(SimMeshDevice& device) {
  std::size_t pages = 0;
  for (runtime::ChipId id : device.chips()) {
    Chip& chip = device.system().chip(id);
    for (std::int32_t c = 0; c < chip.dram_channel_count(); ++c) {
      pages += chip.dram_channel(c).memory().resident_pages();
    }
    for (const CoreCoord& core : chip.tensix_cores()) pages += chip.l1(core).resident_pages();
  }
  return pages;
}

Bytes nonzero_bytes(std::uint64_t size, std::uint8_t seed) {
  Bytes bytes(size);
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::byte>(1 + (seed + i * 7) % 255);
  return bytes;
}

TEST(DeviceFree, AFreedHandleIsDeadForEveryCall) {
  SimMeshDevice device(topo::load_system("n300"));
  const BufferHandle a = device.create_buffer(dram(12 * 2048));
  Bytes data(a.config.size_bytes, std::byte{7});
  device.write_buffer(1, a, data);
  device.deallocate_buffer(a);
  const std::string freed = "buffer 1 was freed already (deallocate_buffer)";
  EXPECT_EQ(refusal([&] { device.write_buffer(1, a, data); }), "write_buffer: " + freed);
  EXPECT_EQ(refusal([&] { device.read_buffer(1, a, data); }), "read_buffer: " + freed);
  EXPECT_EQ(refusal([&] { device.deallocate_buffer(a); }), "deallocate_buffer: " + freed);
  EXPECT_EQ(refusal([&] { device.enqueue_workload(naming({a})); }), "workload 'idle': " + freed);
  EXPECT_EQ(refusal([&] { device.read_buffer(1, BufferHandle{9, 0, dram(2048)}, data); }),
            "read_buffer: buffer 9 was not created on this device");
  // Its memory is the next buffer's; the new handle is live.
  const BufferHandle b = device.create_buffer(dram(12 * 2048));
  EXPECT_EQ(b.address, a.address);
  EXPECT_NE(b.id, a.id);
  device.write_buffer(1, b, data);
  Bytes back(data.size());
  device.read_buffer(1, b, back);
  EXPECT_EQ(back, data);
}

TEST(DeviceFree, ABufferAnUnfinishedWorkloadUsesIsFreedReadAndWrittenAfterFinish) {
  SimMeshDevice device(topo::load_system("n300"));
  const BufferHandle used = device.create_buffer(dram(12 * 2048));
  const BufferHandle spare = device.create_buffer(l1(64 * 2048));
  device.enqueue_workload(naming({used}));
  EXPECT_EQ(refusal([&] { device.deallocate_buffer(used); }),
            "deallocate_buffer: buffer 1 is used by workload 'idle', enqueued and not finished; call finish() first");
  Bytes data(used.config.size_bytes);
  const std::string io = "buffer 1 is used by workload 'idle', enqueued and not finished: host writes and reads happen "
                         "when called, not in order with enqueued work; call finish() first, or enqueue them "
                         "(enqueue_write_buffer, enqueue_read_buffer)";
  EXPECT_EQ(refusal([&] { device.write_buffer(0, used, data); }), "write_buffer: " + io);
  EXPECT_EQ(refusal([&] { device.read_buffer(0, used, data); }), "read_buffer: " + io);
  device.deallocate_buffer(spare);
  device.finish();
  device.write_buffer(0, used, data);
  device.read_buffer(0, used, data);
  device.deallocate_buffer(used);
  EXPECT_EQ(device.allocator().live_buffer_count(), 0u);
}

// A freed buffer's simulated pages go with it (review42: a served device kept every page ever
// written): allocate, write on every chip, free, allocate again, round after round, holds no
// more pages after each free than the device held at open, and each new buffer at the freed one's
// address reads zeros, not the bytes freed there. DRAM interleaved and sharded (on banks 0 and 1
// of the 12; the others give back nothing), L1 interleaved and sharded.
TEST(DeviceFree, AFreedBuffersPagesAreReleasedAndTheNextBufferAtItsAddressReadsZeros) {
  SimMeshDevice device(topo::load_system("n300"));
  const std::size_t at_open = resident_dram_and_l1_pages(device);
  const runtime::ShardSpec two_cores{{CoreRange{{0, 0}, {1, 0}}}, 8, 1, 1, runtime::ShardOrientation::RowMajor};
  const BufferConfig configs[] = {
      dram(48 * 2048),
      BufferConfig{BufferType::Dram, 16 * 2048, 2048, runtime::TensorMemoryLayout::HeightSharded, two_cores},
      l1(160 * 2048),
      BufferConfig{BufferType::L1, 16 * 2048, 2048, runtime::TensorMemoryLayout::HeightSharded, two_cores},
  };
  for (const BufferConfig& config : configs) {
    std::optional<std::uint64_t> address;
    for (std::uint8_t round = 0; round < 4; ++round) {
      const BufferHandle buffer = device.create_buffer(config);
      if (!address) address = buffer.address;
      EXPECT_EQ(buffer.address, *address) << "round " << int{round};
      Bytes back(config.size_bytes, std::byte{0xee});
      for (runtime::ChipId chip : device.chips()) {
        device.read_buffer(chip, buffer, back);
        EXPECT_TRUE(back == Bytes(config.size_bytes)) << "round " << int{round} << " chip " << chip;
      }
      const Bytes data = nonzero_bytes(config.size_bytes, round);
      for (runtime::ChipId chip : device.chips()) device.write_buffer(chip, buffer, data);
      EXPECT_GT(resident_dram_and_l1_pages(device), at_open);
      device.read_buffer(1, buffer, back);
      EXPECT_TRUE(back == data) << "round " << int{round};
      device.deallocate_buffer(buffer);
      EXPECT_EQ(resident_dram_and_l1_pages(device), at_open) << "round " << int{round};
    }
  }
}

// Writes two buffers created back to back with `config` (so they share pages), frees the first
// and checks the second's bytes, then frees the second and checks no page is left.
void expect_freeing_one_keeps_the_other_and_both_leave_no_page(SimMeshDevice& device, const BufferConfig& config,
                                                                std::size_t at_open) {
  const BufferHandle first = device.create_buffer(config);
  const BufferHandle second = device.create_buffer(config);
  const Bytes second_data = nonzero_bytes(config.size_bytes, 2);
  device.write_buffer(0, first, nonzero_bytes(config.size_bytes, 1));
  device.write_buffer(0, second, second_data);
  device.deallocate_buffer(first);
  Bytes back(config.size_bytes);
  device.read_buffer(0, second, back);
  EXPECT_TRUE(back == second_data);
  device.deallocate_buffer(second);
  EXPECT_EQ(resident_dram_and_l1_pages(device), at_open);
}

// Freeing one of two buffers that share pages (2 KiB a bank each: one 4 KiB page of a DRAM
// channel holds both) keeps the other's bytes; freeing the other then leaves no page.
TEST(DeviceFree, FreeingABufferKeepsTheBytesOfOneSharingItsPages) {
  SimMeshDevice device(topo::load_system("n300"));
  const std::size_t at_open = resident_dram_and_l1_pages(device);
  for (const BufferConfig& config : {dram(12 * 2048), l1(64 * 2048 / 2)}) {
    expect_freeing_one_keeps_the_other_and_both_leave_no_page(device, config, at_open);
  }
}

// FreeingTwoBuffersThatShareA64ByteBlockLeavesNoPage on one system.
void expect_two_buffers_sharing_a_block_leave_no_page(const char* system) {
  SimMeshDevice device(topo::load_system(system));
  const std::size_t at_open = resident_dram_and_l1_pages(device);
  const runtime::CoreCoord grid = device.worker_grid();
  const std::uint64_t cores = std::uint64_t{grid.x} * grid.y;
  const BufferConfig config{BufferType::L1, 32 * cores, 32};
  {  // where two such buffers land: the same 64 B block (L1 is allocated from the top)
    const BufferHandle first = device.create_buffer(config);
    const BufferHandle second = device.create_buffer(config);
    ASSERT_EQ(first.address / 64, second.address / 64) << "the two should share a block";
    device.deallocate_buffer(second);
    device.deallocate_buffer(first);
  }
  expect_freeing_one_keeps_the_other_and_both_leave_no_page(device, config, at_open);
}

// Buffers are 32 B aligned: two of 32 B a core (one 32 B page on each worker core) sit in one
// 64 B block of each core's L1, a block neither free covers whole. Freeing both leaves no page,
// as for buffers whose edges fall on block boundaries. Wormhole's grid and Blackhole's.
TEST(DeviceFree, FreeingTwoBuffersThatShareA64ByteBlockLeavesNoPage) {
  for (const char* system : {"n300", "p300"}) {
    SCOPED_TRACE(system);
    expect_two_buffers_sharing_a_block_leave_no_page(system);
  }
}

// The same calls on a planning device and a simulated one: the same handles and refusals.
TEST(DeviceFree, PlanningAndSimulatedDevicesFreeAlike) {
  const auto trail = trails_on_both_devices([](runtime::MeshDevice& d, std::vector<std::string>& out) {
    const auto note = [&](const BufferHandle& h) { out.push_back(fmt::format("{}@{:#x}", h.id, h.address)); };
    const BufferHandle a = d.create_buffer(dram(1 << 20));
    const BufferHandle b = d.create_buffer(l1(64 * 4096));
    const BufferHandle c = d.create_buffer(dram(12 * 2048));
    note(a);
    note(b);
    note(c);
    d.deallocate_buffer(a);
    note(d.create_buffer(dram(12 * 2048)));  // a's place
    d.enqueue_workload(naming({b}));
    out.push_back(refusal([&] { d.deallocate_buffer(b); }));
    out.push_back(refusal([&] { d.deallocate_buffer(a); }));
    d.finish();
    d.deallocate_buffer(b);
    note(d.create_buffer(l1(64 * 2048)));
  });
  EXPECT_EQ(trail[0], trail[1]);
  EXPECT_EQ(trail[0].size(), 7u);
}

// A library user's loop (docs/library.md): allocate, write, run, read, deallocate. Every
// iteration's buffers land where the first's did, the allocator reaches no further, and every
// chip's output is the host reference's bytes.
TEST(DeviceFree, ALoopOfAllGathersRunsInTheSameMemory) {
  GatherLoop loop(256);
  SimMeshDevice& device = loop.device;
  ag::Params& params = loop.params;
  std::mt19937_64 random(14);
  std::optional<std::pair<std::uint64_t, std::uint64_t>> first_addresses;
  std::uint64_t dram_reach = 0;
  std::uint64_t l1_reach = 0;
  std::optional<std::size_t> pages_after_first;
  constexpr std::uint32_t kIterations = 12;
  for (std::uint32_t i = 0; i < kIterations; ++i) {
    ag::allocate(device, params);
    if (!first_addresses) {
      first_addresses.emplace(params.input_buffer.address, params.output_buffer.address);
      dram_reach = device.allocator().dram().highest_end_ever_used();
      l1_reach = device.allocator().tensix_l1().lowest_ever_used();
    }
    EXPECT_EQ(std::make_pair(params.input_buffer.address, params.output_buffer.address), *first_addresses) << i;
    gather_and_check(device, params, random, i);
    ag::deallocate(device, params);
    // The same simulated pages too: the freed buffers' go, the CBs' are the same every time.
    const std::size_t pages = resident_dram_and_l1_pages(device);
    if (!pages_after_first) pages_after_first = pages;
    EXPECT_EQ(pages, *pages_after_first) << i;
  }
  EXPECT_EQ(device.allocator().dram().highest_end_ever_used(), dram_reach);
  EXPECT_EQ(device.allocator().tensix_l1().lowest_ever_used(), l1_reach);
  EXPECT_EQ(device.allocator().live_buffer_count(), 0u);
  EXPECT_EQ(device.allocator().dram().free_block_count(), 1u);  // all of DRAM in one block again
}

// The same loop keeps no more simulation state either: the kernels, programs and fibers of an op
// that finished go when the next op is enqueued. Until session 28 the device kept every one
// until reset() (a served t3k grew by ~2 MB of RSS per all_reduce session, 20 sessions: 38 to
// 81 MB), so a long-lived `cclmesh serve` or a user's loop grew without bound.
TEST(DeviceFree, ALoopOfAllGathersKeepsOnlyTheLastOpsKernels) {
  GatherLoop loop(256);
  SimMeshDevice& device = loop.device;
  ag::Params& params = loop.params;
  std::mt19937_64 random(28);
  std::optional<std::size_t> actors_after_first;
  for (std::uint32_t i = 0; i < 6; ++i) {
    ag::allocate(device, params);
    gather_and_check(device, params, random, i);
    ag::deallocate(device, params);
    const std::size_t actors = device.engine().stats().live_actors;
    if (!actors_after_first) actors_after_first = actors;
    EXPECT_EQ(actors, *actors_after_first) << "after op " << i;
  }
}

// --- global semaphores ---------------------------------------------------------------------------

TEST(DeviceFree, AFreedSemaphoresWordIsTheNextOnes) {
  SimMeshDevice device(topo::load_system("n300"));
  for (const CoreKind kind : {CoreKind::Tensix, CoreKind::Ethernet}) {
    const std::vector<CoreRange>& cores = kind == CoreKind::Tensix ? kWorkers : kChannel0;
    const GlobalSemaphore a = device.create_global_semaphore(cores, kind, 5);
    const GlobalSemaphore b = device.create_global_semaphore(cores, kind, 0);
    device.deallocate_global_semaphore(a);
    const GlobalSemaphore c = device.create_global_semaphore(cores, kind, 3);
    EXPECT_EQ(c.address, a.address);
    EXPECT_NE(c.id, a.id);
    device.deallocate_global_semaphore(b);
    device.deallocate_global_semaphore(c);
  }
  EXPECT_EQ(device.allocator().live_global_semaphore_count(), 0u);
  // The new semaphore's word holds its own initial value, not the freed one's.
  const GlobalSemaphore first = device.create_global_semaphore(kWorkers, CoreKind::Tensix, 5);
  device.deallocate_global_semaphore(first);
  const GlobalSemaphore second = device.create_global_semaphore(kWorkers, CoreKind::Tensix, 2);
  ASSERT_EQ(second.address, first.address);
  EXPECT_EQ(value_on(device, 1, second), 2u);
  // Tensix L1 as new: a freed semaphore leaves no hole under the buffers.
  device.deallocate_global_semaphore(second);
  EXPECT_EQ(device.allocator().tensix_l1().free_block_count(), 1u);
  EXPECT_EQ(device.allocator().tensix_l1().lowest_in_use(), device.allocator().tensix_l1().end());
}

TEST(DeviceFree, AFreedSemaphoreHandleIsDeadForEveryCall) {
  SimMeshDevice device(topo::load_system("n300"));
  const GlobalSemaphore a = device.create_global_semaphore(kWorkers, CoreKind::Tensix, 0);
  device.deallocate_global_semaphore(a);
  const std::string freed = "global semaphore 1 was freed already (deallocate_global_semaphore)";
  EXPECT_EQ(refusal([&] { device.reset_global_semaphore(a, 1); }), "reset_global_semaphore: " + freed);
  EXPECT_EQ(refusal([&] { device.deallocate_global_semaphore(a); }), "deallocate_global_semaphore: " + freed);
  EXPECT_EQ(refusal([&] { device.enqueue_workload(naming({}, {a})); }), "workload 'idle': " + freed);
  EXPECT_EQ(refusal([&] { device.reset_global_semaphore(GlobalSemaphore{9, 0x1000, kWorkers}, 1); }),
            "reset_global_semaphore: global semaphore 9 was not created on this device");
  // The word's next owner is live.
  const GlobalSemaphore b = device.create_global_semaphore(kWorkers, CoreKind::Tensix, 0);
  EXPECT_EQ(b.address, a.address);
  device.reset_global_semaphore(b, 4);
  EXPECT_EQ(value_on(device, 0, b), 4u);
  device.enqueue_workload(naming({}, {b}));
  device.finish();
}

TEST(DeviceFree, ASemaphoreAnUnfinishedWorkloadMayUseIsFreedAfterFinish) {
  SimMeshDevice device(topo::load_system("n300"));
  const GlobalSemaphore used = device.create_global_semaphore(kWorkers, CoreKind::Tensix, 0);
  const GlobalSemaphore spare = device.create_global_semaphore(kChannel0, CoreKind::Ethernet, 0);
  device.enqueue_workload(naming({}, {used}));
  EXPECT_EQ(refusal([&] { device.deallocate_global_semaphore(used); }),
            "deallocate_global_semaphore: global semaphore 1 is used by workload 'idle', enqueued and not finished; "
            "call finish() first");
  device.deallocate_global_semaphore(spare);  // not named
  device.finish();
  device.deallocate_global_semaphore(used);

  // A workload that names no semaphores may use any: none is freed until it has finished.
  const GlobalSemaphore any = device.create_global_semaphore(kWorkers, CoreKind::Tensix, 0);
  device.enqueue_workload(naming({}, {}));
  EXPECT_EQ(refusal([&] { device.deallocate_global_semaphore(any); }),
            "deallocate_global_semaphore: global semaphore 3: workload 'idle' is enqueued and not finished and does "
            "not name the global semaphores it uses (MeshWorkload::global_semaphores), so it may use this one; call "
            "finish() first");
  EXPECT_EQ(device.allocator().live_global_semaphore_count(), 1u);  // nothing freed
  device.finish();
  device.deallocate_global_semaphore(any);
  EXPECT_EQ(device.allocator().live_global_semaphore_count(), 0u);
}

// reset_global_semaphore is enqueue-ordered: queued behind a workload, it holds its semaphore
// until finish(), as an enqueued write holds its buffer (freed before, a new semaphore or
// buffer could take the word the reset is still to write). The same on a planning device.
TEST(DeviceFree, AQueuedSemaphoreResetHoldsItsSemaphoreUntilFinish) {
  const auto trail = trails_on_both_devices([](runtime::MeshDevice& d, std::vector<std::string>& out) {
    const GlobalSemaphore named = d.create_global_semaphore(kWorkers, CoreKind::Tensix, 0);
    const GlobalSemaphore reset = d.create_global_semaphore(kWorkers, CoreKind::Tensix, 0);
    d.enqueue_workload(naming({}, {named}));
    d.reset_global_semaphore(reset, 3);
    out.push_back(refusal([&] { d.deallocate_global_semaphore(reset); }));
    d.finish();
    out.push_back(refusal([&] { d.deallocate_global_semaphore(reset); }));
  });
  EXPECT_EQ(trail[0], trail[1]);
  ASSERT_EQ(trail[0].size(), 2u);
  EXPECT_EQ(trail[0][0], "deallocate_global_semaphore: global semaphore 2 is used by a reset_global_semaphore, "
                         "enqueued and not finished; call finish() first");
  EXPECT_EQ(trail[0][1], "");
}

// The same calls on a planning device and a simulated one: the same handles and refusals; and
// reset() after frees gives both a fresh device's handles.
TEST(DeviceFree, PlanningAndSimulatedDevicesFreeSemaphoresAlikeAndResetAfterFrees) {
  const auto trail = trails_on_both_devices([](runtime::MeshDevice& d, std::vector<std::string>& out) {
    const auto note = [&](const GlobalSemaphore& s) { out.push_back(fmt::format("{}@{:#x}", s.id, s.address)); };
    const GlobalSemaphore t = d.create_global_semaphore(kWorkers, CoreKind::Tensix, 0);
    const GlobalSemaphore e = d.create_global_semaphore(kChannel0, CoreKind::Ethernet, 0);
    const GlobalSemaphore e2 = d.create_global_semaphore(kChannel0, CoreKind::Ethernet, 0);
    note(t);
    note(e);
    note(e2);
    d.deallocate_global_semaphore(e);
    note(d.create_global_semaphore(kChannel0, CoreKind::Ethernet, 0));  // e's word
    d.enqueue_workload(naming({}, {t}));
    out.push_back(refusal([&] { d.deallocate_global_semaphore(t); }));
    out.push_back(refusal([&] { d.deallocate_global_semaphore(e); }));
    out.push_back(refusal([&] { d.reset_global_semaphore(e, 0); }));
    d.finish();
    d.deallocate_global_semaphore(t);
    d.deallocate_global_semaphore(e2);
    d.reset();
    // A fresh device's handles: the first semaphores' ids and addresses again.
    note(d.create_global_semaphore(kWorkers, CoreKind::Tensix, 0));
    note(d.create_global_semaphore(kChannel0, CoreKind::Ethernet, 0));
  });
  EXPECT_EQ(trail[0], trail[1]);
  ASSERT_EQ(trail[0].size(), 9u);
  const auto address = [](const std::string& noted) { return noted.substr(noted.find('@')); };
  EXPECT_EQ(address(trail[0][3]), address(trail[0][1]));  // e's word, under a new id
  EXPECT_EQ(trail[0][4], "deallocate_global_semaphore: global semaphore 1 is used by workload 'idle', enqueued and not "
                         "finished; call finish() first");
  EXPECT_EQ(trail[0][5], "deallocate_global_semaphore: global semaphore 2 was freed already (deallocate_global_semaphore)");
  EXPECT_EQ(trail[0][6], "reset_global_semaphore: global semaphore 2 was freed already (deallocate_global_semaphore)");
  EXPECT_EQ(trail[0][7], trail[0][0]);
  EXPECT_EQ(trail[0][8], trail[0][1]);
}

// A library user's loop that gives back everything it creates, semaphores too: every iteration
// creates the all_gather's done semaphore and an ERISC semaphore (named by the op's workloads,
// so held while they run), runs, checks every chip's output, and frees them. More iterations than
// the ERISC region has words: without frees the loop would stop there.
TEST(DeviceFree, ALoopThatCreatesAndFreesItsSemaphoresRunsOn) {
  GatherLoop loop(64);
  SimMeshDevice& device = loop.device;
  ag::Params& params = loop.params;
  std::mt19937_64 random(16);
  constexpr std::uint32_t kIterations = runtime::kEriscGlobalSemaphoreBytes / runtime::kProgramSemaphoreStride + 2;
  std::optional<std::pair<std::uint32_t, std::uint32_t>> first_addresses;
  for (std::uint32_t i = 0; i < kIterations; ++i) {
    ag::allocate(device, params);  // creates the done semaphore: params holds none
    const GlobalSemaphore erisc = device.create_global_semaphore(kChannel0, CoreKind::Ethernet, 0);
    if (!first_addresses) first_addresses.emplace(params.done_semaphore->address, erisc.address);
    EXPECT_EQ(std::make_pair(params.done_semaphore->address, erisc.address), *first_addresses) << i;
    gather_and_check(device, params, random, i, {erisc}, [&] {
      EXPECT_NE(refusal([&] { device.deallocate_global_semaphore(*params.done_semaphore); }), "") << i;
      EXPECT_NE(refusal([&] { device.deallocate_global_semaphore(erisc); }), "") << i;
    });
    ag::deallocate(device, params);
    device.deallocate_global_semaphore(*params.done_semaphore);
    device.deallocate_global_semaphore(erisc);
    params.done_semaphore.reset();
  }
  EXPECT_EQ(device.allocator().live_global_semaphore_count(), 0u);
  EXPECT_EQ(device.allocator().live_buffer_count(), 0u);
  EXPECT_EQ(device.allocator().erisc_semaphores().free_block_count(), 1u);  // the region whole again
}

}  // namespace
}  // namespace cclmesh::sim::device
