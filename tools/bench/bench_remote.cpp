// What the remote device costs on top of the simulation (docs/remote_device.md): buffer bytes
// through write_buffer / read_buffer over a localhost TCP connection, and an all_gather's host
// wall time through RemoteMeshDevice against the same op on a local SimMeshDevice (the
// simulated times are equal by construction; remote_mesh_device_test checks it). A plain
// program printing one row per measurement; wall-clock figures, not test assertions.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "runtime/ccl/all_gather/all_gather.hpp"
#include "tools/bench/bench_all_gather_op.hpp"
#include "runtime/remote/remote_device_server.hpp"
#include "runtime/remote/remote_mesh_device.hpp"
#include "sim/device/sim_mesh_device.hpp"
#include "topologies/system_loader.hpp"

namespace {

using namespace cclmesh;
using bench::Clock;
using bench::seconds_since;

sim::device::SimMeshDeviceOptions ring_options() {
  sim::device::SimMeshDeviceOptions options;
  options.fabric.mode = runtime::FabricMode::Ring;
  return options;
}

// An all_gather of `output_bytes` (bf16, interleaved DRAM) on the device's ring; wall seconds of
// buffers + inputs + run + read back, and the op's simulated kernel time in us.
std::pair<double, double> all_gather(runtime::MeshDevice& device, const runtime::FabricOptions& fabric,
                                     std::uint64_t output_bytes) {
  const auto start = Clock::now();
  const runtime::ccl::all_gather::Params p = bench::prepare_all_gather(device, fabric, output_bytes);
  const std::size_t profile_begin = device.profile_size();
  runtime::ccl::all_gather::run(device, p);
  std::vector<std::byte> out(p.output_buffer.config.size_bytes);
  for (runtime::ChipId chip : device.chips()) device.read_buffer(chip, p.output_buffer, out);
  const double wall = seconds_since(start);
  std::uint64_t first = UINT64_MAX;
  std::uint64_t last = 0;
  for (const runtime::KernelProfile& kernel : device.profile_since(profile_begin)) {
    if (kernel.core_kind != runtime::CoreKind::Tensix) continue;
    first = std::min(first, kernel.start_ns);
    last = std::max(last, kernel.end_ns);
  }
  return {wall, static_cast<double>(last - first) / 1e3};
}

}  // namespace

// Usage: bench_remote [MIB]: the buffer transferred, 256 MiB by default.
int main(int argc, char** argv) {
  const std::uint64_t buffer_mib = argc > 1 ? std::stoull(argv[1]) : 256;
  sim::device::SimMeshDevice served_device(topo::load_system("t3k"), ring_options());
  runtime::remote::RemoteServerOptions server_options;
  // One write and one read of the whole buffer: the server must hold that much for one call.
  server_options.max_enqueued_host_bytes = std::max(server_options.max_enqueued_host_bytes, buffer_mib << 20);
  runtime::remote::RemoteDeviceServer server(served_device, server_options);
  std::thread serving([&] { server.serve(); });
  {
    runtime::remote::RemoteMeshDevice remote("127.0.0.1", server.port());
    fmt::print("# remote device over localhost TCP (t3k, ring fabric, functional)\n");
    const std::uint64_t buffer_bytes = buffer_mib << 20;
    const runtime::BufferHandle b = remote.create_buffer(
        {runtime::BufferType::Dram, buffer_bytes, 2048, runtime::TensorMemoryLayout::Interleaved, std::nullopt});
    std::vector<std::byte> data(buffer_bytes, std::byte{0x5A});
    auto start = Clock::now();
    remote.write_buffer(0, b, data);
    const double write_s = seconds_since(start);
    start = Clock::now();
    remote.read_buffer(0, b, data);
    const double read_s = seconds_since(start);
    fmt::print("write_buffer {} MiB: {:.3f} s ({:.2f} GB/s)\n", buffer_mib, write_s, buffer_bytes / write_s / 1e9);
    fmt::print("read_buffer  {} MiB: {:.3f} s ({:.2f} GB/s)\n", buffer_mib, read_s, buffer_bytes / read_s / 1e9);
    // The same calls on the served device itself: what the simulator's buffer model costs.
    start = Clock::now();
    served_device.write_buffer(1, b, data);
    const double local_write_s = seconds_since(start);
    start = Clock::now();
    served_device.read_buffer(1, b, data);
    const double local_read_s = seconds_since(start);
    fmt::print("(local write_buffer {:.3f} s, read_buffer {:.3f} s)\n", local_write_s, local_read_s);
    start = Clock::now();
    constexpr int kCalls = 1000;
    for (int i = 0; i < kCalls; ++i) remote.worker_grid();
    fmt::print("round trip (worker_grid x{}): {:.1f} us per call\n", kCalls, seconds_since(start) / kCalls * 1e6);
    const auto [remote_wall, remote_us] = all_gather(remote, remote.fabric(), 16ull << 20);
    sim::device::SimMeshDevice local(topo::load_system("t3k"), ring_options());
    const auto [local_wall, local_us] = all_gather(local, local.options().fabric, 16ull << 20);
    fmt::print("all_gather 16 MiB remote: {:.3f} s wall, {:.2f} us simulated\n", remote_wall, remote_us);
    fmt::print("all_gather 16 MiB local:  {:.3f} s wall, {:.2f} us simulated\n", local_wall, local_us);
    remote.shutdown_server();
  }
  serving.join();
  return 0;
}
