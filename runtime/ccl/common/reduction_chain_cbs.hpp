#pragma once
// The circular buffers of a reduction chain's worker: reduce's chain and reduce_scatter's (its
// ring chain and its two-sided line) give a worker the same three, with the same ids and depths,
// for the reduce kernel between its reader and writer. One rule for the ops, as
// reduction_chunks.hpp is for their chunks; in a header of its own so that a change here rebuilds
// only those builders.

#include <cstdint>
#include <vector>

#include "runtime/device/types.hpp"
#include "runtime/device/workload.hpp"

namespace cclmesh::runtime::ccl {

inline constexpr std::uint32_t kChainPartialCbId = 0;  // the partial received from the chain (reduce in0)
inline constexpr std::uint32_t kChainLocalCbId = 1;    // this chip's input (reduce in1)
inline constexpr std::uint32_t kChainReducedCbId = 2;  // reduce out

struct ReductionChainCbSizes {
  std::uint32_t packet_pages = 0;   // pages per CB packet
  std::uint32_t local_packets = 0;  // the input CB's depth in packets (the op's cb_packets)
  std::uint32_t chunk_pages = 0;    // the reduced CB holds one chunk (reduction_chunk_packets)
  std::uint32_t page_size = 0;      // bytes
};

// Appends to `cbs` the partial CB (two packets: one landing while the kernel reduces the other),
// the local CB and the reduced CB on `core`, in that order (a program's CB addresses follow its
// list's order).
void add_reduction_chain_cbs(std::vector<CircularBufferSpec>& cbs, CoreCoord core, const ReductionChainCbSizes& sizes);

}  // namespace cclmesh::runtime::ccl
