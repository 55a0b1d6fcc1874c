#pragma once
// The simulated device `cclmesh run` builds, as the run's options ask: its fabric (none in
// legacy mode, whose ops launch their own EDMs), the fabric's settings, limits and faults.

#include "sim/device/sim_mesh_device.hpp"
#include "sim/trace/trace_recorder.hpp"
#include "tools/cclmesh/run_options.hpp"

namespace cclmesh::cli::detail {

// --mode legacy: the 2024 per-op EDMs, with no fabric.
bool legacy_mode(const RunOptions& options);

// The device's options for a run whose groups are rings (`ring`) or lines, recording into `trace`.
sim::device::SimMeshDeviceOptions device_options(const RunOptions& options, bool ring,
                                                 sim::trace::TraceRecorder* trace);

}  // namespace cclmesh::cli::detail
