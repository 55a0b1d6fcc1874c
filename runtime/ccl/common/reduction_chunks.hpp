#pragma once
// How the reduction chains (reduce_scatter, reduce) cut a worker's run into CB packets and
// synchronised chunks; one rule for both ops.

#include <cstdint>
#include <string_view>

namespace cclmesh::runtime::ccl {

// By default a CB packet holds 4 fabric payloads: one interpreter stream both reads and writes,
// and every read packet ends in a read barrier, so bigger packets amortise the DRAM latency
// (T3K 8-ring reduce_scatter, 16 MiB: 4.3 GB/s busbw with 2-tile packets, 6.5-7.1 with 8-16).
// Fabric packets stay within a payload: the interpreter cuts writes at the connection's payload.
inline constexpr std::uint32_t kReductionPayloadsPerPacket = 4;
// The reduced CB holds a chunk (the stream reads a whole chunk before it writes it on); it
// stays within this (our choice, a third of a core's L1).
inline constexpr std::uint64_t kMaxReducedCbBytes = 512 * 1024;

// The chunk, in packets, of a worker's run of `run_pages` pages: at least `asked`, and large
// enough that the run has at most 255 chunks (REFERENCE 4.11: inline wait targets are 8 bits).
// Throws CclParamsError, naming `op`, when the reduced CB could not hold such a chunk.
std::uint32_t reduction_chunk_packets(std::uint32_t run_pages, std::uint32_t packet_pages, std::uint32_t page_size,
                                      std::uint32_t asked, std::string_view op);

}  // namespace cclmesh::runtime::ccl
