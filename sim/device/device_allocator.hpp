#pragma once
// Where a simulated mesh device puts what ops ask it for: buffers in DRAM bottom up per bank
// and in Tensix L1 top down, first fit in each (free_list.hpp), a freed buffer's memory given to
// the next that fits; global semaphores among the L1 buffers (Tensix, never freed) or in the
// ERISC's global semaphore region; each program's circular buffers below the lowest live L1
// buffer. It also knows which buffers the work enqueued and not finished names (workloads,
// enqueued host writes and reads), so that none of them is freed under it. The same rules, and
// the same refusals, whether the chips are built (SimMeshDevice) or not (PlanningMeshDevice, on
// which a run decides its bad input before building a device).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/device/l1_map.hpp"
#include "runtime/device/types.hpp"
#include "runtime/device/workload.hpp"
#include "runtime/fabric/fabric_plan.hpp"
#include "sim/device/free_list.hpp"
#include "topologies/topology.hpp"

namespace cclmesh::sim::device {

// The sizes the allocator places into, each the smallest over the mesh's chips.
struct DeviceMemorySizes {
  runtime::CoreCoord worker_grid;
  std::uint32_t dram_banks = 0;
  std::uint64_t dram_bank_bytes = 0;
  std::uint64_t tensix_l1_bytes = 0;
  runtime::EriscL1Map erisc_l1;
};

// The sizes a simulated device of `topology` (one architecture) with `fabric` places into, from
// the architectures' built-in specs and the chips' core maps, as its chips would be built.
DeviceMemorySizes device_memory_sizes(const topo::Topology& topology, const runtime::FabricOptions& fabric);

class DeviceAllocator {
 public:
  explicit DeviceAllocator(const DeviceMemorySizes& sizes);

  // Throws runtime::BufferConfigError when the buffer does not fit in the memory the live
  // buffers leave (the message says how much is free and in how many blocks).
  runtime::BufferHandle create_buffer(const runtime::BufferConfig& config);
  // Gives the buffer's memory back (merged with free neighbours). std::invalid_argument for a
  // handle that is not a live buffer of this allocator (never created, freed already, or not as
  // created) or that work enqueued and not finished names (or may use: a workload that names no
  // buffers).
  void deallocate_buffer(const runtime::BufferHandle& buffer);
  // std::invalid_argument, starting "`call`: ", unless `buffer` is live here as it was created.
  void require_live(const runtime::BufferHandle& buffer, std::string_view call) const;
  // require_live, and std::invalid_argument when work enqueued and not finished (a workload, an
  // enqueued host write or read) names `buffer`: a host write or read now would not be in
  // order with it. A workload that names no buffers does not count here (unlike for a free,
  // which could hand its memory to another buffer): which buffers it uses is not known, and
  // host I/O while one is enqueued was accepted before workloads named their buffers.
  void require_no_unfinished_user(const runtime::BufferHandle& buffer, std::string_view call) const;
  // The buffers `workload` names are live (std::invalid_argument otherwise); they stay held,
  // none of them freed, until workloads_finished().
  void hold_buffers_of(const runtime::MeshWorkload& workload);
  // `buffer` is live (std::invalid_argument, starting "`call`: ", otherwise); an enqueued host
  // write or read of it on `chip` (`call` names which) holds it until workloads_finished().
  void hold_buffer_for_host_command(const runtime::BufferHandle& buffer, std::string_view call, runtime::ChipId chip);
  void workloads_finished() { unfinished_.clear(); }

  // The address of a new global semaphore on cores of `kind`; std::invalid_argument when full.
  std::uint32_t global_semaphore_address(runtime::CoreKind kind);
  std::uint32_t next_semaphore_id() { return next_semaphore_id_++; }

  // Every CB of `program` (of `workload` on `chip`) has pages and ends below the L1 buffers:
  // std::invalid_argument for a CB without pages (the builder's bug),
  // runtime::WorkloadPlacementError for one above the buffers (the memory config asked for).
  void require_circular_buffers_fit(const std::string& workload, runtime::ChipId chip,
                                    const runtime::Program& program) const;

  const DeviceMemorySizes& sizes() const { return sizes_; }
  // Bank-relative addresses: DRAM from kDramBufferBase up, Tensix L1 buffers and semaphores
  // from the top of L1 down to kTensixCircularBufferBase.
  const FreeList& dram() const { return dram_; }
  const FreeList& tensix_l1() const { return l1_; }
  std::size_t live_buffer_count() const { return live_.size(); }

 private:
  struct Unfinished {
    std::string user;  // "workload 'all_gather'", "an enqueue_read_buffer on chip 3"
    std::optional<std::vector<std::uint32_t>> buffer_ids;  // none: it names none, may use any
  };
  // The first unfinished work that names `buffer_id`, or (count_silent) a workload that names
  // no buffers.
  const Unfinished* unfinished_user(std::uint32_t buffer_id, bool count_silent) const;
  FreeList& pool_of(const runtime::BufferConfig& config) {
    return config.type == runtime::BufferType::Dram ? dram_ : l1_;
  }

  DeviceMemorySizes sizes_;
  FreeList dram_;
  FreeList l1_;
  struct Live {
    runtime::BufferHandle handle;
    std::uint64_t bytes = 0;  // per bank or core
  };
  std::map<std::uint32_t, Live> live_;  // by id
  std::vector<Unfinished> unfinished_;  // in enqueue order
  std::uint32_t erisc_semaphore_next_ = 0;
  std::uint32_t next_buffer_id_ = 1;
  std::uint32_t next_semaphore_id_ = 1;
};

}  // namespace cclmesh::sim::device
