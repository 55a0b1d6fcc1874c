#include "tools/cclmesh/sweep_point.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <bit>
#include <exception>
#include <new>
#include <stdexcept>

#include "runtime/device/mesh_device.hpp"
#include "tools/cclmesh/all_reduce_halves.hpp"
#include "tools/cclmesh/cli_error.hpp"
#include "tools/cclmesh/op_runner.hpp"

namespace cclmesh::cli {

SweepPointOutcome run_sweep_point(const RunOptions& options, runtime::remote::RemoteMeshDevice* device) {
  SweepPointOutcome outcome;
  RunProgress progress;
  if (device != nullptr) progress.groups_mirrored = 0;  // a served device simulates every chip
  try {
    outcome.result = device != nullptr ? run_collective_on(options, *device) : run_collective(options, nullptr, &progress);
  } catch (const UsageError& e) {
    outcome.kind = SweepPointOutcome::Kind::Skipped;
    outcome.message = e.what();
  } catch (const runtime::DeviceError& e) {
    outcome.kind = SweepPointOutcome::Kind::DidNotComplete;
    outcome.message = e.what();
  } catch (const runtime::remote::RemoteDeviceError& e) {
    // As `run --device` says it (exit 4): the server went away or failed mid-point.
    outcome.kind = SweepPointOutcome::Kind::Crashed;
    outcome.message = fmt::format("the served device failed: {}", e.what());
  } catch (const std::bad_alloc& e) {
    // Not cclmesh's failure but the host's memory (review, session 41: a sweep said "internal
    // error: std::bad_alloc" where a run says what holds the memory and names --no-data).
    outcome.kind = SweepPointOutcome::Kind::OutOfHostMemory;
    outcome.message = out_of_host_memory_message(e, options.no_data);
  } catch (const std::exception& e) {
    outcome.kind = SweepPointOutcome::Kind::InternalError;
    outcome.message = e.what();
  }
  if (outcome.kind != SweepPointOutcome::Kind::Completed) outcome.groups_mirrored = progress.groups_mirrored;
  return outcome;
}

namespace {

// A field added to RunResult (or to a record it holds) must travel too, or `-j N` would print
// another table than -j 1. These sizes make most such additions (not one that fits in padding)
// fail to compile here until result_wire_json, result_from_wire and sweep_point_test's
// every_field_set / expect_same_result carry the field; then update the size. Checked on the
// toolchain the project builds with (libstdc++, x86-64) only.
#if defined(__GLIBCXX__) && defined(__x86_64__) && !defined(_GLIBCXX_DEBUG)
// 1544 since session 25: AllReduceHalves::reduce_scatter's optional flag, carried by halves_json.
static_assert(sizeof(RunResult) == 1608, "RunResult changed: carry the new field in sweep_point.cpp (see above)");
static_assert(sizeof(ShardRequest) == 104, "ShardRequest changed: carry the new field in sweep_point.cpp");
static_assert(sizeof(OutputChecksum) == 48, "OutputChecksum changed: carry the new field in sweep_point.cpp");
static_assert(sizeof(AlgorithmRecord) == 128, "AlgorithmRecord changed: carry the new field in all_reduce_halves.cpp");
// Session 25: reduce_scatter became optional (the composite records its all_gather alone).
static_assert(sizeof(AllReduceHalves) == 264, "AllReduceHalves changed: carry the new field in all_reduce_halves.cpp");
static_assert(sizeof(LinkDirectionUse) == 40, "LinkDirectionUse changed: carry the new field in sweep_point.cpp");
static_assert(sizeof(BandwidthFigures) == 32, "BandwidthFigures changed: carry the new field in sweep_point.cpp");
static_assert(sizeof(AlphaBetaTime) == 16, "AlphaBetaTime changed: carry the new field in sweep_point.cpp");
static_assert(sizeof(topo::LinkSpread) == 64, "topo::LinkSpread changed: carry the new field in sweep_point.cpp");
#endif

using nlohmann::json;

// A double as its bit pattern: exact, infinities and NaN included.
json bits(double value) { return std::bit_cast<std::uint64_t>(value); }
double from_bits(const json& j) { return std::bit_cast<double>(j.get<std::uint64_t>()); }

template <typename T>
json optional_json(const std::optional<T>& value) {
  return value ? json(*value) : json(nullptr);
}

template <typename T>
std::optional<T> optional_from(const json& j) {
  if (j.is_null()) return std::nullopt;
  return j.get<T>();
}

json shard_json(const std::optional<ShardRequest>& shard) {
  if (!shard) return nullptr;
  json grid = json::array();
  for (const CoreRangeRequest& c : shard->grid) grid.push_back({c.x0, c.y0, c.x1, c.y1});
  return {{"layout", shard->layout},
          {"grid", grid},
          {"orientation", shard->orientation},
          {"shape", optional_json(shard->shape)}};
}

std::optional<ShardRequest> shard_from(const json& j) {
  if (j.is_null()) return std::nullopt;
  ShardRequest shard;
  shard.layout = j.at("layout").get<std::string>();
  for (const json& c : j.at("grid")) {
    shard.grid.push_back({c.at(0).get<std::uint32_t>(), c.at(1).get<std::uint32_t>(), c.at(2).get<std::uint32_t>(),
                          c.at(3).get<std::uint32_t>()});
  }
  shard.orientation = j.at("orientation").get<std::string>();
  shard.shape = optional_from<std::array<std::uint32_t, 2>>(j.at("shape"));
  return shard;
}

json link_spread_json(const std::optional<topo::LinkSpread>& spread) {
  if (!spread) return nullptr;
  return {spread->links,
          spread->links_off_default,
          spread->min_rate_bytes_per_s,
          spread->max_rate_bytes_per_s,
          spread->min_latency_ps,
          spread->max_latency_ps,
          spread->default_rate_bytes_per_s,
          spread->default_latency_ps};
}

std::optional<topo::LinkSpread> link_spread_from(const json& j) {
  if (j.is_null()) return std::nullopt;
  topo::LinkSpread spread;
  spread.links = j.at(0).get<std::size_t>();
  spread.links_off_default = j.at(1).get<std::size_t>();
  spread.min_rate_bytes_per_s = j.at(2).get<std::int64_t>();
  spread.max_rate_bytes_per_s = j.at(3).get<std::int64_t>();
  spread.min_latency_ps = j.at(4).get<std::int64_t>();
  spread.max_latency_ps = j.at(5).get<std::int64_t>();
  spread.default_rate_bytes_per_s = j.at(6).get<std::int64_t>();
  spread.default_latency_ps = j.at(7).get<std::int64_t>();
  return spread;
}

json result_wire_json(const RunResult& r) {
  json checksums = json::array();
  for (const OutputChecksum& c : r.checksums) checksums.push_back({c.chip, c.buffer, c.crc32, c.expected_crc32});
  json links_used = json::array();
  for (const LinkDirectionUse& l : r.links_used) {
    links_used.push_back({l.chip, l.channel, l.peer_chip, l.peer_channel, l.payload_bytes, l.busy_ps, bits(l.utilisation)});
  }
  return {{"op", r.op},
          {"system", r.system},
          {"n_chips", r.n_chips},
          {"topology", r.topology},
          {"fabric_topology", r.fabric_topology},
          {"links", r.links},
          {"directions", r.directions},
          {"mode", r.mode},
          {"dtype", r.dtype},
          {"redop", r.redop},
          {"size_bytes", r.size_bytes},
          {"count", r.count},
          {"shape", r.shape},
          {"dim", optional_json(r.dim)},
          {"tensor_asked", r.tensor_asked},
          {"algorithm", r.algorithm},
          {"algorithm_reason", r.algorithm_reason},
          {"algorithm_lines", r.algorithm_lines},
          {"algorithm_lines_reason", r.algorithm_lines_reason},
          {"algorithm_fallback", r.algorithm_fallback},
          {"algorithm_lines_fallback", r.algorithm_lines_fallback},
          {"algorithm_halves", r.algorithm_halves ? halves_json(*r.algorithm_halves) : json(nullptr)},
          {"layout", r.layout},
          {"memory", r.memory},
          {"memory_layout", r.memory_layout},
          {"shard", shard_json(r.shard)},
          {"output_memory_layout", r.output_memory_layout},
          {"output_shard_request", shard_json(r.output_shard_request)},
          {"input_shard", r.input_shard},
          {"output_shard", r.output_shard},
          {"time_us", bits(r.time_us)},
          {"dispatch_us", bits(r.dispatch_us)},
          {"launch_us", bits(r.launch_us)},
          {"algbw_GBps", bits(r.bandwidth.algbw_GBps)},
          {"busbw_GBps", bits(r.bandwidth.busbw_GBps)},
          {"linkbw_GBps", bits(r.bandwidth.linkbw_GBps)},
          {"pct_line_rate", bits(r.bandwidth.pct_line_rate)},
          {"line_rate_GBps", bits(r.line_rate_GBps)},
          {"verified", optional_json(r.verified)},
          {"wrong_elements", r.wrong_elements},
          {"mismatch", r.mismatch},
          {"checksums", checksums},
          {"faults", r.faults},
          {"fault_effects", r.fault_effects},
          {"fabric_order", r.fabric_order},
          {"rings_as_lines", r.rings_as_lines},
          {"fabric", r.fabric},
          {"hardware", r.hardware},
          {"alpha_beta", r.alpha_beta ? json::array({bits(r.alpha_beta->latency_us), bits(r.alpha_beta->bandwidth_us)})
                                      : json(nullptr)},
          {"chips", r.chips},
          {"cluster_axis", optional_json(r.cluster_axis)},
          {"sim_events", optional_json(r.sim_events)},
          {"groups_mirrored", r.groups_mirrored},
          {"trace_hash", r.trace_hash},
          {"wall_s", bits(r.wall_s)},
          {"simulate_wall_s", bits(r.simulate_wall_s)},
          {"op_preparations", r.op_preparations},
          {"op_builds", r.op_builds},
          {"links_used", links_used},
          {"links_measured", r.links_measured},
          {"link_whatif", link_spread_json(r.link_whatif)},
          {"settings", r.settings}};
}

RunResult result_from_wire(const json& j) {
  RunResult r;
  r.op = j.at("op").get<std::string>();
  r.system = j.at("system").get<std::string>();
  r.n_chips = j.at("n_chips").get<std::uint32_t>();
  r.topology = j.at("topology").get<std::string>();
  r.fabric_topology = j.at("fabric_topology").get<std::string>();
  r.links = j.at("links").get<std::uint32_t>();
  r.directions = j.at("directions").get<std::uint32_t>();
  r.mode = j.at("mode").get<std::string>();
  r.dtype = j.at("dtype").get<std::string>();
  r.redop = j.at("redop").get<std::string>();
  r.size_bytes = j.at("size_bytes").get<std::uint64_t>();
  r.count = j.at("count").get<std::uint64_t>();
  r.shape = j.at("shape").get<std::array<std::uint32_t, 4>>();
  r.dim = optional_from<std::uint32_t>(j.at("dim"));
  r.tensor_asked = j.at("tensor_asked").get<bool>();
  r.algorithm = j.at("algorithm").get<std::string>();
  r.algorithm_reason = j.at("algorithm_reason").get<std::string>();
  r.algorithm_lines = j.at("algorithm_lines").get<std::string>();
  r.algorithm_lines_reason = j.at("algorithm_lines_reason").get<std::string>();
  r.algorithm_fallback = j.at("algorithm_fallback").get<bool>();
  r.algorithm_lines_fallback = j.at("algorithm_lines_fallback").get<bool>();
  if (!j.at("algorithm_halves").is_null()) r.algorithm_halves = halves_from_json(j.at("algorithm_halves"));
  r.layout = j.at("layout").get<std::string>();
  r.memory = j.at("memory").get<std::string>();
  r.memory_layout = j.at("memory_layout").get<std::string>();
  r.shard = shard_from(j.at("shard"));
  r.output_memory_layout = j.at("output_memory_layout").get<std::string>();
  r.output_shard_request = shard_from(j.at("output_shard_request"));
  r.input_shard = j.at("input_shard").get<std::array<std::uint32_t, 2>>();
  r.output_shard = j.at("output_shard").get<std::array<std::uint32_t, 2>>();
  r.time_us = from_bits(j.at("time_us"));
  r.dispatch_us = from_bits(j.at("dispatch_us"));
  r.launch_us = from_bits(j.at("launch_us"));
  r.bandwidth.algbw_GBps = from_bits(j.at("algbw_GBps"));
  r.bandwidth.busbw_GBps = from_bits(j.at("busbw_GBps"));
  r.bandwidth.linkbw_GBps = from_bits(j.at("linkbw_GBps"));
  r.bandwidth.pct_line_rate = from_bits(j.at("pct_line_rate"));
  r.line_rate_GBps = from_bits(j.at("line_rate_GBps"));
  r.verified = optional_from<bool>(j.at("verified"));
  r.wrong_elements = j.at("wrong_elements").get<std::uint64_t>();
  r.mismatch = j.at("mismatch").get<std::string>();
  for (const json& c : j.at("checksums")) {
    r.checksums.push_back({c.at(0).get<std::uint32_t>(), c.at(1).get<std::string>(), c.at(2).get<std::uint32_t>(),
                           c.at(3).get<std::uint32_t>()});
  }
  r.faults = j.at("faults").get<std::vector<std::string>>();
  r.fault_effects = j.at("fault_effects").get<std::vector<std::string>>();
  r.fabric_order = j.at("fabric_order").get<std::string>();
  r.rings_as_lines = j.at("rings_as_lines").get<std::vector<std::string>>();
  r.fabric = j.at("fabric").get<std::string>();
  r.hardware = j.at("hardware").get<std::string>();
  if (!j.at("alpha_beta").is_null()) {
    r.alpha_beta = AlphaBetaTime{from_bits(j.at("alpha_beta").at(0)), from_bits(j.at("alpha_beta").at(1))};
  }
  r.chips = j.at("chips").get<std::vector<std::uint32_t>>();
  r.cluster_axis = optional_from<int>(j.at("cluster_axis"));
  r.sim_events = optional_from<std::uint64_t>(j.at("sim_events"));
  r.groups_mirrored = j.at("groups_mirrored").get<std::size_t>();
  r.trace_hash = j.at("trace_hash").get<std::uint64_t>();
  r.wall_s = from_bits(j.at("wall_s"));
  r.simulate_wall_s = from_bits(j.at("simulate_wall_s"));
  r.op_preparations = j.at("op_preparations").get<std::size_t>();
  r.op_builds = j.at("op_builds").get<std::size_t>();
  for (const json& l : j.at("links_used")) {
    r.links_used.push_back({l.at(0).get<std::int32_t>(), l.at(1).get<std::int32_t>(), l.at(2).get<std::int32_t>(),
                            l.at(3).get<std::int32_t>(), l.at(4).get<std::int64_t>(), l.at(5).get<std::int64_t>(),
                            from_bits(l.at(6))});
  }
  r.links_measured = j.at("links_measured").get<bool>();
  r.link_whatif = link_spread_from(j.at("link_whatif"));
  r.settings = j.at("settings");
  return r;
}

}  // namespace

std::string encode_sweep_point(const SweepPointOutcome& outcome) {
  json j{{"kind", static_cast<int>(outcome.kind)}, {"message", outcome.message}};
  if (outcome.kind == SweepPointOutcome::Kind::Completed) j["result"] = result_wire_json(outcome.result);
  if (outcome.groups_mirrored) j["groups_mirrored"] = *outcome.groups_mirrored;
  // Strings are the simulator's own ASCII; a stray invalid byte must not cost the whole point.
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

SweepPointOutcome decode_sweep_point(std::string_view text) {
  const json j = json::parse(text);
  SweepPointOutcome outcome;
  const int kind = j.at("kind").get<int>();
  if (kind < 0 || kind > static_cast<int>(SweepPointOutcome::Kind::OutOfHostMemory)) {
    throw std::runtime_error("a sweep point's outcome of unknown kind " + std::to_string(kind));
  }
  outcome.kind = static_cast<SweepPointOutcome::Kind>(kind);
  outcome.message = j.at("message").get<std::string>();
  if (outcome.kind == SweepPointOutcome::Kind::Completed) outcome.result = result_from_wire(j.at("result"));
  if (j.contains("groups_mirrored")) outcome.groups_mirrored = j.at("groups_mirrored").get<std::size_t>();
  return outcome;
}

}  // namespace cclmesh::cli
