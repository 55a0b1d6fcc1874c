#pragma once
// A TraceRecorder as Chrome trace-event JSON (the JSON Object Format that chrome://tracing and
// ui.perfetto.dev load): "M" metadata events name each chip (process) and track (thread), "X"
// complete events are the spans, "C" counter events the link utilisation per wire direction.
// Times are microseconds written exactly from integer picoseconds (ts 3.5085 is 3 508 500 ps),
// so spans that touch in simulated time touch in the file.
//
// pid = chip id + 1 and tid = track index + 1 (viewers treat 0 specially); the names carry the
// real chip ids. Spans still open (a persistent fabric router) end at the recorder's latest
// time with args.unfinished = true. Tracks that hit the span limit say how many spans they
// dropped in their name and in otherData.dropped_spans. Spans a device reset ended say
// args.ended_by "device reset", and each reset is a global instant "device reset" (category
// "device", args.life). A piece of a long trace (TraceRecorder::forget_recorded) has its counters
// from otherData.counter_origin_us on.

#include <string>
#include <utility>
#include <vector>

#include "sim/trace/trace_recorder.hpp"

namespace cclmesh::sim::trace {

// Key / value pairs for the file's otherData (what was run).
using TraceInfo = std::vector<std::pair<std::string, std::string>>;

std::string to_trace_event_json(const TraceRecorder& recorder, const TraceInfo& info = {});

// "12.3456" for 12 345 600 ps: microseconds with every picosecond kept, no trailing zeros.
std::string microseconds_text(SimTime time);

}  // namespace cclmesh::sim::trace
