#pragma once
// One point of `cclmesh sweep` (an op at a size) run to its outcome, and that outcome written to
// text and read back, so that a forked child (sweep_jobs.hpp) can hand it to the sweep's parent
// process exactly as it would have been in-process.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "runtime/remote/remote_mesh_device.hpp"
#include "tools/cclmesh/run_options.hpp"

namespace cclmesh::cli {

struct SweepPointOutcome {
  enum class Kind : std::uint8_t {
    Completed,       // `result` holds the row
    Skipped,         // run_collective refused the size (UsageError): a comment line in the table
    DidNotComplete,  // a simulated hang or fault (DeviceError): the sweep ends with exit 3
    InternalError,   // any other exception: the sweep ends as main's "internal error" does
    Crashed,         // -j N: the point's process ended without a result (a signal, e.g. OOM);
                     // --device: the served device failed (RemoteDeviceError)
    OutOfHostMemory,  // std::bad_alloc: the sweep stops there as at a Crashed point, saying why
                      // (out_of_host_memory_message)
  };
  Kind kind = Kind::Completed;
  RunResult result;
  // Skipped, DidNotComplete, InternalError: the exception's text; Crashed: how the process ended;
  // OutOfHostMemory: out_of_host_memory_message.
  std::string message;
  // Not Completed: how far the point got (RunProgress's), for its --json entry.
  std::optional<std::size_t> groups_mirrored;
};

// run_collective(options), or run_collective_on(options, *device) for a sweep on a served
// device, with what a sweep reports per point caught into the outcome.
SweepPointOutcome run_sweep_point(const RunOptions& options, runtime::remote::RemoteMeshDevice* device = nullptr);

// Every field of the outcome and of its RunResult, doubles bit for bit (their JSON text would
// lose infinities and NaN), so the decoded point prints the same table, CSV, JSON and plot.
std::string encode_sweep_point(const SweepPointOutcome& outcome);
// Throws std::runtime_error (or nlohmann::json's exceptions) on text encode_sweep_point did
// not write.
SweepPointOutcome decode_sweep_point(std::string_view text);

}  // namespace cclmesh::cli
