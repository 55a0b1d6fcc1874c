// A TraceRecorder written in pieces (`cclmesh serve --trace-dir`: one per client session) and
// through device resets: what each piece keeps, where a reset puts the next life, and that the
// JSON says so.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>

#include "sim/trace/trace_event_json.hpp"
#include "sim/trace/trace_recorder.hpp"

namespace cclmesh::sim::trace {
namespace {

using nlohmann::json;

SimTime ns(std::int64_t n) { return SimTime::from_ns(n); }

const json* find_event(const json& trace, const std::string& ph, const std::string& name, std::size_t nth = 0) {
  for (const json& e : trace.at("traceEvents")) {
    if (e.at("ph") == ph && e.at("name") == name && nth-- == 0) return &e;
  }
  return nullptr;
}

TEST(TracePieces, ForgettingKeepsTheOpenSpansAndTheirHandles) {
  TraceRecorder recorder;
  const TrackId router = recorder.track(0, "eth ch 0 erisc", 0);
  const TrackId core = recorder.track(0, "core", 1);
  const OpenSpan run = recorder.begin(router, ns(1), "router");
  recorder.span(core, ns(2), ns(5), "op 1");
  const OpenSpan command = recorder.begin(router, ns(3), "command");
  recorder.forget_recorded();
  ASSERT_EQ(recorder.tracks()[router].spans.size(), 2u);  // both still open
  EXPECT_TRUE(recorder.tracks()[core].spans.empty());
  EXPECT_EQ(recorder.counter_origin(), ns(5));
  recorder.span(core, ns(7), ns(9), "op 2");
  recorder.end(command, ns(8));  // the handle still names its span, though it moved
  const Span& ended = recorder.tracks()[router].spans[1];
  EXPECT_EQ(recorder.text(ended.name), "command");
  EXPECT_FALSE(ended.open);
  EXPECT_EQ(ended.end, ns(8));
  EXPECT_TRUE(recorder.tracks()[router].spans[0].open);
  EXPECT_THROW(recorder.end(command, ns(9)), std::logic_error);  // closed twice: caught, not misapplied
  recorder.end(run, ns(10));
  EXPECT_EQ(recorder.text(recorder.tracks()[core].spans.at(0).name), "op 2");
}

TEST(TracePieces, ForgettingStartsTheCountersAtTheLatestTime) {
  TraceLimits limits;
  limits.initial_counter_bucket = ns(10);
  TraceRecorder recorder(limits);
  const WireId w = recorder.wire(0, 1, 1, 2);
  recorder.wire_busy(w, ns(0), ns(95), 64, 80, "packet");
  recorder.forget_recorded();
  EXPECT_EQ(recorder.wires()[w].busy_ps, 0);
  EXPECT_EQ(recorder.counter_origin(), ns(95));
  recorder.wire_busy(w, ns(100), ns(115), 64, 80, "packet");
  const std::vector<std::int64_t>& buckets = recorder.wires()[w].busy_ps_per_bucket;
  ASSERT_EQ(buckets.size(), 2u);  // 95..105, 105..115: counted from the origin, not from zero
  EXPECT_EQ(buckets[0], 5'000);
  EXPECT_EQ(buckets[1], 10'000);
  const json j = json::parse(to_trace_event_json(recorder));
  EXPECT_EQ(j.at("otherData").at("counter_origin_us"), 0.095);
  const json* first = find_event(j, "C", "link busy % ch 1 -> chip 1");
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->at("ts"), 0.095);
}

TEST(TracePieces, ResetInsideAPieceFollowsTheOldLife) {
  TraceRecorder recorder;
  const TrackId router = recorder.track(0, "eth ch 0 erisc", 0);
  const TrackId core = recorder.track(0, "core", 1);
  recorder.piece_started();
  recorder.begin(router, ns(1), "router (life 1)");
  recorder.span(core, ns(2), ns(40), "hung op");
  recorder.device_reset();
  EXPECT_EQ(recorder.life(), 2u);
  EXPECT_EQ(recorder.life_offset(), ns(40));
  ASSERT_EQ(recorder.resets().size(), 1u);
  EXPECT_EQ(recorder.resets()[0].when, ns(40));
  const Span& old_router = recorder.tracks()[router].spans[0];
  EXPECT_FALSE(old_router.open);
  EXPECT_TRUE(old_router.ended_by_reset);
  EXPECT_EQ(old_router.end, ns(40));
  const OpenSpan new_router = recorder.begin(router, ns(1), "router (life 2)");  // the new life's clock
  recorder.span(core, ns(3), ns(6), "next op");
  EXPECT_EQ(recorder.tracks()[router].spans[1].start, ns(41));
  EXPECT_EQ(recorder.tracks()[core].spans[1].start, ns(43));

  const json j = json::parse(to_trace_event_json(recorder));
  const json* reset = find_event(j, "i", "device reset");
  ASSERT_NE(reset, nullptr);
  EXPECT_EQ(reset->at("ts"), 0.04);
  EXPECT_EQ(reset->at("args").at("life"), 2);
  EXPECT_EQ(reset->at("cat"), "device");
  const json* cut = find_event(j, "X", "router (life 1)");
  ASSERT_NE(cut, nullptr);
  EXPECT_EQ(cut->at("dur"), 0.039);
  EXPECT_EQ(cut->at("args").at("ended_by"), "device reset");
  EXPECT_EQ(cut->at("args").at("unfinished"), true);

  // The next piece is on the new life's clock again.
  recorder.forget_recorded();
  EXPECT_EQ(recorder.life_offset(), SimTime::zero());
  ASSERT_EQ(recorder.tracks()[router].spans.size(), 1u);
  EXPECT_EQ(recorder.tracks()[router].spans[0].start, ns(1));
  EXPECT_TRUE(recorder.resets().empty());
  recorder.end(new_router, ns(20));
  EXPECT_EQ(recorder.tracks()[router].spans[0].end, ns(20));
}

TEST(TracePieces, ResetBetweenPiecesStartsTheNextAtZero) {
  TraceRecorder recorder;
  const TrackId router = recorder.track(0, "eth ch 0 erisc", 0);
  recorder.begin(router, ns(1), "router (life 1)");
  recorder.span(recorder.track(0, "core", 1), ns(2), ns(40), "op");
  recorder.forget_recorded();  // the piece was written
  recorder.device_reset();     // then the device reset, before the next piece began
  EXPECT_EQ(recorder.life(), 2u);
  EXPECT_EQ(recorder.life_offset(), SimTime::zero());
  EXPECT_EQ(recorder.counter_origin(), SimTime::zero());
  EXPECT_TRUE(recorder.tracks().empty());  // the old life's tracks and router: written, gone
  EXPECT_TRUE(recorder.resets().empty());
  // The new life numbers its tracks as a fresh device's recorder would.
  EXPECT_EQ(recorder.track(0, "eth ch 0 erisc", 0), router);
  recorder.begin(router, ns(1), "router (life 2)");
  EXPECT_EQ(recorder.tracks()[router].spans[0].start, ns(1));
  const json j = json::parse(to_trace_event_json(recorder));
  EXPECT_EQ(find_event(j, "i", "device reset"), nullptr);
  EXPECT_FALSE(j.at("otherData").contains("counter_origin_us"));
}

TEST(TracePieces, ForgettingDropsUnusedStrings) {
  TraceRecorder recorder;
  const TrackId core = recorder.track(0, "core", 1);
  SpanArgs kept_args;
  kept_args.text_key = "command";
  kept_args.text = "WAIT_VALUE kept";
  const OpenSpan open = recorder.begin(core, ns(1), "kept", kept_args);
  for (int i = 0; i < 100; ++i) {
    SpanArgs args;
    args.text_key = "command";
    const std::string text = "COPY addr=" + std::to_string(i);
    args.text = text;
    recorder.span(core, ns(2), ns(3), "copy", args);
  }
  recorder.forget_recorded();
  const Span& kept = recorder.tracks()[core].spans.at(0);
  EXPECT_EQ(recorder.text(kept.name), "kept");
  EXPECT_EQ(recorder.text(kept.text_key), "command");
  EXPECT_EQ(recorder.text(kept.text), "WAIT_VALUE kept");
  EXPECT_THROW(recorder.text(3), std::out_of_range);  // only the kept span's three strings remain
  recorder.end(open, ns(4));
}

}  // namespace
}  // namespace cclmesh::sim::trace
