#pragma once
// Bandwidth figures as nccl-tests defines them (REFERENCE §9, nccl-tests doc/PERFORMANCE.md):
// GB = 1e9 B, t in microseconds. algbw = S / t; busbw = algbw x the op's bus factor; linkbw =
// bottleneck bytes / (t x links x directions) (tt-metal's per-link figure); %line = linkbw over
// the line rate. t is simulated device time (first kernel start to last kernel end).

#include <cstdint>
#include <string>
#include <vector>

namespace cclmesh::cli {

enum class CollectiveOp : std::uint8_t {
  AllGather,
  AllBroadcast,
  ReduceScatter,
  AllReduce,
  Reduce,
  Broadcast,
  AllToAll,
  SendRecv
};

std::string to_string(CollectiveOp op);
// Every op's name, comma-separated, for help texts and errors ("all_gather, all_broadcast, ...").
std::string collective_op_names();
// Throws UsageError naming `option`, the value and the accepted names.
CollectiveOp parse_collective_op(const std::string& text, const std::string& option);
// A comma-separated list of op names, in order; UsageError naming `option` for an empty list, an
// empty name (a leading, trailing or doubled comma), an unknown name or a name given twice.
std::vector<CollectiveOp> parse_collective_op_list(const std::string& list, const std::string& option);

// Bus factor of §9: (n-1)/n for all_gather, reduce_scatter, all_to_all; 2(n-1)/n for
// all_reduce; 1 for broadcast, reduce and send/recv. all_broadcast moves what an all_gather
// moves (every chip's S / N to every other chip), only into N buffers instead of one, so its S
// is the N buffers of one chip and its factor all_gather's (n-1)/n.
double bus_factor(CollectiveOp op, std::uint32_t n_chips);

struct BandwidthInputs {
  CollectiveOp op = CollectiveOp::AllGather;
  std::uint64_t size_bytes = 0;  // nccl-tests S (all_to_all: bytes per device, as REFERENCE §14)
  std::uint32_t n_chips = 0;
  double time_us = 0.0;
  std::uint32_t links = 1;
  std::uint32_t directions = 1;  // 1 on a line, 2 on a ring (REFERENCE §9)
  double line_rate_GBps = 12.5;
};

struct BandwidthFigures {
  double algbw_GBps = 0.0;
  double busbw_GBps = 0.0;
  double linkbw_GBps = 0.0;
  double pct_line_rate = 0.0;
};

BandwidthFigures compute_bandwidth(const BandwidthInputs& inputs);

}  // namespace cclmesh::cli
