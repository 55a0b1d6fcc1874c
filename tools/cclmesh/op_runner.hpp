#pragma once
// Runs one collective on a simulated mesh as `cclmesh run` describes it: builds the system,
// fills the inputs with seeded data, builds the op's workload, runs it, reads back and checks
// every output against the host reference. Bad input throws UsageError; a simulated hang or
// fault throws runtime::DeviceError.

#include "sim/trace/trace_recorder.hpp"
#include "tools/cclmesh/run_options.hpp"

namespace cclmesh::cli {

// With `trace`, the device records into it from its construction on (fabric start-up
// included); the recorder keeps what it has when the run ends in a DeviceError.
RunResult run_collective(const RunOptions& options, sim::trace::TraceRecorder* trace = nullptr);

}  // namespace cclmesh::cli
