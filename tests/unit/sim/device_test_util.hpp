#pragma once
// Shared set-up for the simulated-device tests: byte patterns, buffer configs, interpreter
// workloads built by hand, and reading buffers back.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/host/kernel_args_builder.hpp"
#include "runtime/ccl/common/ccl_common.hpp"
#include "runtime/ccl/send_recv/send_recv.hpp"
#include "runtime/device/buffer_layout.hpp"
#include "runtime/device/types.hpp"
#include "runtime/device/workload.hpp"
#include "sim/device/sim_mesh_device.hpp"
#include "topologies/builtin_systems.hpp"

namespace cclmesh::sim::device::testing {

inline std::vector<std::byte> pattern(std::size_t bytes, std::uint32_t seed) {
  std::vector<std::byte> data(bytes);
  for (std::size_t i = 0; i < bytes; ++i) data[i] = static_cast<std::byte>((seed * 131 + i * 7 + (i >> 9)) & 0xFF);
  return data;
}

// Device options with a whole-system fabric of `mode` (line or ring), the rest defaults.
inline SimMeshDeviceOptions fabric_options(runtime::FabricMode mode) {
  SimMeshDeviceOptions options;
  options.fabric.mode = mode;
  return options;
}

inline runtime::BufferConfig dram_buffer(std::uint64_t bytes, std::uint32_t page_size) {
  return runtime::BufferConfig{runtime::BufferType::Dram, bytes, page_size, runtime::TensorMemoryLayout::Interleaved,
                               std::nullopt};
}

inline std::vector<std::byte> read_back(SimMeshDevice& device, runtime::ChipId chip, const runtime::BufferHandle& b) {
  std::vector<std::byte> out(b.config.size_bytes);
  device.read_buffer(chip, b, out);
  return out;
}

// The interpreter's address-generator args of a device buffer on a chip.
inline kargs::TensorArgs tensor_args(SimMeshDevice& device, const runtime::BufferHandle& b, runtime::ChipId chip) {
  const runtime::ChipCoreMap& map = device.core_map(chip);
  return runtime::buffer_layout(b, device.worker_grid(), map.dram_bank_count()).interpreter_args(map);
}

// One interpreter on logical core `core` of `chip`, with the header CB, a data CB and the
// given semaphores, as a one-program workload.
inline runtime::MeshWorkload interpreter_workload(const std::string& name, runtime::ChipId chip,
                                                  runtime::CoreCoord core, const kargs::InterpreterSpec& spec,
                                                  std::uint32_t data_page_size, std::uint32_t data_pages,
                                                  const std::vector<std::uint32_t>& semaphores) {
  runtime::Program program;
  program.circular_buffers.push_back(runtime::ccl::packet_header_cb(core));
  if (data_pages > 0) program.circular_buffers.push_back(runtime::ccl::data_cb(core, data_page_size, data_pages));
  for (std::uint32_t id : semaphores) program.semaphores.push_back(runtime::ccl::tensix_semaphore(core, id));
  program.kernels.push_back(runtime::ccl::interpreter_kernel(core, spec));
  runtime::MeshWorkload workload;
  workload.name = name;
  workload.programs[chip] = std::move(program);
  return workload;
}

// A registered kernel `kernel` (no args) alone on Tensix core (0, 0) of chip 0, RISC-V 0 on NoC0, as a
// one-program workload.
inline runtime::MeshWorkload one_kernel_workload(const std::string& name, const std::string& kernel) {
  runtime::Program program;
  runtime::KernelSpec spec;
  spec.kernel = kernel;
  spec.cores = {{{0, 0}, {0, 0}}};
  spec.noc = runtime::NocIndex::Noc0;
  program.kernels.push_back(spec);
  runtime::MeshWorkload workload;
  workload.name = name;
  workload.programs[0] = std::move(program);
  return workload;
}

// A send_recv of `input` on `sender` into `output` on `receiver`, over `fabric` (the device's;
// none for a copy on one chip); the rest of the Params at their defaults.
inline runtime::ccl::send_recv::Params send_recv_params(runtime::ChipId sender, runtime::ChipId receiver,
                                                        const runtime::BufferHandle& input,
                                                        const runtime::BufferHandle& output,
                                                        const runtime::FabricOptions& fabric = {}) {
  runtime::ccl::send_recv::Params params;
  params.sender = sender;
  params.receiver = receiver;
  params.input = input;
  params.output = output;
  params.fabric = fabric;
  return params;
}

inline api::TensorSlice whole(api::Shape4D shape) {
  return api::TensorSlice{shape, shape, {0, 0, 0, 0}, shape, {0, 0, 0, 0}};
}

}  // namespace cclmesh::sim::device::testing
