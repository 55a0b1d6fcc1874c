#pragma once
// all_to_all: every chip of a group holds a tensor of N chunks along `dim`; chunk j of rank i's
// input becomes chunk i of rank j's output (nccl's alltoall; REFERENCE 7.6). Input and output
// have the same shape. No arithmetic, so every dtype.
//
// Algorithm: every chip writes each chunk straight into its destination's output with fabric
// unicasts; chunks for far chips relay through the routers of the chips in between (REFERENCE
// 7.6: "the middle link carries every chunk that crosses it"), no worker relays them. A
// sender's increment follows its data in the same direction, and routers flush their writes
// before an increment, so a destination has all its chunks once it has counted them.
//
//   every chip, sender workers (Params::senders, sender_layout.hpp: one per destination,
//   REFERENCE 7.6, those of a direction sharing the router's one worker channel through a fabric
//   mux, 6.3; or one per fabric direction, as auto runs below 1 MiB a chip) and per link a worker
//   for its part of the chip's own chunk:
//     reader  STREAM_TENSOR_TO_CB   per destination: my input chunk j (or its half) -> CB
//     writer  STREAM_CB_TO_TENSOR   CB -> chunk `my rank` of rank j's output (unicast)
//             ATOMIC_INC            +1 on rank j's done core (unicast, after the data)
//   link k's copy worker copies part k of my own chunk locally; link 0's (the done core) then
//   adds +1 locally, WAIT_VALUE done >= expected, SET 0 (waits never reset, REFERENCE 4.11). A
//   sender that also copied would serialise the copy behind its sends, and one copy worker for
//   every link bound a 2-chip group, whose own chunk is half its tensor (docs/performance.md I5).
//   Line: the up senders send to every rank above, the down senders to every rank below.
//   Ring: each chunk goes the shorter way; with N even the farthest chunk (N/2 hops either way)
//     is split, half each way, so both directions carry the same bytes.
// Destinations are sent farthest first, so the long routes are under way while the short ones
// fill in. A sender with several destinations (per direction, or capped) interleaves them: one
// piece of every destination per round (Params::rounds), so a line's middle link is fed by every
// flow that crosses it at once instead of idling while the end chips send their last, one-hop
// chunks (docs/performance.md).
// Senders route by fabric position and pick chunks by rank (FabricGroup::rank_at): a ring run
// as a line from mid-ring (ranks 1, 2, 3, 0 at positions 0..3 with 0-1 down) moves every chunk
// where the ring would. Groups whose rings run as lines are built as a line all_to_all beside the
// rings' ring one, in one workload (each part's cores from first_worker on).
// num_links L: per link its senders on routing plane k, each with part k of its chunks (of every
// half), then per link a local-copy worker with part k of the chip's own chunk (per direction:
// 3L cores).
//
// Packets: all_to_all_async coalesces 2 tiles per packet (REFERENCE 7.6), so by default a
// packet carries min(2, what a fabric payload holds) pages; row pieces (below) fill a payload.
// The output buffer is the receive buffer: tt-metal's intermediate buffer, split among the N - 1
// senders, is where its receiver workers stage chunks; here the destination address of every
// chunk is known (mesh buffers have the same address on every chip), so chunks land in place.
//
// ROW_MAJOR along dim 3 (a page is a whole row, row_pieces.hpp): every row holds a chunk for each
// rank, so the workers address rows in N x q equal pieces (chunk j = pieces [j q, (j+1) q), q > 1
// only when a chunk is wider than a fabric payload) and exchange them as TILE chunks of q tiles.
// A chunk of a row must be a multiple of 32 B.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/ccl/all_to_all/sender_layout.hpp"
#include "runtime/ccl/common/ccl_common.hpp"
#include "runtime/ccl/common/collective.hpp"
#include "runtime/ccl/common/host_reference.hpp"
#include "runtime/device/mesh_device.hpp"
#include "runtime/device/types.hpp"
#include "runtime/device/workload.hpp"
#include "runtime/fabric/fabric_plan.hpp"
#include "topologies/topology.hpp"

namespace cclmesh::runtime::ccl::all_to_all {

struct Params {
  TensorSpec tensor = {};          // each chip's input and output: N chunks along `dim`
  std::uint32_t dim = 3;           // 0..3 = w, z, y, x; pages (ROW_MAJOR dim 3: elements) along dim split into N
  BufferHandle input_buffer = {};  // mesh buffers: the same address on every chip
  BufferHandle output_buffer = {};
  CclTopology topology = CclTopology::Ring;
  std::uint32_t num_links = 1;
  GroupSelection groups = {};  // default: every chip of the fabric, in fabric order
  CclMode mode = CclMode::Fabric;
  FabricOptions fabric = {};  // the device's fabric
  // Global semaphore on the worker cores (semaphore_cores()), created once, initially 0.
  std::optional<GlobalSemaphore> done_semaphore = {};
  CoreCoord first_worker{0, 0};            // the worker cores (sender_layout.hpp) along the rows from here
  std::uint32_t packet_size_in_pages = 0;  // 0: min(2, what a fabric payload holds)
  std::uint32_t cb_packets = 3;            // CB depth in packets
  // A sender sends one piece of every destination's share per round (1: one destination after
  // another); 0: the default, 256. Pieces are whole packets, at least one (round_pieces.hpp).
  std::uint32_t rounds = 0;
  // Who sends what (sender_layout.hpp): Auto is per destination (REFERENCE 7.6), capped where the
  // senders would not fit a mux or the worker grid.
  SenderLayout senders = SenderLayout::Auto;
  bool operator==(const Params&) const = default;
};

std::size_t hash_value(const Params& params);

// The rounds a sender runs (Params::rounds, or its default for a group of `group_size` chips)
// and why, in one clause ("asked for: 16 rounds", "auto: a ring interleaves its destinations
// over 256 rounds"): what the CLI's --json records.
struct RoundsChoice {
  std::uint32_t rounds = 1;
  std::string reason;
};
RoundsChoice rounds_choice(const Params& params, std::uint32_t group_size);
// What each shape the groups run as sends (rings first; a ring run as a line around a down link
// takes a line's default rounds): the shape and its rounds_choice(). What a run records (torus:4x4
// axis 1, link-down:3-0: the rings' and the opened line's rounds, each with its reason).
struct PartChoice {
  CclTopology shape = CclTopology::Ring;
  RoundsChoice rounds;
  SenderLayoutChoice senders;
};
std::vector<PartChoice> part_choices(const Params& params, const topo::Topology& topology, std::uint32_t group_size);

// The senders the op runs on a group of `group_size` chips run as `params.topology` and why.
SenderLayoutChoice senders_choice(const Params& params, const topo::Topology& topology, std::uint32_t group_size);

// The worker cores every chip uses (for creating the done semaphore; not the mux cores).
std::vector<CoreRange> semaphore_cores(const Params& params, const topo::Topology& topology);

// Throws CclParamsError (or FabricPlanError / topo::InputError / BufferConfigError) naming what
// is wrong: shape[dim] % N != 0, a 2-chip ring, more than 15 hops, ...
void validate(const Params& params, const topo::Topology& topology);
MeshWorkload build(const Params& params, const topo::Topology& topology);
void run(MeshDevice& device, const Params& params);

// The expected output of every rank of one group (inputs in rank order, page images).
std::vector<reference::Bytes> reference_outputs(const Params& params, const topo::Topology& topology,
                                                const std::vector<reference::Bytes>& inputs_by_rank);

}  // namespace cclmesh::runtime::ccl::all_to_all
