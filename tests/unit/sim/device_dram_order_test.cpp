// DRAM order through the dataflow API on the simulated device (docs/sim_model.md "DRAM order"):
// a kernel writes pages of a DRAM buffer, waits only for noc_async_writes_flushed and reads each
// page back on the same NoC, while other cores keep the bank's DRAM channel busy so that every
// write waits there. Every page must come back as written. Before the fix (session 10) the read
// overtook the queued write and got the old bytes: 1, 3 and 3 of the 8 pages in three of the
// four set-ups below.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "kernels/api/dataflow_api.hpp"
#include "tests/unit/sim/device_test_util.hpp"

namespace cclmesh::sim::device {
namespace {

using namespace testing;

constexpr std::uint32_t kPageBytes = 2048;
constexpr std::uint32_t kPages = 8;
constexpr std::uint32_t kChunk = 256;       // the kernel compares a page in chunks (a small stack)
constexpr std::uint32_t kSource = 0x40000;  // L1 of the kernels
constexpr std::uint32_t kReadBack = 0x50000;
constexpr std::uint32_t kResult = 0x60000;
constexpr std::uint32_t kBusyBytes = 64 * 1024;
constexpr std::uint32_t kBusyCores = 6;

std::uint8_t page_byte(std::uint32_t page, std::uint32_t byte) { return static_cast<std::uint8_t>(page * 31 + byte * 7 + 3); }

// Args: bank, bank offset of page 0, start delay in busy-loop reads. Writes kPages pages, each
// read back behind noc_async_writes_flushed only; the number of wrong pages goes to kResult.
void write_then_read_back() {
  const uint32_t bank = get_arg_val<uint32_t>(0);
  const uint32_t base = get_arg_val<uint32_t>(1);
  const uint8_t noc = my_noc_index();
  // Let the busy cores build the channel's backlog first: a read of our own L1 word per round
  // trip would cost nothing in simulated time, so wait on a NoC read of a far DRAM bank instead.
  for (uint32_t i = 0; i < get_arg_val<uint32_t>(2); ++i) {
    noc_async_read(get_bank_noc_addr(true, 11, base, noc), kReadBack, kPageBytes, noc);
    noc_async_read_barrier(noc);
  }
  uint32_t wrong = 0;
  uint8_t chunk[kChunk];
  for (uint32_t p = 0; p < kPages; ++p) {
    for (uint32_t at = 0; at < kPageBytes; at += kChunk) {
      for (uint32_t b = 0; b < kChunk; ++b) chunk[b] = page_byte(p, at + b);
      l1_write_bytes(kSource + at, chunk, kChunk);
    }
    const uint64_t page = get_bank_noc_addr(true, bank, base + p * kPageBytes, noc);
    noc_async_write(kSource, page, kPageBytes, noc);
    noc_async_writes_flushed(noc);
    noc_async_read(page, kReadBack, kPageBytes, noc);
    noc_async_read_barrier(noc);
    bool same = true;
    for (uint32_t at = 0; at < kPageBytes; at += kChunk) {
      l1_read_bytes(kReadBack + at, chunk, kChunk);
      for (uint32_t b = 0; b < kChunk; ++b) same = same && chunk[b] == page_byte(p, at + b);
    }
    if (!same) ++wrong;
  }
  l1_write_u32(kResult, wrong);
}

// Args: bank, bank offset. One long write into the bank.
void keep_channel_busy() {
  const uint8_t noc = my_noc_index();
  noc_async_write(kSource, get_bank_noc_addr(true, get_arg_val<uint32_t>(0), get_arg_val<uint32_t>(1), noc),
                  kBusyBytes, noc);
  noc_async_write_barrier(noc);
}

TEST(DeviceDramOrder, AKernelReadingBackBehindAFlushedWriteGetsTheWrittenPages) {
  SimMeshDevice device(topo::build_n300());
  device.register_kernel("write_then_read_back", &write_then_read_back, false);
  device.register_kernel("keep_channel_busy", &keep_channel_busy, false);
  // Wormhole banks 0 and 1 are channel 0 (REFERENCE 3.8 caveat), through two of its endpoints.
  const std::uint64_t bank_bytes = (kPages + kBusyCores) * std::uint64_t{kBusyBytes};
  const runtime::BufferHandle buffer =
      device.create_buffer(dram_buffer(bank_bytes * device.core_map(0).dram_bank_count(), kPageBytes));
  const auto base = static_cast<std::uint32_t>(buffer.address);
  for (int busy_noc : {0, 1}) {
    for (std::uint32_t start_reads : {0u, 4u}) {
      SCOPED_TRACE("busy cores on NoC" + std::to_string(busy_noc) + ", start after " + std::to_string(start_reads) +
                   " reads");
      runtime::Program program;
      runtime::KernelSpec tester;
      tester.kernel = "write_then_read_back";
      tester.cores = {{{0, 0}, {0, 0}}};
      tester.noc = runtime::NocIndex::Noc0;
      tester.common_runtime_args = {0, base, start_reads};
      program.kernels.push_back(tester);
      for (std::uint32_t i = 0; i < kBusyCores; ++i) {
        runtime::KernelSpec busy;
        busy.kernel = "keep_channel_busy";
        const runtime::CoreCoord core{1 + i, 1};
        busy.cores = {{core, core}};
        // Both banks of channel 0, on both NoCs (three of its NIUs at 24 B/c against the
        // channel's 43), away from the tester's pages.
        busy.noc = (busy_noc + i) % 2 == 0 ? runtime::NocIndex::Noc0 : runtime::NocIndex::Noc1;
        busy.common_runtime_args = {i % 2, base + (kPages + i) * kBusyBytes};
        program.kernels.push_back(busy);
      }
      runtime::MeshWorkload workload;
      workload.name = "dram_order";
      workload.programs[0] = std::move(program);
      device.write_buffer(0, buffer, std::vector<std::byte>(buffer.config.size_bytes, std::byte{0xee}));
      device.enqueue_workload(workload);
      device.finish();
      const runtime::Noc0Coord tester_core = device.core_map(0).tensix_noc0({0, 0});
      const MemoryRegion& l1 =
          device.system().chip(0).l1({static_cast<int>(tester_core.x), static_cast<int>(tester_core.y)});
      EXPECT_EQ(l1.read_u32(kResult), 0u) << "pages read back wrong";
      // And the pages are in DRAM as written.
      const std::vector<std::byte> dram = read_back(device, 0, buffer);
      const std::uint32_t banks = device.core_map(0).dram_bank_count();
      for (std::uint32_t p = 0; p < kPages; ++p) {
        // Bank 0's pages of an interleaved buffer are pages 0, banks, 2 x banks, ...
        const std::size_t at = static_cast<std::size_t>(p) * banks * kPageBytes;
        for (std::uint32_t b = 0; b < kPageBytes; b += 97) {
          ASSERT_EQ(static_cast<std::uint8_t>(dram[at + b]), page_byte(p, b)) << "page " << p << " byte " << b;
        }
      }
    }
  }
}

}  // namespace
}  // namespace cclmesh::sim::device
