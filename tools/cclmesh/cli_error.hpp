#pragma once
// Bad command-line input: the CLI prints the message on one line and exits with code 2.

#include <new>
#include <stdexcept>
#include <string>

namespace cclmesh::cli {

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The served device (--device) could not be had: busy with another client's session, or nothing
// accepting at its address, for as long as --device-wait allowed. Not bad input: the same
// command may work later, which a script tells from exit 2 to try again. Exits 5.
class DeviceUnavailableError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Exit codes, a contract with scripts and CI (issue 7): 0 ok, 1 data did not verify,
// 2 bad input, 3 simulated hang or fault stopped the op, 4 cclmesh itself failed (an internal
// error, or a `sweep -j` point's process that died without a result), 5 the served device was
// unavailable (session 31: busy or not accepting past --device-wait; it was 2).
inline constexpr int kExitOk = 0;
inline constexpr int kExitDataMismatch = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitHangOrFault = 3;
inline constexpr int kExitInternalError = 4;
inline constexpr int kExitDeviceUnavailable = 5;

// What std::bad_alloc means here, with the way out (new-user pass, session 41: "internal error:
// std::bad_alloc"): a run's (main) and a sweep point's. Buffers past the host's memory are refused
// before the run (host_memory_check.hpp: counted, peak RSS 0.98-1.05x the count); this is a run
// under a memory limit, one that others' memory squeezed after the check, or a timing-only run of a
// mesh too large.
inline constexpr const char* kOutOfHostMemory =
    "out of host memory: a run with data holds every chip's buffers, the host's inputs and its expected outputs as "
    "real bytes in this process (a timing-only run only the chips' state and events); expected a smaller size, "
    "fewer chips, or --no-data (timing only, no data held)";
// A timing-only run's (--no-data given): not told to drop the data it does not hold (session 42).
inline constexpr const char* kOutOfHostMemoryTimingOnly =
    "out of host memory: a timing-only run (--no-data) holds no data, but every simulated chip's state, the op's "
    "kernels and its events are real bytes in this process; expected a smaller mesh (fewer chips) or a smaller size";
// A `run --device` / `sweep --device` client's (review42: it got a local run's, naming the chips'
// buffers, which are the server's, and --no-data, which --device refuses). With data it holds the
// inputs and expected outputs (reject_client_data_past_host_memory counts them); a client of a
// timing-only device only the op's workloads and what it reads back.
inline constexpr const char* kClientOutOfHostMemory =
    "out of host memory: a --device client holds the host's inputs and the op's expected outputs as real bytes in "
    "this process (the op's buffers are the server's); expected a smaller size, or a device served timing-only "
    "(cclmesh serve --no-data)";
inline constexpr const char* kClientOutOfHostMemoryTimingOnly =
    "out of host memory: a --device client of a timing-only device (cclmesh serve --no-data) holds no data, but the "
    "op's workloads and the kernel profile it reads back are real bytes in this process; expected fewer chips in the "
    "op (--chips, --cluster-axis) or a smaller size";

// A std::bad_alloc in a --device client's run, thrown in its place (run_collective_on): its what()
// is the client's message, as main and a sweep's point print it.
class ClientOutOfHostMemory : public std::bad_alloc {
 public:
  explicit ClientOutOfHostMemory(bool device_timing_only) : device_timing_only_(device_timing_only) {}
  const char* what() const noexcept override {
    return device_timing_only_ ? kClientOutOfHostMemoryTimingOnly : kClientOutOfHostMemory;
  }

 private:
  bool device_timing_only_;
};

// What to print for `error`: a --device client's own message, else a local run's, with data or
// timing-only (--no-data given).
inline const char* out_of_host_memory_message(const std::bad_alloc& error, bool no_data) {
  if (const auto* client = dynamic_cast<const ClientOutOfHostMemory*>(&error)) return client->what();
  return no_data ? kOutOfHostMemoryTimingOnly : kOutOfHostMemory;
}

}  // namespace cclmesh::cli
