#include "tools/cclmesh/op_runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <limits>
#include <random>
#include <vector>

#include "runtime/ccl/broadcast/broadcast.hpp"
#include "runtime/ccl/common/ccl_common.hpp"
#include "runtime/ccl/send_recv/send_recv.hpp"
#include "sim/device/sim_mesh_device.hpp"
#include "tools/cclmesh/cli_error.hpp"
#include "topologies/errors.hpp"
#include "topologies/system_loader.hpp"

namespace cclmesh::cli {

namespace {

using runtime::BufferHandle;
using runtime::ChipId;
using Bytes = std::vector<std::byte>;

constexpr std::uint32_t kTilePageBytes = 2048;  // bf16 tile (REFERENCE §7.1)

topo::Topology load_topology(const std::string& spec) {
  try {
    return topo::load_system(spec);
  } catch (const topo::InputError& e) {
    throw UsageError(fmt::format("--system: {}", e.what()));
  }
}

// Seeded input bytes: std::mt19937_64's output is fixed by the standard, so every machine
// generates the same tensors for the same seed.
Bytes seeded_bytes(std::uint64_t seed, std::uint64_t salt, std::uint64_t bytes) {
  std::mt19937_64 generator(seed * 0x9E3779B97F4A7C15ull + salt);
  Bytes data(bytes);
  for (std::uint64_t i = 0; i < bytes; i += 8) {
    const std::uint64_t word = generator();
    for (std::uint64_t b = 0; b < 8 && i + b < bytes; ++b) data[i + b] = static_cast<std::byte>(word >> (8 * b));
  }
  return data;
}

struct Check {
  std::uint64_t wrong_elements = 0;
  std::string first_mismatch;
};

void compare(Check& check, ChipId chip, const std::string& buffer, const Bytes& expected, const Bytes& actual,
             std::uint32_t page_bytes, std::uint32_t element_bytes) {
  for (std::size_t i = 0; i < expected.size(); i += element_bytes) {
    const std::size_t end = std::min(expected.size(), i + element_bytes);
    if (!std::equal(expected.begin() + i, expected.begin() + end, actual.begin() + i)) {
      ++check.wrong_elements;
      if (check.first_mismatch.empty()) {
        std::size_t byte = i;
        while (byte < end && expected[byte] == actual[byte]) ++byte;
        check.first_mismatch =
            fmt::format("chip {} buffer '{}' page {} byte {}: expected 0x{:02x}, got 0x{:02x}", chip, buffer,
                        byte / page_bytes, byte % page_bytes, static_cast<unsigned>(expected[byte]),
                        static_cast<unsigned>(actual[byte]));
      }
    }
  }
}

sim::device::SimMeshDeviceOptions device_options(const RunOptions& options, bool ring) {
  sim::device::SimMeshDeviceOptions device;
  device.data_mode = options.no_data ? sim::DataMode::TimingOnly : sim::DataMode::Functional;
  device.fabric.mode = ring ? runtime::FabricMode::Ring : runtime::FabricMode::Line;
  device.max_simulated_time = options.max_sim_time;
  return device;
}

void reject_unsupported(const RunOptions& options, std::uint32_t n_chips) {
  if (options.mode != "fabric") {
    throw UsageError(fmt::format("--mode: '{}' is not available yet for {}; the simulator runs 'fabric' "
                                 "(persistent routers) collectives so far",
                                 options.mode, to_string(options.op)));
  }
  if (options.cluster_axis) {
    throw UsageError(fmt::format("--cluster-axis: not available yet for {}", to_string(options.op)));
  }
  if (options.dtype != "bf16" || options.layout != "tile" || options.memory != "dram") {
    throw UsageError(fmt::format("--dtype/--layout/--memory: {} runs bf16 TILE pages in DRAM so far", to_string(options.op)));
  }
  if (options.links != 1) {
    throw UsageError(fmt::format("--links: {} uses 1 link so far, got {}", to_string(options.op), options.links));
  }
  if (n_chips < 2) throw UsageError(fmt::format("--system: {} needs at least 2 chips, the system has {}", to_string(options.op), n_chips));
  if (options.topology == "ring" && n_chips == 2) {
    throw UsageError("--topology: a ring of 2 chips does not work (tt-metal issue #12770); use --topology line");
  }
}

}  // namespace

RunResult run_collective(const RunOptions& options) {
  const auto wall_start = std::chrono::steady_clock::now();
  topo::Topology topology = load_topology(options.system);
  const auto n_chips = static_cast<std::uint32_t>(topology.chips().size());
  if (options.op != CollectiveOp::SendRecv && options.op != CollectiveOp::Broadcast) {
    throw UsageError(fmt::format("--op: '{}' is not available in the simulator yet; available: send_recv, broadcast",
                                 to_string(options.op)));
  }
  reject_unsupported(options, n_chips);
  const bool ring = options.topology == "ring";

  const std::uint64_t pages = options.size_bytes / kTilePageBytes;
  if (pages == 0) {
    throw UsageError(fmt::format("--size: {} B is less than one {} B tile page", options.size_bytes, kTilePageBytes));
  }
  const std::uint64_t bytes = pages * kTilePageBytes;

  std::unique_ptr<sim::device::SimMeshDevice> device;
  try {
    device = std::make_unique<sim::device::SimMeshDevice>(topology, device_options(options, ring));
  } catch (const topo::InputError& e) {
    throw UsageError(fmt::format("--topology: {}", e.what()));
  }
  runtime::BufferConfig config;
  config.type = runtime::BufferType::Dram;
  config.size_bytes = bytes;
  config.page_size_bytes = kTilePageBytes;
  const BufferHandle input = device->create_buffer(config);
  const BufferHandle output = device->create_buffer(config);
  const std::vector<ChipId> order = device->fabric().chips();

  std::vector<ChipId> sources;
  std::vector<ChipId> destinations;
  runtime::MeshWorkload workload;
  try {
    if (options.op == CollectiveOp::SendRecv) {
      // One pair, neighbours at the start of the fabric: nccl-tests' sendrecv moves data one hop.
      runtime::ccl::send_recv::Params params;
      params.sender = order.at(0);
      params.receiver = order.at(1);
      params.input = input;
      params.output = output;
      params.fabric = device->options().fabric;
      sources = {params.sender};
      destinations = {params.receiver};
      workload = runtime::ccl::send_recv::build(params, device->topology());
    } else {
      runtime::ccl::broadcast::Params params;
      params.root = order.at(0);
      params.input = input;
      params.output = output;
      params.fabric = device->options().fabric;
      sources = {params.root};
      for (ChipId chip : order) {
        if (chip != params.root) destinations.push_back(chip);
      }
      workload = runtime::ccl::broadcast::build(params, device->topology());
    }
  } catch (const runtime::ccl::CclParamsError& e) {
    throw UsageError(e.what());
  }

  Bytes source_data;
  if (!options.no_data) {
    source_data = seeded_bytes(options.seed, sources.front(), bytes);
    device->write_buffer(sources.front(), input, source_data);
  }
  const sim::EngineStats before = device->stats();
  const sim::SimTime enqueued = device->now();
  device->enqueue_workload(workload);
  device->finish();
  const sim::EngineStats after = device->stats();

  std::int64_t first_start_ns = std::numeric_limits<std::int64_t>::max();
  std::int64_t last_end_ns = 0;
  for (const runtime::KernelProfile& kernel : device->profile()) {
    if (kernel.core_kind != runtime::CoreKind::Tensix) continue;  // persistent routers
    first_start_ns = std::min<std::int64_t>(first_start_ns, static_cast<std::int64_t>(kernel.start_ns));
    last_end_ns = std::max<std::int64_t>(last_end_ns, static_cast<std::int64_t>(kernel.end_ns));
  }

  RunResult result;
  result.op = to_string(options.op);
  result.system = options.system;
  result.n_chips = n_chips;
  result.topology = options.topology;
  result.links = 1;
  result.directions = options.op == CollectiveOp::Broadcast && ring ? 2 : 1;
  result.mode = options.mode;
  result.dtype = options.dtype;
  result.size_bytes = bytes;
  result.count = bytes / 2;
  result.time_us = static_cast<double>(last_end_ns - first_start_ns) / 1e3;
  result.launch_us = static_cast<double>(first_start_ns) / 1e3 - enqueued.us();
  result.line_rate_GBps = static_cast<double>(topology.links().front().rate_bytes_per_s) / 1e9;
  result.bandwidth = compute_bandwidth(
      {options.op, bytes, n_chips, result.time_us, result.links, result.directions, result.line_rate_GBps});
  result.sim_events = after.events_executed - before.events_executed;

  if (!options.no_data) {
    Check check;
    for (ChipId chip : destinations) {
      Bytes actual(bytes);
      device->read_buffer(chip, output, actual);
      compare(check, chip, "output", source_data, actual, kTilePageBytes, 2);
    }
    result.verified = check.wrong_elements == 0;
    result.wrong_elements = check.wrong_elements;
    result.mismatch = check.first_mismatch;
  }
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return result;
}

}  // namespace cclmesh::cli
