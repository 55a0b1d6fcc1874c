#pragma once
// A MeshDevice that places what an op asks for as the simulated device would, with none of its
// chips: buffers and global semaphores get SimMeshDevice's addresses and refusals (one
// DeviceAllocator), a workload's circular buffers its L1 check, the fabric its plan. A run
// prepares its op on one first, so that every refusal decided by the topology and the options
// comes before a SimMeshDevice is built (a 64x64 mesh's costs seconds and gigabytes).
//
// It holds no data and runs nothing: write_buffer and read_buffer are refused as an internal
// error, finish() returns at once, profile() is empty. Enqueued writes and reads are checked and
// hold their buffers as on the simulated device; a write stores nothing and finish() fills a
// read's `out` with zeros (what a timing-only device's DRAM reads give).

#include <map>
#include <span>
#include <vector>

#include "runtime/device/core_map.hpp"
#include "runtime/device/mesh_device.hpp"
#include "runtime/device/profile_range.hpp"
#include "runtime/fabric/fabric_plan.hpp"
#include "sim/device/device_allocator.hpp"
#include "sim/device/fault_plan.hpp"
#include "sim/model/sim_system.hpp"

namespace cclmesh::sim::device {

class PlanningMeshDevice final : public runtime::MeshDevice {
 public:
  // Throws what SimMeshDevice's constructor throws for the same topology, fabric, faults and
  // data mode before it builds a chip: std::invalid_argument, topo::InputError,
  // runtime::FabricPlanError, runtime::DeviceError(Fault) for a fabric no line or ring can
  // re-embed around the links down from the start.
  PlanningMeshDevice(topo::Topology topology, const runtime::FabricOptions& fabric, const FaultPlan& faults,
                     DataMode data_mode);

  const topo::Topology& topology() const override { return topology_; }
  std::vector<runtime::ChipId> chips() const override;
  runtime::CoreCoord worker_grid() const override { return allocator_.sizes().worker_grid; }
  std::vector<std::uint32_t> active_ethernet_channels(runtime::ChipId chip) const override;
  // The fabric the simulated device would run (re-embedded around links down from the start).
  const runtime::FabricOptions& fabric() const override { return fabric_options_; }

  runtime::BufferHandle create_buffer(const runtime::BufferConfig& config) override;
  // Frees as SimMeshDevice does, with its refusals (a workload enqueued here is unfinished until
  // finish(), as on the simulated device, which runs nothing before finish()).
  void deallocate_buffer(const runtime::BufferHandle& buffer) override;
  void write_buffer(runtime::ChipId chip, const runtime::BufferHandle& buffer, std::span<const std::byte> data) override;
  void read_buffer(runtime::ChipId chip, const runtime::BufferHandle& buffer, std::span<std::byte> data) override;
  void enqueue_write_buffer(runtime::ChipId chip, const runtime::BufferHandle& buffer,
                            std::span<const std::byte> data) override;
  void enqueue_read_buffer(runtime::ChipId chip, const runtime::BufferHandle& buffer, std::span<std::byte> out) override;

  runtime::GlobalSemaphore create_global_semaphore(const std::vector<runtime::CoreRange>& cores, runtime::CoreKind kind,
                                                   std::uint32_t initial_value) override;
  void reset_global_semaphore(const runtime::GlobalSemaphore& semaphore, std::uint32_t value) override;
  // Frees as SimMeshDevice does, with its refusals.
  void deallocate_global_semaphore(const runtime::GlobalSemaphore& semaphore) override;

  // Checks every program's circular buffers against the L1 buffers placed so far, as
  // SimMeshDevice::enqueue_workloads does (runtime::WorkloadPlacementError), all of them before
  // holding any workload's handles, and runs nothing.
  void enqueue_workloads(std::span<const runtime::MeshWorkload> workloads) override;
  using runtime::MeshDevice::enqueue_workload;
  void finish() override;
  // Nothing runs, so no kernel ends: the profile stays empty (a range past it refused as any
  // device's).
  std::size_t profile_size() const override { return 0; }
  std::vector<runtime::KernelProfile> profile_since(std::size_t first_entry) const override {
    runtime::require_profile_entry(first_entry, 0);
    return {};
  }
  // Nothing runs, so nothing crosses a link: no figures to give.
  std::optional<std::vector<runtime::LinkTraffic>> link_traffic() const override { return std::nullopt; }
  // Forgets the buffers and global semaphores placed: the next ones get a fresh device's
  // addresses.
  void reset() override;

  // The routers fabric() runs: their sites and configurations.
  const runtime::FabricPlan& fabric_plan() const { return fabric_; }
  const DeviceAllocator& allocator() const { return allocator_; }

 private:
  topo::Topology topology_;
  std::map<runtime::ChipId, runtime::ChipCoreMap> core_maps_;
  runtime::FabricOptions fabric_options_;
  runtime::FabricPlan fabric_;
  DeviceAllocator allocator_;
  std::vector<std::span<std::byte>> enqueued_reads_;  // since the last finish(): zeroed by it
};

}  // namespace cclmesh::sim::device
