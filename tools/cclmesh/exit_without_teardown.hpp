#pragma once
// The simulated device of a process's last run, kept to the process's exit rather than destroyed.
// `cclmesh run` (and a `sweep -j` point's process) exits right after its run has written its
// outputs: tearing the device down there only frees what the exit frees, and on a large mesh it
// is dear (7.7% of a torus:32x32 run's instructions: ~4,096 parked router fibers unwound, ~540 heap
// blocks a chip freed; docs/performance.md, nineteenth pass). Compilers skip the same work at
// exit (clang -disable-free).
//
// Safe because nothing a run prints or writes comes from the device's destruction, with one
// exception handled here: SimMeshDevice::close() records the last fault records into an attached
// trace, so a run with a trace recorder still tears down before the trace is written. Off unless
// main() allows it, so the library and in-process tests tear down as before (and a sequential
// sweep frees each point's device before the next); never in sanitizer builds, whose leak check
// must see the teardown.

#include <memory>

#include "runtime/device/mesh_device.hpp"

namespace cclmesh::cli {

// main(): this process is the CLI, whose command is all it runs. A no-op under a sanitizer.
void allow_exit_without_teardown();

// `cclmesh run`'s command, and a sweep -j point's process: nothing runs after this process's
// next run but its outputs and the exit.
void process_exits_after_its_run();

// The end of a run on `device`: kept to the exit (never destroyed) when both of the above were
// said and the run records no trace, else destroyed here.
void finish_with_device(std::unique_ptr<runtime::MeshDevice> device, bool records_a_trace);

}  // namespace cclmesh::cli
