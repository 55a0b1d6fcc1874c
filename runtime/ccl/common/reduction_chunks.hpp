#pragma once
// How the reduction chains (reduce_scatter, reduce) cut a worker's run into CB packets and
// synchronised chunks: one cut for both ops; the chunk each asks for when unset differs (below).

#include <cstdint>
#include <string_view>

namespace cclmesh::runtime::ccl {

// By default a CB packet holds 4 fabric payloads: one interpreter stream both reads and writes,
// and every read packet ends in a read barrier, so bigger packets amortise the DRAM latency
// (T3K 8-ring reduce_scatter, 16 MiB: 4.3 GB/s busbw with 2-tile packets, 6.5-7.1 with 8-16).
// Fabric packets stay within a payload: the interpreter cuts writes at the connection's payload.
inline constexpr std::uint32_t kReductionPayloadsPerPacket = 4;
// The reduced CB holds a chunk (the stream reads a whole chunk before it writes it on), two where
// they fit (reduction_chain_cbs.hpp); it stays within this (our choice, a third of a core's L1).
inline constexpr std::uint64_t kMaxReducedCbBytes = 512 * 1024;

// The chunk reduce_scatter's chains ask for when the caller does not say (its unset
// Params::chunk_packets; reduce's unset chunk is 1 packet, reduce.cpp: no credits flow back there):
// the message, `message_pages` pages, cut into at least kMinChunksPerMessage chunks, each at most
// kDefaultReductionChunkPackets packets and at least 1.
// A receiver credits chunk c of a message back once it has read it out, and the sender's chunk c
// of the next message waits for that credit, so the receive region holds one message and a
// message of one chunk cannot land while the previous one is read: the sender idles for the
// whole read (T3K 8-line 4 MiB, 4 workers, one 64-page chunk a message: 460.60 us, its end link
// idle up to 71% of a 50 us window; 3 chunks: 342.39 us; docs/collectives.md "Chunks per
// message"). 3 as the all_gather relay's fitted chunk (ring_relay::fitted_chunks_per_sync).
// REFERENCE 7.5's sync every 20 chunks on a line counts tt-metal's chunks, not these.
inline constexpr std::uint32_t kDefaultReductionChunkPackets = 8;
inline constexpr std::uint32_t kMinChunksPerMessage = 3;
std::uint32_t fitted_reduction_chunk_packets(std::uint32_t message_pages, std::uint32_t packet_pages);

// The chunk, in packets, of a worker's run of `run_pages` pages: at least `asked`, and large
// enough that the run has at most 255 chunks (REFERENCE 4.11: inline wait targets are 8 bits).
// Throws CclParamsError, naming `op`, when the reduced CB could not hold such a chunk.
std::uint32_t reduction_chunk_packets(std::uint32_t run_pages, std::uint32_t packet_pages, std::uint32_t page_size,
                                      std::uint32_t asked, std::string_view op);

}  // namespace cclmesh::runtime::ccl
