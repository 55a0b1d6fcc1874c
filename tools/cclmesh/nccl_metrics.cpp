#include "tools/cclmesh/nccl_metrics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string_view>
#include <utility>

#include "tools/cclmesh/cli_error.hpp"

namespace cclmesh::cli {

namespace {
constexpr std::array<std::pair<CollectiveOp, const char*>, 8> kOpNames = {{
    {CollectiveOp::AllGather, "all_gather"},
    {CollectiveOp::AllBroadcast, "all_broadcast"},
    {CollectiveOp::ReduceScatter, "reduce_scatter"},
    {CollectiveOp::AllReduce, "all_reduce"},
    {CollectiveOp::Reduce, "reduce"},
    {CollectiveOp::Broadcast, "broadcast"},
    {CollectiveOp::AllToAll, "all_to_all"},
    {CollectiveOp::SendRecv, "send_recv"},
}};
}  // namespace

std::string to_string(CollectiveOp op) {
  for (const auto& [value, name] : kOpNames) {
    if (value == op) return name;
  }
  return "unknown";
}

std::string collective_op_names() {
  std::string names;
  for (const auto& [value, name] : kOpNames) names += fmt::format("{}{}", names.empty() ? "" : ", ", name);
  return names;
}

CollectiveOp parse_collective_op(const std::string& text, const std::string& option) {
  for (const auto& [value, name] : kOpNames) {
    if (text == name) return value;
  }
  throw UsageError(fmt::format("{}: unknown op '{}'; expected one of {}", option, text, collective_op_names()));
}

std::vector<CollectiveOp> parse_collective_op_list(const std::string& list, const std::string& option) {
  std::vector<CollectiveOp> ops;
  // Every piece between commas counts, the last one too: "all_gather," is a list with an empty
  // name (a typo, or a name lost to the shell), not a list of one.
  std::string_view rest(list);
  while (true) {
    const std::size_t comma = rest.find(',');
    const std::string name(rest.substr(0, comma));
    if (name.empty()) {
      throw UsageError(fmt::format("{}: '{}' has an empty op name; expected names separated by single commas, e.g. "
                                   "all_gather,reduce_scatter",
                                   option, list));
    }
    const CollectiveOp op = parse_collective_op(name, option);
    // A second row set for the same op would be a table printed twice, not another measurement.
    if (std::find(ops.begin(), ops.end(), op) != ops.end()) {
      throw UsageError(fmt::format("{}: '{}' names {} twice; expected each op once", option, list, name));
    }
    ops.push_back(op);
    if (comma == std::string_view::npos) return ops;
    rest.remove_prefix(comma + 1);
  }
}

double bus_factor(CollectiveOp op, std::uint32_t n_chips) {
  const double n = static_cast<double>(n_chips);
  switch (op) {
    case CollectiveOp::AllGather:
    case CollectiveOp::AllBroadcast:
    case CollectiveOp::ReduceScatter:
    case CollectiveOp::AllToAll:
      return n_chips == 0 ? 0.0 : (n - 1.0) / n;
    case CollectiveOp::AllReduce:
      return n_chips == 0 ? 0.0 : 2.0 * (n - 1.0) / n;
    case CollectiveOp::Reduce:
    case CollectiveOp::Broadcast:
    case CollectiveOp::SendRecv:
      return 1.0;
  }
  return 0.0;
}

BandwidthFigures compute_bandwidth(const BandwidthInputs& in) {
  BandwidthFigures out;
  if (in.time_us <= 0.0) return out;
  const double bytes_per_us_to_GBps = 1e-3;  // 1 B/us = 1e6 B/s = 1e-3 GB/s
  out.algbw_GBps = static_cast<double>(in.size_bytes) / in.time_us * bytes_per_us_to_GBps;
  out.busbw_GBps = out.algbw_GBps * bus_factor(in.op, in.n_chips);
  // tt-metal's per-link figure: the bottleneck bytes over every link and direction in use.
  // All-to-all's bottleneck is its middle cut: floor(N/2)ceil(N/2)/N of B, where S is the
  // per-device B as in the calibration table (REFERENCE §9, §14).
  double bottleneck_GBps = out.busbw_GBps;
  if (in.op == CollectiveOp::AllToAll && in.n_chips > 0) {
    const double cut = static_cast<double>(in.n_chips / 2) * static_cast<double>((in.n_chips + 1) / 2) /
                       static_cast<double>(in.n_chips);
    bottleneck_GBps = out.algbw_GBps * cut;
  }
  const double lanes = static_cast<double>(in.links) * static_cast<double>(in.directions);
  out.linkbw_GBps = lanes > 0 ? bottleneck_GBps / lanes : 0.0;
  out.pct_line_rate = in.line_rate_GBps > 0 ? 100.0 * out.linkbw_GBps / in.line_rate_GBps : 0.0;
  return out;
}

}  // namespace cclmesh::cli
