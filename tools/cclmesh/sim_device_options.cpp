#include "tools/cclmesh/sim_device_options.hpp"

#include "runtime/device/mesh_device.hpp"

namespace cclmesh::cli::detail {

bool legacy_mode(const RunOptions& options) { return options.mode == "legacy"; }

sim::device::SimMeshDeviceOptions device_options(const RunOptions& options, bool ring,
                                                 sim::trace::TraceRecorder* trace) {
  sim::device::SimMeshDeviceOptions device;
  device.trace = trace;
  device.data_mode = options.no_data ? sim::DataMode::TimingOnly : sim::DataMode::Functional;
  device.hardware = options.hardware == "ideal" ? sim::HardwareModel::Ideal : sim::HardwareModel::Modelled;
  // Legacy mode: no persistent routers; each op launches its own EDMs on the ethernet cores.
  device.fabric.mode = legacy_mode(options) ? runtime::FabricMode::None
                       : ring               ? runtime::FabricMode::Ring
                                            : runtime::FabricMode::Line;
  device.fabric.max_payload_bytes = options.fabric_payload_bytes;
  device.fabric.receiver_packets_in_flight = options.fabric_rx_in_flight;
  device.fabric.ring_flow_control = options.ring_flow_control;
  device.fabric.first_level_acks = options.first_level_acks.value_or(true);
  if (options.erisc_unreserved_bytes) device.fabric.erisc_unreserved_bytes = *options.erisc_unreserved_bytes;
  // Along an axis, the device runs tt-metal's FABRIC_1D / FABRIC_1D_RING: a line (or ring) per
  // mesh row and column, each group on its own (REFERENCE 3.4, 6.7).
  if (options.cluster_axis) device.fabric.scope = runtime::FabricScope::Axes;
  device.fabric.num_links = options.links;
  // --chips: the fabric is one line or ring through them alone (legacy mode has no fabric; its
  // group is the chips, GroupSelection::chips).
  if (!legacy_mode(options)) device.fabric.chip_order.assign(options.chips.begin(), options.chips.end());
  device.max_simulated_time = options.max_sim_time;
  device.max_wall_seconds = options.max_wall_seconds;
  device.progress = options.progress;
  device.progress_every_events = options.progress_every_events;
  device.faults = options.faults.plan;
  if (options.faults.no_bubble) device.fabric.bubble_flow_control = false;
  return device;
}

}  // namespace cclmesh::cli::detail
