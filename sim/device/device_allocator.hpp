#pragma once
// Where a simulated mesh device puts what ops ask it for: buffers in DRAM bottom up per bank
// and in Tensix L1 top down, first fit in each (free_list.hpp), a freed buffer's memory given to
// the next that fits; global semaphores among the L1 buffers (Tensix) or bottom up in the
// ERISC's global semaphore region, a freed one's word given to the next; each program's circular
// buffers below the lowest live L1 buffer. It also knows which buffers and global semaphores the
// work enqueued and not finished names (workloads, enqueued host writes and reads), so that none
// of them is freed under it. The same rules, and
// the same refusals, whether the chips are built (SimMeshDevice) or not (PlanningMeshDevice, on
// which a run decides its bad input before building a device).

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/device/l1_map.hpp"
#include "runtime/device/types.hpp"
#include "runtime/device/workload.hpp"
#include "runtime/fabric/fabric_plan.hpp"
#include "sim/device/buffer_space.hpp"
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

// A kind of handle (buffer, global semaphore) as the allocator's refusals name it
// (device_allocator.cpp).
struct HandleKind;

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
  // The buffers and global semaphores every one of `workloads` names are live
  // (std::invalid_argument for the first that is not, and nothing held for any of them); they
  // stay held, none of them freed, until workloads_finished().
  void hold_named_by(std::span<const runtime::MeshWorkload> workloads);
  // `buffer` is live (std::invalid_argument, starting "`call`: ", otherwise); an enqueued host
  // write or read of it on `chip` (`call` names which) holds it until workloads_finished().
  void hold_buffer_for_host_command(const runtime::BufferHandle& buffer, std::string_view call, runtime::ChipId chip);
  // `semaphore` is live (std::invalid_argument, starting "`call`: ", otherwise; its core kind
  // returned); an enqueued reset of it (reset_global_semaphore) holds it until
  // workloads_finished().
  runtime::CoreKind hold_semaphore_for_reset(const runtime::GlobalSemaphore& semaphore, std::string_view call);
  void workloads_finished() {
    unfinished_.clear();
    failed_as_.clear();
  }
  // The device failed (`failure`: "a hang", "a fault", "a timeout"): the work enqueued and not
  // finished never will be (finish() throws the failure again until reset()), so the refusals of
  // what it holds advise reset() rather than finish(), which would send a caller round in a loop.
  void unfinished_work_failed(std::string failure) { failed_as_ = std::move(failure); }

  // A new global semaphore on `cores` (already checked against the chips) of `kind`: one word
  // from the top of the Tensix L1 free list, or from the bottom of the ERISC's global semaphore
  // region; std::invalid_argument when full.
  runtime::GlobalSemaphore create_global_semaphore(const std::vector<runtime::CoreRange>& cores,
                                                   runtime::CoreKind kind);
  // Gives the semaphore's word back. std::invalid_argument for a handle that is not a live
  // semaphore of this allocator or that work enqueued and not finished may use (a workload that
  // names it or names no global semaphores).
  void deallocate_global_semaphore(const runtime::GlobalSemaphore& semaphore);
  // std::invalid_argument, starting "`call`: ", unless `semaphore` is live here as it was
  // created; the kind of cores it is on.
  runtime::CoreKind require_live(const runtime::GlobalSemaphore& semaphore, std::string_view call) const;

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
  // The ERISC's global semaphore region, bottom up.
  const FreeList& erisc_semaphores() const { return erisc_semaphores_; }
  // What the live buffers and Tensix global semaphores hold, per bank and core (the NoC access
  // check's map).
  const BufferSpace& buffer_space() const { return buffer_space_; }
  std::size_t live_buffer_count() const { return live_.size(); }
  std::size_t live_global_semaphore_count() const { return live_semaphores_.size(); }

 private:
  struct Unfinished {
    std::string user;  // "workload 'all_gather'", "an enqueue_read_buffer on chip 3"
    std::optional<std::vector<std::uint32_t>> buffer_ids;     // none: it names none, may use any
    std::optional<std::vector<std::uint32_t>> semaphore_ids;  // the same for global semaphores
  };
  using NamedIds = std::optional<std::vector<std::uint32_t>> Unfinished::*;
  // The first unfinished work whose `named` ids hold `id`, or (count_silent) that names none.
  const Unfinished* unfinished_user(NamedIds named, std::uint32_t id, bool count_silent) const;
  // std::invalid_argument from `kind`'s free call when unfinished work may use the `kind` `id`:
  // it names it in its `named` ids, or names none (MeshWorkload::`field`).
  void require_unused(NamedIds named, std::uint32_t id, const HandleKind& kind, std::string_view field) const;
  // What a refusal for unfinished work tells the caller to do first: finish(), or on a failed
  // device reset().
  std::string finish_first() const;
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
  std::string failed_as_;  // unfinished_work_failed's; empty: the work may still finish
  FreeList erisc_semaphores_;
  struct LiveSemaphore {
    runtime::GlobalSemaphore handle;
    runtime::CoreKind kind = runtime::CoreKind::Tensix;
  };
  std::map<std::uint32_t, LiveSemaphore> live_semaphores_;  // by id
  BufferSpace buffer_space_;
  std::uint32_t next_buffer_id_ = 1;
  std::uint32_t next_semaphore_id_ = 1;
};

}  // namespace cclmesh::sim::device
