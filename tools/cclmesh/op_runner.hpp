#pragma once
// Runs one collective on a simulated mesh as `cclmesh run` describes it: builds the system,
// fills the inputs with seeded data, builds the op's workload, runs it, reads back and checks
// every output against the host reference. Bad input throws UsageError; a simulated hang or
// fault throws runtime::DeviceError.

#include "tools/cclmesh/run_options.hpp"

namespace cclmesh::cli {

RunResult run_collective(const RunOptions& options);

}  // namespace cclmesh::cli
