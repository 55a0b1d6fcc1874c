#pragma once
// What a simulated run did, on a timeline, for a Chrome / Perfetto trace (trace_event_json.hpp
// writes it). The simulated device and the models call a recorder only when one is attached (a
// null pointer check at each hook), and a recorder never schedules an event or touches model
// state, so simulated times, event counts and the trace hash are the same with and without it.
//
// The timeline is made of tracks: a track is one thread of one process in the trace's terms
// (process = chip, thread = a core's RISC-V, one command stream of it, or one direction of an
// ethernet link). A track holds spans that nest: its owner opens and closes them in stack
// order, or (a wire) records them one after another.
//
// Bounded memory: a track keeps at most TraceLimits::max_spans_per_track spans; later ones are
// counted, not kept, so a run that moves millions of packets still has a usable trace. The
// link utilisation counters are always complete: per wire, busy time is summed into time
// buckets, and when a run outgrows max_counter_buckets every bucket doubles its width.
//
// A device that lives long (`cclmesh serve`) has its trace written in pieces, one per client
// session: forget_recorded() after each piece keeps only the spans still open (a persistent
// router's run), so every piece has its own span limits and counter buckets and memory stays
// bounded. A device reset (device_reset()) inside a piece ends the old life's open spans there
// and places the new life's clock zero at the old life's latest time, behind a marker, so the
// lives follow one another on one timeline instead of overlapping.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "sim/engine/time.hpp"

namespace cclmesh::sim::trace {

struct TraceLimits {
  std::size_t max_spans_per_track = 10000;
  std::size_t max_counter_buckets = 1000;
  SimTime initial_counter_bucket = SimTime::from_ns(100);
};

using TrackId = std::uint32_t;
using StringId = std::uint32_t;
inline constexpr StringId kNoString = std::numeric_limits<StringId>::max();

// Up to one text and two numbers per span, keyed by interned names: spans stay small enough
// to keep tens of thousands per track.
struct SpanArgs {
  std::string_view text_key;
  std::string_view text;
  std::string_view number_key[2];
  std::int64_t number[2] = {0, 0};
};

struct Span {
  SimTime start;
  SimTime end;
  bool open = false;           // still running when the trace was taken
  bool ended_by_reset = false;  // was still running when the device was reset (ends there)
  StringId name = kNoString;
  StringId text_key = kNoString;
  StringId text = kNoString;
  StringId number_key[2] = {kNoString, kNoString};
  std::int64_t number[2] = {0, 0};
};

struct Track {
  std::int32_t chip = 0;
  std::string name;
  std::int64_t sort_index = 0;
  std::vector<Span> spans;
  std::uint64_t dropped_spans = 0;
};

// One direction of an ethernet link: its track of packets and its utilisation counter.
struct Wire {
  TrackId track = 0;
  std::int32_t chip = 0;
  std::int32_t channel = 0;
  std::int32_t peer_chip = 0;
  std::int32_t peer_channel = 0;
  std::vector<std::int64_t> busy_ps_per_bucket;
  std::int64_t busy_ps = 0;
  std::int64_t payload_bytes = 0;
  std::int64_t wire_bytes = 0;
};
using WireId = std::uint32_t;

// A span opened with begin(); end() closes it. Invalid when the track was full. It names a slot
// of the recorder's, not a place in a track, because forget_recorded() moves the spans it keeps.
struct OpenSpan {
  std::size_t slot = std::numeric_limits<std::size_t>::max();
  std::uint64_t serial = 0;  // the begin() it came from: a stale handle is caught, not misapplied
  bool valid() const { return slot != std::numeric_limits<std::size_t>::max(); }
};

// Where a device reset is on the timeline, and the life that starts there (2 after the first).
struct ResetMark {
  SimTime when;
  std::uint32_t life = 0;
};

class TraceRecorder {
 public:
  explicit TraceRecorder(TraceLimits limits = {});

  // The track named `name` on chip `chip`, created on first use; `sort_index` orders the
  // chip's tracks in a viewer (smaller first).
  TrackId track(std::int32_t chip, const std::string& name, std::int64_t sort_index);
  OpenSpan begin(TrackId track, SimTime start, std::string_view name, const SpanArgs& args = {});
  void end(OpenSpan span, SimTime end);
  // A closed span; on one track, spans must come in start order and nest.
  void span(TrackId track, SimTime start, SimTime end, std::string_view name, const SpanArgs& args = {});

  // The wire from (chip, channel) to (peer_chip, peer_channel), created on first use.
  WireId wire(std::int32_t chip, std::int32_t channel, std::int32_t peer_chip, std::int32_t peer_channel);
  // The wire carried a packet (or a credit word) from `start` to `end`.
  void wire_busy(WireId wire, SimTime start, SimTime end, std::int64_t payload_bytes, std::int64_t wire_bytes,
                 std::string_view what);

  // A moment of the whole run, drawn across every chip (an injected fault's effect: a lost or
  // corrupted frame, a link going down). Kept up to max_spans_per_track, later ones counted.
  void instant(SimTime when, std::string_view name, const SpanArgs& args = {});

  // The device was reset (SimMeshDevice::reset, after the old life's last records and before
  // the new life's first): the spans still open end at latest() (ended_by_reset), a ResetMark
  // goes there, and from now on every time given is shifted by that much (life_offset()), so the
  // new life follows the old one. When nothing was recorded since forget_recorded() and no
  // piece_started() (the old life already written out, between two pieces), the recorder starts
  // as a new one instead (tracks, wires, strings, open spans all dropped; life() counted on), so
  // that the next piece is what a fresh device's recorder would hold.
  void device_reset();
  // A piece begins (a client session): a device reset from now until forget_recorded() is
  // marked (device_reset()), even when nothing was recorded before it.
  void piece_started() { piece_open_ = true; }
  // Forgets what was recorded (closed spans, instants, reset marks, dropped counts, the wires'
  // busy time and counter buckets), keeping the tracks, the wires and the spans still open. The
  // next piece's times are the current life's clock again (life_offset() back to zero) and its
  // counter buckets start at the latest time so far (counter_origin()).
  void forget_recorded();

  const TraceLimits& limits() const { return limits_; }
  const std::vector<Track>& tracks() const { return tracks_; }
  const std::vector<Wire>& wires() const { return wires_; }
  // The instants, in the order recorded (each span's start = end = its time).
  const Track& instants() const { return instants_; }
  const std::string& text(StringId id) const { return strings_.at(id); }
  SimTime counter_bucket() const { return bucket_; }
  std::size_t counter_buckets() const { return bucket_count_; }
  // The latest time any span or packet reached: where open spans end in the trace.
  SimTime latest() const { return latest_; }
  std::uint64_t dropped_spans() const;
  // The device resets recorded in this piece, in order.
  const std::vector<ResetMark>& resets() const { return resets_; }
  // The device's lives seen so far: 1, plus one per device_reset().
  std::uint32_t life() const { return life_; }
  // Where the current life's clock zero is on this piece's timeline.
  SimTime life_offset() const { return life_offset_; }
  // Where counter bucket 0 starts (zero until a piece was forgotten).
  SimTime counter_origin() const { return counter_origin_; }

 private:
  StringId intern(std::string_view text);
  void fill(Span& span, std::string_view name, const SpanArgs& args);
  bool has_room(Track& track);
  void add_busy(Wire& wire, std::int64_t start_ps, std::int64_t end_ps);
  void grow_buckets(std::size_t needed);
  TraceRecorder(TraceLimits limits, std::uint32_t life);
  // Keeps the spans for which `keep` holds (and the open slots pointing at them), renumbered,
  // and the strings they use; clears everything else forget_recorded() forgets.
  template <typename Keep>
  void keep_spans(const Keep& keep);
  void touch(SimTime time);
  // span() with times already on this piece's timeline (shifted by the life offset).
  void add_span(TrackId track, SimTime start, SimTime end, std::string_view name, const SpanArgs& args);

  struct OpenPlace {
    TrackId track = 0;
    std::size_t index = 0;
    std::uint64_t serial = 0;
    bool live = false;
  };

  TraceLimits limits_;
  std::vector<Track> tracks_;
  std::map<std::tuple<std::int32_t, std::string>, TrackId> track_ids_;
  Track instants_;
  std::vector<Wire> wires_;
  std::map<std::tuple<std::int32_t, std::int32_t>, WireId> wire_ids_;
  std::vector<std::string> strings_;
  std::map<std::string, StringId, std::less<>> string_ids_;
  SimTime bucket_;
  std::size_t bucket_count_ = 0;  // buckets in use (the same for every wire)
  SimTime latest_;
  std::vector<OpenPlace> open_places_;  // by OpenSpan::slot
  std::vector<std::size_t> free_slots_;
  std::uint64_t next_serial_ = 1;
  std::vector<ResetMark> resets_;
  std::uint32_t life_ = 1;
  SimTime life_offset_;
  SimTime counter_origin_;
  bool piece_open_ = false;  // recorded into, or piece_started(), since forget_recorded()
};

}  // namespace cclmesh::sim::trace
