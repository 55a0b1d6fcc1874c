#include "sim/trace/trace_event_json.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <set>
#include <vector>

#include "sim/engine/check.hpp"

namespace cclmesh::sim::trace {
namespace {

void append_escaped(std::string& out, std::string_view text) {
  out += '"';
  for (const char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          fmt::format_to(std::back_inserter(out), "\\u{:04x}", static_cast<unsigned>(c));
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

int pid_of(std::int32_t chip) { return chip + 1; }

class EventWriter {
 public:
  explicit EventWriter(std::string& out) : out_(out) {}

  // Starts one event with the fields every phase has; the caller adds the rest and close().
  void open(std::string_view name, char phase, SimTime ts, std::int32_t chip, TrackId tid) {
    out_ += first_ ? "\n" : ",\n";
    first_ = false;
    out_ += "{\"name\":";
    append_escaped(out_, name);
    fmt::format_to(std::back_inserter(out_), ",\"ph\":\"{}\",\"ts\":{},\"pid\":{},\"tid\":{}", phase,
                   microseconds_text(ts), pid_of(chip), tid);
  }
  void close() { out_ += '}'; }
  std::string& out() { return out_; }

 private:
  std::string& out_;
  bool first_ = true;
};

std::string track_name(const Track& track) {
  if (track.dropped_spans == 0) return track.name;
  return fmt::format("{} ({} spans over the trace limit not shown)", track.name, track.dropped_spans);
}

void write_metadata(EventWriter& w, const TraceRecorder& recorder) {
  std::set<std::int32_t> chips;
  for (const Track& t : recorder.tracks()) chips.insert(t.chip);
  for (const std::int32_t chip : chips) {
    w.open("process_name", 'M', SimTime::zero(), chip, 0);
    fmt::format_to(std::back_inserter(w.out()), ",\"args\":{{\"name\":\"chip {}\"}}", chip);
    w.close();
    w.open("process_sort_index", 'M', SimTime::zero(), chip, 0);
    fmt::format_to(std::back_inserter(w.out()), ",\"args\":{{\"sort_index\":{}}}", chip);
    w.close();
  }
  // A kernel's track with nothing in this piece (a core an earlier piece's op ran on, in a trace
  // written in pieces) is not named; a wire's is, for its counter.
  std::vector<bool> wire_track(recorder.tracks().size(), false);
  for (const Wire& wire : recorder.wires()) wire_track.at(wire.track) = true;
  for (std::size_t i = 0; i < recorder.tracks().size(); ++i) {
    const Track& t = recorder.tracks()[i];
    if (t.spans.empty() && t.dropped_spans == 0 && !wire_track[i]) continue;
    const auto tid = static_cast<TrackId>(i + 1);
    w.open("thread_name", 'M', SimTime::zero(), t.chip, tid);
    w.out() += ",\"args\":{\"name\":";
    append_escaped(w.out(), track_name(t));
    w.out() += "}";
    w.close();
    w.open("thread_sort_index", 'M', SimTime::zero(), t.chip, tid);
    fmt::format_to(std::back_inserter(w.out()), ",\"args\":{{\"sort_index\":{}}}", t.sort_index);
    w.close();
  }
}

const char* category_of(const Track& track) {
  if (track.name.starts_with("eth ch ") && track.name.find(" -> ") != std::string::npos) return "ethernet";
  if (track.name.find(" stream ") != std::string::npos) return "command";
  return "kernel";
}

// A span's args object: its text, its numbers, and "unfinished" for a span still open.
void write_args(EventWriter& w, const TraceRecorder& recorder, const Span& s) {
  w.out() += ",\"args\":{";
  bool first_arg = true;
  const auto key = [&](StringId k) {
    if (!first_arg) w.out() += ',';
    first_arg = false;
    append_escaped(w.out(), recorder.text(k));
    w.out() += ':';
  };
  if (s.text_key != kNoString) {
    key(s.text_key);
    append_escaped(w.out(), recorder.text(s.text));
  }
  for (int n = 0; n < 2; ++n) {
    if (s.number_key[n] == kNoString) continue;
    key(s.number_key[n]);
    fmt::format_to(std::back_inserter(w.out()), "{}", s.number[n]);
  }
  if (s.open || s.ended_by_reset) {
    if (!first_arg) w.out() += ',';
    w.out() += s.ended_by_reset ? "\"unfinished\":true,\"ended_by\":\"device reset\"" : "\"unfinished\":true";
  }
  w.out() += '}';
}

void write_spans(EventWriter& w, const TraceRecorder& recorder) {
  for (std::size_t i = 0; i < recorder.tracks().size(); ++i) {
    const Track& t = recorder.tracks()[i];
    const auto tid = static_cast<TrackId>(i + 1);
    for (const Span& s : t.spans) {
      const SimTime end = s.open ? std::max(recorder.latest(), s.start) : s.end;
      w.open(recorder.text(s.name), 'X', s.start, t.chip, tid);
      fmt::format_to(std::back_inserter(w.out()), ",\"dur\":{},\"cat\":\"{}\"", microseconds_text(end - s.start),
                     category_of(t));
      write_args(w, recorder, s);
      w.close();
    }
  }
}

// Global instant events ("s":"g": a line across every chip in a viewer), on chip 0's process:
// the faults' effects, then the device resets.
void write_instants(EventWriter& w, const TraceRecorder& recorder) {
  for (const Span& s : recorder.instants().spans) {
    w.open(recorder.text(s.name), 'i', s.start, 0, 0);
    w.out() += ",\"s\":\"g\",\"cat\":\"fault\"";
    write_args(w, recorder, s);
    w.close();
  }
  for (const ResetMark& reset : recorder.resets()) {
    w.open("device reset", 'i', reset.when, 0, 0);
    fmt::format_to(std::back_inserter(w.out()), ",\"s\":\"g\",\"cat\":\"device\",\"args\":{{\"life\":{}}}",
                   reset.life);
    w.close();
  }
}

// One counter per wire: the share of each bucket the wire was busy, in percent. A sample is
// written where the value changes (a counter holds its value until the next sample) and a last
// one at the end, so every wire's counter covers the whole run.
void write_counters(EventWriter& w, const TraceRecorder& recorder) {
  const std::int64_t width = recorder.counter_bucket().ps();
  for (const Wire& wire : recorder.wires()) {
    const std::string name = fmt::format("link busy % ch {} -> chip {}", wire.channel, wire.peer_chip);
    const auto sample = [&](std::size_t bucket, std::int64_t busy_ps) {
      w.open(name, 'C', recorder.counter_origin() + SimTime::from_ps(static_cast<std::int64_t>(bucket) * width),
             wire.chip, wire.track + 1);
      fmt::format_to(std::back_inserter(w.out()), ",\"args\":{{\"busy\":{:.2f}}}",
                     100.0 * static_cast<double>(busy_ps) / static_cast<double>(width));
      w.close();
    };
    std::int64_t previous = -1;
    for (std::size_t b = 0; b < wire.busy_ps_per_bucket.size(); ++b) {
      if (wire.busy_ps_per_bucket[b] == previous) continue;
      previous = wire.busy_ps_per_bucket[b];
      sample(b, previous);
    }
    sample(wire.busy_ps_per_bucket.size(), 0);
  }
}

}  // namespace

std::string microseconds_text(SimTime time) {
  const std::int64_t ps = time.ps();
  const std::int64_t whole = ps / 1'000'000;
  std::int64_t fraction = ps % 1'000'000;
  CCLMESH_CHECK(ps >= 0, "a trace time before the start of the run");
  if (fraction == 0) return fmt::format("{}", whole);
  int digits = 6;
  while (fraction % 10 == 0) {
    fraction /= 10;
    --digits;
  }
  return fmt::format("{}.{:0{}}", whole, fraction, digits);
}

std::string to_trace_event_json(const TraceRecorder& recorder, const TraceInfo& info) {
  std::string out = "{\"displayTimeUnit\":\"ns\",\"otherData\":{";
  for (const auto& [key, value] : info) {
    append_escaped(out, key);
    out += ':';
    append_escaped(out, value);
    out += ',';
  }
  fmt::format_to(std::back_inserter(out), "\"max_spans_per_track\":{},\"dropped_spans\":{},\"counter_bucket_us\":{}",
                 recorder.limits().max_spans_per_track, recorder.dropped_spans(),
                 microseconds_text(recorder.counter_bucket()));
  // Only a trace written in pieces (cclmesh serve) has counters that do not start at zero.
  if (recorder.counter_origin() > SimTime::zero()) {
    fmt::format_to(std::back_inserter(out), ",\"counter_origin_us\":{}", microseconds_text(recorder.counter_origin()));
  }
  out += "},\"traceEvents\":[";
  EventWriter writer(out);
  write_metadata(writer, recorder);
  write_spans(writer, recorder);
  write_instants(writer, recorder);
  write_counters(writer, recorder);
  out += "\n]}\n";
  return out;
}

}  // namespace cclmesh::sim::trace
