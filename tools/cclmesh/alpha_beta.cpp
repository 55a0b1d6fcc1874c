#include "tools/cclmesh/alpha_beta.hpp"

#include <algorithm>
#include <limits>

namespace cclmesh::cli {

std::optional<AlphaBetaLinks> alpha_beta_links(const topo::Topology& topology, const std::vector<std::vector<std::uint32_t>>& groups) {
  const auto same_group = [&groups](topo::ChipId a, topo::ChipId b) {
    return std::any_of(groups.begin(), groups.end(), [a, b](const std::vector<std::uint32_t>& group) {
      const auto holds = [&group](topo::ChipId chip) {
        return chip >= 0 && std::find(group.begin(), group.end(), static_cast<std::uint32_t>(chip)) != group.end();
      };
      return holds(a) && holds(b);
    });
  };
  std::int64_t slowest_rate = std::numeric_limits<std::int64_t>::max();
  std::int64_t longest_latency_ps = -1;
  for (const topo::EthLink& link : topology.links()) {
    if (!same_group(link.a.chip, link.b.chip)) continue;
    slowest_rate = std::min(slowest_rate, link.rate_bytes_per_s);
    longest_latency_ps = std::max(longest_latency_ps, link.latency_ps);
  }
  if (longest_latency_ps < 0) return std::nullopt;
  return AlphaBetaLinks{.link_GBps = static_cast<double>(slowest_rate) / 1e9,
                        .hop_latency_us = static_cast<double>(longest_latency_ps) / 1e6};
}

std::optional<AlphaBetaTime> alpha_beta_time(const AlphaBetaInputs& in) {
  const bool reduces_and_gathers = in.op == CollectiveOp::AllReduce;
  if (in.op != CollectiveOp::AllGather && in.op != CollectiveOp::ReduceScatter && !reduces_and_gathers) {
    return std::nullopt;
  }
  if (in.n_chips < 2 || in.links == 0 || in.link_GBps <= 0.0) return std::nullopt;
  const double p = in.n_chips;
  const double steps = (reduces_and_gathers ? 2.0 : 1.0) * (p - 1.0);
  // Bytes the busiest link direction carries: (p-1)/p of the tensor per phase, halved on a ring
  // whose halves go each way.
  const double phases = reduces_and_gathers ? 2.0 : 1.0;
  const double bottleneck_bytes = phases * (p - 1.0) / p * static_cast<double>(in.size_bytes) / (in.ring ? 2.0 : 1.0);
  AlphaBetaTime t;
  t.latency_us = steps * in.hop_latency_us;
  t.bandwidth_us = bottleneck_bytes / (static_cast<double>(in.links) * in.link_GBps * 1e3);  // GB/s = 1e3 B/us
  return t;
}

}  // namespace cclmesh::cli
