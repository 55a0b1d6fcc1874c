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
      erisc_semaphores_(sizes.erisc_l1.global_semaphore_base(),
                        sizes.erisc_l1.global_semaphore_base() + runtime::kEriscGlobalSemaphoreBytes,
                        runtime::kProgramSemaphoreStride),
      buffer_space_(sizes.worker_grid, sizes.dram_banks,
                    sizes.dram_bank_bytes / runtime::kBufferAlignment * runtime::kBufferAlignment,
                    sizes.tensix_l1_bytes / runtime::kBufferAlignment * runtime::kBufferAlignment) {}

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
    return fmt::format("buffer config: {} B per core do not fit in L1: buffers may use {:#x}..{:#x} ({} B a core)",
                       aligned, pool.begin(), pool.lowest_in_use(), pool.lowest_in_use() - pool.begin());
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
  buffer_space_.add_buffer(handle);
  return handle;
}

// Its noun in messages, the call that frees one, and what else than the address can differ in
// an altered one.
struct HandleKind {
  std::string_view noun;
  std::string_view free_call;
  std::string_view other_fields;
};

namespace {

constexpr HandleKind kBufferKind{"buffer", "deallocate_buffer", "another config"};
constexpr HandleKind kSemaphoreKind{"global semaphore", "deallocate_global_semaphore", "other cores"};

// The live entry of `handle` in `live` (by id, each entry's `handle` as created), or
// std::invalid_argument starting "`call`: ": a freed handle (an id below `next_id`, which
// never comes again), an unknown one, or one altered since it was created.
template <typename Live, typename Handle>
const Live& live_entry(const std::map<std::uint32_t, Live>& live, const Handle& handle, std::uint32_t next_id,
                       const HandleKind& kind, std::string_view call) {
  const auto it = live.find(handle.id);
  if (it == live.end()) {
    throw std::invalid_argument(fmt::format("{}: {} {} {}", call, kind.noun, handle.id,
                                            handle.id != 0 && handle.id < next_id
                                                ? fmt::format("was freed already ({})", kind.free_call)
                                                : std::string("was not created on this device")));
  }
  if (!(it->second.handle == handle)) {
    throw std::invalid_argument(fmt::format("{}: {} {} is not as this device created it (at {:#x} here, {:#x} in "
                                            "the handle, or {})",
                                            call, kind.noun, handle.id, it->second.handle.address, handle.address,
                                            kind.other_fields));
  }
  return it->second;
}

}  // namespace

void DeviceAllocator::require_live(const runtime::BufferHandle& buffer, std::string_view call) const {
  live_entry(live_, buffer, next_buffer_id_, kBufferKind, call);
}

const DeviceAllocator::Unfinished* DeviceAllocator::unfinished_user(NamedIds named, std::uint32_t id,
                                                                    bool count_silent) const {
  for (const Unfinished& work : unfinished_) {
    const std::optional<std::vector<std::uint32_t>>& ids = work.*named;
    if (!ids) {
      if (count_silent) return &work;
    } else if (std::find(ids->begin(), ids->end(), id) != ids->end()) {
      return &work;
    }
  }
  return nullptr;
}

std::string DeviceAllocator::finish_first() const {
  if (failed_as_.empty()) return "call finish() first";
  return fmt::format("the device failed ({}) and that work will not finish: finish() throws the failure again; call "
                     "reset() first",
                     failed_as_);
}

void DeviceAllocator::require_unused(NamedIds named, std::uint32_t id, const HandleKind& kind,
                                     std::string_view field) const {
  const Unfinished* work = unfinished_user(named, id, true);
  if (work == nullptr) return;
  if (!(work->*named)) {
    throw std::invalid_argument(fmt::format(
        "{}: {} {}: {} is enqueued and not finished and does not name the {}s it uses (MeshWorkload::{}), so it may "
        "use this one; {}",
        kind.free_call, kind.noun, id, work->user, kind.noun, field, finish_first()));
  }
  throw std::invalid_argument(fmt::format("{}: {} {} is used by {}, enqueued and not finished; {}", kind.free_call,
                                          kind.noun, id, work->user, finish_first()));
}

void DeviceAllocator::require_no_unfinished_user(const runtime::BufferHandle& buffer, std::string_view call) const {
  require_live(buffer, call);
  if (const Unfinished* work = unfinished_user(&Unfinished::buffer_ids, buffer.id, false)) {
    if (!failed_as_.empty()) {
      throw std::invalid_argument(
          fmt::format("{}: buffer {} is used by {}, enqueued and not finished: {}", call, buffer.id, work->user,
                      finish_first()));
    }
    throw std::invalid_argument(fmt::format(
        "{}: buffer {} is used by {}, enqueued and not finished: host writes and reads happen when called, not in "
        "order with enqueued work; call finish() first, or enqueue them (enqueue_write_buffer, enqueue_read_buffer)",
        call, buffer.id, work->user));
  }
}

void DeviceAllocator::deallocate_buffer(const runtime::BufferHandle& buffer) {
  require_live(buffer, "deallocate_buffer");
  require_unused(&Unfinished::buffer_ids, buffer.id, kBufferKind, "buffers");
  const auto it = live_.find(buffer.id);
  pool_of(buffer.config).release(buffer.address, it->second.bytes);
  buffer_space_.remove(buffer.config.type == runtime::BufferType::Dram ? MemorySpace::Dram : MemorySpace::TensixL1,
                       buffer.address);
  live_.erase(it);
}

void DeviceAllocator::hold_named_by(std::span<const runtime::MeshWorkload> workloads) {
  // Every workload checked before any is held: holding one changes no handle's liveness, so the
  // later ones are checked as they will be at their turn.
  std::vector<Unfinished> held;
  for (const runtime::MeshWorkload& workload : workloads) {
    const std::string call = fmt::format("workload '{}'", workload.name);
    Unfinished work{call, std::nullopt, std::nullopt};
    if (!workload.buffers.empty()) {
      work.buffer_ids.emplace();
      for (const runtime::BufferHandle& buffer : workload.buffers) {
        require_live(buffer, call);
        work.buffer_ids->push_back(buffer.id);
      }
    }
    if (!workload.global_semaphores.empty()) {
      work.semaphore_ids.emplace();
      for (const runtime::GlobalSemaphore& semaphore : workload.global_semaphores) {
        require_live(semaphore, call);
        work.semaphore_ids->push_back(semaphore.id);
      }
    }
    held.push_back(std::move(work));
  }
  for (Unfinished& work : held) unfinished_.push_back(std::move(work));
}

void DeviceAllocator::hold_buffer_for_host_command(const runtime::BufferHandle& buffer, std::string_view call,
                                                   runtime::ChipId chip) {
  require_live(buffer, call);
  unfinished_.push_back(Unfinished{fmt::format("an {} on chip {}", call, chip), std::vector<std::uint32_t>{buffer.id},
                                   std::vector<std::uint32_t>{}});
}

runtime::CoreKind DeviceAllocator::hold_semaphore_for_reset(const runtime::GlobalSemaphore& semaphore,
                                                            std::string_view call) {
  const runtime::CoreKind kind = require_live(semaphore, call);
  unfinished_.push_back(
      Unfinished{fmt::format("a {}", call), std::vector<std::uint32_t>{}, std::vector<std::uint32_t>{semaphore.id}});
  return kind;
}

runtime::GlobalSemaphore DeviceAllocator::create_global_semaphore(const std::vector<runtime::CoreRange>& cores,
                                                                  runtime::CoreKind kind) {
  const bool tensix = kind == runtime::CoreKind::Tensix;
  // Tensix: among the L1 buffers, as one more from the top; ERISC: bottom up, so that without
  // frees the addresses are the region's in order.
  const std::optional<std::uint64_t> address =
      tensix ? l1_.allocate(runtime::kBufferAlignment, FreeList::From::Top)
             : erisc_semaphores_.allocate(runtime::kProgramSemaphoreStride, FreeList::From::Bottom);
  if (!address) {
    throw std::invalid_argument(
        tensix ? "create_global_semaphore: Tensix L1 is full"
               : fmt::format("create_global_semaphore: the ERISC global semaphore region {:#x}..{:#x} is full ({} "
                             "semaphores of {} B); free one first (deallocate_global_semaphore)",
                             erisc_semaphores_.begin(), erisc_semaphores_.end(),
                             runtime::kEriscGlobalSemaphoreBytes / runtime::kProgramSemaphoreStride,
                             runtime::kProgramSemaphoreStride));
  }
  runtime::GlobalSemaphore handle{next_semaphore_id_++, static_cast<std::uint32_t>(*address), cores};
  live_semaphores_.emplace(handle.id, LiveSemaphore{handle, kind});
  if (tensix) buffer_space_.add_global_semaphore(handle, runtime::kBufferAlignment);
  return handle;
}

runtime::CoreKind DeviceAllocator::require_live(const runtime::GlobalSemaphore& semaphore,
                                                std::string_view call) const {
  return live_entry(live_semaphores_, semaphore, next_semaphore_id_, kSemaphoreKind, call).kind;
}

void DeviceAllocator::deallocate_global_semaphore(const runtime::GlobalSemaphore& semaphore) {
  const runtime::CoreKind kind = require_live(semaphore, "deallocate_global_semaphore");
  require_unused(&Unfinished::semaphore_ids, semaphore.id, kSemaphoreKind, "global_semaphores");
  if (kind == runtime::CoreKind::Tensix) {
    l1_.release(semaphore.address, runtime::kBufferAlignment);
    buffer_space_.remove(MemorySpace::TensixL1, semaphore.address);
  } else {
    erisc_semaphores_.release(semaphore.address, runtime::kProgramSemaphoreStride);
  }
  live_semaphores_.erase(semaphore.id);
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
