#include "sim/trace/trace_recorder.hpp"

#include <algorithm>
#include <string>

#include "sim/engine/check.hpp"

namespace cclmesh::sim::trace {

TraceRecorder::TraceRecorder(TraceLimits limits) : limits_(limits), bucket_(limits.initial_counter_bucket) {
  CCLMESH_CHECK(limits_.max_counter_buckets >= 2, "a trace needs at least 2 counter buckets");
  CCLMESH_CHECK(bucket_ > SimTime::zero(), "a trace's counter bucket must be longer than 0");
}

TrackId TraceRecorder::track(std::int32_t chip, const std::string& name, std::int64_t sort_index) {
  const auto key = std::make_tuple(chip, name);
  const auto found = track_ids_.find(key);
  if (found != track_ids_.end()) return found->second;
  const auto id = static_cast<TrackId>(tracks_.size());
  tracks_.push_back(Track{chip, name, sort_index, {}, 0});
  track_ids_.emplace(key, id);
  return id;
}

StringId TraceRecorder::intern(std::string_view text) {
  const auto found = string_ids_.find(text);
  if (found != string_ids_.end()) return found->second;
  const auto id = static_cast<StringId>(strings_.size());
  strings_.emplace_back(text);
  string_ids_.emplace(std::string(text), id);
  return id;
}

void TraceRecorder::fill(Span& span, std::string_view name, const SpanArgs& args) {
  span.name = intern(name);
  if (!args.text_key.empty()) {
    span.text_key = intern(args.text_key);
    span.text = intern(args.text);
  }
  for (int i = 0; i < 2; ++i) {
    if (args.number_key[i].empty()) continue;
    span.number_key[i] = intern(args.number_key[i]);
    span.number[i] = args.number[i];
  }
}

bool TraceRecorder::has_room(Track& track) {
  if (track.spans.size() < limits_.max_spans_per_track) return true;
  ++track.dropped_spans;
  return false;
}

OpenSpan TraceRecorder::begin(TrackId id, SimTime start, std::string_view name, const SpanArgs& args) {
  Track& t = tracks_.at(id);
  latest_ = std::max(latest_, start);
  if (!has_room(t)) return OpenSpan{id};
  Span span;
  span.start = start;
  span.end = start;
  span.open = true;
  fill(span, name, args);
  t.spans.push_back(span);
  return OpenSpan{id, t.spans.size() - 1};
}

void TraceRecorder::end(OpenSpan open, SimTime end) {
  latest_ = std::max(latest_, end);
  if (!open.valid()) return;
  Span& span = tracks_.at(open.track).spans.at(open.index);
  CCLMESH_CHECK(span.open && end >= span.start, "a trace span closed twice or before it began");
  span.end = end;
  span.open = false;
}

void TraceRecorder::span(TrackId id, SimTime start, SimTime end, std::string_view name, const SpanArgs& args) {
  CCLMESH_CHECK(end >= start, "a trace span ends before it starts");
  Track& t = tracks_.at(id);
  latest_ = std::max(latest_, end);
  if (!has_room(t)) return;
  Span span;
  span.start = start;
  span.end = end;
  fill(span, name, args);
  t.spans.push_back(span);
}

void TraceRecorder::instant(SimTime when, std::string_view name, const SpanArgs& args) {
  latest_ = std::max(latest_, when);
  if (!has_room(instants_)) return;
  Span span;
  span.start = when;
  span.end = when;
  fill(span, name, args);
  instants_.spans.push_back(span);
}

WireId TraceRecorder::wire(std::int32_t chip, std::int32_t channel, std::int32_t peer_chip, std::int32_t peer_channel) {
  const auto key = std::make_tuple(chip, channel);
  const auto found = wire_ids_.find(key);
  if (found != wire_ids_.end()) return found->second;
  // Ethernet tracks come first on a chip, by channel.
  const TrackId t = track(chip, "eth ch " + std::to_string(channel) + " -> chip " + std::to_string(peer_chip) + " ch " +
                                    std::to_string(peer_channel),
                          2 * static_cast<std::int64_t>(channel) + 1);
  const auto id = static_cast<WireId>(wires_.size());
  Wire w;
  w.track = t;
  w.chip = chip;
  w.channel = channel;
  w.peer_chip = peer_chip;
  w.peer_channel = peer_channel;
  w.busy_ps_per_bucket.assign(bucket_count_, 0);
  wires_.push_back(std::move(w));
  wire_ids_.emplace(key, id);
  return id;
}

void TraceRecorder::grow_buckets(std::size_t needed) {
  // Double the bucket width until `needed` buckets fit, folding pairs: sums stay exact.
  while (needed > limits_.max_counter_buckets) {
    for (Wire& w : wires_) {
      std::vector<std::int64_t>& b = w.busy_ps_per_bucket;
      for (std::size_t i = 0; i < b.size(); ++i) b[i / 2] = (i % 2 == 0 ? 0 : b[i / 2]) + b[i];
      b.resize((b.size() + 1) / 2);
    }
    bucket_count_ = (bucket_count_ + 1) / 2;
    bucket_ = bucket_ * 2;
    needed = (needed + 1) / 2;
  }
  if (needed > bucket_count_) {
    bucket_count_ = needed;
    for (Wire& w : wires_) w.busy_ps_per_bucket.resize(bucket_count_, 0);
  }
}

void TraceRecorder::add_busy(Wire& wire, std::int64_t start_ps, std::int64_t end_ps) {
  if (end_ps <= start_ps) return;
  grow_buckets(static_cast<std::size_t>((end_ps - 1) / bucket_.ps()) + 1);
  const std::int64_t width = bucket_.ps();
  for (std::int64_t at = start_ps; at < end_ps;) {
    const std::int64_t bucket = at / width;
    const std::int64_t until = std::min(end_ps, (bucket + 1) * width);
    wire.busy_ps_per_bucket[static_cast<std::size_t>(bucket)] += until - at;
    at = until;
  }
}

void TraceRecorder::wire_busy(WireId id, SimTime start, SimTime end, std::int64_t payload_bytes,
                              std::int64_t wire_bytes, std::string_view what) {
  CCLMESH_CHECK(end >= start, "a packet leaves the wire before it starts");
  add_busy(wires_.at(id), start.ps(), end.ps());
  Wire& w = wires_.at(id);  // add_busy may not move wires_, but keep the reference fresh
  w.busy_ps += (end - start).ps();
  w.payload_bytes += payload_bytes;
  w.wire_bytes += wire_bytes;
  SpanArgs args;
  args.number_key[0] = "payload_bytes";
  args.number[0] = payload_bytes;
  args.number_key[1] = "wire_bytes";
  args.number[1] = wire_bytes;
  span(w.track, start, end, what, args);
}

std::uint64_t TraceRecorder::dropped_spans() const {
  std::uint64_t total = 0;
  for (const Track& t : tracks_) total += t.dropped_spans;
  return total + instants_.dropped_spans;
}

}  // namespace cclmesh::sim::trace
