// `cclmesh run --trace / --report`: the recorder's trace-event JSON on real ops (every event has
// its phase's required fields, spans nest per track, every wire has a complete counter),
// tracing changes nothing in the simulation, the span limit bounds the trace, and the files
// the CLI writes exist and parse.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "sim/trace/trace_event_json.hpp"
#include "sim/trace/trace_recorder.hpp"
#include "tests/unit/cli/cli_test_util.hpp"
#include "tools/cclmesh/commands.hpp"
#include "tools/cclmesh/html_report.hpp"
#include "tools/cclmesh/op_runner.hpp"
#include "topologies/system_loader.hpp"

namespace cclmesh::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using nlohmann::json;
using sim::SimTime;
namespace trace = sim::trace;

RunOptions all_gather(const std::string& system, const std::string& topology, std::uint64_t bytes) {
  RunOptions o;
  o.system = system;
  o.op = CollectiveOp::AllGather;
  o.size_bytes = bytes;
  o.topology = topology;
  return o;
}

// Microseconds as written (exact decimals of picoseconds) back to picoseconds: a double holds
// them exactly enough for any run shorter than hours.
std::int64_t ps_of(const json& microseconds) { return std::llround(microseconds.get<double>() * 1e6); }

// Checks the trace-event format's required fields per phase and that the "X" spans of every
// (pid, tid) nest; returns the number of events per phase.
std::map<std::string, int> check_trace(const json& trace) {
  std::map<std::string, int> phases;
  EXPECT_TRUE(trace.contains("traceEvents"));
  std::map<std::pair<int, int>, std::vector<std::pair<std::int64_t, std::int64_t>>> spans;
  std::set<std::pair<int, int>> named_threads;
  std::set<int> named_processes;
  for (const json& e : trace.at("traceEvents")) {
    for (const char* field : {"name", "ph", "ts", "pid", "tid"}) {
      EXPECT_TRUE(e.contains(field)) << field << " missing in " << e.dump();
    }
    EXPECT_TRUE(e.at("name").is_string() && e.at("ts").is_number() && e.at("pid").is_number_integer() &&
                e.at("tid").is_number_integer())
        << e.dump();
    const std::string ph = e.at("ph");
    ++phases[ph];
    const std::pair<int, int> thread{e.at("pid"), e.at("tid")};
    if (ph == "X") {
      EXPECT_TRUE(e.contains("dur") && e.at("dur").is_number()) << e.dump();
      if (!e.contains("dur")) continue;
      EXPECT_GE(e.at("dur").get<double>(), 0.0);
      const std::int64_t start = ps_of(e.at("ts"));
      spans[thread].emplace_back(start, start + ps_of(e.at("dur")));
    } else if (ph == "C") {
      EXPECT_TRUE(e.contains("args") && e.at("args").is_object() && !e.at("args").empty()) << e.dump();
      if (!e.contains("args")) continue;
      for (const auto& [key, value] : e.at("args").items()) EXPECT_TRUE(value.is_number()) << key;
    } else if (ph == "M") {
      EXPECT_TRUE(e.contains("args") && e.at("args").is_object()) << e.dump();
      if (e.at("name") == "thread_name") named_threads.insert(thread);
      if (e.at("name") == "process_name") named_processes.insert(thread.first);
    } else {
      ADD_FAILURE() << "unexpected phase " << ph;
    }
  }
  for (auto& [thread, list] : spans) {
    EXPECT_TRUE(named_threads.contains(thread)) << "pid " << thread.first << " tid " << thread.second;
    EXPECT_TRUE(named_processes.contains(thread.first));
    // Sorted by start (longest first on ties), each span must fit inside every span still open.
    std::sort(list.begin(), list.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : a.second > b.second;
    });
    std::vector<std::int64_t> open_ends;
    for (const auto& [start, end] : list) {
      while (!open_ends.empty() && open_ends.back() <= start) open_ends.pop_back();
      if (!open_ends.empty()) {
        EXPECT_LE(end, open_ends.back()) << "span [" << start << ", " << end << ") ps overlaps its parent on pid "
                                         << thread.first << " tid " << thread.second;
      }
      open_ends.push_back(end);
    }
  }
  return phases;
}

std::vector<std::string> thread_names(const json& trace) {
  std::vector<std::string> names;
  for (const json& e : trace.at("traceEvents")) {
    if (e.at("ph") == "M" && e.at("name") == "thread_name") names.push_back(e.at("args").at("name"));
  }
  return names;
}

int count_named(const json& trace, const std::string& ph, const std::string& name_part) {
  int n = 0;
  for (const json& e : trace.at("traceEvents")) {
    if (e.at("ph") == ph && e.at("name").get<std::string>().find(name_part) != std::string::npos) ++n;
  }
  return n;
}

TEST(TraceText, MicrosecondsKeepEveryPicosecond) {
  EXPECT_EQ(trace::microseconds_text(SimTime::zero()), "0");
  EXPECT_EQ(trace::microseconds_text(SimTime::from_ps(3'508'500)), "3.5085");
  EXPECT_EQ(trace::microseconds_text(SimTime::from_ps(1)), "0.000001");
  EXPECT_EQ(trace::microseconds_text(SimTime::from_us(12)), "12");
}

TEST(TraceRecorder, SpanLimitDropsAndCounts) {
  trace::TraceLimits limits;
  limits.max_spans_per_track = 3;
  trace::TraceRecorder recorder(limits);
  const trace::TrackId t = recorder.track(0, "core", 0);
  for (int i = 0; i < 10; ++i) recorder.span(t, SimTime::from_ns(i), SimTime::from_ns(i + 1), "s");
  EXPECT_EQ(recorder.tracks()[t].spans.size(), 3u);
  EXPECT_EQ(recorder.tracks()[t].dropped_spans, 7u);
  const json j = json::parse(trace::to_trace_event_json(recorder));
  EXPECT_EQ(j.at("otherData").at("dropped_spans"), 7);
  EXPECT_THAT(thread_names(j).at(0), HasSubstr("7 spans over the trace limit"));
}

TEST(TraceRecorder, CounterBucketsWidenAndKeepEveryPicosecond) {
  trace::TraceLimits limits;
  limits.max_counter_buckets = 4;
  limits.initial_counter_bucket = SimTime::from_ns(10);
  trace::TraceRecorder recorder(limits);
  const trace::WireId w = recorder.wire(0, 1, 1, 2);
  recorder.wire_busy(w, SimTime::from_ns(5), SimTime::from_ns(25), 64, 80, "packet");   // buckets 0..2 of 10 ns
  recorder.wire_busy(w, SimTime::from_ns(70), SimTime::from_ns(95), 64, 80, "packet");  // needs 10 -> widens twice
  EXPECT_EQ(recorder.counter_bucket(), SimTime::from_ns(40));
  const std::vector<std::int64_t>& buckets = recorder.wires()[w].busy_ps_per_bucket;
  ASSERT_EQ(buckets.size(), 3u);
  EXPECT_EQ(buckets[0], 20'000);  // 5..25 ns
  EXPECT_EQ(buckets[1], 10'000);  // 70..80 ns
  EXPECT_EQ(buckets[2], 15'000);  // 80..95 ns
  EXPECT_EQ(recorder.wires()[w].busy_ps, 45'000);
}

TEST(RunTrace, TracingChangesNothingInTheSimulation) {
  const RunOptions options = all_gather("t3k", "ring", 64 << 10);
  const RunResult plain = run_collective(options);
  trace::TraceRecorder recorder;
  const RunResult traced = run_collective(options, &recorder);
  EXPECT_EQ(traced.time_us, plain.time_us);
  EXPECT_EQ(traced.launch_us, plain.launch_us);
  EXPECT_EQ(traced.sim_events, plain.sim_events);
  EXPECT_EQ(traced.trace_hash, plain.trace_hash);
  ASSERT_EQ(traced.links_used.size(), plain.links_used.size());
  for (std::size_t i = 0; i < plain.links_used.size(); ++i) {
    EXPECT_EQ(traced.links_used[i].busy_ps, plain.links_used[i].busy_ps);
  }
  ASSERT_TRUE(traced.verified.has_value());
  EXPECT_TRUE(*traced.verified);
  EXPECT_FALSE(recorder.tracks().empty());
}

TEST(RunTrace, N300AllGatherTraceIsWellFormed) {
  trace::TraceRecorder recorder;
  const RunResult result = run_collective(all_gather("n300", "line", 64 << 10), &recorder);
  const json j = json::parse(trace::to_trace_event_json(recorder));
  const std::map<std::string, int> phases = check_trace(j);
  EXPECT_GT(phases.at("X"), 0);
  EXPECT_GT(phases.at("C"), 0);
  EXPECT_GT(phases.at("M"), 0);
  // Kernels, interpreter commands on their streams' tracks, packets on the wires.
  EXPECT_GT(count_named(j, "X", "ccl_interpreter"), 0);
  EXPECT_GT(count_named(j, "X", "fabric_router"), 0);
  EXPECT_GT(count_named(j, "X", "STREAM_TENSOR_TO_CB"), 0);
  EXPECT_GT(count_named(j, "X", "packet"), 0);
  const std::vector<std::string> threads = thread_names(j);
  EXPECT_TRUE(std::any_of(threads.begin(), threads.end(), [](const std::string& n) { return n.ends_with(" stream 0"); }));
  // Both directions of the N300's links have a counter track.
  for (const LinkDirectionUse& u : result.links_used) {
    EXPECT_GT(count_named(j, "C", fmt::format("ch {} -> chip {}", u.channel, u.peer_chip)), 0);
  }
}

TEST(RunTrace, T3kRingStreamsNestAndPacketsMatchTheWireStats) {
  trace::TraceRecorder recorder;
  const RunResult result = run_collective(all_gather("t3k", "ring", 256 << 10), &recorder);
  const json j = json::parse(trace::to_trace_event_json(recorder));
  check_trace(j);
  EXPECT_EQ(j.at("otherData").at("dropped_spans"), 0);
  // The recorder saw every packet the wires carried during the op (and the fabric's start-up).
  std::int64_t traced_payload = 0;
  for (const trace::Wire& w : recorder.wires()) traced_payload += w.payload_bytes;
  std::int64_t op_payload = 0;
  for (const LinkDirectionUse& u : result.links_used) op_payload += u.payload_bytes;
  EXPECT_GE(traced_payload, op_payload);
  EXPECT_GT(op_payload, 0);
}

TEST(RunTrace, SpanLimitBoundsTheTraceButNotTheCounters) {
  const RunOptions options = all_gather("t3k", "ring", 256 << 10);
  trace::TraceRecorder full;
  run_collective(options, &full);
  trace::TraceLimits limits;
  limits.max_spans_per_track = 4;
  trace::TraceRecorder bounded(limits);
  run_collective(options, &bounded);
  EXPECT_GT(bounded.dropped_spans(), 0u);
  for (const trace::Track& t : bounded.tracks()) EXPECT_LE(t.spans.size(), 4u);
  ASSERT_EQ(full.wires().size(), bounded.wires().size());
  for (std::size_t i = 0; i < full.wires().size(); ++i) {
    EXPECT_EQ(full.wires()[i].busy_ps_per_bucket, bounded.wires()[i].busy_ps_per_bucket);
  }
  check_trace(json::parse(trace::to_trace_event_json(bounded)));
}

TEST(RunReport, PageIsSelfContainedAndColoursEveryLane) {
  const RunResult result = run_collective(all_gather("t3k", "ring", 256 << 10));
  const topo::Topology topology = topo::load_system("t3k");
  const std::string html = html_report(result, topology);
  EXPECT_THAT(html, HasSubstr("<!DOCTYPE html>"));
  EXPECT_THAT(html, Not(HasSubstr("<script")));
  EXPECT_THAT(html, Not(HasSubstr("src=")));
  EXPECT_THAT(html, Not(HasSubstr("href=")));
  EXPECT_THAT(html, HasSubstr("<td>262144</td>"));
  // Two lanes per neighbour edge; a ring all-gather uses every ring edge in both directions.
  std::size_t lanes = 0;
  for (auto at = html.find("class=\"lane\""); at != std::string::npos; at = html.find("class=\"lane\"", at + 1)) ++lanes;
  EXPECT_EQ(lanes, 2 * topology.edges().size());
  std::size_t busy_rows = 0;
  for (const LinkDirectionUse& u : result.links_used) busy_rows += u.busy_ps > 0 ? 1 : 0;
  EXPECT_GE(busy_rows, 16u);  // 8 ring hops, both directions
  EXPECT_EQ(utilisation_colour(0.0), "#ffeda0");
  EXPECT_EQ(utilisation_colour(1.0), "#bd0026");
  EXPECT_EQ(utilisation_colour(2.0), "#bd0026");
}

// A device that does not measure its links (MeshDevice::link_traffic nullopt, as a served
// hardware backend may): the page says so and draws the topology uncoloured, rather than every
// lane idle. The same result measured colours its lanes; a device that counts no events (served
// hardware) is said to, not shown as 0 events.
TEST(RunReport, UnmeasuredLinksAreSaidNotDrawnIdle) {
  RunResult result = run_collective(all_gather("t3k", "ring", 64 << 10));
  const topo::Topology topology = topo::load_system("t3k");
  EXPECT_THAT(html_report(result, topology), HasSubstr("class=\"lane\""));
  EXPECT_THAT(html_report(result, topology), HasSubstr(" simulated events</p>"));
  result.links_measured = false;
  result.links_used.clear();
  result.sim_events = std::nullopt;
  const std::string html = html_report(result, topology);
  EXPECT_THAT(html, HasSubstr("No link statistics from this device"));
  EXPECT_THAT(html, Not(HasSubstr("class=\"lane\"")));
  EXPECT_THAT(html, Not(HasSubstr("Every link direction")));
  EXPECT_THAT(html, Not(HasSubstr("simulated events")));
  EXPECT_THAT(html, HasSubstr("no event count from this device"));
  EXPECT_THAT(html, HasSubstr("<td>65536</td>"));  // the row is still there
}

// Review (session 9): the report's summary names the chips --chips ran on (and any other fabric
// than the whole system's), as the table's title does: a Galaxy drawing with 4 chips busy said
// only "4 chips".
TEST(RunReport, SummaryNamesTheChipsRunOn) {
  RunOptions options = all_gather("galaxy", "auto", 64 << 10);
  options.chips = {0, 1, 9, 8};
  options.links = 2;
  const RunResult result = run_collective(options);
  const std::string html = html_report(result, topo::load_system("galaxy"));
  EXPECT_THAT(html, HasSubstr("4 chips, ring, 2 links, fabric mode, chips 0-1-9-8, bf16"));
}

// The CLI in-process: both files written, parsed; the table still printed.
TEST(RunCli, TraceAndReportFilesAreWrittenAndParse) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "cclmesh_run_trace_test";
  std::filesystem::create_directories(dir);
  const std::string trace_path = (dir / "t.json").string();
  const std::string report_path = (dir / "r.html").string();
  std::filesystem::remove(trace_path);
  std::filesystem::remove(report_path);
  const auto [exit_code, printed] =
      testing_util::run_cli_output({"run", "--system", "n300", "--op", "all_gather", "--size", "64KiB", "--topology", "line",
                          "--trace", trace_path, "--report", report_path});
  EXPECT_EQ(exit_code, 0);
  EXPECT_THAT(printed, HasSubstr("all_gather on n300"));
  std::ifstream trace_file(trace_path);
  ASSERT_TRUE(trace_file.good());
  const json j = json::parse(trace_file);
  EXPECT_EQ(j.at("otherData").at("op"), "all_gather");
  check_trace(j);
  std::ifstream report_file(report_path);
  ASSERT_TRUE(report_file.good());
  std::stringstream report;
  report << report_file.rdbuf();
  EXPECT_THAT(report.str(), HasSubstr("</html>"));
  EXPECT_FALSE(std::filesystem::exists(trace_path + ".tmp"));
  std::filesystem::remove_all(dir);
}

// The trace records the shape the groups ran as, next to what --topology asked: on N300 a
// send_recv along cluster axis 1 is one 2-chip group, which runs as a line (tt-metal #12770).
TEST(RunCli, TraceNamesTheTopologyTheGroupsRanAs) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "cclmesh_run_trace_topology_test";
  std::filesystem::create_directories(dir);
  const std::string trace_path = (dir / "t.json").string();
  std::filesystem::remove(trace_path);
  const auto [exit_code, printed] =
      testing_util::run_cli_output({"run", "--system", "n300", "--op", "send_recv", "--cluster-axis", "1", "--size", "64KiB",
                          "--topology", "ring", "--trace", trace_path});
  EXPECT_EQ(exit_code, 0);
  std::ifstream trace_file(trace_path);
  ASSERT_TRUE(trace_file.good());
  const json info = json::parse(trace_file).at("otherData");
  EXPECT_EQ(info.at("requested_topology"), "ring");
  EXPECT_EQ(info.at("topology"), "line");
  EXPECT_EQ(info.at("outcome"), "completed");
  std::filesystem::remove_all(dir);
}
}  // namespace
}  // namespace cclmesh::cli
