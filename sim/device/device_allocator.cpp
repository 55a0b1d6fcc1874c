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
      dram_(runtime::kDramBufferBase, sizes.dram_bank_bytes / runtime::kBufferAlignment * runtime::kBufferAlignment,
            runtime::kBufferAlignment),
      l1_(runtime::kTensixCircularBufferBase,
          sizes.tensix_l1_bytes / runtime::kBufferAlignment * runtime::kBufferAlignment, runtime::kBufferAlignment),
      erisc_semaphore_next_(sizes.erisc_l1.global_semaphore_base()) {}

namespace {

// Why `bytes` found no block in `pool`: what is in use or free, and, when the free memory is
// not one block at the free end (bottom up: the top; top down: the bottom), in how many blocks
// and the largest (the text without frees is the bump allocator's, which goldens hold).
std::string no_room(const FreeList& pool, std::uint64_t bytes, bool dram) {
  const std::string blocks =
      fmt::format("{} B free in {} block{}, the largest {} B", pool.free_bytes(), pool.free_block_count(),
                  pool.free_block_count() == 1 ? "" : "s", pool.largest_free_block());
  if (dram) {
    return fmt::format("buffer config: {} B per DRAM bank do not fit: {} B of {} B in use{}", bytes,
                       pool.end() - pool.free_bytes(), pool.end(),
                       pool.free_block_count() > 1 ? ", " + blocks : std::string());
  }
  const std::uint64_t aligned = align_up(bytes, runtime::kBufferAlignment);
  const bool one_block_at_the_bottom = pool.free_block_count() == 0 || pool.lowest_in_use() > pool.begin();
  if (one_block_at_the_bottom && pool.free_block_count() <= 1) {
    return fmt::format("buffer config: {} B per core do not fit in L1: buffers may use {:#x}..{:#x}", aligned,
                       pool.begin(), pool.lowest_in_use());
  }
  return fmt::format("buffer config: {} B per core do not fit in L1: buffers may use {:#x}..{:#x}, {}", aligned,
                     pool.begin(), pool.end(), blocks);
}

}  // namespace

runtime::BufferHandle DeviceAllocator::create_buffer(const runtime::BufferConfig& config) {
  const runtime::BufferLayout layout(config, 0, sizes_.worker_grid, sizes_.dram_banks);
  const bool dram = config.type == runtime::BufferType::Dram;
  FreeList& pool = pool_of(config);
  const std::uint64_t bytes = layout.bytes_per_target();
  const std::optional<std::uint64_t> address = pool.allocate(bytes, dram ? FreeList::From::Bottom : FreeList::From::Top);
  if (!address) throw runtime::BufferConfigError(no_room(pool, bytes, dram));
  try {
    runtime::BufferLayout(config, *address, sizes_.worker_grid, sizes_.dram_banks);  // the address fits the addrgen
  } catch (...) {
    pool.release(*address, bytes);
    throw;
  }
  runtime::BufferHandle handle{next_buffer_id_++, *address, config};
  live_.emplace(handle.id, Live{handle, bytes});
  return handle;
}

void DeviceAllocator::require_live(const runtime::BufferHandle& buffer, std::string_view call) const {
  const auto it = live_.find(buffer.id);
  if (it == live_.end()) {
    throw std::invalid_argument(fmt::format("{}: buffer {} {}", call, buffer.id,
                                            buffer.id != 0 && buffer.id < next_buffer_id_
                                                ? "was freed already (deallocate_buffer)"
                                                : "was not created on this device"));
  }
  if (!(it->second.handle == buffer)) {
    throw std::invalid_argument(fmt::format("{}: buffer {} is not as this device created it (at {:#x} here, {:#x} in "
                                            "the handle, or another config)",
                                            call, buffer.id, it->second.handle.address, buffer.address));
  }
}

const DeviceAllocator::Unfinished* DeviceAllocator::unfinished_user(std::uint32_t buffer_id,
                                                                    bool count_silent) const {
  for (const Unfinished& work : unfinished_) {
    if (!work.buffer_ids) {
      if (count_silent) return &work;
    } else if (std::find(work.buffer_ids->begin(), work.buffer_ids->end(), buffer_id) != work.buffer_ids->end()) {
      return &work;
    }
  }
  return nullptr;
}

void DeviceAllocator::require_no_unfinished_user(const runtime::BufferHandle& buffer, std::string_view call) const {
  require_live(buffer, call);
  if (const Unfinished* work = unfinished_user(buffer.id, false)) {
    throw std::invalid_argument(fmt::format(
        "{}: buffer {} is used by {}, enqueued and not finished: host writes and reads happen when called, not in "
        "order with enqueued work; call finish() first, or enqueue them (enqueue_write_buffer, enqueue_read_buffer)",
        call, buffer.id, work->user));
  }
}

void DeviceAllocator::deallocate_buffer(const runtime::BufferHandle& buffer) {
  require_live(buffer, "deallocate_buffer");
  if (const Unfinished* work = unfinished_user(buffer.id, true)) {
    if (!work->buffer_ids) {
      throw std::invalid_argument(fmt::format(
          "deallocate_buffer: buffer {}: {} is enqueued and not finished and does not name the buffers it "
          "uses (MeshWorkload::buffers), so it may use this one; call finish() first",
          buffer.id, work->user));
    }
    throw std::invalid_argument(fmt::format(
        "deallocate_buffer: buffer {} is used by {}, enqueued and not finished; call finish() first", buffer.id,
        work->user));
  }
  const auto it = live_.find(buffer.id);
  pool_of(buffer.config).release(buffer.address, it->second.bytes);
  live_.erase(it);
}

void DeviceAllocator::hold_buffers_of(const runtime::MeshWorkload& workload) {
  const std::string call = fmt::format("workload '{}'", workload.name);
  Unfinished work{call, std::nullopt};
  if (!workload.buffers.empty()) {
    work.buffer_ids.emplace();
    for (const runtime::BufferHandle& buffer : workload.buffers) {
      require_live(buffer, call);
      work.buffer_ids->push_back(buffer.id);
    }
  }
  unfinished_.push_back(std::move(work));
}

void DeviceAllocator::hold_buffer_for_host_command(const runtime::BufferHandle& buffer, std::string_view call,
                                                   runtime::ChipId chip) {
  require_live(buffer, call);
  unfinished_.push_back(Unfinished{fmt::format("an {} on chip {}", call, chip), std::vector<std::uint32_t>{buffer.id}});
}

std::uint32_t DeviceAllocator::global_semaphore_address(runtime::CoreKind kind) {
  if (kind == runtime::CoreKind::Tensix) {
    const std::optional<std::uint64_t> address = l1_.allocate(runtime::kBufferAlignment, FreeList::From::Top);
    if (!address) throw std::invalid_argument("create_global_semaphore: Tensix L1 is full");
    return static_cast<std::uint32_t>(*address);
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
    const std::uint64_t l1_buffers = l1_.lowest_in_use();
    if (end > l1_buffers) {
      throw runtime::WorkloadPlacementError(
          fmt::format("workload '{}' chip {}: CB {} ({} x {} B) ends at {:#x}, above the L1 buffers at {:#x}", workload,
                      chip, spec.cb_id, spec.num_pages, spec.page_size_bytes, end, l1_buffers));
    }
  }
}

}  // namespace cclmesh::sim::device
