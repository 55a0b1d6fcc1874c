#pragma once
// What one kernel tells a trace (sim/trace/trace_recorder.hpp): its run as a span on its
// RISC-V's track, and each command an interpreter stream runs as a span on that stream's own
// track (the two streams of an interpreter take turns, so their commands overlap in time and
// would not nest on one track). A command starts when the stream first reports it
// (debug_set_current_command) and ends when the stream reports it done (debug_command_done);
// one still running when the kernel ends or fails ends with it.
//
// Only kernels of a device with a recorder get one; every hook in the dataflow API is behind a
// null pointer check.

#include <cstdint>
#include <string>
#include <vector>

#include "sim/trace/trace_recorder.hpp"

namespace cclmesh::sim::device {

struct KernelContext;

class KernelTrace {
 public:
  KernelTrace(trace::TraceRecorder& recorder, const KernelContext& kernel);

  void started(SimTime now);
  void finished(SimTime now);
  // Called on every attempt of the stream; opens a span when the command is new.
  void command_reported(const KernelContext& kernel, std::uint32_t stream, std::uint32_t command_index, SimTime now);
  void command_done(std::uint32_t stream, std::uint32_t command_index, SimTime now);

 private:
  struct StreamState {
    trace::TrackId track = 0;
    bool has_track = false;
    bool open = false;
    std::uint32_t command_index = 0;
    trace::OpenSpan span;
  };
  StreamState& stream_state(std::uint32_t stream);

  trace::TraceRecorder& recorder_;
  std::int32_t chip_;
  std::string track_name_;
  std::int64_t sort_index_;
  std::string kernel_name_;
  std::string workload_;
  trace::TrackId track_;
  trace::OpenSpan run_;
  std::vector<StreamState> streams_;
};

}  // namespace cclmesh::sim::device
