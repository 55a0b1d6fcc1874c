// The hang report's wait-for chains through a fabric mux (kernels/fabric_mux.cpp, REFERENCE 6.3;
// docs/faults.md, "6. A fabric mux"): the states a mux's chain ends in, or goes on from, that a
// collective's run does not produce. Each is built on a simulated N300 as a collective would be
// (runtime::ccl::add_fabric_mux and connect_to_fabric_mux), with the host mistake or the queue
// order that produces it: a client channel no kernel connects to, a client in a program queued
// behind the mux's, a mux queued behind its client's program, a client of a mux that has ended.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/host/command_encoder.hpp"
#include "kernels/host/micro_ops.hpp"
#include "runtime/ccl/common/fabric_mux.hpp"
#include "runtime/ccl/send_recv/send_recv.hpp"
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

const runtime::CoreCoord kMuxCore{3, 0};  // chip 0 core (4,3)

class MuxWait : public ::testing::Test {
 protected:
  MuxWait() : device_(topo::build_n300(), line_fabric()) {}

  static SimMeshDeviceOptions line_fabric() {
    SimMeshDeviceOptions options;
    options.fabric.mode = FabricMode::Line;
    return options;
  }

  ChipId chip() const { return device_.fabric_plan().chips()[0]; }

  // A mux on kMuxCore of `program` with `clients` client channels, feeding the forward router.
  std::vector<api::FabricConnectionConfig> add_mux(runtime::Program& program, std::uint32_t clients) {
    return add_forward_mux(device_, program, chip(), kMuxCore, clients);
  }

  // An interpreter on `core` of `program`, connected to the mux as `client`, that sends
  // `packets` one-packet increments one hop forward through it (then closes its connection, as
  // every interpreter does at its end).
  void add_client(runtime::Program& program, runtime::CoreCoord core, const api::FabricConnectionConfig& client,
                  std::uint32_t packets) {
    add_increment_client(device_, program, chip(), core, client, packets);
  }

  void enqueue(const std::string& name, runtime::Program program) {
    runtime::MeshWorkload workload;
    workload.name = name;
    workload.programs[chip()] = std::move(program);
    device_.enqueue_workload(workload);
  }

  std::string hang() { return expect_device_error([&] { device_.finish(); }, DeviceError::Kind::Hang); }

  SimMeshDevice device_;
};

// `line` (the end of a chain's step line) is in the report and ends its chain: no step follows.
void expect_last_step(const std::string& report, const std::string& line) {
  EXPECT_THAT(report, HasSubstr(line + "\n")) << report;
  EXPECT_THAT(report, Not(HasSubstr(line + "\n    <-"))) << report;
}

const std::string kMuxName = "fabric mux chip 0 core (4,3)";
const std::string kClientA = "chip 0 core (1,3) [tensix (0,0) dm0] ccl_interpreter";
const std::string kClientB = "chip 0 core (2,3) [tensix (1,0) dm0] ccl_interpreter";

// A mux given two client channels, with a kernel on one: that client sends, closes and
// finishes; the mux waits for channel 1 to open and close. Its chain names the channel no
// kernel connects to (until session 24 it said only "but its 1 client kernel(s) have
// finished", which is no reason to wait).
TEST_F(MuxWait, AMuxWhoseClientsHaveFinishedNamesTheChannelNoKernelConnectsTo) {
  runtime::Program program;
  const std::vector<api::FabricConnectionConfig> clients = add_mux(program, 2);
  add_client(program, {0, 0}, clients[0], 1);
  enqueue("one of two mux clients connected", std::move(program));
  const std::string text = hang();
  expect_last_step(text, "    -- " + kMuxName +
                             " (2 client(s), 8 slots each): 0 slot(s) in use (0, 0); it holds no packet: it waits for its "
                             "clients to send or to close, but its 1 client kernel(s) have finished and no kernel's "
                             "fabric connection names client 1 (it ends only once every client has opened and closed)");
}

// A mux no kernel connects to at all: its chain ends at itself.
TEST_F(MuxWait, AMuxNoKernelConnectsToEndsItsChainAtItself) {
  runtime::Program program;
  add_mux(program, 1);
  enqueue("a mux without clients", std::move(program));
  const std::string text = hang();
  expect_last_step(text, "    -- " + kMuxName +
                             " (1 client(s), 8 slots each): 0 slot(s) in use (0); it holds no packet: it waits for its "
                             "clients to send or to close (no kernel's fabric connection names a client channel of this "
                             "mux)");
}

// Two of a mux's three clients in a program queued behind the mux's on the chip: they cannot
// launch before the mux ends, which waits for them to close. The chain names the first and ends
// there, saying there were two.
TEST_F(MuxWait, AClientQueuedBehindItsMuxsProgramHasNotLaunched) {
  runtime::Program first;
  const std::vector<api::FabricConnectionConfig> clients = add_mux(first, 3);
  add_client(first, {0, 0}, clients[0], 1);
  enqueue("the mux and client 0", std::move(first));
  runtime::Program second;
  add_client(second, {1, 0}, clients[1], 1);
  add_client(second, {2, 0}, clients[2], 1);
  enqueue("clients 1 and 2", std::move(second));
  const std::string text = hang();
  EXPECT_THAT(text, HasSubstr("chip 0: 1 program(s) waiting to launch behind the running one")) << text;
  expect_last_step(text, "    -- " + kMuxName +
                             " (3 client(s), 8 slots each): 0 slot(s) in use (0, 0, 0); it holds no packet: it waits for "
                             "its clients to send or to close; client 1 (" +
                             kClientB +
                             ") has not closed (of 2 that have not closed: the chain follows the first): its program has "
                             "not launched yet");
}

// The other way round: the mux in a program queued behind its clients'. One client fills its
// 8 slots and waits for a ninth, the other closes at once and waits for the acknowledgement;
// both chains end at the mux, which has not launched.
TEST_F(MuxWait, ClientsOfAMuxQueuedBehindThemEndAtTheMuxNotLaunched) {
  runtime::Program second;
  const std::vector<api::FabricConnectionConfig> clients = add_mux(second, 2);
  runtime::Program first;
  add_client(first, {0, 0}, clients[0], 9);
  add_client(first, {1, 0}, clients[1], 0);
  enqueue("the clients", std::move(first));
  enqueue("their mux", std::move(second));
  const std::string text = hang();
  EXPECT_THAT(text, HasSubstr("    -- " + kClientA +
                              " is blocked in noc_semaphore_wait_min(semaphore id 1 at 0x20010 >= 1, now 0: a free slot in "
                              "the forward fabric connection's sender channel (8 slots, fabric mux at NoC0 (4,3)))"))
      << text;
  expect_last_step(text, "    <- " + kMuxName + " (2 client(s), 8 slots each): 8 slot(s) in use (8, 0); its program has "
                                                "not launched yet");
  EXPECT_THAT(text, HasSubstr("    -- " + kClientB + " is blocked in noc_semaphore_wait(semaphore id 2 at 0x20020 == 1, now "
                                                    "0: the forward connection's close acknowledgement (fabric mux at NoC0 "
                                                    "(4,3)))"))
      << text;
  expect_last_step(text, "; " + kMuxName + ": its program has not launched yet");
}

// A worker of a later program connected to the client channel of a mux that has ended (the
// host left the mux out of the later program): it fills the slots nothing frees any more.
TEST_F(MuxWait, AClientOfAMuxThatHasEndedEndsAtTheMux) {
  runtime::Program first;
  const std::vector<api::FabricConnectionConfig> clients = add_mux(first, 1);
  add_client(first, {0, 0}, clients[0], 1);
  enqueue("the mux and its client", std::move(first));
  runtime::Program second;
  add_client(second, {1, 0}, clients[0], 9);
  enqueue("a client without its mux", std::move(second));
  const std::string text = hang();
  EXPECT_THAT(text, HasSubstr("    -- " + kClientB + " is blocked in noc_semaphore_wait_min(")) << text;
  expect_last_step(text, "    <- " + kMuxName +
                             " (1 client(s), 8 slots each): 8 slot(s) in use (8); it has finished: nothing frees its "
                             "slots any more");
}

// A second mux on the same core, in a program after the first's, with no client: the first
// mux's client, which finished before the second mux started, is not the second's. (Counted as
// one, it made every channel look closed, which a mux that holds no packet cannot be: the
// report stops on that as a broken invariant.)
TEST_F(MuxWait, AnEarlierMuxsClientIsNotALaterMuxsOnTheSameCore) {
  runtime::Program first;
  const std::vector<api::FabricConnectionConfig> clients = add_mux(first, 1);
  add_client(first, {0, 0}, clients[0], 1);
  enqueue("a mux and its client", std::move(first));
  runtime::Program second;
  add_mux(second, 1);
  enqueue("a mux without clients", std::move(second));
  const std::string text = hang();
  expect_last_step(text, "    -- " + kMuxName +
                             " (1 client(s), 8 slots each): 0 slot(s) in use (0); it holds no packet: it waits for its "
                             "clients to send or to close (no kernel's fabric connection names a client channel of this "
                             "mux)");
}

// A worker connected to a client channel the mux does not have (channel 2 of a 1-client mux):
// nothing reads its packets, and its chain ends at its own connection. Followed into the mux,
// it came back to the worker (the mux, holding none of its served clients' packets, followed
// the worker as its "client 2"): "a cycle of 1 kernel and 1 fabric mux", the only cycle through
// a mux itself that was found, and not one (docs/faults.md, 5.).
TEST_F(MuxWait, AConnectionToAChannelTheMuxDoesNotServeEndsAtTheWorker) {
  runtime::Program program;
  add_mux(program, 1);
  runtime::Program three_clients;  // only for client 2's connection block
  const std::vector<api::FabricConnectionConfig> clients = add_mux(three_clients, 3);
  add_client(program, {0, 0}, clients[2], 9);
  enqueue("a client of a channel the mux does not have", std::move(program));
  const std::string text = hang();
  expect_last_step(text, "(8 slots, fabric mux at NoC0 (4,3))) at stream 0 #8 ATOMIC_INC dest=UNICAST hops=1 fwd "
                         "dst=SEM(0) core=XY(1,3) inc=1; its connection's connection_live word 0x20100 is none of the 1 "
                         "client channel(s) of " +
                             kMuxName + ": nothing serves it");
  EXPECT_THAT(text, Not(HasSubstr("a cycle of"))) << text;
}

}  // namespace
}  // namespace cclmesh::sim::device
