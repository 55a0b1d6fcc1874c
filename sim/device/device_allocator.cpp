#include "sim/device/device_allocator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "runtime/device/buffer_layout.hpp"
#include "runtime/device/cb_placement.hpp"
#include "runtime/device/core_map.hpp"
#include "runtime/device/mesh_device.hpp"
#include "sim/device/simulated_system_config.hpp"
#include "sim/model/arch_params.hpp"

namespace cclmesh::sim::device {
namespace {

std::uint64_t align_up(std::uint64_t value, std::uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

}  // namespace

DeviceMemorySizes device_memory_sizes(const topo::Topology& topology, const runtime::FabricOptions& fabric) {
  DeviceMemorySizes sizes;
  sizes.worker_grid = runtime::common_worker_grid(topology);
  sizes.dram_banks = runtime::chip_core_map(topology, topology.chips().front().id).dram_bank_count();
  sizes.tensix_l1_bytes = std::numeric_limits<std::uint64_t>::max();
  for (const topo::Chip& chip : topology.chips()) {
    const ArchParams& params = builtin_arch_spec(sim_arch(chip.arch))->params;
    sizes.tensix_l1_bytes = std::min<std::uint64_t>(sizes.tensix_l1_bytes, params.l1.tensix_bytes);
    sizes.dram_bank_bytes = params.dram.bank_bytes();
  }
  sizes.erisc_l1 = fabric.erisc_l1_map();
  return sizes;
}

DeviceAllocator::DeviceAllocator(const DeviceMemorySizes& sizes)
    : sizes_(sizes),
      dram_next_(runtime::kDramBufferBase),
      l1_top_(sizes.tensix_l1_bytes / runtime::kBufferAlignment * runtime::kBufferAlignment),
      erisc_semaphore_next_(sizes.erisc_l1.global_semaphore_base()) {}

runtime::BufferHandle DeviceAllocator::create_buffer(const runtime::BufferConfig& config) {
  const runtime::BufferLayout layout(config, 0, sizes_.worker_grid, sizes_.dram_banks);
  std::uint64_t address = 0;
  if (config.type == runtime::BufferType::Dram) {
    address = align_up(dram_next_, runtime::kBufferAlignment);
    const std::uint64_t end = address + layout.bytes_per_target();
    if (end > sizes_.dram_bank_bytes) {
      throw runtime::BufferConfigError(fmt::format("buffer config: {} B per DRAM bank do not fit: {} B of {} B in use",
                                                   layout.bytes_per_target(), address, sizes_.dram_bank_bytes));
    }
    dram_next_ = end;
  } else {
    const std::uint64_t bytes = align_up(layout.bytes_per_target(), runtime::kBufferAlignment);
    if (l1_top_ < bytes || l1_top_ - bytes < runtime::kTensixCircularBufferBase) {
      throw runtime::BufferConfigError(
          fmt::format("buffer config: {} B per core do not fit in L1: buffers may use {:#x}..{:#x}", bytes,
                      runtime::kTensixCircularBufferBase, l1_top_));
    }
    l1_top_ -= bytes;
    address = l1_top_;
  }
  runtime::BufferLayout(config, address, sizes_.worker_grid, sizes_.dram_banks);  // the address fits the addrgen
  return runtime::BufferHandle{next_buffer_id_++, address, config};
}

std::uint32_t DeviceAllocator::global_semaphore_address(runtime::CoreKind kind) {
  if (kind == runtime::CoreKind::Tensix) {
    if (l1_top_ < runtime::kTensixCircularBufferBase + runtime::kBufferAlignment) {
      throw std::invalid_argument("create_global_semaphore: Tensix L1 is full");
    }
    l1_top_ -= runtime::kBufferAlignment;
    return static_cast<std::uint32_t>(l1_top_);
  }
  if (erisc_semaphore_next_ + runtime::kProgramSemaphoreStride >
      sizes_.erisc_l1.global_semaphore_base() + runtime::kEriscGlobalSemaphoreBytes) {
    throw std::invalid_argument("create_global_semaphore: the ERISC global semaphore region is full");
  }
  const std::uint32_t address = erisc_semaphore_next_;
  erisc_semaphore_next_ += runtime::kProgramSemaphoreStride;
  return address;
}

void DeviceAllocator::require_circular_buffers_fit(const std::string& workload, runtime::ChipId chip,
                                                   const runtime::Program& program) const {
  const std::vector<std::uint64_t> addresses = runtime::circular_buffer_addresses(program.circular_buffers);
  for (std::size_t i = 0; i < program.circular_buffers.size(); ++i) {
    const runtime::CircularBufferSpec& spec = program.circular_buffers[i];
    const std::uint64_t bytes = std::uint64_t{spec.num_pages} * spec.page_size_bytes;
    if (bytes == 0) {
      throw std::invalid_argument(
          fmt::format("workload '{}' chip {}: CB {} has no pages or page size 0", workload, chip, spec.cb_id));
    }
    const std::uint64_t end = addresses[i] + bytes;
    if (end > l1_top_) {
      throw runtime::WorkloadPlacementError(
          fmt::format("workload '{}' chip {}: CB {} ({} x {} B) ends at {:#x}, above the L1 buffers at {:#x}", workload,
                      chip, spec.cb_id, spec.num_pages, spec.page_size_bytes, end, l1_top_));
    }
  }
}

}  // namespace cclmesh::sim::device
