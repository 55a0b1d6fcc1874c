#pragma once
// all_gather: every chip of a group ends with the concatenation, along `dim`, of every chip's
// input, in rank order (REFERENCE 7.3, 7.4). On a fabric ring it relays hop by hop through
// worker pairs by default (ring_relay.hpp, RingAlgorithm). The multicast algorithm (lines, and
// rings with RingAlgorithm::Multicast), built on the command interpreter (REFERENCE 4.12,
// extended to both directions and to rings):
//
//   every chip, per data worker (one worker core per link, or per link and direction):
//     reader    STREAM_TENSOR_TO_CB   my input (the worker's run of it) -> CB
//     writer    [barrier: ATOMIC_INC multicast barrier +1, WAIT_VALUE barrier, SET 0]
//               STREAM_CB_TO_TENSOR   CB -> my rank's slice of the output, written locally and
//                                     multicast over the fabric (start 1, range = reach)
//               ATOMIC_INC multicast  done +1 on the done core of every chip reached (and here)
//               [done core: WAIT_VALUE done >= expected, SET done 0]
//
// Bidirectional modes (REFERENCE 7.3) on a ring:
//   FULL_TENSOR  one worker per link multicasts the whole input both ways, half-way round:
//                ceil((N-1)/2) chips one way, floor((N-1)/2) the other.
//   SPLIT_TENSOR two workers per link, each multicasts half of the input all the way round
//                (N-1 chips) in one direction.
//   AUTO         FULL_TENSOR when the input is at most 2x the ERISC unreserved L1, else SPLIT.
// A line is always FULL_TENSOR: each chip multicasts to the chips before and after it.
// num_links L (at most the device fabric's routing planes, FabricOptions::num_links): each link
// gets its own workers and its own run of the input, and link k's workers connect to plane k's
// routers of the group's fabric line (REFERENCE 3.5, 7.4).
//
// Completion: one global "done" semaphore on the done core (worker 0) of every chip counts the
// multicast increments that follow each worker's data; packets of a direction arrive in order
// and routers flush their writes before an increment, so done >= expected means every slice
// landed. The done core then resets it (waits never reset, REFERENCE 4.11); routers are
// persistent, so that is the op's whole teardown. An optional global barrier semaphore makes
// every worker wait, before it writes, until the workers it writes to have started this op, so
// ops may be enqueued back to back without finish() in between.
//
// A TILE gather dim 2 or 3 that is not whole 32-element tiles (a [1,1,1,1] piece per chip, or 368
// columns) cannot be cut and joined in whole pages. As tt-metal does (REFERENCE 7.6), it then
// runs as all_broadcast + concat (broadcast_fallback.hpp): two workloads from build_workloads(),
// with N extra buffers per chip (broadcast_buffers). Fabric mode only; legacy mode refuses it.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/ccl/common/ccl_common.hpp"
#include "runtime/ccl/common/collective.hpp"
#include "runtime/ccl/common/legacy_edm_plan.hpp"
#include "runtime/device/mesh_device.hpp"
#include "runtime/device/types.hpp"
#include "runtime/device/workload.hpp"
#include "runtime/fabric/fabric_plan.hpp"
#include "topologies/topology.hpp"

namespace cclmesh::runtime::ccl::all_gather {

enum class BidirectionalMode : std::uint8_t { Auto, SplitTensor, FullTensor };
std::string to_string(BidirectionalMode mode);

// How a fabric ring moves the slices (ring_relay.hpp). Relay: every chunk hops chip to chip
// through worker cores, as 2025-26 production all_gather_async does on a ring (REFERENCE 7.4
// [CBW]). Multicast: each chip multicasts its input and the routers forward it (PR #16026's
// interpreter AG, REFERENCE 4.12), what production does on a line. Auto: relay on a ring,
// multicast on a line. Relay applies to fabric rings only.
enum class RingAlgorithm : std::uint8_t { Auto, Relay, Multicast };
std::string to_string(RingAlgorithm algorithm);
// The relay's synchronisation: one cumulative semaphore increment per chunk of this many packets
// (ring_relay.hpp says why). kFitChunksPerSync (the default): the chunk fits the worker's run, at
// most kMaxFitChunksPerSync packets and at least 1 (ring_relay::fitted_chunks_per_sync).
inline constexpr std::uint32_t kFitChunksPerSync = 0;
inline constexpr std::uint32_t kMaxFitChunksPerSync = 4;
// The relay's default workers per link and direction: kDefaultRelayWorkersPerLink once each link
// and direction's run of the input holds kPagesForSeveralRelayWorkers pages, else 1 (a ROW_MAJOR
// row wider than a fabric payload counts as the tiles its bytes fill).
// REFERENCE 7.4 says production runs "links x 2 directions x (1 mux + N workers)" and 6.3 that
// the mux is used only when num_workers_per_link > 1 (PR #35142), so N >= 2 there; REFERENCE
// gives no N, and 2 is the least that fits. One worker per direction is bound by its reader's
// DRAM round trip per packet (0.60 us per 6144 B packet against the wire's 0.52), two fill the
// wire (T3K 8-ring, docs/performance.md "The 8-ring rows in the steady state"). Below 32 pages
// per run the extra mux copy and the shorter runs cost more than they gain (T3K, default payload:
// 384 KiB 24.46 -> 25.98 us, 512 KiB 33.11 -> 32.52 us).
inline constexpr std::uint32_t kDefaultRelayWorkersPerLink = 2;
inline constexpr std::uint32_t kPagesForSeveralRelayWorkers = 32;

struct Params {
  TensorSpec input = {};            // each chip's input; the output is `input` with dim x N
  std::uint32_t dim = 3;            // 0..3 = w, z, y, x
  BufferHandle input_buffer = {};   // mesh buffers: the same address on every chip
  BufferHandle output_buffer = {};  // DRAM or L1, interleaved or sharded, as their configs say
  CclTopology topology = CclTopology::Ring;
  std::uint32_t num_links = 1;
  GroupSelection groups = {};  // default: every chip of the fabric, in fabric order
  CclMode mode = CclMode::Fabric;
  BidirectionalMode bidirectional = BidirectionalMode::Auto;
  RingAlgorithm ring_algorithm = RingAlgorithm::Auto;
  // Relay only: packets per cumulative semaphore increment, or kFitChunksPerSync (raised so that
  // a worker's whole op takes at most 255 increments, the 8-bit inline wait, REFERENCE 4.11).
  std::uint32_t chunks_per_sync = kFitChunksPerSync;
  // Relay only: workers per link and direction (tt-metal's num_workers_per_link, REFERENCE 7.4),
  // each on its own run of the input; more than one share the router through a fabric mux per
  // link and direction. Unset: the size rule (kDefaultRelayWorkersPerLink).
  std::optional<std::uint32_t> workers_per_link = {};
  FabricOptions fabric = {};  // the device's fabric (the plan follows from it and the topology)
  // Global semaphores on the worker cores (semaphore_cores()), created once, initially 0.
  std::optional<GlobalSemaphore> done_semaphore = {};
  std::optional<GlobalSemaphore> barrier_semaphore = {};  // optional entry barrier
  CoreCoord first_worker{0, 0};                           // workers take the cores from here along the row
  std::uint32_t packet_size_in_pages = 0;                 // 0: as many pages as a fabric payload holds
  std::uint32_t cb_packets = 3;                           // CB depth in packets (REFERENCE 4.12: triple buffering)
  // Reader and writer as two one-stream interpreters (RISC-V 1 / NoC1 and RISC-V 0 / NoC0) so
  // reads and writes overlap, or both streams in one interpreter (ccl_common.hpp).
  bool split_reader_writer = true;
  // Legacy EDM mode only (all_gather_legacy.hpp): the per-op EDMs' termination and buffers.
  LegacyEdmOptions legacy = {};
  // The broadcast fallback only (needs_broadcast_fallback): one buffer per rank, each
  // broadcast_buffer_config() (or any one config shared by all, sharded included); the
  // all_broadcast's outputs, which the concat reads.
  std::vector<BufferHandle> broadcast_buffers = {};
  bool operator==(const Params&) const = default;
};

std::size_t hash_value(const Params& params);

// The gathered tensor: `input` with dim x N (N = the groups' size).
TensorSpec output_spec(const Params& params, const topo::Topology& topology);
// REFERENCE 7.3's rule, or the override. A line is always FULL_TENSOR, and so is a legacy ring
// (all_gather_legacy.cpp refuses SPLIT_TENSOR).
BidirectionalMode resolved_bidirectional_mode(const Params& params);
// The same and why, in one clause ("asked for", "auto: each chip's input (1048576 B) is over twice
// the ERISC's unreserved L1 (153600 B)"): what the CLI's --json records beside the ring algorithm.
struct BidirectionalChoice {
  BidirectionalMode mode = BidirectionalMode::FullTensor;
  std::string reason;
};
BidirectionalChoice bidirectional_choice(const Params& params);
// Relay or Multicast: Auto resolved (relay on a fabric ring, else multicast).
RingAlgorithm resolved_ring_algorithm(const Params& params);
// The same and why, in one clause ("asked for", "auto: a fabric ring relays"): what the CLI's
// --json records.
struct RingAlgorithmChoice {
  RingAlgorithm algorithm = RingAlgorithm::Auto;
  std::string reason;
};
RingAlgorithmChoice ring_algorithm_choice(const Params& params);
// The op per shape its groups run as (collective.hpp, groups_by_shape), each part built apart:
// `params` itself, unless a ring group runs as a line around a down link; that part is a line
// all_gather, which multicasts, so the ring's algorithm choices are left to it (a line takes no
// relay, SPLIT_TENSOR or workers). What a part runs is its ring_algorithm_choice().
std::vector<Params> parts_by_shape(const Params& params, const topo::Topology& topology);
// What each part of parts_by_shape() runs, in its order (rings first): the part's shape and
// groups, its ring_algorithm_choice() and bidirectional_choice(). What a run records (T3K, ring
// opened by link-down:0-2: the line's multicast, not the ring's relay), for the op and for
// all_reduce's all_gather half.
struct PartChoice {
  CclTopology shape = CclTopology::Ring;
  GroupSelection groups;
  RingAlgorithmChoice algorithm;
  BidirectionalChoice bidirectional;
};
std::vector<PartChoice> part_choices(const Params& params, const topo::Topology& topology);
// The worker cores every chip uses (for creating the global semaphores).
std::vector<CoreRange> semaphore_cores(const Params& params, const topo::Topology& topology);
// The relay's workers per link and direction: Params::workers_per_link (1 to a fabric mux's
// clients; CclParamsError otherwise), or when unset the size rule above; 1 for the multicast and
// legacy mode.
std::uint32_t workers_per_link(const Params& params);

// True when the gather runs as all_broadcast + concat: TILE, dim 2 or 3 not whole tiles.
bool needs_broadcast_fallback(const Params& params);
// Why it does, in one clause ("input dim 3 is 33 elements, not whole 32-element tiles, ..."), or
// "" without the fallback: what the CLI prints under its table and records in --json.
std::string broadcast_fallback_reason(const Params& params);
// Buffers the fallback needs in broadcast_buffers: the groups' size, or 0 without the fallback.
std::uint32_t broadcast_buffer_count(const Params& params, const topo::Topology& topology);
// Each broadcast buffer: an interleaved `input` tensor in the output's memory (DRAM or L1).
BufferConfig broadcast_buffer_config(const Params& params);

// Throws CclParamsError (or FabricPlanError / topo::InputError / BufferConfigError) naming what
// is wrong: everything REFERENCE 11.15 lists for all-gather, and what the model cannot run.
void validate(const Params& params, const topo::Topology& topology);
// validate(), then the op's workloads in order: one (a program on every chip of every group),
// or for the broadcast fallback two (all_broadcast, then concat).
std::vector<MeshWorkload> build_workloads(const Params& params, const topo::Topology& topology);
// The one workload of an all_gather without the fallback (CclParamsError for one that needs it:
// use build_workloads).
MeshWorkload build(const Params& params, const topo::Topology& topology);
// build_workloads() on the device's topology, enqueued in one call (all or none), finish.
void run(MeshDevice& device, const Params& params);

}  // namespace cclmesh::runtime::ccl::all_gather
