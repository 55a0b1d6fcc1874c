#include "sim/trace/trace_recorder.hpp"

#include <algorithm>
#include <string>

#include "sim/engine/check.hpp"

namespace cclmesh::sim::trace {

TraceRecorder::TraceRecorder(TraceLimits limits) : TraceRecorder(limits, 1) {}

TraceRecorder::TraceRecorder(TraceLimits limits, std::uint32_t life)
    : limits_(limits), bucket_(limits.initial_counter_bucket), life_(life) {
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

void TraceRecorder::touch(SimTime time) {
  latest_ = std::max(latest_, time);
  piece_open_ = true;
}

OpenSpan TraceRecorder::begin(TrackId id, SimTime start, std::string_view name, const SpanArgs& args) {
  start = start + life_offset_;
  Track& t = tracks_.at(id);
  touch(start);
  if (!has_room(t)) return OpenSpan{};
  Span span;
  span.start = start;
  span.end = start;
  span.open = true;
  fill(span, name, args);
  t.spans.push_back(span);
  std::size_t slot = open_places_.size();
  if (free_slots_.empty()) {
    open_places_.emplace_back();
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
  }
  const std::uint64_t serial = next_serial_++;
  open_places_[slot] = OpenPlace{id, t.spans.size() - 1, serial, true};
  return OpenSpan{slot, serial};
}

void TraceRecorder::end(OpenSpan open, SimTime end) {
  end = end + life_offset_;
  touch(end);
  if (!open.valid()) return;
  OpenPlace& place = open_places_.at(open.slot);
  CCLMESH_CHECK(place.live && place.serial == open.serial, "a trace span closed twice, or after the device was reset");
  Span& span = tracks_.at(place.track).spans.at(place.index);
  CCLMESH_CHECK(span.open && end >= span.start, "a trace span closed twice or before it began");
  span.end = end;
  span.open = false;
  place.live = false;
  free_slots_.push_back(open.slot);
}

void TraceRecorder::span(TrackId id, SimTime start, SimTime end, std::string_view name, const SpanArgs& args) {
  CCLMESH_CHECK(end >= start, "a trace span ends before it starts");
  add_span(id, start + life_offset_, end + life_offset_, name, args);
}

void TraceRecorder::add_span(TrackId id, SimTime start, SimTime end, std::string_view name, const SpanArgs& args) {
  Track& t = tracks_.at(id);
  touch(end);
  if (!has_room(t)) return;
  Span span;
  span.start = start;
  span.end = end;
  fill(span, name, args);
  t.spans.push_back(span);
}

void TraceRecorder::instant(SimTime when, std::string_view name, const SpanArgs& args) {
  when = when + life_offset_;
  touch(when);
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
  // Buckets count from the piece's origin; a packet that began before it (in flight when the
  // previous piece was written) counts from there.
  start_ps = std::max<std::int64_t>(start_ps - counter_origin_.ps(), 0);
  end_ps -= counter_origin_.ps();
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
  start = start + life_offset_;
  end = end + life_offset_;
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
  add_span(w.track, start, end, what, args);
}

template <typename Keep>
void TraceRecorder::keep_spans(const Keep& keep) {
  std::vector<std::string> strings;
  std::vector<StringId> new_id(strings_.size(), kNoString);
  const auto keep_string = [&](StringId& id) {
    if (id == kNoString) return;
    if (new_id[id] == kNoString) {
      new_id[id] = static_cast<StringId>(strings.size());
      strings.push_back(std::move(strings_[id]));
    }
    id = new_id[id];
  };
  constexpr std::size_t kGone = std::numeric_limits<std::size_t>::max();
  std::vector<std::vector<std::size_t>> new_index(tracks_.size());
  for (std::size_t t = 0; t < tracks_.size(); ++t) {
    std::vector<Span>& spans = tracks_[t].spans;
    new_index[t].assign(spans.size(), kGone);
    std::vector<Span> kept;
    for (std::size_t i = 0; i < spans.size(); ++i) {
      if (!keep(spans[i])) continue;
      Span span = spans[i];
      keep_string(span.name);
      keep_string(span.text_key);
      keep_string(span.text);
      keep_string(span.number_key[0]);
      keep_string(span.number_key[1]);
      new_index[t][i] = kept.size();
      kept.push_back(span);
    }
    spans = std::move(kept);
    tracks_[t].dropped_spans = 0;
  }
  for (std::size_t slot = 0; slot < open_places_.size(); ++slot) {
    OpenPlace& place = open_places_[slot];
    if (!place.live) continue;
    place.index = new_index.at(place.track).at(place.index);
    if (place.index != kGone) continue;
    place.live = false;  // a span dropped open: its owner is gone with the old device life
    free_slots_.push_back(slot);
  }
  strings_ = std::move(strings);
  string_ids_.clear();
  for (std::size_t id = 0; id < strings_.size(); ++id) string_ids_.emplace(strings_[id], static_cast<StringId>(id));
  instants_.spans.clear();
  instants_.dropped_spans = 0;
  resets_.clear();
  for (Wire& w : wires_) {
    w.busy_ps_per_bucket.clear();
    w.busy_ps = 0;
    w.payload_bytes = 0;
    w.wire_bytes = 0;
  }
  bucket_ = limits_.initial_counter_bucket;
  bucket_count_ = 0;
}

void TraceRecorder::device_reset() {
  if (!piece_open_) {
    // Nothing of the old life is left to write, and nothing of it holds a track, wire or span
    // handle any more (its kernels and links are gone): the recorder starts as a new one, so the
    // new life's tracks are numbered as a fresh device's.
    *this = TraceRecorder(limits_, life_ + 1);
    return;
  }
  ++life_;
  for (std::size_t slot = 0; slot < open_places_.size(); ++slot) {
    OpenPlace& place = open_places_[slot];
    if (!place.live) continue;
    Span& span = tracks_.at(place.track).spans.at(place.index);
    span.end = latest_;
    span.open = false;
    span.ended_by_reset = true;
    place.live = false;
    free_slots_.push_back(slot);
  }
  resets_.push_back(ResetMark{latest_, life_});
  life_offset_ = latest_;
}

void TraceRecorder::forget_recorded() {
  keep_spans([](const Span& span) { return span.open; });
  // What is kept is the current life's (a reset ended the older lives' spans): back to its clock.
  const SimTime shift = life_offset_;
  for (Track& t : tracks_) {
    for (Span& span : t.spans) {
      span.start = span.start - shift;
      span.end = span.end - shift;
    }
  }
  latest_ = latest_ - shift;
  life_offset_ = SimTime::zero();
  counter_origin_ = latest_;
  piece_open_ = false;
}

std::uint64_t TraceRecorder::dropped_spans() const {
  std::uint64_t total = 0;
  for (const Track& t : tracks_) total += t.dropped_spans;
  return total + instants_.dropped_spans;
}

}  // namespace cclmesh::sim::trace
