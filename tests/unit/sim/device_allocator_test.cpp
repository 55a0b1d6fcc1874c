// The device allocator with freeing: a freed buffer's memory goes to the next buffer that fits,
// freed neighbours merge, memory cut into pieces too small is refused with a message that says
// so, CBs are checked against the lowest live L1 buffer, buffers a workload not yet finished
// names are not freed, and the same calls give the same addresses; global semaphores likewise,
// in Tensix L1 and in the ERISC's global semaphore region.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/device/buffer_layout.hpp"
#include "runtime/device/l1_map.hpp"
#include "runtime/device/mesh_device.hpp"
#include "sim/device/device_allocator.hpp"
#include "tests/refusal.hpp"

namespace cclmesh::sim::device {
namespace {

using cclmesh::testing::refusal;
using runtime::BufferConfig;
using runtime::BufferHandle;
using runtime::BufferType;
using runtime::GlobalSemaphore;

constexpr std::uint32_t kPage = 2048;
constexpr std::uint64_t kDramPages = 8;  // per bank
constexpr std::uint64_t kL1Pages = 4;    // per core

// A small device: 2 DRAM banks of 8 pages above the reserved base, 2x2 cores with 4 pages of
// L1 each above the CBs' base.
DeviceMemorySizes small_device() {
  DeviceMemorySizes sizes;
  sizes.worker_grid = {2, 2};
  sizes.dram_banks = 2;
  sizes.dram_bank_bytes = runtime::kDramBufferBase + kDramPages * kPage;
  sizes.tensix_l1_bytes = runtime::kTensixCircularBufferBase + kL1Pages * kPage;
  return sizes;
}

// `pages` pages on each DRAM bank or each core.
BufferConfig dram(std::uint64_t pages) { return {BufferType::Dram, pages * 2 * kPage, kPage}; }
BufferConfig l1(std::uint64_t pages) { return {BufferType::L1, pages * 4 * kPage, kPage}; }

std::uint64_t dram_page(std::uint64_t i) { return runtime::kDramBufferBase + i * kPage; }
std::uint64_t l1_page(std::uint64_t i) { return runtime::kTensixCircularBufferBase + i * kPage; }

const std::vector<runtime::CoreRange> kOneCore{runtime::CoreRange{{0, 0}, {0, 0}}};

TEST(DeviceAllocator, AFreedBuffersMemoryGoesToTheNextThatFits) {
  DeviceAllocator allocator(small_device());
  const BufferHandle a = allocator.create_buffer(dram(2));
  const BufferHandle b = allocator.create_buffer(dram(1));
  EXPECT_EQ(a.address, dram_page(0));
  EXPECT_EQ(b.address, dram_page(2));
  allocator.deallocate_buffer(a);
  const BufferHandle c = allocator.create_buffer(dram(1));  // first fit: a's place, bottom up
  EXPECT_EQ(c.address, dram_page(0));
  EXPECT_NE(c.id, a.id);  // ids are not given again
  const BufferHandle d = allocator.create_buffer(dram(2));  // a's second page alone is too small
  EXPECT_EQ(d.address, dram_page(3));

  const BufferHandle top = allocator.create_buffer(l1(1));
  const BufferHandle below = allocator.create_buffer(l1(2));
  EXPECT_EQ(top.address, l1_page(3));  // top down
  EXPECT_EQ(below.address, l1_page(1));
  allocator.deallocate_buffer(top);
  EXPECT_EQ(allocator.create_buffer(l1(1)).address, l1_page(3));
  EXPECT_EQ(allocator.live_buffer_count(), 5u);
}

TEST(DeviceAllocator, FreedNeighboursMerge) {
  DeviceAllocator allocator(small_device());
  const BufferHandle a = allocator.create_buffer(dram(2));
  const BufferHandle b = allocator.create_buffer(dram(2));
  const BufferHandle c = allocator.create_buffer(dram(2));
  allocator.deallocate_buffer(a);
  allocator.deallocate_buffer(c);  // c merges with the free pages above it
  EXPECT_EQ(allocator.dram().free_block_count(), 2u);
  allocator.deallocate_buffer(b);  // one block again: the bank as new
  EXPECT_EQ(allocator.dram().free_block_count(), 1u);
  EXPECT_EQ(allocator.dram().free_bytes(), kDramPages * kPage);
  EXPECT_EQ(allocator.create_buffer(dram(kDramPages)).address, dram_page(0));
}

// L1 full from the top: the range buffers may use, and its bytes a core (session 41: the range in
// hex alone left a user to subtract).
TEST(DeviceAllocator, L1TooSmallSaysTheBytesACoreHas) {
  DeviceAllocator allocator(small_device());
  allocator.create_buffer(l1(3));
  EXPECT_EQ(refusal<runtime::BufferConfigError>([&] { allocator.create_buffer(l1(2)); }),
            "buffer config: 4096 B per core do not fit in L1: buffers may use 0x20200..0x20a00 (2048 B a core)");
}

TEST(DeviceAllocator, MemoryCutIntoPiecesTooSmallIsRefusedSayingSo) {
  DeviceAllocator allocator(small_device());
  std::vector<BufferHandle> quarters;
  for (int i = 0; i < 4; ++i) quarters.push_back(allocator.create_buffer(l1(1)));
  allocator.deallocate_buffer(quarters[0]);
  allocator.deallocate_buffer(quarters[2]);
  EXPECT_EQ(refusal<runtime::BufferConfigError>([&] { allocator.create_buffer(l1(2)); }),
            "buffer config: 4096 B per core do not fit in L1: buffers may use 0x20200..0x22200, 4096 B free in 2 "
            "blocks, the largest 2048 B");
  EXPECT_EQ(allocator.create_buffer(l1(1)).address, quarters[0].address);  // the highest hole first

  for (int i = 0; i < 4; ++i) allocator.create_buffer(dram(2));
  EXPECT_EQ(refusal<runtime::BufferConfigError>([&] { allocator.create_buffer(dram(1)); }),
            "buffer config: 2048 B per DRAM bank do not fit: 81920 B of 81920 B in use");
}

TEST(DeviceAllocator, TheSameCallsGiveTheSameAddresses) {
  const auto run = [] {
    DeviceAllocator allocator(small_device());
    std::vector<BufferHandle> handles;
    handles.push_back(allocator.create_buffer(dram(3)));
    handles.push_back(allocator.create_buffer(l1(1)));
    handles.push_back(allocator.create_buffer(dram(1)));
    allocator.deallocate_buffer(handles[0]);
    handles.push_back(allocator.create_buffer(l1(2)));
    handles.push_back(allocator.create_buffer(dram(2)));
    allocator.deallocate_buffer(handles[1]);
    handles.push_back(allocator.create_buffer(dram(1)));
    handles.push_back(allocator.create_buffer(l1(1)));
    return handles;
  };
  EXPECT_EQ(run(), run());
}

TEST(DeviceAllocator, UnknownFreedOrAlteredHandlesAreRefused) {
  DeviceAllocator allocator(small_device());
  const BufferHandle a = allocator.create_buffer(dram(1));
  BufferHandle moved = a;
  moved.address += kPage;
  EXPECT_EQ(refusal<std::invalid_argument>([&] { allocator.deallocate_buffer(moved); }),
            "deallocate_buffer: buffer 1 is not as this device created it (at 0x10000 here, 0x10800 in the handle, or "
            "another config)");
  allocator.deallocate_buffer(a);
  EXPECT_EQ(refusal<std::invalid_argument>([&] { allocator.deallocate_buffer(a); }),
            "deallocate_buffer: buffer 1 was freed already (deallocate_buffer)");
  EXPECT_EQ(refusal<std::invalid_argument>([&] { allocator.require_live(BufferHandle{7, 0, dram(1)}, "read_buffer"); }),
            "read_buffer: buffer 7 was not created on this device");
  EXPECT_EQ(refusal<std::invalid_argument>([&] { allocator.require_live(a, "write_buffer"); }),
            "write_buffer: buffer 1 was freed already (deallocate_buffer)");
}

TEST(DeviceAllocator, CircularBuffersFitBelowTheLowestLiveL1Buffer) {
  DeviceAllocator allocator(small_device());
  const BufferHandle top = allocator.create_buffer(l1(1));
  const BufferHandle below = allocator.create_buffer(l1(1));
  runtime::Program program;
  program.circular_buffers.push_back({0, {runtime::CoreRange{{0, 0}, {0, 0}}}, 3, kPage});  // ends at page 3
  EXPECT_EQ(refusal<runtime::WorkloadPlacementError>(
                [&] { allocator.require_circular_buffers_fit("w", 0, program); }),
            "workload 'w' chip 0: CB 0 (3 x 2048 B) ends at 0x21a00, above the L1 buffers at 0x21200");
  allocator.deallocate_buffer(below);
  EXPECT_NO_THROW(allocator.require_circular_buffers_fit("w", 0, program));
  allocator.deallocate_buffer(top);
  program.circular_buffers.front().num_pages = 4;  // the whole of L1 above the CBs' base
  EXPECT_NO_THROW(allocator.require_circular_buffers_fit("w", 0, program));
}

TEST(DeviceAllocator, GlobalSemaphoresTakeL1AmongTheBuffers) {
  DeviceAllocator allocator(small_device());
  const BufferHandle top = allocator.create_buffer(l1(1));
  allocator.create_buffer(l1(1));
  allocator.deallocate_buffer(top);
  // The highest free block that holds it: the top of the freed buffer's place.
  EXPECT_EQ(allocator.create_global_semaphore(kOneCore, runtime::CoreKind::Tensix).address,
            l1_page(4) - runtime::kBufferAlignment);
  // 2016 B left beside it: a page goes to the pages below the live buffer.
  EXPECT_EQ(allocator.create_buffer(l1(1)).address, l1_page(1));
}

TEST(DeviceAllocator, AFreedTensixSemaphoresWordGoesToTheNext) {
  DeviceAllocator allocator(small_device());
  const GlobalSemaphore a = allocator.create_global_semaphore(kOneCore, runtime::CoreKind::Tensix);
  const GlobalSemaphore b = allocator.create_global_semaphore(kOneCore, runtime::CoreKind::Tensix);
  EXPECT_EQ(a.address, l1_page(4) - runtime::kBufferAlignment);
  EXPECT_EQ(b.address, a.address - runtime::kBufferAlignment);
  allocator.deallocate_global_semaphore(a);
  const GlobalSemaphore c = allocator.create_global_semaphore(kOneCore, runtime::CoreKind::Tensix);
  EXPECT_EQ(c.address, a.address);
  EXPECT_NE(c.id, a.id);  // ids are not given again
  allocator.deallocate_global_semaphore(b);
  allocator.deallocate_global_semaphore(c);
  // L1 whole again: a buffer of all of it fits.
  EXPECT_EQ(allocator.live_global_semaphore_count(), 0u);
  EXPECT_EQ(allocator.tensix_l1().free_block_count(), 1u);
  EXPECT_EQ(allocator.create_buffer(l1(kL1Pages)).address, l1_page(0));
}

TEST(DeviceAllocator, TheEriscSemaphoreRegionGivesAFreedSlotToTheNext) {
  DeviceAllocator allocator(small_device());
  const std::uint32_t base = small_device().erisc_l1.global_semaphore_base();
  constexpr std::uint32_t kSlots = runtime::kEriscGlobalSemaphoreBytes / runtime::kProgramSemaphoreStride;
  std::vector<GlobalSemaphore> all;
  for (std::uint32_t i = 0; i < kSlots; ++i) {
    all.push_back(allocator.create_global_semaphore(kOneCore, runtime::CoreKind::Ethernet));
    EXPECT_EQ(all.back().address, base + i * runtime::kProgramSemaphoreStride);  // bottom up, in order
  }
  EXPECT_EQ(refusal<std::invalid_argument>(
                [&] { allocator.create_global_semaphore(kOneCore, runtime::CoreKind::Ethernet); }),
            fmt::format("create_global_semaphore: the ERISC global semaphore region {:#x}..{:#x} is full (32 "
                        "semaphores of 16 B); free one first (deallocate_global_semaphore)",
                        base, base + runtime::kEriscGlobalSemaphoreBytes));
  allocator.deallocate_global_semaphore(all[5]);
  allocator.deallocate_global_semaphore(all[6]);
  EXPECT_EQ(allocator.create_global_semaphore(kOneCore, runtime::CoreKind::Ethernet).address, all[5].address);
  EXPECT_EQ(allocator.create_global_semaphore(kOneCore, runtime::CoreKind::Ethernet).address, all[6].address);
  // The region is apart from the Tensix L1 pool, which none of this touched.
  EXPECT_EQ(allocator.tensix_l1().free_bytes(), kL1Pages * kPage);
}

TEST(DeviceAllocator, UnknownFreedOrAlteredSemaphoresAreRefused) {
  DeviceAllocator allocator(small_device());
  const GlobalSemaphore a = allocator.create_global_semaphore(kOneCore, runtime::CoreKind::Tensix);
  EXPECT_EQ(allocator.require_live(a, "reset_global_semaphore"), runtime::CoreKind::Tensix);
  GlobalSemaphore moved = a;
  moved.address -= runtime::kBufferAlignment;
  EXPECT_EQ(refusal<std::invalid_argument>([&] { allocator.deallocate_global_semaphore(moved); }),
            fmt::format("deallocate_global_semaphore: global semaphore 1 is not as this device created it (at {:#x} "
                        "here, {:#x} in the handle, or other cores)",
                        a.address, moved.address));
  GlobalSemaphore wider = a;
  wider.cores.push_back(runtime::CoreRange{{1, 1}, {1, 1}});
  EXPECT_NE(refusal<std::invalid_argument>([&] { allocator.require_live(wider, "reset_global_semaphore"); }), "");
  EXPECT_EQ(refusal<std::invalid_argument>(
                [&] { allocator.require_live(GlobalSemaphore{7, 0, kOneCore}, "reset_global_semaphore"); }),
            "reset_global_semaphore: global semaphore 7 was not created on this device");
  allocator.deallocate_global_semaphore(a);
  EXPECT_EQ(refusal<std::invalid_argument>([&] { allocator.deallocate_global_semaphore(a); }),
            "deallocate_global_semaphore: global semaphore 1 was freed already (deallocate_global_semaphore)");
  EXPECT_EQ(refusal<std::invalid_argument>([&] { allocator.require_live(a, "reset_global_semaphore"); }),
            "reset_global_semaphore: global semaphore 1 was freed already (deallocate_global_semaphore)");
}

TEST(DeviceAllocator, GlobalSemaphoresAnUnfinishedWorkloadMayUseAreNotFreed) {
  DeviceAllocator allocator(small_device());
  const GlobalSemaphore named = allocator.create_global_semaphore(kOneCore, runtime::CoreKind::Tensix);
  const GlobalSemaphore other = allocator.create_global_semaphore(kOneCore, runtime::CoreKind::Ethernet);
  const BufferHandle buffer = allocator.create_buffer(dram(1));
  runtime::MeshWorkload op;
  op.name = "op";
  op.global_semaphores = {named};
  allocator.hold_named_by({&op, 1});
  EXPECT_EQ(refusal<std::invalid_argument>([&] { allocator.deallocate_global_semaphore(named); }),
            "deallocate_global_semaphore: global semaphore 1 is used by workload 'op', enqueued and not finished; call "
            "finish() first");
  allocator.deallocate_global_semaphore(other);  // not named: free to go
  allocator.workloads_finished();

  runtime::MeshWorkload silent;  // names its buffers but no global semaphores: it may use any
  silent.name = "silent";
  silent.buffers = {buffer};
  allocator.hold_named_by({&silent, 1});
  EXPECT_EQ(refusal<std::invalid_argument>([&] { allocator.deallocate_global_semaphore(named); }),
            "deallocate_global_semaphore: global semaphore 1: workload 'silent' is enqueued and not finished and does "
            "not name the global semaphores it uses (MeshWorkload::global_semaphores), so it may use this one; call "
            "finish() first");
  allocator.workloads_finished();

  // An enqueued host write uses its buffer and no semaphore.
  allocator.hold_buffer_for_host_command(buffer, "enqueue_write_buffer", 0);
  allocator.deallocate_global_semaphore(named);
  allocator.workloads_finished();

  // A workload naming a freed semaphore is refused whole: it holds nothing, not even its buffers.
  op.buffers = {buffer};
  EXPECT_EQ(refusal<std::invalid_argument>([&] { allocator.hold_named_by({&op, 1}); }),
            "workload 'op': global semaphore 1 was freed already (deallocate_global_semaphore)");
  allocator.deallocate_buffer(buffer);
  EXPECT_EQ(allocator.live_global_semaphore_count(), 0u);
}

TEST(DeviceAllocator, BuffersAnUnfinishedWorkloadNamesAreNotFreed) {
  DeviceAllocator allocator(small_device());
  const BufferHandle in = allocator.create_buffer(dram(1));
  const BufferHandle out = allocator.create_buffer(dram(1));
  const BufferHandle other = allocator.create_buffer(dram(1));
  runtime::MeshWorkload op;
  op.name = "op";
  op.buffers = {in, out};
  allocator.hold_named_by({&op, 1});
  EXPECT_EQ(refusal<std::invalid_argument>([&] { allocator.deallocate_buffer(out); }),
            "deallocate_buffer: buffer 2 is used by workload 'op', enqueued and not finished; call finish() first");
  allocator.deallocate_buffer(other);  // not named: free to go
  allocator.workloads_finished();
  allocator.deallocate_buffer(out);

  runtime::MeshWorkload silent;  // names no buffers: it may use any
  silent.name = "silent";
  allocator.hold_named_by({&silent, 1});
  EXPECT_EQ(refusal<std::invalid_argument>([&] { allocator.deallocate_buffer(in); }),
            "deallocate_buffer: buffer 1: workload 'silent' is enqueued and not finished and does not name the buffers "
            "it uses (MeshWorkload::buffers), so it may use this one; call finish() first");
  allocator.workloads_finished();

  EXPECT_EQ(refusal<std::invalid_argument>([&] { allocator.hold_named_by({&op, 1}); }),
            "workload 'op': buffer 2 was freed already (deallocate_buffer)");
  allocator.deallocate_buffer(in);  // the refused workload holds nothing
  EXPECT_EQ(allocator.live_buffer_count(), 0u);
}

}  // namespace
}  // namespace cclmesh::sim::device
