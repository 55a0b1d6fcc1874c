#pragma once
// The all_gather the remote benchmarks run (bench_remote, bench_served_profile): bf16,
// interleaved DRAM, `output_bytes` gathered, its buffers and done semaphore made on `device`
// and every chip's input written, as the CLI prepares a point; freed after, as the CLI frees it.
#include <chrono>
#include <cstdint>
#include <vector>

#include "runtime/ccl/all_gather/all_gather.hpp"
#include "runtime/device/mesh_device.hpp"

namespace cclmesh::bench {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

inline runtime::ccl::all_gather::Params prepare_all_gather(runtime::MeshDevice& device,
                                                           const runtime::FabricOptions& fabric,
                                                           std::uint64_t output_bytes) {
  namespace ag = runtime::ccl::all_gather;
  const auto n = static_cast<std::uint32_t>(device.chips().size());
  ag::Params p;
  p.input.shape = {1, 1, 32, static_cast<std::uint32_t>(output_bytes / n / 2 / 32)};
  p.fabric = fabric;
  p.input_buffer = device.create_buffer(runtime::ccl::interleaved_buffer_config(p.input, runtime::BufferType::Dram));
  p.output_buffer = device.create_buffer(
      runtime::ccl::interleaved_buffer_config(ag::output_spec(p, device.topology()), runtime::BufferType::Dram));
  p.done_semaphore =
      device.create_global_semaphore(ag::semaphore_cores(p, device.topology()), runtime::CoreKind::Tensix, 0);
  const std::vector<std::byte> bytes(p.input_buffer.config.size_bytes, std::byte{0x3C});
  for (runtime::ChipId chip : device.chips()) device.write_buffer(chip, p.input_buffer, bytes);
  return p;
}

inline void free_all_gather(runtime::MeshDevice& device, const runtime::ccl::all_gather::Params& p) {
  device.deallocate_global_semaphore(*p.done_semaphore);
  device.deallocate_buffer(p.output_buffer);
  device.deallocate_buffer(p.input_buffer);
}

}  // namespace cclmesh::bench
