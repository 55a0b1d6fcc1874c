// The worker <-> router connection's open and close (kernels/api/fabric_connection.hpp) on a
// simulated N300, where a worker opens and closes between two passes of the router or the mux
// that serves it. Until session 25 the close request was connection_live = 0, the value of a
// channel never opened: such a worker waited for a close acknowledgement that never came. Now
// the request is 2, acknowledged whether or not the open was seen, and the word goes back to 0.
//
// A router that is slow between passes: switch_interval 0 (run_routing() at every park) with a
// long run_routing() (KernelCosts), the base firmware's slice of the ERISC (REFERENCE 1.4). A
// worker's first location write wakes the router, which finds nothing yet and goes into
// run_routing(); the worker opens (and sends) and closes meanwhile. A mux is slow at its start:
// it opens its own connection to the router (a read and a write round trip to the ethernet
// core) before its first pass, while its clients open and close on the mux's nearer core.
#include <gmock/gmock.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/api/fabric_connection.hpp"
#include "kernels/api/fabric_packet_header.hpp"
#include "kernels/host/command_encoder.hpp"
#include "kernels/host/micro_ops.hpp"
#include "kernels/kernel_args.hpp"
#include "runtime/ccl/common/fabric_mux.hpp"
#include "runtime/device/l1_map.hpp"
#include "sim/engine/check.hpp"
#include "tests/unit/sim/device_error_util.hpp"
#include "tests/unit/sim/device_test_util.hpp"
#include "tests/unit/sim/mux_clients.hpp"

namespace cclmesh::sim::device {
namespace {

using namespace testing;
using runtime::ChipId;
using runtime::DeviceError;
using runtime::FabricMode;
using ::testing::HasSubstr;

// The test worker's runtime args: what it sends, then its connection block.
namespace worker_arg {
constexpr std::uint32_t kPackets = 0;       // one-hop atomic increments to send
constexpr std::uint32_t kTargetX = 1;       // NoC0 x of the core they increment (next chip)
constexpr std::uint32_t kTargetY = 2;       // NoC0 y
constexpr std::uint32_t kTargetWord = 3;    // L1 address of the word they increment
constexpr std::uint32_t kLiveValue = 4;     // bad_live_worker: the value it writes to connection_live
constexpr std::uint32_t kConnection = 5;    // the connection block (semaphore ids)
constexpr std::uint32_t kNumWords = kConnection + api::kFabricConnectionArgWords;
}  // namespace worker_arg

// Per-program semaphore ids of the test worker's connection.
constexpr std::uint32_t kFlowControlSem = 1;
constexpr std::uint32_t kTeardownSem = 2;
constexpr std::uint32_t kBufferIndexSem = 3;
// Where the worker builds its packet header, and the word on the next chip its packets increment.
constexpr std::uint32_t kHeaderAt = 0x40000;
constexpr std::uint32_t kTargetWordAt = 0x50000;

// Test worker: opens its connection, sends its packets (each one atomic increment one hop on)
// and closes, as fast as the protocol lets it.
void connection_worker() {
  namespace a = worker_arg;
  uint32_t at = a::kConnection;
  api::WorkerToFabricEdmSender sender = api::WorkerToFabricEdmSender::build_from_args(at, my_noc_index());
  const uint32_t packets = get_arg_val<uint32_t>(a::kPackets);
  const uint64_t target = api::noc_xy_addr(get_arg_val<uint32_t>(a::kTargetX), get_arg_val<uint32_t>(a::kTargetY),
                                           get_arg_val<uint32_t>(a::kTargetWord));
  sender.open();
  for (uint32_t p = 0; p < packets; ++p) {
    api::PacketHeader header{};
    header.to_chip_unicast(1).to_noc_unicast_atomic_inc(target, 1);
    l1_write_bytes(kHeaderAt, &header, sizeof(header));
    sender.wait_for_empty_write_slot();
    // Flushed before the next header is written over this one.
    sender.send_payload_flush_blocking_from_address(kHeaderAt, sizeof(header));
  }
  sender.close();
}

// Test worker: writes its worker location, then a value that is no connection state into
// connection_live, and ends.
void bad_live_worker() {
  uint32_t at = worker_arg::kConnection;
  api::WorkerToFabricEdmSender sender = api::WorkerToFabricEdmSender::build_from_args(at, my_noc_index());
  sender.open_start();
  const api::FabricConnectionConfig& c = sender.config();
  noc_async_read_barrier(my_noc_index());
  noc_async_write_barrier(my_noc_index());
  noc_inline_dw_write(get_noc_addr(c.edm_noc_x, c.edm_noc_y, c.connection_live_address, my_noc_index()),
                      get_arg_val<uint32_t>(worker_arg::kLiveValue), my_noc_index());
  noc_async_write_barrier(my_noc_index());
}

class FabricConnection : public ::testing::Test {
 protected:
  // A line fabric on an N300 whose routers, once idle, spend `run_routing_cycles` in
  // run_routing() at every park (0: the defaults).
  static SimMeshDeviceOptions options(std::int64_t run_routing_cycles) {
    SimMeshDeviceOptions o = fabric_options(FabricMode::Line);
    if (run_routing_cycles > 0) {
      o.fabric.switch_interval = 0;
      o.costs.run_routing_cycles = run_routing_cycles;
    }
    return o;
  }

  explicit FabricConnection(std::int64_t run_routing_cycles = kSlowRouting)
      : device_(topo::build_n300(), options(run_routing_cycles)) {
    device_.register_kernel("connection_worker", &connection_worker, false);
    device_.register_kernel("bad_live_worker", &bad_live_worker, false);
  }

  // 20 us at the ERISC clock: far longer than a worker takes to open, send a few packets and close.
  static constexpr std::int64_t kSlowRouting = 20000;

  ChipId first() const { return device_.fabric_plan().chips()[0]; }
  ChipId second() const { return device_.fabric_plan().chips()[1]; }

  // The test worker `kernel` on logical `core` of the first chip, connected to its forward router.
  runtime::Program worker_program(const std::string& kernel, runtime::CoreCoord core, std::uint32_t packets,
                                  std::uint32_t live_value = 0) {
    runtime::Program program;
    add_worker(program, kernel, core, packets, live_value,
               device_.fabric_plan().worker_connection(first(), true, kFlowControlSem, kTeardownSem, kBufferIndexSem));
    return program;
  }

  // The test worker `kernel` on logical `core` of the first chip, in `program`, connected through
  // `connection` (a router's channel or a mux's) with its own semaphores.
  void add_worker(runtime::Program& program, const std::string& kernel, runtime::CoreCoord core, std::uint32_t packets,
                  std::uint32_t live_value, api::FabricConnectionConfig connection) {
    namespace a = worker_arg;
    const runtime::Noc0Coord target = device_.core_map(second()).tensix_noc0(core);
    std::vector<std::uint32_t> rt(a::kNumWords, 0);
    rt[a::kPackets] = packets;
    rt[a::kTargetX] = target.x;
    rt[a::kTargetY] = target.y;
    rt[a::kTargetWord] = kTargetWordAt;
    rt[a::kLiveValue] = live_value;
    connection.worker_flow_control_sem = kFlowControlSem;
    connection.worker_teardown_sem = kTeardownSem;
    connection.worker_buffer_index_sem = kBufferIndexSem;
    api::write_fabric_connection_config(connection, rt.data() + a::kConnection);
    for (std::uint32_t id : {kFlowControlSem, kTeardownSem, kBufferIndexSem}) {
      program.semaphores.push_back(runtime::ccl::tensix_semaphore(core, id));
    }
    runtime::KernelSpec k;
    k.kernel = kernel;
    k.cores = {{core, core}};
    k.runtime_args[core] = rt;
    program.kernels.push_back(k);
  }

  void enqueue(const std::string& name, ChipId chip, runtime::Program program) {
    runtime::MeshWorkload workload;
    workload.name = name;
    workload.programs[chip] = std::move(program);
    device_.enqueue_workload(workload);
  }

  // The forward router of the first chip: its site and its L1.
  const runtime::FabricRouterSite& router() const {
    const runtime::FabricRouterSite* site = device_.fabric_plan().router(first(), true);
    CCLMESH_CHECK(site != nullptr, "the first chip of an N300 line has a forward router");
    return *site;
  }
  MemoryRegion& l1(ChipId chip, runtime::Noc0Coord core) {
    return device_.system().chip(chip).l1({static_cast<int>(core.x), static_cast<int>(core.y)});
  }
  std::uint32_t router_word(std::uint32_t address) { return l1(first(), router().noc0).read_u32(address); }
  kernels::FabricSenderChannelLayout worker_channel() const { return device_.fabric_plan().layout().sender[0]; }
  // The word the test workers' packets increment, on the next chip's core `core`.
  std::uint32_t target_word(runtime::CoreCoord core) {
    return l1(second(), device_.core_map(second()).tensix_noc0(core)).read_u32(kTargetWordAt);
  }

  SimMeshDevice device_;
};

// A worker that opens and closes while the router is in run_routing(): the router sees only the
// close request, acknowledges it and sets the word back to unused. (On main, before session 25,
// the word read 0 and the worker waited for the acknowledgement: a hang.)
TEST_F(FabricConnection, AWorkerThatOpensAndClosesBetweenTwoRouterPassesIsAcknowledged) {
  enqueue("open and close", first(), worker_program("connection_worker", {0, 0}, 0));
  device_.finish();
  EXPECT_EQ(router_word(worker_channel().connection_live), api::kConnectionUnused);
  EXPECT_EQ(router_word(worker_channel().packets_written), 0u);
}

// The same with packets: the worker fills some of its 8 slots from the credits it read at open
// and closes before the router connects; the router sends them and acknowledges the close.
TEST_F(FabricConnection, AWorkerThatSendsAndClosesBetweenTwoRouterPassesIsAcknowledged) {
  constexpr std::uint32_t kPackets = 5;
  enqueue("send and close", first(), worker_program("connection_worker", {0, 0}, kPackets));
  device_.finish();
  device_.drain();
  EXPECT_EQ(router_word(worker_channel().connection_live), api::kConnectionUnused);
  EXPECT_EQ(router_word(worker_channel().packets_written), kPackets);
  EXPECT_EQ(router_word(worker_channel().packets_freed), kPackets);
  EXPECT_EQ(target_word({0, 0}), kPackets);
}

// Two such workers one after the other on the same channel: the second opens on the word the
// router set back to unused, continues the packet count, and is acknowledged once; the router
// does not acknowledge the first close again at every pass (which would also keep it from ever
// parking, so the run would not end).
TEST_F(FabricConnection, ASecondWorkerOnTheChannelStartsFromUnused) {
  enqueue("first worker", first(), worker_program("connection_worker", {0, 0}, 3));
  enqueue("second worker", first(), worker_program("connection_worker", {1, 0}, 2));
  device_.finish();
  device_.drain();
  EXPECT_EQ(router_word(worker_channel().connection_live), api::kConnectionUnused);
  EXPECT_EQ(router_word(worker_channel().packets_written), 5u);
  EXPECT_EQ(router_word(worker_channel().packets_freed), 5u);
  EXPECT_EQ(target_word({0, 0}), 3u);
  EXPECT_EQ(target_word({1, 0}), 2u);
}

// connection_live reads a value that is no connection state: the router stops with
// WORKER_PROTOCOL_VIOLATION, and the report names the channel and the value.
TEST_F(FabricConnection, ABadLiveValueIsAProtocolViolation) {
  enqueue("bad live value", first(), worker_program("bad_live_worker", {0, 0}, 0, 7));
  device_.finish();
  const std::string text = expect_device_error([&] { device_.drain(); }, DeviceError::Kind::Fault);
  EXPECT_THAT(text, HasSubstr(fmt::format("chip {}", first()))) << text;
  EXPECT_THAT(text, HasSubstr("fabric_router fault WORKER_PROTOCOL_VIOLATION")) << text;
  EXPECT_THAT(text, HasSubstr("detail 1792: channel 0's connection_live word reads 7, none of 0 (unused), 1 (open), "
                              "2 (close request)"))
      << text;
}

// A huge value saturates in the fault's detail, and the report says so.
TEST_F(FabricConnection, AHugeBadLiveValueIsReportedAsAtLeastTheLargestItCarries) {
  enqueue("bad live value", first(), worker_program("bad_live_worker", {0, 0}, 0, 0xDEADBEEF));
  device_.finish();
  const std::string text = expect_device_error([&] { device_.drain(); }, DeviceError::Kind::Fault);
  EXPECT_THAT(text, HasSubstr("channel 0's connection_live word reads 16777215 or more")) << text;
}

// ---- Through a fabric mux -------------------------------------------------------------------

const runtime::CoreCoord kMuxCore{3, 0};

class FabricMuxConnection : public FabricConnection {
 protected:
  FabricMuxConnection() : FabricConnection(0) {}

  std::vector<api::FabricConnectionConfig> add_mux(runtime::Program& program, std::uint32_t clients) {
    return add_forward_mux(device_, program, first(), kMuxCore, clients);
  }

  // An interpreter on `core`, a client of the mux, that sends `packets` one-hop increments of
  // kTargetWordAt on the same core of the next chip (with none, it only opens and closes its
  // connection, as every interpreter does).
  void add_client(runtime::Program& program, runtime::CoreCoord core, const api::FabricConnectionConfig& client,
                  std::uint32_t packets) {
    add_increment_client(device_, program, first(), core, client, packets);
  }

  // Client `c`'s word `field` (kernels::fabric_mux::kClient*) on the mux core.
  std::uint32_t mux_word(std::uint32_t c, std::uint32_t field) {
    namespace m = kernels::fabric_mux;
    return l1(first(), device_.core_map(first()).tensix_noc0(kMuxCore))
        .read_u32(runtime::tensix_program_semaphore_address(m::client_semaphore_id(c, field)));
  }
};

// Two clients that send nothing, in the mux's program: both open and close before the mux's
// first pass (session 24 saw this hang: docs/faults.md). Both are acknowledged and the mux ends.
TEST_F(FabricMuxConnection, ClientsThatOpenAndCloseBeforeTheMuxsFirstPassAreAcknowledged) {
  runtime::Program program;
  const std::vector<api::FabricConnectionConfig> clients = add_mux(program, 2);
  add_client(program, {0, 0}, clients[0], 0);
  add_client(program, {1, 0}, clients[1], 0);
  enqueue("two silent clients", first(), std::move(program));
  device_.finish();
  namespace m = kernels::fabric_mux;
  for (std::uint32_t c = 0; c < 2; ++c) {
    EXPECT_EQ(mux_word(c, m::kClientConnectionLive), api::kConnectionUnused) << "client " << c;
    EXPECT_EQ(mux_word(c, m::kClientPacketsWritten), 0u) << "client " << c;
  }
}

// Clients that send more packets than the router's channel has slots: the mux ends only once
// every copy has left it and been credited, so each client's packets_freed word ends equal to
// its packets_written (it used to end at the last copy, leaving the last batch uncredited).
TEST_F(FabricMuxConnection, TheMuxEndsWithEveryClientsSlotsFreed) {
  constexpr std::uint32_t kPackets[2] = {20, 13};
  runtime::Program program;
  const std::vector<api::FabricConnectionConfig> clients = add_mux(program, 2);
  add_client(program, {0, 0}, clients[0], kPackets[0]);
  add_client(program, {1, 0}, clients[1], kPackets[1]);
  enqueue("two busy clients", first(), std::move(program));
  device_.finish();
  device_.drain();
  namespace m = kernels::fabric_mux;
  for (std::uint32_t c = 0; c < 2; ++c) {
    EXPECT_EQ(mux_word(c, m::kClientPacketsWritten), kPackets[c]) << "client " << c;
    EXPECT_EQ(mux_word(c, m::kClientPacketsFreed), kPackets[c]) << "client " << c;
    EXPECT_EQ(mux_word(c, m::kClientConnectionLive), api::kConnectionUnused) << "client " << c;
  }
}

// A client writes a value that is no connection state into its mux channel's connection_live
// word, beside a well-behaved client: the mux shares the router's reading of the word
// (api::connection_event, session 25), so the run stops with the same fault, here naming the
// fabric_mux, its chip, the client channel and the value, rather than hanging on a client that
// never closes.
TEST_F(FabricMuxConnection, ABadLiveValueIsAProtocolViolation) {
  runtime::Program program;
  const std::vector<api::FabricConnectionConfig> clients = add_mux(program, 2);
  add_client(program, {0, 0}, clients[0], 2);
  add_worker(program, "bad_live_worker", {1, 0}, 0, 7, clients[1]);
  enqueue("bad live value through the mux", first(), std::move(program));
  const std::string text = expect_device_error(
      [&] {
        device_.finish();
        device_.drain();
      },
      DeviceError::Kind::Fault);
  EXPECT_THAT(text, HasSubstr(fmt::format("chip {}", first()))) << text;
  EXPECT_THAT(text, HasSubstr(fmt::format("[tensix ({},{}) dm0] fabric_mux: fabric_mux fault WORKER_PROTOCOL_VIOLATION",
                                          kMuxCore.x, kMuxCore.y)))
      << text;
  EXPECT_THAT(text, HasSubstr("detail 1793: channel 1's connection_live word reads 7, none of 0 (unused), 1 (open), "
                              "2 (close request)"))
      << text;
}

}  // namespace
}  // namespace cclmesh::sim::device
