#pragma once
// REFERENCE 10's alpha-beta times (Thakur, Rabenseifner & Gropp, IJHPCA 2005; Chan et al., CCPE
// 2007; the bidirectional ring row is REFERENCE's own derivation): what a bandwidth-optimal
// algorithm of the op's family takes on hardware whose only costs are the links' rate (beta) and
// a latency per step (alpha). An ideal-hardware run (`--hardware ideal`, sim/model/ideal_hardware.hpp)
// is held against it: the gap is the algorithm's own (pipeline fill, synchronisation, packet
// headers), not the chip's.

#include <cstdint>
#include <optional>
#include <vector>

#include "tools/cclmesh/nccl_metrics.hpp"
#include "topologies/topology.hpp"

namespace cclmesh::cli {

struct AlphaBetaInputs {
  CollectiveOp op = CollectiveOp::AllGather;
  std::uint64_t size_bytes = 0;  // nccl-tests S: the gathered output, the scattered input, the reduced tensor
  std::uint32_t n_chips = 0;
  bool ring = false;             // a bidirectional ring (halves each way), else a pipelined line
  std::uint32_t links = 1;       // per neighbour pair: beta terms divide by it
  double link_GBps = 12.5;       // per link and direction, GB = 1e9 B
  double hop_latency_us = 0.5;   // alpha: one step's latency (a link's one-way latency)
};

struct AlphaBetaTime {
  double latency_us = 0.0;    // the alpha terms
  double bandwidth_us = 0.0;  // the beta terms
  double total_us() const { return latency_us + bandwidth_us; }
};

// The links the yardstick is priced at: the lowest rate and the longest one-way latency among the
// links joining two chips of one of the op's groups. A YAML system's or a --chips subset's links
// may differ from the system's first link, and a pipelined algorithm goes at its slowest link's
// pace and waits its longest hop each step, so the bound is the one its weakest link allows.
// Links outside the groups (another axis, chips the op does not use) do not count.
struct AlphaBetaLinks {
  double link_GBps = 0.0;       // the slowest link's rate per direction, GB = 1e9 B
  double hop_latency_us = 0.0;  // the longest link's one-way latency
};
// nullopt when no link joins two chips of one group (a send_recv pair several hops apart).
std::optional<AlphaBetaLinks> alpha_beta_links(const topo::Topology& topology, const std::vector<std::vector<std::uint32_t>>& groups);

// REFERENCE 10's rows, p = n_chips, n = size_bytes, beta = 1 / (links x link rate):
//   ring (bidirectional, halves each way): all_gather, reduce_scatter (p-1) alpha + (p-1)/p (n/2) beta;
//                                          all_reduce 2(p-1) alpha + (p-1)/p n beta
//   line (pipelined, end-link bottleneck): all_gather, reduce_scatter (p-1) alpha + (p-1)/p n beta;
//                                          all_reduce 2(p-1) alpha + 2(p-1)/p n beta
// nullopt for the ops REFERENCE 10 gives no row for (and for fewer than 2 chips or no links).
std::optional<AlphaBetaTime> alpha_beta_time(const AlphaBetaInputs& inputs);

}  // namespace cclmesh::cli
