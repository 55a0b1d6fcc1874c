// A command stream cclmesh does not ship, end to end: a ring shift. On a simulated T3K every chip
// sends its buffer to its right neighbour on the fabric ring, and every output is checked bit
// for bit. It is what a developer writing a new op does (docs/library.md, "A new command
// stream"):
//
//   1. describe what each core does as commands (kernels/host/micro_ops.hpp), encoded into a
//      stream (kargs::interpreter_stream, over cmd::encode_stream): the words the command
//      interpreter kernel reads;
//   2. wrap each stream with the tensor it moves into the interpreter's kernel args
//      (kargs::InterpreterSpec), connecting a sending worker to its chip's fabric router;
//   3. put the kernels, circular buffers and semaphores of each chip into a Program, and the
//      programs into a MeshWorkload: plain data, the same for the simulator and for hardware;
//   4. enqueue, finish, read back.
//
// Per chip, two worker cores (logical coordinates on the 8x8 worker grid):
//
//   sender (0,0)    reader  (RISC-V 1, NoC1)  STREAM_TENSOR_TO_CB   input -> data CB
//                   writer  (RISC-V 0, NoC0)  STREAM_CB_TO_TENSOR   data CB -> the right neighbour's
//                                                                   output, 1 hop forward
//                                             ATOMIC_INC            +1 on the neighbour's receiver
//   receiver (0,1)  waiter  (RISC-V 0, NoC0)  WAIT_VALUE            done semaphore >= 1
//
// The increment travels behind the data on the same route, and a router flushes earlier writes
// before an increment (docs/kernels.md), so a receiver that saw 1 has all of its bytes; the
// workload is finished when every waiter has returned. Exit 0 when every chip's output is its
// left neighbour's input, 1 when one is not, 3 when the run cannot complete (a hang or fault:
// the device's report on stderr). `--leave-out-increment` leaves out the ATOMIC_INC, the
// mistake whose hang report docs/library.md shows (exit 3); any other argument exits 2.

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/host/disassembler.hpp"
#include "kernels/host/interpreter_stream.hpp"
#include "kernels/host/micro_ops.hpp"
#include "runtime/ccl/common/ccl_common.hpp"
#include "runtime/device/chip_buffers.hpp"
#include "runtime/device/core_map.hpp"
#include "runtime/device/worker_span.hpp"
#include "runtime/fabric/fabric_plan.hpp"
#include "sim/device/sim_mesh_device.hpp"
#include "topologies/system_loader.hpp"

using namespace cclmesh;
namespace ccl = runtime::ccl;
using Bytes = std::vector<std::byte>;

namespace {

constexpr runtime::CoreCoord kSender{0, 0};
constexpr runtime::CoreCoord kReceiver{0, 1};
constexpr std::uint32_t kPageBytes = 2048;
constexpr std::uint32_t kBufferBytes = 64 * 1024;  // 32 pages per chip

// One chip's program: send `input` to `next`'s `output` (`route` away on the fabric) and wait
// for what the previous chip sends here. `show` prints the sender's writer stream.
runtime::Program ring_shift_program(const topo::Topology& topology, const runtime::FabricPlan& plan,
                                    runtime::ChipId chip, runtime::ChipId next, const runtime::FabricRoute& route,
                                    const runtime::BufferHandle& input, const runtime::BufferHandle& output,
                                    bool show, bool increment) {
  runtime::Program program;
  const cmd::SemaphoreId done{ccl::kDoneSemaphoreId};
  const cmd::ChipUnicast to_next{route.hops, route.forward};
  const api::TensorSlice whole = ccl::whole_buffer_slice(input);  // every page, as one run
  // Where the increment goes: the receiver core of the next chip, in NoC0 coordinates.
  const runtime::Noc0Coord next_receiver = runtime::chip_core_map(topology, next).tensix_noc0(kReceiver);

  // The sender's two streams. The reader's tensor is this chip's input; the writer's is the
  // output as the next chip lays it out (a mesh buffer has one address on every chip).
  const std::vector<cmd::Command> reader_commands = {cmd::read_tensor_slice_to_cb(whole, ccl::kDataCbId)};
  std::vector<cmd::Command> writer_commands = {cmd::fabric_write_cb_to_tensor_slice(whole, ccl::kDataCbId, to_next)};
  if (increment) writer_commands.push_back(cmd::fabric_unicast_semaphore_inc(done, 1, next_receiver.x, next_receiver.y, to_next));
  // Encoded (cmd::encode_stream refuses what the device would misread) with the tensor each moves.
  const kargs::InterpreterStreamSpec reader =
      kargs::interpreter_stream(runtime::ChipBuffers(topology, chip).interpreter_args(input), reader_commands);
  const kargs::InterpreterStreamSpec writer =
      kargs::interpreter_stream(runtime::ChipBuffers(topology, next).interpreter_args(output), writer_commands);
  if (show) std::printf("chip %u's writer stream:\n%s", chip, cmd::disassemble(writer.commands).c_str());

  kargs::InterpreterSpec sender;
  sender.packet_header_cb_id = ccl::kPacketHeaderCbId;  // scratch for the fabric packet headers
  sender.packet_size_in_pages = ccl::packet_size_in_pages(0, kPageBytes, plan.options().max_payload_bytes);
  sender.semaphore_ids = {ccl::kDoneSemaphoreId};  // the increment names it by id
  // The forward router of the route's fabric line, routing plane 0, and its three semaphores.
  ccl::connect_to_fabric(program, sender, plan, runtime::FabricPort{route.line, 0}, chip, kSender, route.forward,
                         !route.forward);
  program.circular_buffers.push_back(ccl::packet_header_cb(kSender));
  program.circular_buffers.push_back(ccl::data_cb(kSender, kPageBytes, 2 * sender.packet_size_in_pages));
  program.semaphores.push_back(ccl::tensix_semaphore(kSender, ccl::kDoneSemaphoreId));
  // Reader and writer on the core's two data-movement RISC-Vs, so reads and writes overlap.
  ccl::add_copy_kernels(program, kSender, sender, reader, writer, /*split=*/true);

  // The receiver: one stream, no tensor.
  const std::vector<cmd::Command> waiter_commands = {cmd::local_semaphore_wait(done, 1)};
  kargs::InterpreterSpec waiter;
  waiter.packet_header_cb_id = ccl::kPacketHeaderCbId;
  waiter.semaphore_ids = {ccl::kDoneSemaphoreId};
  waiter.streams = {kargs::interpreter_stream(std::nullopt, waiter_commands)};
  program.circular_buffers.push_back(ccl::packet_header_cb(kReceiver));
  program.semaphores.push_back(ccl::tensix_semaphore(kReceiver, ccl::kDoneSemaphoreId));
  program.kernels.push_back(ccl::interpreter_kernel(kReceiver, waiter));
  return program;
}

int ring_shift(bool increment) {
  sim::device::SimMeshDeviceOptions options;
  options.fabric.mode = runtime::FabricMode::Ring;  // one ring through the 8 chips, routers up
  sim::device::SimMeshDevice device(topo::load_system("t3k"), options);
  const topo::Topology& topology = device.topology();
  // The same plan the device launched its routers from: a pure function of the topology and the
  // device's fabric options (MeshDevice::fabric(), whatever the backend).
  const runtime::FabricPlan plan(topology, device.fabric());
  const std::vector<runtime::ChipId>& ring = plan.chips();  // 4, 0, 2, 6, 7, 3, 1, 5

  const runtime::BufferConfig config{runtime::BufferType::Dram, kBufferBytes, kPageBytes};  // interleaved
  const runtime::BufferHandle input = device.create_buffer(config);
  const runtime::BufferHandle output = device.create_buffer(config);

  std::mt19937_64 random(12);
  std::vector<Bytes> inputs;  // by ring position
  runtime::MeshWorkload workload;
  workload.name = "ring_shift";
  workload.buffers = {input, output};  // what its kernels address: the device frees neither before finish()
  for (std::size_t i = 0; i < ring.size(); ++i) {
    Bytes data(kBufferBytes);
    for (std::byte& b : data) b = static_cast<std::byte>(random() & 0xFF);
    device.write_buffer(ring[i], input, data);
    inputs.push_back(std::move(data));
    const runtime::ChipId next = ring[(i + 1) % ring.size()];
    workload.programs[ring[i]] =
        ring_shift_program(topology, plan, ring[i], next, plan.route(ring[i], next), input, output, i == 0,
                           increment);
  }

  const std::size_t first_entry = device.profile_size();
  device.enqueue_workload(workload);
  device.finish();  // throws runtime::DeviceError with a hang report if a kernel never returns
  const runtime::WorkerSpan span = runtime::worker_span(device.profile_since(first_entry), 0);  // the op's entries

  int wrong_chips = 0;
  Bytes received(kBufferBytes);
  for (std::size_t i = 0; i < ring.size(); ++i) {
    device.read_buffer(ring[i], output, received);
    if (received != inputs[(i + ring.size() - 1) % ring.size()]) {
      std::printf("chip %u: output is not chip %u's input\n", ring[i], ring[(i + ring.size() - 1) % ring.size()]);
      ++wrong_chips;
    }
  }
  std::printf("ring shift on t3k: %u B from each of %zu chips to its right neighbour in %.2f us simulated; %d chip(s) wrong\n",
              kBufferBytes, ring.size(), static_cast<double>(span.duration_ns()) / 1e3, wrong_chips);
  return wrong_chips == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const bool leave_out_increment = argc == 2 && std::strcmp(argv[1], "--leave-out-increment") == 0;
  if (argc > 2 || (argc == 2 && !leave_out_increment)) {
    std::fprintf(stderr, "custom_command_stream: unknown argument '%s'; expected none or --leave-out-increment\n",
                 argv[argc - 1]);
    return 2;
  }
  try {
    return ring_shift(!leave_out_increment);
  } catch (const runtime::DeviceError& e) {
    // The run could not complete: a hang (the report says which kernel waits on what) or a fault.
    std::fflush(stdout);  // what was printed before, then the report, in that order in one pipe
    std::fprintf(stderr, "%s\n", e.what());
    return 3;
  }
}
