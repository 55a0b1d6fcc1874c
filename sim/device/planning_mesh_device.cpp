#include "sim/device/planning_mesh_device.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "sim/device/fabric_reembed.hpp"
#include "sim/device/simulated_system_config.hpp"
#include "sim/engine/check.hpp"

namespace cclmesh::sim::device {
namespace {

// What SimMeshDevice's constructor refuses before it builds a chip, in its order; the fabric
// it would run.
runtime::FabricOptions checked_fabric(const topo::Topology& topology, const runtime::FabricOptions& fabric,
                                      const FaultPlan& faults,
                                      const std::map<runtime::ChipId, runtime::ChipCoreMap>& core_maps,
                                      DataMode data_mode) {
  runtime::FabricOptions options = fabric_around_down_links(topology, fabric, faults);
  // The link what-ifs the chip model cannot run; the configuration itself is the device's.
  (void)simulated_system_config(topology, core_maps, data_mode);
  return options;
}

std::map<runtime::ChipId, runtime::ChipCoreMap> checked_core_maps(const topo::Topology& topology) {
  if (topology.chip_count() == 0) throw std::invalid_argument("simulated device: the topology has no chip");
  require_one_architecture(topology);
  return chip_core_maps(topology);
}

}  // namespace

PlanningMeshDevice::PlanningMeshDevice(topo::Topology topology, const runtime::FabricOptions& fabric,
                                       const FaultPlan& faults, DataMode data_mode)
    : topology_(std::move(topology)),
      core_maps_(checked_core_maps(topology_)),
      fabric_options_(checked_fabric(topology_, fabric, faults, core_maps_, data_mode)),
      fabric_(topology_, fabric_options_),
      allocator_(device_memory_sizes(topology_, fabric_options_)) {}

void PlanningMeshDevice::reset() {
  allocator_ = DeviceAllocator(allocator_.sizes());
  enqueued_reads_.clear();
}

std::vector<runtime::ChipId> PlanningMeshDevice::chips() const { return topology_chip_ids(topology_); }

std::vector<std::uint32_t> PlanningMeshDevice::active_ethernet_channels(runtime::ChipId chip) const {
  return topology_ethernet_channels(topology_, chip);
}

runtime::BufferHandle PlanningMeshDevice::create_buffer(const runtime::BufferConfig& config) {
  return allocator_.create_buffer(config);
}

void PlanningMeshDevice::deallocate_buffer(const runtime::BufferHandle& buffer) { allocator_.deallocate_buffer(buffer); }

void PlanningMeshDevice::write_buffer(runtime::ChipId, const runtime::BufferHandle&, std::span<const std::byte>) {
  CCLMESH_CHECK(false, "a planning device holds no data: an op is prepared on it timing-only");
}

void PlanningMeshDevice::read_buffer(runtime::ChipId, const runtime::BufferHandle&, std::span<std::byte>) {
  CCLMESH_CHECK(false, "a planning device holds no data: an op is prepared on it timing-only");
}

void PlanningMeshDevice::enqueue_write_buffer(runtime::ChipId chip, const runtime::BufferHandle& buffer,
                                              std::span<const std::byte> data) {
  require_host_copy(topology_, "enqueue_write_buffer", chip, buffer, data.size());
  allocator_.hold_buffer_for_host_command(buffer, "enqueue_write_buffer", chip);
}

void PlanningMeshDevice::enqueue_read_buffer(runtime::ChipId chip, const runtime::BufferHandle& buffer,
                                             std::span<std::byte> out) {
  require_host_copy(topology_, "enqueue_read_buffer", chip, buffer, out.size());
  allocator_.hold_buffer_for_host_command(buffer, "enqueue_read_buffer", chip);
  enqueued_reads_.push_back(out);
}

void PlanningMeshDevice::finish() {
  for (const std::span<std::byte> out : enqueued_reads_) std::fill(out.begin(), out.end(), std::byte{0});
  enqueued_reads_.clear();
  allocator_.workloads_finished();
}

runtime::GlobalSemaphore PlanningMeshDevice::create_global_semaphore(const std::vector<runtime::CoreRange>& cores,
                                                                     runtime::CoreKind kind, std::uint32_t) {
  const std::vector<runtime::CoreCoord> list = runtime::cores_of(cores);
  if (list.empty()) throw std::invalid_argument("create_global_semaphore: no cores");
  for (const auto& [chip, map] : core_maps_) {
    for (const runtime::CoreCoord& c : list) map.noc0(kind, c);  // throws CoreMapError
  }
  return allocator_.create_global_semaphore(cores, kind);
}

void PlanningMeshDevice::reset_global_semaphore(const runtime::GlobalSemaphore& semaphore, std::uint32_t) {
  allocator_.hold_semaphore_for_reset(semaphore, "reset_global_semaphore");
}

void PlanningMeshDevice::deallocate_global_semaphore(const runtime::GlobalSemaphore& semaphore) {
  allocator_.deallocate_global_semaphore(semaphore);
}

void PlanningMeshDevice::enqueue_workloads(std::span<const runtime::MeshWorkload> workloads) {
  // All checked before any is held, as SimMeshDevice does: checking one changes nothing the
  // next one's check reads.
  for (const runtime::MeshWorkload& workload : workloads) {
    for (const auto& [chip, program] : workload.programs) {
      if (!topology_.has_chip(chip)) {
        throw std::invalid_argument(
            fmt::format("workload '{}' chip {}: no such chip in the topology", workload.name, chip));
      }
      allocator_.require_circular_buffers_fit(workload.name, chip, program);
    }
  }
  allocator_.hold_named_by(workloads);
}

}  // namespace cclmesh::sim::device
