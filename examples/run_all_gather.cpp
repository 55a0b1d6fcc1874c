// The library equivalent of
//
//   cclmesh run --system t3k --op all_gather --size 1MiB
//
// from a developer's own C++: the simulated T3K, an all_gather built by the op builder, every
// chip's output read back and checked bit for bit against the host reference, and the op's
// simulated time. Exit 0 when every chip's output is right, 1 when one is not, 3 when the run
// cannot complete (a hang or fault: the device's report on stderr).
// Walked through in docs/library.md.

#include <cstddef>
#include <cstdio>
#include <random>
#include <vector>

#include "runtime/ccl/all_gather/all_gather.hpp"
#include "runtime/ccl/all_gather/allocate.hpp"
#include "runtime/ccl/common/host_reference.hpp"
#include "runtime/device/worker_span.hpp"
#include "sim/device/sim_mesh_device.hpp"
#include "topologies/system_loader.hpp"

using namespace cclmesh;
namespace ccl = runtime::ccl;
using Bytes = std::vector<std::byte>;

namespace {

int all_gather_on_t3k() {
  // The simulated T3K (8 Wormhole chips, 2x4 mesh). The fabric's routers come up at
  // construction as one ring through every chip: what `cclmesh run` uses on a T3K.
  sim::device::SimMeshDeviceOptions options;
  options.fabric.mode = runtime::FabricMode::Ring;
  sim::device::SimMeshDevice device(topo::load_system("t3k"), options);

  // Each chip's input: a [1, 1, 32, 2048] bf16 tensor in 32x32 tiles (128 KiB, 64 tiles).
  // Gathered along dim 3 over 8 chips, the output is [1, 1, 32, 16384]: the 1 MiB that
  // `--size 1MiB` names (all_gather's size is the gathered tensor, as in nccl-tests).
  ccl::all_gather::Params params;
  params.input.shape = {1, 1, 32, 2048};
  params.dim = 3;
  params.fabric = device.fabric();  // the op's workers connect to the routers the device runs
  ccl::all_gather::allocate(device, params);  // input and output in DRAM, the done semaphore

  // The ring's ranks (4, 0, 2, 6, 7, 3, 1, 5): the output holds rank 0's input first.
  const std::vector<runtime::ChipId> ranks = ccl::resolve_groups(params.groups, device.topology(), params.fabric).front();
  std::mt19937_64 random(2026);
  std::vector<Bytes> inputs;  // by rank
  for (runtime::ChipId chip : ranks) {
    Bytes input(params.input_buffer.config.size_bytes);
    for (std::byte& b : input) b = static_cast<std::byte>(random() & 0xFF);
    device.write_buffer(chip, params.input_buffer, input);  // host side, zero simulated time
    inputs.push_back(std::move(input));
  }

  const std::size_t first_entry = device.profile_size();
  ccl::all_gather::run(device, params);  // build the workload, enqueue, finish
  const runtime::WorkerSpan span = runtime::worker_span(device.profile_since(first_entry), 0);  // the op's entries

  const Bytes expected = ccl::reference::concat(inputs, params.input, params.dim);
  int wrong_chips = 0;
  Bytes output(params.output_buffer.config.size_bytes);
  for (runtime::ChipId chip : ranks) {
    device.read_buffer(chip, params.output_buffer, output);
    if (output != expected) {
      std::printf("chip %u: output differs from the host reference\n", static_cast<unsigned>(chip));
      ++wrong_chips;
    }
  }
  const double us = static_cast<double>(span.duration_ns()) / 1e3;
  std::printf("all_gather on t3k: %zu B gathered on %zu chips in %.2f us simulated (%.2f GB/s algbw); %d chip(s) wrong\n",
              output.size(), ranks.size(), us, static_cast<double>(output.size()) / (us * 1e3), wrong_chips);
  return wrong_chips == 0 ? 0 : 1;
}

}  // namespace

int main() {
  try {
    return all_gather_on_t3k();
  } catch (const runtime::DeviceError& e) {
    // The run could not complete: a hang (the report says which kernel waits on what) or a fault.
    std::fprintf(stderr, "%s\n", e.what());
    return 3;
  }
}
