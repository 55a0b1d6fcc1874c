#pragma once
// `cclmesh serve --trace-dir DIR`: a Perfetto trace (the JSON `cclmesh run --trace` writes) of
// what the served device did in each client session, DIR/session-000001.json, -000002, ... in
// the order sessions began (zero-padded: they sort by name).
//
// One recorder is attached to the device for its whole life; a session's file holds what it
// recorded from the end of the previous session's file (the fabric's start-up, for the first
// session, or after a reset between sessions) to the end of this one, and the spans still
// running (the fabric routers). Times are the device's clock (simulated time since it was
// opened or last reset), as profile() and `--fault ...@T` count them; a reset inside a session
// continues the file's timeline behind a "device reset" marker (TraceRecorder::device_reset).
// A session that ends by a hang, fault or timeout keeps what ran until then, its parked kernels'
// spans marked unfinished. Files are written whole or not at all (output_file.hpp).
//
// A device whose fabric cannot start (a start-up that hangs, faults or runs past its budget)
// never serves a session: what it did up to then goes to DIR/startup.json instead, the trace
// `run --trace` writes of the same start-up. Only then: a fabric that starts leaves its start-up
// in session 1's file, so the start-up is in exactly one file either way.

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "runtime/device/mesh_device.hpp"
#include "sim/engine/time.hpp"
#include "sim/trace/trace_event_json.hpp"
#include "sim/trace/trace_recorder.hpp"

namespace cclmesh::cli {

class SessionTraces {
 public:
  // Throws UsageError naming --trace-dir and the path when `dir` is not a directory this process
  // can write into, or already holds session traces (a new server's session 1 would replace an
  // older server's, and the rest would mix with them).
  SessionTraces(std::string dir, std::size_t max_spans_per_track);

  // The recorder to give the device (it outlives the device).
  sim::trace::TraceRecorder& recorder() { return recorder_; }
  // What every file's otherData says about the device (its system, description, faults).
  void set_device_info(sim::trace::TraceInfo info) { device_info_ = std::move(info); }

  // `device_now` is the device's clock at that moment.
  void session_started(std::uint64_t session, sim::SimTime device_now);
  // Writes the session's file, then forgets what it wrote; returns the file's path. Throws
  // UsageError naming --trace-dir when the file cannot be written (what it held is then
  // forgotten all the same, so that the next session's file is that session's alone).
  std::string session_ended(std::uint64_t session, const std::string& how, sim::SimTime device_now);

  // Writes DIR/startup.json: what the device recorded before its start-up failed with `error`.
  // `asked` names the options it was built from. Returns the file's path; throws UsageError
  // naming --trace-dir when the file cannot be written.
  std::string startup_failed(const std::string& asked, const runtime::DeviceError& error);

  // DIR/session-NNNNNN.json.
  std::string path_of(std::uint64_t session) const;
  // DIR/startup.json.
  std::string startup_path() const;

 private:
  std::string dir_;
  sim::trace::TraceRecorder recorder_;
  sim::trace::TraceInfo device_info_;
  sim::SimTime session_start_;
  std::uint32_t life_at_start_ = 1;
};

}  // namespace cclmesh::cli
