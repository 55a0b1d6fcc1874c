// The NoC access check (sim/device/noc_access_check.hpp): a read or write through a raw address
// that lands in buffer space (a DRAM bank, Tensix L1 above the CBs) must lie inside one live
// buffer on that bank or core, or the issuing kernel faults naming the target, the range and the
// nearest buffer. Before session 45 each of the mistakes below completed: the write landed in the
// next buffer (or in free memory) and the read returned whatever was there.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/api/dataflow_api.hpp"
#include "kernels/host/interpreter_stream.hpp"
#include "kernels/host/micro_ops.hpp"
#include "runtime/ccl/common/ccl_common.hpp"
#include "tests/unit/sim/device_error_util.hpp"
#include "tests/unit/sim/device_test_util.hpp"

namespace cclmesh::sim::device {
namespace {

using namespace testing;
using ::testing::HasSubstr;
using runtime::DeviceError;
namespace ccl = runtime::ccl;

constexpr std::uint32_t kPageBytes = 2048;
constexpr std::uint32_t kLocal = 0x40000;  // the kernel's own L1, below the buffers

// Args: write (1) or read (0), DRAM (1) or L1 (0), bank, bank address, bytes. One NoC transfer
// between kLocal and that bank address, as a hand-written kernel that computed it would issue it.
void raw_access() {
  const uint8_t noc = my_noc_index();
  const uint64_t target =
      get_bank_noc_addr(get_arg_val<uint32_t>(1) != 0, get_arg_val<uint32_t>(2), get_arg_val<uint32_t>(3), noc);
  if (get_arg_val<uint32_t>(0) != 0) {
    noc_async_write(kLocal, target, get_arg_val<uint32_t>(4), noc);
    noc_async_write_barrier(noc);
  } else {
    noc_async_read(target, kLocal, get_arg_val<uint32_t>(4), noc);
    noc_async_read_barrier(noc);
  }
}

struct Access {
  bool write = true;
  std::uint32_t bank = 0;
  std::uint64_t address = 0;
  std::uint32_t bytes = 0;
  bool dram = true;  // else the bank is an L1 bank (a Tensix core)
};

runtime::MeshWorkload raw_access_workload(const Access& a) {
  runtime::Program program;
  runtime::KernelSpec spec;
  spec.kernel = "raw_access";
  spec.cores = {{{0, 0}, {0, 0}}};
  spec.noc = runtime::NocIndex::Noc0;
  spec.common_runtime_args = {a.write ? 1u : 0u, a.dram ? 1u : 0u, a.bank, static_cast<std::uint32_t>(a.address), a.bytes};
  program.kernels.push_back(spec);
  runtime::MeshWorkload workload;
  workload.name = "raw_access";
  workload.programs[0] = std::move(program);
  return workload;
}

// An n150 (12 DRAM banks) with two DRAM buffers: #1 one page in every bank, #2 13 pages (two in
// bank 0, one in each other bank).
class NocAccessCheckTest : public ::testing::Test {
 protected:
  NocAccessCheckTest() {
    device_.register_kernel("raw_access", &raw_access, false);
    one_page_each_ = device_.create_buffer(dram_buffer(12 * kPageBytes, kPageBytes));
    thirteen_pages_ = device_.create_buffer(dram_buffer(13 * kPageBytes, kPageBytes));
  }

  std::string fault_of(const Access& a) {
    device_.enqueue_workload(raw_access_workload(a));
    return expect_device_error([&] { device_.finish(); }, DeviceError::Kind::Fault);
  }

  SimMeshDevice device_{topo::build_n150()};
  runtime::BufferHandle one_page_each_;
  runtime::BufferHandle thirteen_pages_;
};

TEST_F(NocAccessCheckTest, WritesExactlyFillingABufferOnItsBankAreFine) {
  device_.enqueue_workload(raw_access_workload({true, 3, one_page_each_.address, kPageBytes}));
  device_.enqueue_workload(raw_access_workload({true, 0, thirteen_pages_.address, 2 * kPageBytes}));
  device_.enqueue_workload(raw_access_workload({false, 11, thirteen_pages_.address, kPageBytes}));
  EXPECT_NO_THROW(device_.finish());
}

TEST_F(NocAccessCheckTest, AWritePastABuffersEndFaultsTheWriterNamingTheBuffer) {
  const std::uint64_t a = one_page_each_.address;
  const std::string text = fault_of({true, 3, a, 2 * kPageBytes});
  EXPECT_THAT(text, HasSubstr("chip 0 core (1,2) [tensix (0,0) dm0] raw_access: noc_async_write of 4096 B outside the "
                              "buffers at chip 0 DRAM bank 3"))
      << text;
  EXPECT_THAT(text, HasSubstr(fmt::format("{:#x}..{:#x} runs 0x800 past the end of buffer #1 ({:#x}..{:#x}, 2048 B, "
                                          "DRAM interleaved)",
                                          a, a + 2 * kPageBytes, a, a + kPageBytes)))
      << text;
}

// Bank 1 holds one page of the 13-page buffer, bank 0 two: two pages fit only in bank 0.
TEST_F(NocAccessCheckTest, AnInterleavedBufferIsCheckedWithThePagesOfEachBank) {
  const std::uint64_t b = thirteen_pages_.address;
  const std::string text = fault_of({true, 1, b, 2 * kPageBytes});
  EXPECT_THAT(text, HasSubstr(fmt::format("runs 0x800 past the end of buffer #2 ({:#x}..{:#x} here, 2048 B, DRAM "
                                          "interleaved)",
                                          b, b + kPageBytes)))
      << text;
}

TEST_F(NocAccessCheckTest, AReadFromUnallocatedMemoryFaults) {
  const std::uint64_t b = thirteen_pages_.address;
  const std::uint64_t free = b + 4 * kPageBytes;
  const std::string text = fault_of({false, 0, free, 64});
  EXPECT_THAT(text, HasSubstr("raw_access: noc_async_read of 64 B outside the buffers at chip 0 DRAM bank 0")) << text;
  EXPECT_THAT(text, HasSubstr(fmt::format("{:#x}..{:#x} lies in unallocated memory (above buffer #2 ({:#x}..{:#x}, "
                                          "4096 B, DRAM interleaved))",
                                          free, free + 64, b, b + 2 * kPageBytes)))
      << text;
}

// The check remembers, per NoC node, the spans that allowed its last accesses (session 45, for
// speed); a span allows no more than the look-up did, and holds only until the next allocation
// or free. Each test below passes an access on a node, then issues one there that the span must
// not let through.

// Bank 1 holds one page of the 13-page buffer: one page there is fine, two are not.
TEST_F(NocAccessCheckTest, AnAllowedAccessLetsThroughNoMoreThanItsBankHolds) {
  const std::uint64_t b = thirteen_pages_.address;
  device_.enqueue_workload(raw_access_workload({true, 1, b, kPageBytes}));
  device_.finish();
  const std::string text = fault_of({true, 1, b, 2 * kPageBytes});
  EXPECT_THAT(text, HasSubstr(fmt::format("{:#x}..{:#x} runs 0x800 past the end of buffer #2", b, b + 2 * kPageBytes)))
      << text;
}

TEST_F(NocAccessCheckTest, AnAccessAllowedBeforeItsBufferIsFreedFaultsAfter) {
  const std::uint64_t a = one_page_each_.address;
  device_.enqueue_workload(raw_access_workload({true, 3, a, kPageBytes}));
  device_.finish();
  device_.deallocate_buffer(one_page_each_);
  const std::string text = fault_of({true, 3, a, kPageBytes});
  EXPECT_THAT(text, HasSubstr(fmt::format("{:#x}..{:#x} lies in unallocated memory", a, a + kPageBytes))) << text;
}

// With no L1 buffer, a core's whole L1 is below buffer space; once one is allocated, a write
// that starts below it and runs into it faults.
TEST_F(NocAccessCheckTest, AnL1WriteAllowedBelowBufferSpaceFaultsOnceABufferIsThere) {
  device_.enqueue_workload(raw_access_workload({true, 0, 0x50000, 64, false}));
  device_.finish();
  const runtime::CoreCoord grid = device_.worker_grid();
  const runtime::BufferHandle l1 = device_.create_buffer(
      runtime::BufferConfig{runtime::BufferType::L1, std::uint64_t{grid.x} * grid.y * kPageBytes, kPageBytes,
                            runtime::TensorMemoryLayout::Interleaved, std::nullopt});
  const std::string text = fault_of({true, 0, l1.address - 32, 64, false});
  EXPECT_THAT(text, HasSubstr(fmt::format("{:#x}..{:#x} starts in unallocated memory and runs into buffer #3",
                                          l1.address - 32, l1.address + 32)))
      << text;
}

// A command stream's burst reads an L1 buffer's page on core (1,0) from a bank base 0x400 too
// high: the interpreter faults naming its stream and command.
TEST(NocAccessCheckBurst, ABurstWithAWrongBankBaseFaultsNamingTheCommand) {
  for (std::uint32_t skew : {0u, 0x400u}) {
    SCOPED_TRACE(fmt::format("bank base skew {:#x}", skew));
    SimMeshDevice device(topo::build_n150());
    const runtime::CoreCoord grid = device.worker_grid();
    const runtime::BufferHandle buffer = device.create_buffer(runtime::BufferConfig{
        runtime::BufferType::L1, std::uint64_t{grid.x} * grid.y * kPageBytes, kPageBytes,
        runtime::TensorMemoryLayout::Interleaved, std::nullopt});
    const runtime::Noc0Coord target = device.core_map(0).tensix_noc0({1, 0});
    const cmd::NocTransferBurstArg burst{static_cast<std::uint32_t>(buffer.address) + skew,
                                         {{cmd::NocTransfer{0, target.x, target.y, kPageBytes}}}};
    kargs::InterpreterSpec spec;
    spec.packet_header_cb_id = ccl::kPacketHeaderCbId;
    spec.packet_size_in_pages = 1;
    spec.streams = {kargs::interpreter_stream(
        std::nullopt, std::vector<cmd::Command>{cmd::noc_read_burst_to_cb(burst, ccl::kDataCbId)})};
    device.enqueue_workload(interpreter_workload("burst", 0, {0, 0}, spec, kPageBytes, 2, {}));
    if (skew == 0) {
      EXPECT_NO_THROW(device.finish());
      continue;
    }
    const std::string text = expect_device_error([&] { device.finish(); }, DeviceError::Kind::Fault);
    const std::uint64_t from = buffer.address + skew;
    EXPECT_THAT(text, HasSubstr(fmt::format("ccl_interpreter: noc_async_read of 2048 B outside the buffers at chip 0 "
                                            "core ({},{}) [tensix (1,0)] L1: {:#x}..{:#x} runs 0x400 past the end of "
                                            "buffer #1 ({:#x}..{:#x}, 2048 B, L1 interleaved)",
                                            target.x, target.y, from, from + kPageBytes, buffer.address,
                                            buffer.address + kPageBytes)))
        << text;
    EXPECT_THAT(text, HasSubstr("stream 0 #0 NOC_READ_BURST")) << text;
  }
}

}  // namespace
}  // namespace cclmesh::sim::device
