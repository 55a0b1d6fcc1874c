#pragma once
// Runs one collective on a simulated mesh as `cclmesh run` describes it: builds the system,
// fills the inputs with seeded data, builds the op's workload, runs it, reads back and checks
// every output against the host reference. Bad input throws UsageError; a simulated hang or
// fault throws runtime::DeviceError.

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "runtime/remote/remote_mesh_device.hpp"
#include "sim/trace/trace_recorder.hpp"
#include "tools/cclmesh/run_options.hpp"

namespace cclmesh::cli {

// How a run was being simulated, as far as it got: what a run that did not complete (a
// DeviceError) reports beside the error (its --json).
struct RunProgress {
  // The groups along --cluster-axis that take another group's figures (mirror_choice.hpp), once
  // the simulated device is built; nullopt before.
  std::optional<std::size_t> groups_mirrored;
};

// With `trace`, the device records into it from its construction on (fabric start-up
// included); the recorder keeps what it has when the run ends in a DeviceError. With
// `progress`, what is known of how the run is simulated is written there as soon as it is
// known, so that it outlives a DeviceError.
RunResult run_collective(const RunOptions& options, sim::trace::TraceRecorder* trace = nullptr,
                         RunProgress* progress = nullptr);

// --topology as run resolves it: auto is a ring where the run's groups (options.chips, the
// --cluster-axis groups, or every chip) close into rings of 3 or more chips over options.links,
// else a line; ring and line as given. (`serve --chips` lays its fabric the same way.)
std::string resolve_topology(const RunOptions& options, const topo::Topology& topology);

// --device HOST:PORT: a session with the served device, waiting up to --device-wait while it
// serves another client; UsageError ("--device: ...") when the address is not one or the server
// cannot be reached, refuses the session or stays busy.
std::unique_ptr<runtime::remote::RemoteMeshDevice> connect_device(const RunOptions& options);

// The op on a connected served device, as `run --device` runs it (a sweep runs its points one
// after another in one session). The op's buffers and global semaphores are freed once its
// result is read (and when bad input stops it midway), so a long sweep does not fill the device;
// the device's clock and state carry over from op to op. A RemoteDeviceError: the served device
// failed.
RunResult run_collective_on(const RunOptions& options, runtime::remote::RemoteMeshDevice& device);

// `options` as they run on the served device: its system, mode, links, topology, chips, faults,
// data mode and fabric settings replace the client's (what run's and sweep's --json report, a
// point that did not complete's included). UsageError when the op cannot run on its fabric.
RunOptions served_run_options(const RunOptions& options, const runtime::remote::RemoteMeshDevice& device);

}  // namespace cclmesh::cli
