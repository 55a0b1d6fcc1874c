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
  std::uint32_t chunk_pages = 0;    // a chunk (reduction_chunk_packets); the reduced CB holds two
                                    // where they fit (reduced_cb_pages)
  std::uint32_t page_size = 0;      // bytes
};

// The reduced CB's depth: two chunks, so the reduce fills one while the writer sends the other,
// where two stay within kMaxReducedCbBytes; one chunk otherwise (a chunk grown to keep a long run
// within 255 chunks). With one chunk the reduce waited for the writer's whole chunk to leave
// before it could start the next: T3K ring reduce_scatter 4 MiB (half-way, 4 workers) 213.87 ->
// 199.87 us, the chain at 4 workers 1 MiB 124.80 -> 121.66 (session 38, docs/collectives.md
// "The reduced CB holds two chunks").
std::uint32_t reduced_cb_pages(const ReductionChainCbSizes& sizes);

// Appends to `cbs` the partial CB (two packets: one landing while the kernel reduces the other),
// the local CB and the reduced CB on `core`, in that order (a program's CB addresses follow its
// list's order).
void add_reduction_chain_cbs(std::vector<CircularBufferSpec>& cbs, CoreCoord core, const ReductionChainCbSizes& sizes);

}  // namespace cclmesh::runtime::ccl
