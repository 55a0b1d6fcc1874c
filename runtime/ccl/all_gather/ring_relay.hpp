#pragma once
// The ring all_gather as 2025-26 production all_gather_async runs it on a ring (REFERENCE 7.4
// [TCO], [CBW]: "on a ring it relays every chunk through worker cores hop by hop"): per link two
// one-directional workers, "up" sending to rank + 1 and "down" to rank - 1, every write a 1-hop
// unicast. A worker sends its own slice, then relays slices my_id -/+ k as they land:
//
//   reader    stream 0  STREAM_TENSOR_TO_CB   my input run -> own CB
//             stream 1  per chunk of slice my_id -/+ k (k >= 1):
//                         WAIT_VALUE recv >= chunks landed so far (cumulative), then
//                         STREAM_TENSOR_TO_CB output chunk -> relay CB (re-read what landed)
//                       WAIT_VALUE recv >= every chunk the previous chip sends, SET recv 0
//   writer    [barrier: ATOMIC_INC +1 on the chip written to's opposite worker, WAIT_VALUE 1, SET 0]
//             per chunk: STREAM_CB_TO_TENSOR to the next chip (the own slice as a 1-hop
//                        multicast, which also writes it locally), ATOMIC_INC recv +1 there
//
// Workers per direction (Params::workers_per_link W, tt-metal's num_workers_per_link, REFERENCE
// 7.4): each link and direction's run of the input is cut W ways, worker i relaying its part to
// worker i of the next chip; with W > 1 the W workers share the router's worker channel through
// a fabric mux per link and direction ("links x 2 directions x (1 mux + N workers)").
//
// recv is the op's global done semaphore on every worker core: increments that arrive before the
// receiving chip's program starts wait in it. Packets of a direction arrive in order and the
// router flushes writes before an increment, so recv >= c means the first c chunks landed.
//
// Slices per direction (REFERENCE 7.3, 7.4): SPLIT_TENSOR sends half of each input run all the
// way round (N-1 slices per worker); FULL_TENSOR sends the whole run half-way: ceil((N-1)/2)
// slices up and floor((N-1)/2) down on an odd ring; on an even ring N/2 each way, the farthest
// slice (N/2 away) split half up, half down, "FULL_TENSOR with a balanced last hop".
//
// chunks_per_sync: REFERENCE gives no all-gather value (7.4 names the knob, PR #25222, without a
// default). At most 4 packets, the ring reduce-scatter's documented neighbour sync of every 4
// chunks (7.5 [CBW]): a relay chip can forward a chunk only once it landed, so the chunk is the
// pipeline's per-hop fill (4 x 6 KiB at the calibration payload, ~2.5 us per hop), against one
// 1-word increment packet per chunk on the wire. A run of only a few packets in 4-packet chunks
// would serialise the hops (each waits for the whole run), so by default the chunk shrinks until
// the run is at least kMinChunksPerRun chunks, down to 1 packet (docs/collectives.md has the
// measurements behind k).

#include <cstdint>
#include <vector>

#include "kernels/api/tensor_slice.hpp"
#include "kernels/host/kernel_args_builder.hpp"
#include "runtime/ccl/all_gather/all_gather.hpp"
#include "runtime/ccl/common/collective.hpp"
#include "runtime/device/workload.hpp"
#include "runtime/fabric/fabric_plan.hpp"

namespace cclmesh::runtime::ccl::all_gather::ring_relay {

// One chip's view of the gather that the relay program is built from (all_gather.cpp resolves it).
struct ChipGather {
  const Params* params = nullptr;
  const FabricPlan* plan = nullptr;
  const FabricGroup* group = nullptr;
  std::uint32_t rank = 0;
  BidirectionalMode mode = BidirectionalMode::FullTensor;  // resolved
  // Per link the up workers, then the down workers (workers_per_direction each); with more than
  // one per direction, from the next row of the grid on (cores_before_muxes), a mux per link and
  // direction (up, down).
  std::vector<CoreCoord> cores;
  std::uint32_t workers_per_direction = 1;
  std::uint32_t grid_width = 0;  // of the common worker grid
  kargs::TensorArgs in_args;
  kargs::TensorArgs out_args;
  api::Shape4D in_pages;   // as the workers address them (row pieces for ROW_MAJOR along x)
  api::Shape4D out_pages;
  std::uint32_t page_size = 0;
  std::uint32_t packet_pages = 0;
};

// Directions per link: up and down.
inline constexpr std::uint32_t kDirectionsPerLink = 2;
// Cores before the muxes: the workers, and with more than one per direction the rest of their
// last row of the worker grid (`grid_width` cores wide), so that from a first worker at x = 0
// (the default) the muxes start a row of their own.
// A mux on the workers' row (W = 2, 3 on the T3K) shares the row's NoC0 links with the workers'
// writes into it and starved them: 16 MiB at 6144 B 1139.89 us against 729.77 on the next row
// (docs/performance.md, "The 8-ring rows in the steady state").
inline std::uint32_t cores_before_muxes(std::uint32_t num_links, std::uint32_t workers_per_direction,
                                        std::uint32_t grid_width) {
  const std::uint32_t workers = kDirectionsPerLink * num_links * workers_per_direction;
  if (workers_per_direction == 1) return workers;
  return (workers + grid_width - 1) / grid_width * grid_width;
}
// Worker and mux cores of a relay with `workers_per_direction` workers per link and direction.
inline std::uint32_t cores_needed(std::uint32_t num_links, std::uint32_t workers_per_direction,
                                  std::uint32_t grid_width) {
  return cores_before_muxes(num_links, workers_per_direction, grid_width) +
         (workers_per_direction > 1 ? kDirectionsPerLink * num_links : 0);
}

// The default chunk of a worker whose per-slice run is `run_packets` packets: the largest of
// 1 .. kMaxFitChunksPerSync packets that still cuts the run into kMinChunksPerRun chunks.
inline constexpr std::uint32_t kMinChunksPerRun = 3;
std::uint32_t fitted_chunks_per_sync(std::uint32_t run_packets);

// Slices a worker of one direction sends round a ring of n chips, its own first (portions in
// ring_relay.cpp): SPLIT_TENSOR n - 1, FULL_TENSOR half-way round. Each is at least one chunk,
// and a worker's cumulative wait for the chunks landing from the previous chip is an 8-bit inline
// value (REFERENCE 4.11), so a ring where this passes kMaxInlineValue cannot relay.
std::uint32_t slices_per_worker(BidirectionalMode mode, std::uint32_t n);

// The relay program of one chip.
Program chip_program(const ChipGather& chip, const topo::Topology& topology);

}  // namespace cclmesh::runtime::ccl::all_gather::ring_relay
