#pragma once
// Where a simulated mesh device puts what ops ask it for: buffers in DRAM bottom up per bank
// and in Tensix L1 top down, global semaphores below the L1 buffers (Tensix) or in the ERISC's
// global semaphore region, and each program's circular buffers below the L1 buffers. The same
// rules, and the same refusals, whether the chips are built (SimMeshDevice) or not
// (PlanningMeshDevice, on which a run decides its bad input before building a device).

#include <cstdint>
#include <string>

#include "runtime/device/l1_map.hpp"
#include "runtime/device/types.hpp"
#include "runtime/device/workload.hpp"
#include "runtime/fabric/fabric_plan.hpp"
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

  // Throws runtime::BufferConfigError when the buffer does not fit beside those already placed.
  runtime::BufferHandle create_buffer(const runtime::BufferConfig& config);
  // The address of a new global semaphore on cores of `kind`; std::invalid_argument when full.
  std::uint32_t global_semaphore_address(runtime::CoreKind kind);
  std::uint32_t next_semaphore_id() { return next_semaphore_id_++; }

  // Every CB of `program` (of `workload` on `chip`) has pages and ends below the L1 buffers:
  // std::invalid_argument for a CB without pages (the builder's bug),
  // runtime::WorkloadPlacementError for one above the buffers (the memory config asked for).
  void require_circular_buffers_fit(const std::string& workload, runtime::ChipId chip,
                                    const runtime::Program& program) const;

  const DeviceMemorySizes& sizes() const { return sizes_; }

 private:
  DeviceMemorySizes sizes_;
  std::uint64_t dram_next_ = 0;
  std::uint64_t l1_top_ = 0;
  std::uint32_t erisc_semaphore_next_ = 0;
  std::uint32_t next_buffer_id_ = 1;
  std::uint32_t next_semaphore_id_ = 1;
};

}  // namespace cclmesh::sim::device
