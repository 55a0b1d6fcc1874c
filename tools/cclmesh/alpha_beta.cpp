#include "tools/cclmesh/alpha_beta.hpp"

namespace cclmesh::cli {

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
