// The kernels run end to end on the fake backend (fake_device.hpp): zero-time transfers, one
// kernel running at a time, deterministic. What is checked is behaviour: bytes land where the
// commands say, semaphores end at the right values, malformed input faults with the right
// code and command, a ring without deadlock avoidance deadlocks and with it does not.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "kernels/api/fabric_packet_header.hpp"
#include "kernels/api/kernel_fault.hpp"
#include "kernels/api/legacy_edm_interface.hpp"
#include "kernels/host/command_encoder.hpp"
#include "kernels/host/kernel_args_builder.hpp"
#include "kernels/host/micro_ops.hpp"
#include "kernels/kernel_args.hpp"
#include "kernels/kernel_registry.hpp"
#include "kernels/kernels.hpp"
#include "kernels/reduce/bfp8_math.hpp"
#include "kernels/reduce/reduce_math.hpp"
#include "tests/unit/kernels/fake_device.hpp"

namespace {

using namespace cclmesh;
using fake::Core;
using fake::World;

constexpr uint32_t kWorkerL1 = 256 * 1024;
constexpr uint32_t kEthL1 = 256 * 1024;
constexpr uint32_t kDramBanks = 4;
constexpr uint32_t kDramBytes = 1 << 20;
constexpr uint32_t kHeaderCb = 31;
constexpr uint32_t kHeaderCbBase = 0x800;  // 8 x 32 B of packet-header slots

api::TensorSlice whole(api::Shape4D shape) { return api::TensorSlice{shape, shape, {0, 0, 0, 0}, shape, {0, 0, 0, 0}}; }

uint8_t pattern(uint32_t chip, uint32_t page, uint32_t byte) {
  return static_cast<uint8_t>(chip * 71 + page * 13 + byte * 7 + 1);
}

void add_cb(Core& c, uint32_t id, uint32_t base, uint32_t page_size, uint32_t num_pages) {
  c.cbs[id] = fake::CircularBuffer{base, page_size, num_pages, 0, 0};
}

// A consumer on `core` that copies each block of CB 2 (the reduce kernel's output) to the sink
// core (2, 1) at 0x10000, block after block, so an out CB smaller than the output drains.
void launch_block_sink(World& w, Core& core, uint32_t blocks, uint32_t pages_per_block, uint32_t page) {
  w.launch("consumer", core,
           [=] {
             for (uint32_t blk = 0; blk < blocks; ++blk) {
               cb_wait_front(2, pages_per_block);
               noc_async_write(get_read_ptr(2), get_noc_addr(2, 1, 0x10000 + blk * pages_per_block * page),
                               pages_per_block * page);
               cb_pop_front(2, pages_per_block);
             }
           },
           {}, {});
}

void add_header_cb(Core& c) { add_cb(c, kHeaderCb, kHeaderCbBase, api::kPacketHeaderSizeBytes, 8); }

// Interleaved DRAM tensor helpers: page i at bank i mod B, offset base + (i div B) * page.
void write_dram_page(World& w, uint32_t chip, uint32_t base, uint32_t page_size, uint32_t page, const uint8_t* data) {
  w.core(chip, fake::kDramX, page % kDramBanks).write(base + (page / kDramBanks) * page_size, data, page_size);
}
std::vector<uint8_t> read_dram_page(World& w, uint32_t chip, uint32_t base, uint32_t page_size, uint32_t page) {
  std::vector<uint8_t> out(page_size);
  w.core(chip, fake::kDramX, page % kDramBanks).read(base + (page / kDramBanks) * page_size, out.data(), page_size);
  return out;
}
void fill_input(World& w, uint32_t chip, uint32_t base, uint32_t page_size, uint32_t pages, uint32_t tag) {
  std::vector<uint8_t> data(page_size);
  for (uint32_t p = 0; p < pages; ++p) {
    for (uint32_t b = 0; b < page_size; ++b) {
      data[b] = pattern(tag, p, b);
    }
    write_dram_page(w, chip, base, page_size, p, data.data());
  }
}
bool page_matches(const std::vector<uint8_t>& got, uint32_t tag, uint32_t page) {
  for (uint32_t b = 0; b < got.size(); ++b) {
    if (got[b] != pattern(tag, page, b)) {
      return false;
    }
  }
  return true;
}

kargs::InterleavedTensorArgs dram_tensor(uint32_t address, uint32_t page_size) {
  return kargs::InterleavedTensorArgs{address, page_size, api::BufferType::DRAM, kDramBanks, page_size};
}

void launch_interpreter(World& w, Core& core, const kargs::InterpreterSpec& spec, uint8_t noc = 0) {
  const kargs::KernelArgs args = kargs::build_interpreter_args(spec);
  fake::Kernel& k = w.launch("ccl_interpreter", core, &kernel_main_ccl_interpreter, args.compile_time, args.runtime);
  k.noc = noc;
}

std::string describe(const fake::RunResult& r) {
  std::string s = r.report;
  for (const auto* k : r.faulted) {
    s += k->name + " faulted: " +
         kargs::describe_kernel_fault(k->name, k->runtime_args, k->fault->code, k->fault->command_index,
                                      k->fault->word_offset) +
         "\n";
  }
  for (const auto* k : r.errored) {
    s += k->name + " error: " + k->error + "\n";
  }
  return s;
}

// =============================================================================================
// Interpreter on one chip
// =============================================================================================

TEST(KernelsE2E, RegistryNamesEveryKernel) {
  EXPECT_EQ(kernels::find_kernel("ccl_interpreter"), &kernel_main_ccl_interpreter);
  EXPECT_EQ(kernels::find_kernel("fabric_router"), &kernel_main_fabric_router);
  EXPECT_EQ(kernels::find_kernel("legacy_edm"), &kernel_main_legacy_edm);
  EXPECT_EQ(kernels::find_kernel("reduce"), &kernel_main_reduce);
  EXPECT_EQ(kernels::find_kernel("nope"), nullptr);
  EXPECT_EQ(kernels::kernel_names().size(), kernels::registered_kernels().size());
  EXPECT_TRUE(kernels::find_kernel_info("fabric_router")->runs_on_ethernet_core);
}

TEST(KernelsE2E, InterpreterCopiesDramInterleavedToL1Sharded) {
  World w;
  w.set_dram_banks(kDramBanks, kDramBytes, 1);
  Core& worker = w.add_core(0, 1, 1, kWorkerL1);
  Core& shard0 = w.add_core(0, 2, 1, kWorkerL1);
  Core& shard1 = w.add_core(0, 3, 1, kWorkerL1);
  constexpr uint32_t kPage = 64;
  const api::Shape4D shape{1, 1, 2, 8};
  fill_input(w, 0, 0x1000, kPage, 16, 0);
  add_cb(worker, 0, 0x4000, kPage, 4);
  add_header_cb(worker);

  kargs::InterpreterSpec spec;
  spec.packet_header_cb_id = kHeaderCb;
  spec.packet_size_in_pages = 2;
  kargs::InterpreterStreamSpec reader;
  reader.tensor = dram_tensor(0x1000, kPage);
  reader.commands = cmd::encode_command(cmd::read_tensor_slice_to_cb(whole(shape), 0));
  reader.num_commands = 1;
  kargs::InterpreterStreamSpec writer;
  kargs::ShardedTensorArgs out;
  out.address = 0x8000;
  out.page_size_bytes = kPage;
  out.layout = api::TensorMemoryLayout::HEIGHT_SHARDED;
  out.page_stride_bytes = kPage;
  out.pages_per_tensor_row = 8;
  out.pages_per_shard_width = 8;
  out.rows_per_shard_height = 1;
  out.cores = {{2, 1}, {3, 1}};
  writer.tensor = out;
  writer.commands = cmd::encode_command(cmd::local_write_cb_to_tensor_slice(whole(shape), 0));
  writer.num_commands = 1;
  spec.streams = {reader, writer};
  launch_interpreter(w, worker, spec);

  const fake::RunResult r = w.run();
  ASSERT_TRUE(r.ok()) << describe(r);
  for (uint32_t p = 0; p < 16; ++p) {
    std::vector<uint8_t> got(kPage);
    (p < 8 ? shard0 : shard1).read(0x8000 + (p % 8) * kPage, got.data(), kPage);
    EXPECT_TRUE(page_matches(got, 0, p)) << "page " << p;
  }
  EXPECT_EQ(worker.cbs[0].received, 16u);  // pages, pushed and popped in packets of 2
  EXPECT_EQ(worker.cbs[0].acked, 16u);
}

TEST(KernelsE2E, InterpreterMovesASubSliceWithAPartialLastPacket) {
  World w;
  w.set_dram_banks(kDramBanks, kDramBytes, 1);
  Core& worker = w.add_core(0, 1, 1, kWorkerL1);
  constexpr uint32_t kPage = 32;
  const api::Shape4D shape{1, 2, 3, 4};
  fill_input(w, 0, 0x1000, kPage, 24, 3);
  add_header_cb(worker);
  // Slice: z = 1, y = 1..2, x = 1..3 (6 pages); packets of 4 pages: one full, one partial.
  const api::TensorSlice slice{shape, {1, 1, 2, 3}, {0, 1, 1, 1}, {1, 1, 2, 3}, {0, 0, 0, 0}};
  kargs::InterpreterSpec spec;
  spec.packet_header_cb_id = kHeaderCb;
  spec.packet_size_in_pages = 4;
  add_cb(worker, 0, 0x4000, kPage, 8);
  kargs::InterpreterStreamSpec reader{dram_tensor(0x1000, kPage),
                                      cmd::encode_command(cmd::read_tensor_slice_to_cb(slice, 0)), 1};
  kargs::InterpreterStreamSpec writer{dram_tensor(0x20000, kPage),
                                      cmd::encode_command(cmd::local_write_cb_to_tensor_slice(slice, 0)), 1};
  spec.streams = {reader, writer};
  launch_interpreter(w, worker, spec);
  const fake::RunResult r = w.run();
  ASSERT_TRUE(r.ok()) << describe(r);
  for (uint32_t p = 0; p < 24; ++p) {
    const uint32_t z = p / 12;
    const uint32_t y = (p / 4) % 3;
    const uint32_t x = p % 4;
    const bool in_slice = z == 1 && y >= 1 && x >= 1;
    const auto got = read_dram_page(w, 0, 0x20000, kPage, p);
    EXPECT_EQ(page_matches(got, 3, p), in_slice) << "page " << p;
  }
  EXPECT_EQ(worker.cbs[0].received, 8u);  // two whole packets pushed, even the partial one
}

TEST(KernelsE2E, InterpreterSemaphoreCommandsAndBursts) {
  World w;
  Core& a = w.add_core(0, 1, 1, kWorkerL1);
  Core& b = w.add_core(0, 2, 1, kWorkerL1);
  Core& src0 = w.add_core(0, 3, 1, kWorkerL1);
  Core& src1 = w.add_core(0, 4, 1, kWorkerL1);
  Core& dst = w.add_core(0, 5, 1, kWorkerL1);
  for (Core* c : {&a, &b}) {
    add_header_cb(*c);
  }
  add_cb(b, 1, 0x4000, 1024, 4);
  std::vector<uint8_t> bytes(600);
  for (uint32_t i = 0; i < bytes.size(); ++i) {
    bytes[i] = static_cast<uint8_t>(i * 3 + 5);
  }
  src0.write(0x6000, bytes.data(), 400);
  src1.write(0x6100, bytes.data() + 400, 200);

  // Core a: bump b's semaphore 0 by 5, write 0x2A at b:0x3000, then wait for its own
  // semaphore 1 >= 1 (b answers), then reset it.
  const std::vector<cmd::Command> a_cmds{cmd::local_chip_noc_semaphore_inc(2, 1, cmd::SemaphoreId{0}, 5),
                                         cmd::inline_write(0x3000, 0x2A, 2, 1, cmd::LocalOnly{}),
                                         cmd::local_semaphore_wait(cmd::SemaphoreId{1}, 1),
                                         cmd::local_core_semaphore_set(cmd::SemaphoreId{1}, 0)};
  kargs::InterpreterSpec sa;
  sa.packet_header_cb_id = kHeaderCb;
  sa.semaphore_ids = {0, 1};
  sa.streams = {kargs::InterpreterStreamSpec{std::nullopt, cmd::encode_stream(a_cmds), 4}};
  launch_interpreter(w, a, sa);

  // Core b, stream 0: wait for 5, gather two transfers into one CB packet, then tell a.
  // Stream 1: write the packet to dst in two transfers (groups of one), the last fused with
  // +3 on dst's semaphore 2.
  const cmd::NocTransferBurstArg gather{0x6000, {{cmd::NocTransfer{0, 3, 1, 400}, cmd::NocTransfer{0x100, 4, 1, 200}}}};
  const cmd::NocTransferBurstArg scatter{0x7000, {{cmd::NocTransfer{0, 5, 1, 600}}}};
  const std::vector<cmd::Command> b0{cmd::local_semaphore_wait(cmd::SemaphoreId{0}, 5),
                                     cmd::noc_read_burst_to_cb(gather, 1),
                                     cmd::local_chip_noc_semaphore_inc(1, 1, cmd::SemaphoreId{1}, 1)};
  const std::vector<cmd::Command> b1{
      cmd::noc_write_burst_and_semaphore_inc(scatter, 1, cmd::SemaphoreId{2}, 3, 5, 1, cmd::LocalOnly{})};
  kargs::InterpreterSpec sb;
  sb.packet_header_cb_id = kHeaderCb;
  sb.semaphore_ids = {0, 1, 2};
  sb.streams = {kargs::InterpreterStreamSpec{std::nullopt, cmd::encode_stream(b0), 3},
                kargs::InterpreterStreamSpec{std::nullopt, cmd::encode_stream(b1), 1}};
  launch_interpreter(w, b, sb);

  const fake::RunResult r = w.run();
  ASSERT_TRUE(r.ok()) << describe(r);
  EXPECT_EQ(b.read_u32(fake::semaphore_address(0)), 5u);  // wait-min never resets
  EXPECT_EQ(b.read_u32(0x3000), 0x2Au);
  EXPECT_EQ(a.read_u32(fake::semaphore_address(1)), 0u);  // set back to 0
  EXPECT_EQ(dst.read_u32(fake::semaphore_address(2)), 3u);
  std::vector<uint8_t> got(600);
  dst.read(0x7000, got.data(), 600);
  EXPECT_EQ(got, bytes);
}

struct FaultCase {
  const char* name;
  std::function<std::vector<uint32_t>()> stream;
  uint32_t num_commands;
  uint32_t code;
  uint32_t command_index;
};

TEST(KernelsE2E, MalformedStreamsFaultWithCodeAndCommand) {
  const api::Shape4D shape{1, 1, 1, 4};
  const std::vector<FaultCase> cases{
      {"unknown semaphore",
       [] {
         return cmd::encode_stream(std::vector<cmd::Command>{cmd::local_core_semaphore_inc(cmd::SemaphoreId{0}, 1),
                                                             cmd::local_semaphore_wait(cmd::SemaphoreId{6}, 1)});
       },
       2, api::fault_code(api::KernelFaultCode::UNKNOWN_SEMAPHORE), 1},
      {"bad opcode",
       [] {
         std::vector<uint32_t> s = cmd::encode_command(cmd::local_core_semaphore_inc(cmd::SemaphoreId{0}, 1));
         s.push_back(0);  // an ILLEGAL header word
         return s;
       },
       2, api::fault_code(api::DecodeStatus::ILLEGAL_OPCODE), 1},
      {"slice outside tensor",
       [shape] {
         std::vector<uint32_t> s = cmd::encode_command(cmd::read_tensor_slice_to_cb(whole(shape), 0));
         // The full slice spec is the last argument: its tensor shape's x is the 4th payload
         // word; shrink the tensor under the slice.
         s[s.size() - 17 + 3] = 2;
         return s;
       },
       1, api::fault_code(api::SliceCheck::SLICE_OUTSIDE_TENSOR), 0},
      {"fabric write without a connection",
       [shape] {
         return cmd::encode_command(cmd::fabric_write_cb_to_tensor_slice(whole(shape), 0, cmd::ChipUnicast{1, true}));
       },
       1, api::fault_code(api::KernelFaultCode::NO_FABRIC_CONNECTION), 0},
      {"more commands than words",
       [] { return cmd::encode_command(cmd::local_core_semaphore_inc(cmd::SemaphoreId{0}, 1)); }, 2,
       api::fault_code(api::DecodeStatus::TRUNCATED), 1},
  };
  for (const FaultCase& c : cases) {
    SCOPED_TRACE(c.name);
    World w;
    w.set_dram_banks(kDramBanks, kDramBytes, 1);
    Core& worker = w.add_core(0, 1, 1, kWorkerL1);
    add_header_cb(worker);
    add_cb(worker, 0, 0x4000, 64, 4);
    kargs::InterpreterSpec spec;
    spec.packet_header_cb_id = kHeaderCb;
    spec.semaphore_ids = {0};
    spec.streams = {kargs::InterpreterStreamSpec{dram_tensor(0x1000, 64), c.stream(), c.num_commands}};
    launch_interpreter(w, worker, spec);
    const fake::RunResult r = w.run();
    ASSERT_EQ(r.faulted.size(), 1u) << describe(r);
    const fake::Kernel& k = *r.faulted[0];
    EXPECT_EQ(k.fault->code, c.code) << api::kernel_fault_name(k.fault->code);
    EXPECT_EQ(k.fault->command_index, c.command_index);
    const std::string text = kargs::describe_kernel_fault(k.name, k.runtime_args, k.fault->code,
                                                          k.fault->command_index, k.fault->word_offset);
    EXPECT_NE(text.find("#" + std::to_string(c.command_index)), std::string::npos) << text;
  }
}

// =============================================================================================
// Fabric: routers on a line or a ring of chips, interpreters as workers
// =============================================================================================

constexpr uint32_t kFwdX = 9;  // forward router's ethernet core on every chip
constexpr uint32_t kBwdX = 1;  // backward router's
constexpr uint32_t kEthY = 0;
constexpr uint32_t kRouterBase = 0x1000;
// Worker semaphores of the forward and backward connections.
constexpr uint32_t kFwdSems[3] = {5, 6, 7};
constexpr uint32_t kBwdSems[3] = {8, 9, 10};

struct Fabric {
  World w;
  uint32_t num_chips;
  bool ring;
  kernels::FabricRouterConfig base{};

  Fabric(uint32_t n, bool is_ring, uint32_t payload, uint32_t sender_slots, uint32_t receiver_slots, bool bubble)
      : num_chips(n), ring(is_ring) {
    base = kernels::FabricRouterConfig{kRouterBase,
                                       payload,
                                       {sender_slots, sender_slots},
                                       receiver_slots,
                                       false,
                                       is_ring ? kernels::fabric_router::kTopologyRing : kernels::fabric_router::kTopologyLine,
                                       bubble,
                                       true,
                                       1000,
                                       false,
                                       0,
                                       0,
                                       kernels::default_receiver_packets_in_flight(receiver_slots)};
    w.set_dram_banks(kDramBanks, kDramBytes, n);
    for (uint32_t c = 0; c < n; ++c) {
      if (has_forward(c)) {
        w.add_core(c, kFwdX, kEthY, kEthL1, true);
      }
      if (has_backward(c)) {
        w.add_core(c, kBwdX, kEthY, kEthL1, true);
      }
    }
    for (uint32_t c = 0; c < n; ++c) {
      if (has_forward(c)) {
        w.connect_eth(w.core(c, kFwdX, kEthY), w.core((c + 1) % n, kBwdX, kEthY));
      }
    }
  }

  bool has_forward(uint32_t chip) const { return ring || chip + 1 < num_chips; }
  bool has_backward(uint32_t chip) const { return ring || chip > 0; }

  void launch_routers() {
    for (uint32_t c = 0; c < num_chips; ++c) {
      for (bool forward : {true, false}) {
        if (forward ? !has_forward(c) : !has_backward(c)) {
          continue;
        }
        kernels::FabricRouterConfig cfg = base;
        const uint32_t peer = forward ? (c + 1) % num_chips : (c + num_chips - 1) % num_chips;
        cfg.is_handshake_master = c < peer;
        cfg.has_downstream = forward ? has_backward(c) : has_forward(c);
        cfg.downstream_noc_x = forward ? kBwdX : kFwdX;
        cfg.downstream_noc_y = kEthY;
        const kargs::KernelArgs args = kargs::build_fabric_router_args(cfg);
        w.launch(forward ? "fabric_router(fwd)" : "fabric_router(bwd)", w.core(c, forward ? kFwdX : kBwdX, kEthY),
                 &kernel_main_fabric_router, args.compile_time, {}, true);
      }
    }
  }

  void terminate_routers(api::TerminationSignal signal = api::TerminationSignal::GRACEFULLY_TERMINATE) {
    const auto layout = kernels::make_fabric_router_layout(base);
    for (uint32_t c = 0; c < num_chips; ++c) {
      for (uint32_t x : {kFwdX, kBwdX}) {
        if (Core* core = w.find_core(c, x, kEthY)) {
          core->write_u32(layout.termination_signal, static_cast<uint32_t>(signal));
        }
      }
    }
  }

  // Every router's counters, for failure messages.
  std::string state() {
    const auto l = kernels::make_fabric_router_layout(base);
    std::string out;
    for (uint32_t c = 0; c < num_chips; ++c) {
      for (uint32_t x : {kFwdX, kBwdX}) {
        Core* core = w.find_core(c, x, kEthY);
        if (core == nullptr) {
          continue;
        }
        const auto rd = [&](uint32_t a) { return std::to_string(core->read_u32(a)); };
        out += "chip " + std::to_string(c) + (x == kFwdX ? " fwd" : " bwd") + ": written " +
               rd(l.sender[0].packets_written) + "/" + rd(l.sender[1].packets_written) + " freed " +
               rd(l.sender[0].packets_freed) + "/" + rd(l.sender[1].packets_freed) + " acks in " + rd(l.ack_mailbox) +
               "," + rd(l.ack_mailbox + 4) + "," + rd(l.ack_mailbox + 8) + "," + rd(l.ack_mailbox + 12) +
               " receiver syncs";
        for (uint32_t slot = 0; slot < l.receiver_slots; ++slot) {
          out += " " + rd(l.receiver_buffer_base + slot * l.slot_size_bytes + l.sync_offset_in_slot);
        }
        out += "\n";
      }
    }
    return out;
  }

  uint32_t router_status(uint32_t chip, uint32_t x) {
    return w.core(chip, x, kEthY).read_u32(kernels::make_fabric_router_layout(base).status);
  }

  void add_worker_connections(kargs::InterpreterSpec& spec, uint32_t chip) {
    if (has_forward(chip)) {
      spec.forward_connection = kargs::worker_fabric_connection(base, kFwdX, kEthY, kFwdSems[0], kFwdSems[1], kFwdSems[2]);
    }
    if (has_backward(chip)) {
      spec.backward_connection = kargs::worker_fabric_connection(base, kBwdX, kEthY, kBwdSems[0], kBwdSems[1], kBwdSems[2]);
    }
  }
};

// All-gather by multicast: chip k reads its input (one row of pages) and writes it to row k
// of the output on every chip, then multicasts +1 on semaphore 0 (which also counts locally)
// and waits until all n chips have counted (REFERENCE §4.12's interpreter all-gather). The
// packets of one direction arrive in order, so the count says the data is there.
std::vector<uint32_t> all_gather_writer(const api::TensorSlice& out, const cmd::ChipMulticast& mcast, uint32_t n) {
  return cmd::encode_stream(std::vector<cmd::Command>{cmd::fabric_write_cb_to_tensor_slice(out, 0, mcast),
                                                      cmd::fabric_multicast_semaphore_inc(cmd::SemaphoreId{0}, 1, 1, 1, mcast),
                                                      cmd::local_semaphore_wait(cmd::SemaphoreId{0}, n)});
}

void launch_all_gather(Fabric& f, uint32_t pages_per_chip, uint32_t page_size, uint32_t packet_pages,
                       uint32_t fwd_targets(uint32_t chip, uint32_t n), uint32_t bwd_targets(uint32_t chip, uint32_t n)) {
  const uint32_t n = f.num_chips;
  const api::Shape4D out_shape{1, 1, n, pages_per_chip};
  for (uint32_t c = 0; c < n; ++c) {
    Core& worker = f.w.add_core(c, 1, 1, kWorkerL1);
    add_header_cb(worker);
    add_cb(worker, 0, 0x4000, page_size, 2 * packet_pages);
    fill_input(f.w, c, 0x1000, page_size, pages_per_chip, c);
    kargs::InterpreterSpec spec;
    spec.packet_header_cb_id = kHeaderCb;
    spec.packet_size_in_pages = packet_pages;
    f.add_worker_connections(spec, c);
    const api::TensorSlice in = whole({1, 1, 1, pages_per_chip});
    const api::TensorSlice out{out_shape, {1, 1, 1, pages_per_chip}, {0, 0, c, 0}, {1, 1, 1, pages_per_chip}, {0, 0, 0, 0}};
    kargs::InterpreterStreamSpec reader{dram_tensor(0x1000, page_size),
                                        cmd::encode_command(cmd::read_tensor_slice_to_cb(in, 0)), 1};
    kargs::InterpreterStreamSpec writer{
        dram_tensor(0x40000, page_size),
        all_gather_writer(out, cmd::ChipMulticast{fwd_targets(c, n), bwd_targets(c, n)}, n), 3};
    spec.semaphore_ids = {0};
    spec.streams = {reader, writer};
    launch_interpreter(f.w, worker, spec);
  }
}

void expect_all_gathered(Fabric& f, uint32_t pages_per_chip, uint32_t page_size) {
  for (uint32_t c = 0; c < f.num_chips; ++c) {
    for (uint32_t src = 0; src < f.num_chips; ++src) {
      for (uint32_t p = 0; p < pages_per_chip; ++p) {
        const auto got = read_dram_page(f.w, c, 0x40000, page_size, src * pages_per_chip + p);
        EXPECT_TRUE(page_matches(got, src, p)) << "chip " << c << " row " << src << " page " << p;
      }
    }
  }
}

uint32_t line_fwd(uint32_t c, uint32_t n) { return n - 1 - c; }
uint32_t line_bwd(uint32_t c, uint32_t) { return c; }
uint32_t ring_fwd(uint32_t, uint32_t n) { return n / 2; }
uint32_t ring_bwd(uint32_t, uint32_t n) { return (n - 1) / 2; }

TEST(KernelsE2E, LineAllGatherByMulticastOverTheFabric) {
  Fabric f(4, false, 1024, 4, 8, false);
  f.launch_routers();
  launch_all_gather(f, 12, 256, 2, line_fwd, line_bwd);
  const fake::RunResult r = f.w.run([&] { f.terminate_routers(); });
  ASSERT_TRUE(r.ok()) << describe(r) << f.state();
  expect_all_gathered(f, 12, 256);
  EXPECT_EQ(f.router_status(0, kFwdX), static_cast<uint32_t>(api::EdmStatus::TERMINATED));
  EXPECT_EQ(f.router_status(3, kBwdX), static_cast<uint32_t>(api::EdmStatus::TERMINATED));
}

TEST(KernelsE2E, RingAllGatherWithBubbleFlowControl) {
  Fabric f(4, true, 512, 2, 2, true);
  f.launch_routers();
  launch_all_gather(f, 32, 512, 1, ring_fwd, ring_bwd);
  const fake::RunResult r = f.w.run([&] { f.terminate_routers(); });
  ASSERT_TRUE(r.ok()) << describe(r) << f.state();
  expect_all_gathered(f, 32, 512);
}

// REFERENCE §11.1/§11.2: every chip streams packets the whole way round a ring in one
// direction. Without bubble flow control the injection channels fill the last receiver slots
// and every receiver waits for the next router's forwarding channel: a cycle. With it the
// same traffic completes.
fake::RunResult ring_flood(bool bubble) {
  Fabric f(4, true, 256, 1, 2, bubble);
  f.launch_routers();
  const uint32_t n = f.num_chips;
  const uint32_t pages = 48;
  for (uint32_t c = 0; c < n; ++c) {
    Core& worker = f.w.add_core(c, 1, 1, kWorkerL1);
    add_header_cb(worker);
    add_cb(worker, 0, 0x4000, 256, 4);
    fill_input(f.w, c, 0x1000, 256, pages, c);
    kargs::InterpreterSpec spec;
    spec.packet_header_cb_id = kHeaderCb;
    spec.packet_size_in_pages = 1;
    f.add_worker_connections(spec, c);
    const api::Shape4D out_shape{1, 1, n, pages};
    const api::TensorSlice out{out_shape, {1, 1, 1, pages}, {0, 0, c, 0}, {1, 1, 1, pages}, {0, 0, 0, 0}};
    kargs::InterpreterStreamSpec reader{dram_tensor(0x1000, 256),
                                        cmd::encode_command(cmd::read_tensor_slice_to_cb(whole({1, 1, 1, pages}), 0)), 1};
    kargs::InterpreterStreamSpec writer{dram_tensor(0x40000, 256), all_gather_writer(out, cmd::ChipMulticast{n - 1, 0}, n),
                                        3};
    spec.semaphore_ids = {0};
    spec.streams = {reader, writer};
    launch_interpreter(f.w, worker, spec);
  }
  fake::RunResult r = f.w.run([&] { f.terminate_routers(); });
  r.report += f.state();
  if (r.ok()) {
    expect_all_gathered(f, pages, 256);
  }
  return r;
}

TEST(KernelsE2E, RingWithoutBubbleFlowControlDeadlocks) {
  const fake::RunResult r = ring_flood(false);
  EXPECT_TRUE(r.deadlock) << describe(r);
  EXPECT_TRUE(r.faulted.empty()) << describe(r);
  // Every worker is stuck waiting for a fabric slot.
  EXPECT_NE(r.report.find("noc_semaphore_wait_min"), std::string::npos) << r.report;
}

TEST(KernelsE2E, RingWithBubbleFlowControlCompletes) {
  const fake::RunResult r = ring_flood(true);
  EXPECT_TRUE(r.ok()) << describe(r);
}

TEST(KernelsE2E, FabricUnicastSemaphoresInlineWritesAndFusedWrites) {
  Fabric f(3, false, 1024, 2, 4, false);
  f.launch_routers();
  Core& w0 = f.w.add_core(0, 1, 1, kWorkerL1);
  Core& w2 = f.w.add_core(2, 1, 1, kWorkerL1);
  Core& sink2 = f.w.add_core(2, 2, 1, kWorkerL1);
  for (Core* c : {&w0, &w2}) {
    add_header_cb(*c);
    add_cb(*c, 0, 0x4000, 512, 2);
  }
  std::vector<uint8_t> payload(512);
  for (uint32_t i = 0; i < payload.size(); ++i) {
    payload[i] = static_cast<uint8_t>(255 - i);
  }
  w0.write(0x6000, payload.data(), 512);
  // Chip 0: +4 on chip 2's worker semaphore 0, an inline write to chip 2's sink, then a burst
  // of the local 512 B to chip 2's sink, fused with +1 on the sink's semaphore 3.
  const cmd::NocTransferBurstArg gather{0x6000, {{cmd::NocTransfer{0, 1, 1, 512}}}};
  const cmd::NocTransferBurstArg scatter{0x8000, {{cmd::NocTransfer{0, 2, 1, 512}}}};
  const cmd::ChipUnicast two_hops{2, true};
  // Then wait for chip 2's answer: a worker that stops before its traffic has landed lets the
  // host tear the fabric down under it (REFERENCE §11.8).
  const std::vector<cmd::Command> s0{cmd::fabric_unicast_semaphore_inc(cmd::SemaphoreId{0}, 4, 1, 1, two_hops),
                                     cmd::inline_write(0x3000, 0x99, 2, 1, two_hops),
                                     cmd::noc_read_burst_to_cb(gather, 0),
                                     cmd::local_semaphore_wait(cmd::SemaphoreId{1}, 1)};
  const std::vector<cmd::Command> s1{
      cmd::noc_write_burst_and_semaphore_inc(scatter, 0, cmd::SemaphoreId{3}, 1, 2, 1, two_hops)};
  kargs::InterpreterSpec spec0;
  spec0.packet_header_cb_id = kHeaderCb;
  spec0.packet_size_in_pages = 1;
  spec0.semaphore_ids = {0, 1, 3};
  f.add_worker_connections(spec0, 0);
  spec0.streams = {kargs::InterpreterStreamSpec{std::nullopt, cmd::encode_stream(s0), 4},
                   kargs::InterpreterStreamSpec{std::nullopt, cmd::encode_stream(s1), 1}};
  launch_interpreter(f.w, w0, spec0);
  // Chip 2: wait for the +4, then answer chip 0 (two hops back) with +1.
  const std::vector<cmd::Command> s2{cmd::local_semaphore_wait(cmd::SemaphoreId{0}, 4),
                                     cmd::fabric_unicast_semaphore_inc(cmd::SemaphoreId{1}, 1, 1, 1, cmd::ChipUnicast{2, false})};
  kargs::InterpreterSpec spec2;
  spec2.packet_header_cb_id = kHeaderCb;
  spec2.semaphore_ids = {0, 1};
  f.add_worker_connections(spec2, 2);
  spec2.streams = {kargs::InterpreterStreamSpec{std::nullopt, cmd::encode_stream(s2), 2}};
  launch_interpreter(f.w, w2, spec2);

  const fake::RunResult r = f.w.run([&] { f.terminate_routers(); });
  ASSERT_TRUE(r.ok()) << describe(r) << f.state();
  EXPECT_EQ(w2.read_u32(fake::semaphore_address(0)), 4u);
  EXPECT_EQ(sink2.read_u32(0x3000), 0x99u);
  EXPECT_EQ(sink2.read_u32(fake::semaphore_address(3)), 1u);
  std::vector<uint8_t> got(512);
  sink2.read(0x8000, got.data(), 512);
  EXPECT_EQ(got, payload);
  EXPECT_EQ(w0.read_u32(fake::semaphore_address(1)), 1u);
}

// Sharded pages are contiguous in runs of a shard row (4 pages, 512 B here), but a fabric
// packet holds 256 B: runs are cut at the payload. The reader uses the 0-hop "eventual fabric
// write" form, which needs no connection of its own.
TEST(KernelsE2E, FabricWritesCutShardedRunsAtThePayload) {
  Fabric f(2, false, 256, 2, 4, false);
  f.launch_routers();
  constexpr uint32_t kPage = 128;
  Core& w0 = f.w.add_core(0, 1, 1, kWorkerL1);
  add_header_cb(w0);
  add_cb(w0, 0, 0x4000, kPage, 8);
  fill_input(f.w, 0, 0x1000, kPage, 16, 5);
  for (uint32_t x : {2u, 3u}) {
    f.w.add_core(1, x, 1, kWorkerL1);
  }
  const api::Shape4D shape{1, 1, 2, 8};
  kargs::ShardedTensorArgs out;
  out.address = 0x8000;
  out.page_size_bytes = kPage;
  out.layout = api::TensorMemoryLayout::WIDTH_SHARDED;
  out.page_stride_bytes = kPage;
  out.pages_per_tensor_row = 8;
  out.pages_per_shard_width = 4;
  out.rows_per_shard_height = 2;
  out.cores = {{2, 1}, {3, 1}};
  kargs::InterpreterSpec spec;
  spec.packet_header_cb_id = kHeaderCb;
  spec.packet_size_in_pages = 4;
  f.add_worker_connections(spec, 0);
  spec.streams = {
      kargs::InterpreterStreamSpec{dram_tensor(0x1000, kPage),
                                   cmd::encode_command(cmd::read_tensor_slice_to_cb_for_eventual_fabric_write(whole(shape), 0)), 1},
      kargs::InterpreterStreamSpec{out, cmd::encode_command(cmd::fabric_write_cb_to_tensor_slice(whole(shape), 0, cmd::ChipUnicast{1, true})),
                                   1}};
  launch_interpreter(f.w, w0, spec);
  const fake::RunResult r = f.w.run([&] { f.terminate_routers(); });
  ASSERT_TRUE(r.ok()) << describe(r) << f.state();
  for (uint32_t p = 0; p < 16; ++p) {
    const uint32_t row = p / 8;
    const uint32_t col = p % 8;
    std::vector<uint8_t> got(kPage);
    f.w.core(1, col < 4 ? 2 : 3, 1).read(0x8000 + (row * 4 + col % 4) * kPage, got.data(), kPage);
    EXPECT_TRUE(page_matches(got, 5, p)) << "page " << p;
  }
  // 16 pages in runs of 4, cut to packets of 2 pages: 8 packets.
  const auto l = kernels::make_fabric_router_layout(f.base);
  EXPECT_EQ(f.w.core(0, kFwdX, kEthY).read_u32(l.sender[0].packets_written), 8u);
}

// A persistent fabric outlives ops: a second program's worker opens the same router channel
// and continues from the counters the first one left (packets_written, packets_freed).
TEST(KernelsE2E, SecondOpReusesTheRouterChannel) {
  Fabric f(2, false, 1024, 2, 4, false);
  f.launch_routers();
  Core& w0 = f.w.add_core(0, 1, 1, kWorkerL1);
  Core& w1 = f.w.add_core(1, 1, 1, kWorkerL1);
  add_header_cb(w0);
  const auto launch_op = [&](uint32_t increments) {
    for (uint32_t sem : {0u, kFwdSems[0], kFwdSems[1], kFwdSems[2]}) {
      w0.write_u32(fake::semaphore_address(sem), 0);  // per-program semaphores reset at launch
      w1.write_u32(fake::semaphore_address(sem), 0);
    }
    std::vector<cmd::Command> cmds;
    for (uint32_t i = 0; i < increments; ++i) {
      cmds.push_back(cmd::fabric_unicast_semaphore_inc(cmd::SemaphoreId{0}, 1, 1, 1, cmd::ChipUnicast{1, true}));
    }
    kargs::InterpreterSpec spec;
    spec.packet_header_cb_id = kHeaderCb;
    spec.semaphore_ids = {0};
    f.add_worker_connections(spec, 0);
    spec.streams = {kargs::InterpreterStreamSpec{std::nullopt, cmd::encode_stream(cmds), increments}};
    launch_interpreter(f.w, w0, spec);
    kargs::InterpreterSpec wait;
    wait.packet_header_cb_id = kHeaderCb;
    wait.semaphore_ids = {0};
    wait.streams = {kargs::InterpreterStreamSpec{
        std::nullopt, cmd::encode_command(cmd::local_semaphore_wait(cmd::SemaphoreId{0}, increments)), 1}};
    add_header_cb(w1);
    launch_interpreter(f.w, w1, wait);
  };
  launch_op(5);  // 5 packets through 2 slots: the slot ring wraps
  fake::RunResult r = f.w.run_until_only_persistent_left();
  ASSERT_TRUE(r.ok()) << describe(r) << f.state();
  EXPECT_EQ(w1.read_u32(fake::semaphore_address(0)), 5u);
  launch_op(3);
  r = f.w.run([&] { f.terminate_routers(); });
  ASSERT_TRUE(r.ok()) << describe(r) << f.state();
  EXPECT_EQ(w1.read_u32(fake::semaphore_address(0)), 3u);
  const auto l = kernels::make_fabric_router_layout(f.base);
  EXPECT_EQ(f.w.core(0, kFwdX, kEthY).read_u32(l.sender[0].packets_written), 8u);
  EXPECT_EQ(f.w.core(0, kFwdX, kEthY).read_u32(l.sender[0].packets_freed), 8u);
}

// REFERENCE §11.3: first-level acks on one end of a link only. The sender waits for acks the
// receiver never sends; its worker runs out of credits.
TEST(KernelsE2E, AsymmetricFirstLevelAcksHang) {
  Fabric f(2, false, 1024, 2, 4, false);
  f.base.first_level_acks = true;
  // Launch by hand: chip 1's router without first-level acks.
  for (uint32_t c = 0; c < 2; ++c) {
    kernels::FabricRouterConfig cfg = f.base;
    cfg.is_handshake_master = c == 0;
    cfg.first_level_acks = c == 0;
    const kargs::KernelArgs args = kargs::build_fabric_router_args(cfg);
    f.w.launch("fabric_router", f.w.core(c, c == 0 ? kFwdX : kBwdX, kEthY), &kernel_main_fabric_router,
               args.compile_time, {}, true);
  }
  Core& w0 = f.w.add_core(0, 1, 1, kWorkerL1);
  f.w.add_core(1, 1, 1, kWorkerL1);
  add_header_cb(w0);
  std::vector<cmd::Command> cmds(4, cmd::fabric_unicast_semaphore_inc(cmd::SemaphoreId{0}, 1, 1, 1, cmd::ChipUnicast{1, true}));
  kargs::InterpreterSpec spec;
  spec.packet_header_cb_id = kHeaderCb;
  spec.semaphore_ids = {0};
  f.add_worker_connections(spec, 0);
  spec.streams = {kargs::InterpreterStreamSpec{std::nullopt, cmd::encode_stream(cmds), 4}};
  launch_interpreter(f.w, w0, spec);
  const fake::RunResult r = f.w.run([&] { f.terminate_routers(); });
  EXPECT_TRUE(r.deadlock) << describe(r);
  EXPECT_NE(r.report.find("ccl_interpreter on chip 0 (1,1) blocked in noc_semaphore_wait_min"), std::string::npos)
      << r.report;
}

TEST(KernelsE2E, RouterFaultsOnAPacketRoutedPastTheLineEnd) {
  Fabric f(2, false, 1024, 2, 4, false);
  f.launch_routers();
  Core& w0 = f.w.add_core(0, 1, 1, kWorkerL1);
  add_header_cb(w0);
  // 3 hops on a 2-chip line: the router on chip 1 has nowhere to forward it.
  kargs::InterpreterSpec spec;
  spec.packet_header_cb_id = kHeaderCb;
  spec.semaphore_ids = {0};
  f.add_worker_connections(spec, 0);
  spec.streams = {kargs::InterpreterStreamSpec{
      std::nullopt,
      cmd::encode_command(cmd::fabric_unicast_semaphore_inc(cmd::SemaphoreId{0}, 1, 1, 1, cmd::ChipUnicast{3, true})), 1}};
  launch_interpreter(f.w, w0, spec);
  const fake::RunResult r = f.w.run([&] { f.terminate_routers(); });
  ASSERT_EQ(r.faulted.size(), 1u) << describe(r);
  EXPECT_EQ(r.faulted[0]->core->chip, 1u);
  EXPECT_EQ(r.faulted[0]->fault->code, api::fault_code(api::KernelFaultCode::ROUTE_PAST_END));
}

TEST(KernelsE2E, ImmediateTerminationStopsIdleRouters) {
  Fabric f(2, false, 1024, 2, 4, false);
  f.launch_routers();
  const fake::RunResult r = f.w.run([&] { f.terminate_routers(api::TerminationSignal::IMMEDIATELY_TERMINATE); });
  ASSERT_TRUE(r.ok()) << describe(r);
  EXPECT_EQ(f.router_status(1, kBwdX), static_cast<uint32_t>(api::EdmStatus::TERMINATED));
}

// =============================================================================================
// Legacy EDM
// =============================================================================================

constexpr uint32_t kEdmSem[4] = {0, 1, 2, 3};  // per channel (ERISC), + termination = 4
constexpr uint32_t kEdmTerminationSem = 4;
constexpr uint32_t kWorkerSem = 0;
constexpr uint32_t kMessageBytes = 512;

// Test worker: push `messages` messages (pattern by chip and index) into one EDM channel.
void legacy_sender_worker() {
  uint32_t at = 2;
  api::LegacyEdmWorkerChannel ch = api::LegacyEdmWorkerChannel::build_from_args(at, my_noc_index());
  const uint32_t messages = get_arg_val<uint32_t>(0);
  const uint32_t signal = get_arg_val<uint32_t>(1);
  uint8_t buf[kMessageBytes];
  for (uint32_t m = 0; m < messages; ++m) {
    for (uint32_t b = 0; b < kMessageBytes; ++b) {
      buf[b] = pattern(my_chip_id(), m, b);
    }
    l1_write_bytes(0x6000, buf, kMessageBytes);
    ch.wait_for_empty_buffer();
    ch.send(0x6000, kMessageBytes);
  }
  if (signal != 0) {
    const auto cfg = api::read_legacy_edm_channel_config(get_arg_ptr(2));
    api::signal_legacy_edm_termination(cfg.edm_noc_x, cfg.edm_noc_y, kEdmTerminationSem, my_noc_index());
  }
}

// Test worker: pull `messages` messages into consecutive L1 at 0x10000.
void legacy_receiver_worker() {
  uint32_t at = 2;
  api::LegacyEdmWorkerChannel ch = api::LegacyEdmWorkerChannel::build_from_args(at, my_noc_index());
  const uint32_t messages = get_arg_val<uint32_t>(0);
  const uint32_t signal = get_arg_val<uint32_t>(1);
  for (uint32_t m = 0; m < messages; ++m) {
    ch.wait_for_payload();
    ch.read_into(0x10000 + m * kMessageBytes, kMessageBytes);
    ch.release();
  }
  if (signal != 0) {
    const auto cfg = api::read_legacy_edm_channel_config(get_arg_ptr(2));
    api::signal_legacy_edm_termination(cfg.edm_noc_x, cfg.edm_noc_y, kEdmTerminationSem, my_noc_index());
  }
}

void run_legacy_pair(uint32_t termination_mode, uint32_t messages, uint32_t buffers) {
  World w;
  // Chip 0: EDM at (9,0), two senders (workers (1,1), (2,1)) and one receiver ((3,1)).
  // Chip 1: EDM at (1,0), one sender ((1,1)) and two receivers ((2,1), (3,1)).
  Core& e0 = w.add_core(0, 9, 0, kEthL1, true);
  Core& e1 = w.add_core(1, 1, 0, kEthL1, true);
  w.connect_eth(e0, e1);
  const bool signal = termination_mode == kernels::legacy_edm::kTerminationWorkerInitiated;
  struct Side {
    Core* edm;
    uint32_t chip;
    uint32_t senders;
    uint32_t receivers;
  };
  const Side sides[2] = {{&e0, 0, 2, 1}, {&e1, 1, 1, 2}};
  for (const Side& s : sides) {
    const kernels::LegacyEdmConfig cfg{s.chip == 0, 0x1000, s.senders, s.receivers, buffers, kMessageBytes,
                                       termination_mode, 1000};
    std::vector<kargs::LegacyEdmChannelSpec> channels;
    for (uint32_t c = 0; c < s.senders + s.receivers; ++c) {
      channels.push_back({{c + 1, 1}, kWorkerSem, kEdmSem[c], messages});
      Core& worker = w.add_core(s.chip, c + 1, 1, kWorkerL1);
      std::vector<uint32_t> rt{messages, signal ? 1u : 0u};
      rt.resize(2 + api::kLegacyEdmChannelArgWords);
      api::write_legacy_edm_channel_config(
          kargs::legacy_edm_worker_channel(cfg, c, s.edm->x, s.edm->y, kEdmSem[c], kWorkerSem), rt.data() + 2);
      const bool sender = c < s.senders;
      w.launch(sender ? "legacy_sender_worker" : "legacy_receiver_worker", worker,
               sender ? &legacy_sender_worker : &legacy_receiver_worker, {}, rt);
    }
    const kargs::KernelArgs args = kargs::build_legacy_edm_args(cfg, kEdmTerminationSem, channels);
    w.launch("legacy_edm", *s.edm, &kernel_main_legacy_edm, args.compile_time, args.runtime);
  }
  const fake::RunResult r = w.run();
  ASSERT_TRUE(r.ok()) << describe(r);
  // Chip 0 senders 0, 1 -> chip 1 receivers 1, 2 (workers (2,1), (3,1)); chip 1 sender 0 ->
  // chip 0 receiver 2 (worker (3,1)).
  const auto check = [&](uint32_t chip, uint32_t x, uint32_t from_chip) {
    for (uint32_t m = 0; m < messages; ++m) {
      std::vector<uint8_t> got(kMessageBytes);
      w.core(chip, x, 1).read(0x10000 + m * kMessageBytes, got.data(), kMessageBytes);
      EXPECT_TRUE(page_matches(got, from_chip, m)) << "chip " << chip << " worker x " << x << " message " << m;
    }
  };
  check(1, 2, 0);
  check(1, 3, 0);
  check(0, 3, 1);
  EXPECT_EQ(e0.read_u32(kernels::make_legacy_edm_layout(0x1000, 3, buffers, kMessageBytes).status),
            static_cast<uint32_t>(api::EdmStatus::TERMINATED));
}

TEST(KernelsE2E, LegacyEdmMessageCountTermination) { run_legacy_pair(kernels::legacy_edm::kTerminationMessageCountReached, 9, 2); }

TEST(KernelsE2E, LegacyEdmWorkerInitiatedTermination) { run_legacy_pair(kernels::legacy_edm::kTerminationWorkerInitiated, 5, 3); }

TEST(KernelsE2E, LegacyEdmSingleBuffer) { run_legacy_pair(kernels::legacy_edm::kTerminationMessageCountReached, 4, 1); }

// =============================================================================================
// Reduce
// =============================================================================================

void run_reduce(uint32_t format) {
  World w;
  Core& core = w.add_core(0, 1, 1, kWorkerL1);
  constexpr uint32_t kPage = 2048;
  constexpr uint32_t kBlocks = 3;
  constexpr uint32_t kPagesPerBlock = 2;
  constexpr uint32_t kPages = kBlocks * kPagesPerBlock;
  add_cb(core, 0, 0x10000, kPage, kPages);
  add_cb(core, 1, 0x20000, kPage, kPages);
  add_cb(core, 2, 0x30000, kPage, 4);
  std::vector<uint32_t> a(kPages * kPage / 4);
  std::vector<uint32_t> b(a.size());
  for (uint32_t i = 0; i < a.size(); ++i) {
    if (format == kernels::reduce::kDataFormatFloat32) {
      a[i] = kernels::float_to_bits(static_cast<float>(i) * 0.5f);
      b[i] = kernels::float_to_bits(1.0f + static_cast<float>(i % 7));
    } else {
      a[i] = 0x3F80u | (0x4000u << 16) | (i % 5);  // two bf16 per word
      b[i] = 0x3F00u | (0xC040u << 16);
    }
  }
  core.write(0x10000, a.data(), static_cast<uint32_t>(a.size() * 4));
  core.write(0x20000, b.data(), static_cast<uint32_t>(b.size() * 4));
  core.cbs[0].received = kPages;
  core.cbs[1].received = kPages;
  const kargs::KernelArgs args = kargs::build_reduce_args({0, 1, 2, format, kBlocks, kPagesPerBlock});
  w.launch("reduce", core, &kernel_main_reduce, args.compile_time, args.runtime);
  // A consumer that copies each output block out (the out CB holds only 2 blocks).
  Core& sink = w.add_core(0, 2, 1, kWorkerL1);
  launch_block_sink(w, core, kBlocks, kPagesPerBlock, kPage);
  const fake::RunResult r = w.run();
  ASSERT_TRUE(r.ok()) << describe(r);
  std::vector<uint32_t> out(a.size());
  sink.read(0x10000, out.data(), static_cast<uint32_t>(out.size() * 4));
  for (uint32_t i = 0; i < a.size(); ++i) {
    uint32_t expected = 0;
    if (format == kernels::reduce::kDataFormatFloat32) {
      expected = kernels::fp32_add_bits(a[i], b[i]);
    } else {
      kernels::add_bf16_packed(&a[i], &b[i], &expected, 2);
    }
    ASSERT_EQ(out[i], expected) << "word " << i;
  }
  EXPECT_EQ(core.cbs[0].acked, kPages);
  EXPECT_EQ(core.cbs[2].received, kPages);
}

// Passes (kRtPasses, the one-shot ring reduce_scatter's fold): out = ((in0 + b0) + b1) + b2 per
// block, in1 supplying the three passes' blocks one pass after another, the running sums kept in
// the out CB (all blocks reserved at once), fp32 and bf16, each addition rounded, bit for bit.
void run_reduce_passes(uint32_t format) {
  World w;
  Core& core = w.add_core(0, 1, 1, kWorkerL1);
  constexpr uint32_t kPage = 2048;
  constexpr uint32_t kBlocks = 3;
  constexpr uint32_t kPagesPerBlock = 2;
  constexpr uint32_t kPasses = 3;
  constexpr uint32_t kPages = kBlocks * kPagesPerBlock;
  add_cb(core, 0, 0x10000, kPage, kPages);
  add_cb(core, 1, 0x20000, kPage, kPasses * kPages);
  add_cb(core, 2, 0x30000, kPage, kPages);
  const uint32_t words = kPages * kPage / 4;
  std::vector<uint32_t> a(words);
  std::vector<uint32_t> b(kPasses * words);
  for (uint32_t i = 0; i < a.size(); ++i) {
    a[i] = format == kernels::reduce::kDataFormatFloat32 ? kernels::float_to_bits(static_cast<float>(i) * 0.5f)
                                                          : 0x3F80u | (0x4000u << 16) | (i % 5);
  }
  for (uint32_t i = 0; i < b.size(); ++i) {
    b[i] = format == kernels::reduce::kDataFormatFloat32
               ? kernels::float_to_bits(0.1f + static_cast<float>(i % 11) * 0.37f)
               : (0x3E01u + (i % 13)) | ((0xBF13u + (i % 3)) << 16);
  }
  core.write(0x10000, a.data(), static_cast<uint32_t>(a.size() * 4));
  core.write(0x20000, b.data(), static_cast<uint32_t>(b.size() * 4));
  core.cbs[0].received = kPages;
  core.cbs[1].received = kPasses * kPages;
  kargs::ReduceSpec spec{0, 1, 2, format, kBlocks, kPagesPerBlock};
  spec.passes = kPasses;
  const kargs::KernelArgs args = kargs::build_reduce_args(spec);
  ASSERT_EQ(args.runtime.size(), kernels::reduce::kNumRuntimeArgsWithPasses);
  w.launch("reduce", core, &kernel_main_reduce, args.compile_time, args.runtime);
  Core& sink = w.add_core(0, 2, 1, kWorkerL1);
  launch_block_sink(w, core, kBlocks, kPagesPerBlock, kPage);
  const fake::RunResult r = w.run();
  ASSERT_TRUE(r.ok()) << describe(r);
  std::vector<uint32_t> out(words);
  sink.read(0x10000, out.data(), static_cast<uint32_t>(out.size() * 4));
  for (uint32_t i = 0; i < words; ++i) {
    uint32_t expected = a[i];
    for (uint32_t pass = 0; pass < kPasses; ++pass) {
      const uint32_t addend = b[pass * words + i];
      if (format == kernels::reduce::kDataFormatFloat32) {
        expected = kernels::fp32_add_bits(expected, addend);
      } else {
        uint32_t sum = 0;
        kernels::add_bf16_packed(&expected, &addend, &sum, 2);
        expected = sum;
      }
    }
    ASSERT_EQ(out[i], expected) << "word " << i;
  }
  EXPECT_EQ(core.cbs[0].acked, kPages);
  EXPECT_EQ(core.cbs[1].acked, kPasses * kPages);
  EXPECT_EQ(core.cbs[2].received, kPages);
}

TEST(KernelsE2E, ReducePassesFp32) { run_reduce_passes(kernels::reduce::kDataFormatFloat32); }
TEST(KernelsE2E, ReducePassesBf16) { run_reduce_passes(kernels::reduce::kDataFormatFloat16B); }

TEST(KernelsE2E, ReducePassesRejectsAThirdInput) {
  kargs::ReduceSpec spec{0, 1, 2, kernels::reduce::kDataFormatFloat16B, 3, 2};
  spec.passes = 2;
  spec.in2_cb_id = 3;
  spec.in2_blocks = 1;
  EXPECT_THROW(kargs::build_reduce_args(spec), kargs::KernelArgsError);
  spec.in2_blocks = 0;
  spec.passes = 0;
  EXPECT_THROW(kargs::build_reduce_args(spec), kargs::KernelArgsError);
}

// bfp8_b: whole 1088 B tiles, 2 per block, summed block by block in fp32 (bfp8_math.hpp).
TEST(KernelsE2E, ReduceBfp8) {
  World w;
  Core& core = w.add_core(0, 1, 1, kWorkerL1);
  constexpr uint32_t kPage = kernels::kBfp8TileBytes;
  constexpr uint32_t kBlocks = 3;
  constexpr uint32_t kPagesPerBlock = 2;
  constexpr uint32_t kPages = kBlocks * kPagesPerBlock;
  add_cb(core, 0, 0x10000, kPage, kPages);
  add_cb(core, 1, 0x20000, kPage, kPages);
  add_cb(core, 2, 0x30000, kPage, 4);
  std::vector<uint8_t> a(kPages * kPage);
  std::vector<uint8_t> b(a.size());
  for (uint32_t i = 0; i < a.size(); ++i) {
    const bool exponent = i % kPage < kernels::kBfp8ExponentBytes;
    a[i] = static_cast<uint8_t>(exponent ? 120 + i % 9 : (i * 37) % 256);
    b[i] = static_cast<uint8_t>(exponent ? 124 + i % 5 : (i * 11 + 3) % 256);
  }
  core.write(0x10000, a.data(), static_cast<uint32_t>(a.size()));
  core.write(0x20000, b.data(), static_cast<uint32_t>(b.size()));
  core.cbs[0].received = kPages;
  core.cbs[1].received = kPages;
  const kargs::KernelArgs args = kargs::build_reduce_args({0, 1, 2, kernels::reduce::kDataFormatBfp8B, kBlocks, kPagesPerBlock});
  w.launch("reduce", core, &kernel_main_reduce, args.compile_time, args.runtime);
  Core& sink = w.add_core(0, 2, 1, kWorkerL1);
  launch_block_sink(w, core, kBlocks, kPagesPerBlock, kPage);
  const fake::RunResult r = w.run();
  ASSERT_TRUE(r.ok()) << describe(r);
  std::vector<uint8_t> out(a.size());
  sink.read(0x10000, out.data(), static_cast<uint32_t>(out.size()));
  for (uint32_t page = 0; page < kPages; ++page) {
    std::vector<uint8_t> expected(kPage);
    kernels::add_bfp8_tile(a.data() + page * kPage, b.data() + page * kPage, expected.data());
    ASSERT_EQ(std::vector<uint8_t>(out.begin() + page * kPage, out.begin() + (page + 1) * kPage), expected)
        << "tile " << page;
  }
  EXPECT_EQ(core.cbs[2].received, kPages);
}

// A bfp8_b page must be whole tiles: 1024 B is not.
TEST(KernelsE2E, ReduceBfp8RejectsPartialTiles) {
  World w;
  Core& core = w.add_core(0, 1, 1, kWorkerL1);
  add_cb(core, 0, 0x10000, 1024, 2);
  add_cb(core, 1, 0x20000, 1024, 2);
  add_cb(core, 2, 0x30000, 1024, 2);
  w.launch("reduce", core, &kernel_main_reduce, {0, 1, 2, kernels::reduce::kDataFormatBfp8B}, {1, 1});
  const fake::RunResult r = w.run();
  ASSERT_EQ(r.faulted.size(), 1u);
  EXPECT_EQ(r.faulted[0]->fault->code, api::fault_code(api::KernelFaultCode::BAD_ARGS));
}

TEST(KernelsE2E, ReduceFp32) { run_reduce(kernels::reduce::kDataFormatFloat32); }
TEST(KernelsE2E, ReduceBf16) { run_reduce(kernels::reduce::kDataFormatFloat16B); }

// tt-metal's Bfp8 (format 2, exponent-A) is not bfp8_b: refused.
TEST(KernelsE2E, ReduceRejectsBfp8) {
  World w;
  Core& core = w.add_core(0, 1, 1, kWorkerL1);
  add_cb(core, 2, 0x30000, 1088, 4);
  w.launch("reduce", core, &kernel_main_reduce, {0, 1, 2, 2}, {1, 1});
  const fake::RunResult r = w.run();
  ASSERT_EQ(r.faulted.size(), 1u);
  EXPECT_EQ(r.faulted[0]->fault->code, api::fault_code(api::KernelFaultCode::UNSUPPORTED_DATA_FORMAT));
}

}  // namespace
