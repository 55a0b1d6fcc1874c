#pragma once
// reduce_scatter: every chip of a group holds an input of the same shape; chip of rank r ends
// with slice r (along `dim`, N equal slices) of the element-wise sum of all inputs (REFERENCE
// 7.5). Sum only. Fabric mode, built on the command interpreter and the reduce kernel; legacy
// EDM mode (params.mode CclMode::Legacy): reduce_scatter_legacy.hpp.
//
// Algorithm: the ring reduce-scatter, partials reduced hop by hop (REFERENCE 7.5 "legacy
// ring", 10 "unidirectional ring"). For slice s the chain starts at rank s + 1 with its raw
// input, every next rank adds its own input, and rank s adds its own last and keeps the result;
// N - 1 messages per worker, each a worker's run of one slice.
//   Ring: run twice at once per link: an "up" worker on half of every slice sends to rank + 1,
//     a "down" worker on the other half sends to rank - 1, so both directions of every link
//     carry half the data (REFERENCE 10, bidirectional ring). A worker core holds one fabric
//     connection per direction and a router's worker channel takes one worker (REFERENCE 6.3),
//     so each worker uses one direction only: its credits and barrier increments to the
//     previous rank go the long way round (N - 1 hops).
//   Line, two-sided (LineAlgorithm::TwoSided, the default): slice s's owner receives the partial
//     of ranks 0..s-1 from the left and of ranks N-1..s+1 from the right, and adds both to its
//     own slice; every hop is a neighbour hop. Per link and run two workers: a rightward chain
//     (rank 0 sends its raw slices N-1, ..., 1; rank r adds its own and sends slices N-1, ..., r+1
//     on) and a leftward one (rank N-1 sends its raw slices 0, ..., N-2; rank r adds its own and
//     sends slices 0, ..., r-1 on). Inferred from REFERENCE 7.5 ("minimal data per link", PR
//     #13133), 9 ("the end device's single axis link is the bottleneck") and 10 ("Line
//     (pipelined, end-link bottleneck)"), not a confirmed tt-metal data flow. Each link direction
//     carries T (N-1)/N at its ends and less inside; nothing is forwarded by a router. The
//     partials land in the intermediate buffer (intermediate_spec(): two output-sized regions,
//     A for the leftward chain, B for the rightward one and the left partial of the owner).
//     Each worker uses one fabric direction: a chain's credits to its previous rank are sent by
//     the other chain's worker on the same chip (a local semaphore says what was consumed).
//     The owner r (0 < r < N-1) adds the left partial as a third input of its last reduction.
//   Line, wrap (LineAlgorithm::Wrap): one up worker per link; the chain wraps from the last rank
//     to rank 0 over N - 1 hops the other way, which loads each link direction exactly as the
//     unidirectional ring does (REFERENCE 10's ring bound on a line).
//   num_links L, workers_per_link W: the workers above W times per link, each on its own run of
//     the output; run r's worker connects to routing plane r % L of the group's fabric line
//     (REFERENCE 3.5). With W > 1 the W workers of a link and direction connect to a fabric mux
//     (kernels/fabric_mux.cpp), which holds that direction's one router connection (6.3).
//
// A worker core runs the interpreter (RISC-V 0 / NoC0) and the reduce kernel (RISC-V 1):
//   stream 0 (output tensor: the receive buffer for every message, then the result)
//     barrier: ATOMIC_INC next and previous worker's barrier (global), WAIT, SET 0
//     message 0, per chunk: STREAM_CB_TO_TENSOR reduced CB -> next chip's output chunk
//                           ATOMIC_INC next worker's receive semaphore
//     per received message m, per chunk c:
//       WAIT_VALUE receive[m % 2] >= c + 1        (the previous chip's chunk landed)
//       STREAM_TENSOR_TO_CB output chunk -> partial CB
//       ATOMIC_INC previous worker's credit[m % 2] (it may overwrite this chunk)   [not last]
//       WAIT_VALUE credit[m % 2] >= c + 1          (the next chip read my last chunk) [not last]
//       STREAM_CB_TO_TENSOR reduced CB -> next chip's output chunk, ATOMIC_INC its receive
//         or, for the last message, -> my output chunk (the result)
//       after the message: SET receive[m % 2] 0, SET credit[m % 2] 0
//   stream 1 (input tensor): my raw slice for message 0 -> reduced CB, then for every received
//     message my slice of the same index -> local CB
//   reduce: partial CB + local CB -> reduced CB, (N - 1) messages' packets
// Receive and credit semaphores alternate by message parity, so a reset never races an
// increment of the next message (which needs a credit given after the reset). They are
// per-program semaphores: the entry barrier (a global semaphore, required) guarantees every
// neighbour's program runs before anything increments them. Sync granularity: chunks of
// `chunk_packets` packets, grown so a message has at most 255 chunks (8-bit inline wait
// targets, REFERENCE 4.11), by default fitted so that a message is at least 3 chunks (a message of
// one chunk serialises its send with the receiver's read, reduction_chunks.hpp).
//
// One-shot ring (RingAlgorithm::OneShot; Auto up to 512 KiB per chip): one_shot.hpp.
// Auto above that: the half-way ring (below).
//
// Half-way ring (RingAlgorithm::HalfWay, half_way_ring.hpp): the two-sided line on a ring. REFERENCE
// 7.5 says only that tt-metal's 2026 ring RS (PR #41522) "sends the full slice half-way round
// instead of half the slice the full way"; this data flow is ours. Slice s's owner gets a
// rightward chain's partial (positions s-kL, ..., s-1, each adding its own slice, neighbour hops
// forward) and a leftward chain's (s+kR, ..., s+1), adds its own slice to the leftward one and
// then the rightward one; every position has the same structure, rotated. Per link and worker a
// rightward and a leftward worker on the same pages, as on the two-sided line: each sends k
// messages (its raw slice first, then each received partial plus its own slice), and a chain's
// credits to its previous position go one hop through the other chain's worker on the same chip.
// Odd N: kL = kR = (N-1)/2. Even N: the position opposite the owner is N/2 away both ways, so the
// pages go to two sets of runs (alternating workers of a link), set 0 with kL = N/2, kR = N/2-1,
// set 1 the other way round, and both directions of every link carry (N-1)/2 slices' bytes (3.5
// at N = 8, as the chain); an even ring runs ceil(W/2) workers per set, so W = 1 runs 2 (a mux).
// Intermediate buffer as the two-sided line's (region A: leftward chain, B: rightward chain and
// the left partial). Every message goes one hop, so a ring of any length runs. The two-sided line
// and the half-way ring differ only in what each worker does: one builder runs both
// (two_sided_chains.hpp).
//
// Reduction order (what reference_outputs() reproduces bit for bit): bf16 partials are
// rounded to bf16 after every addition (kernels/reduce/reduce_math.hpp); on a ring (and the
// wrap line) for slice s the up half adds ranks s+1, s+2, ..., s+N-1, s and the down half s-1,
// s-2, ..., s-N+1, s (mod N). On the two-sided line, with fold(a, b, ...) = ((a + b) + ...):
// slice N-1 is fold(0, 1, ..., N-1); slice s < N-1 is R = fold(N-1, N-2, ..., s), and for s > 0
// R + fold(0, 1, ..., s-1). The one-shot ring: fold(s, s+1, s-1, s+2, s-2, ...) (mod N), own slice first.
// The half-way ring, per page run with its set's kL, kR: fold(s+kR, ..., s+1, s) + fold(s-kL, ..., s-1)
// (mod N).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/ccl/common/ccl_common.hpp"
#include "runtime/ccl/common/collective.hpp"
#include "runtime/ccl/common/host_reference.hpp"
#include "runtime/ccl/common/legacy_edm_plan.hpp"
#include "runtime/device/mesh_device.hpp"
#include "runtime/device/types.hpp"
#include "runtime/device/workload.hpp"
#include "runtime/fabric/fabric_plan.hpp"
#include "topologies/topology.hpp"

namespace cclmesh::runtime::ccl::reduce_scatter {

// Workers per link and direction unless asked otherwise, by the pages each link and direction
// carries over the whole op: the output's pages x (N - 1) / (links x directions) (a chain or a
// line moves N - 1 slices' partials through every link direction, one after another; a ring's
// two directions share them). A worker's pipeline is bound by its own round trip per chunk (DRAM
// read, reduce, send, wait for the credit), so several workers overlap those trips once there
// are enough chunks to share; below kLinkPagesForSeveralWorkers the mux's extra copy per packet
// and the shorter chunks cost more than that gains. kDefaultWorkersPerLink = 4 from
// kLinkPagesForSeveralWorkers (2 instead on some long one-link lines: kLongLineWorkersPerLink below),
// kManyWorkersPerLink = 6 (a fabric mux's most clients) from kLinkPagesForManyWorkers.
// Measured (scripts/workers_per_link_sweep.py, docs/collectives.md
// "The size rule, measured (session 36)" and "Chunks per message (session 37)", which also say
// where it is not the fastest): T3K 8-line 256 KiB 60.39 us with 1 worker (the output-pages rule)
// against 44.50 with 4; mesh:1x4 on 2 links 256 KiB 30.66 against 25.70; 64 MiB T3K ring 3098.54
// with 4 against 3009.76 with 6, 8-line 5166.70 against 5141.37. 6 took over from 128 pages while
// a message of one chunk stalled every worker (session 36); with messages of at least 3 chunks 4
// workers beat 6 up to about 1024 pages (T3K ring 1 MiB, 224 pages: 67.68 against 74.94 us).
inline constexpr std::uint32_t kDefaultWorkersPerLink = 4;
inline constexpr std::uint32_t kManyWorkersPerLink = 6;
inline constexpr std::uint64_t kLinkPagesForSeveralWorkers = 32;
inline constexpr std::uint64_t kLinkPagesForManyWorkers = 1024;
// On 2 chips a worker sends one message and reduces one, so there is no credit round trip for
// workers to overlap (the reason for 4 above). What more workers buy there is the receiving
// side's NoC work, 3 page moves (the partial read, the local read, the sum's write) per page the
// wire lands, which one core does at about the wire's rate, and a shorter drain (the last chunk's
// read, reduce and write after the wire is done). So kTwoChipWorkersPerLink = 3, once each of
// the 3 runs holds kMinChunksPerMessage packets (so its message pipelines in 3 chunks), else 1;
// 6 once a run of 3 workers has chunks of kDefaultReductionChunkPackets (more chunks no longer
// shorten the drain, more workers do). Measured (docs/collectives.md "Two chips: one message per
// worker (session 39)"):
// N300 256 KiB 21.77 us with 4, 19.60 with 3; [1,1,64,1024] 14.37 with 4, 12.42 with 1;
// [1,1,1024,1024] 115.77 with 4, 111.41 with 6.
inline constexpr std::uint32_t kTwoChipWorkersPerLink = 3;
// On a two-sided line a worker's receive region holds its one message, and the next message's
// chunk c waits for the credit of this one's chunk c. Where 4 workers' messages are 1 packet up to
// 1.5, each is 1 chunk of a packet (and past 1 packet a remnant chunk of at most half a packet): a
// worker sends, then idles for the whole landing (behind the other workers' chunks in the mux), read
// and credit. T3K 8-line [1,1,256,1024] along dim 2 (32 output tiles): with
// 4 workers each waits 5-9 us a message for its credit and the end link is 56-87% busy (64.11 us);
// with 2, messages of 2 packets go in 2 chunks (the first's credit comes back while the second is on
// the wire), the wait is 1.9-2.4 us a chunk and the end link 93-97% busy (58.16 us). So on lines
// of kMinLongLineChips or more on one link, kLongLineWorkersPerLink where their messages are
// kLongLineMessagePacketsFrom packets up to kLongLineMessagePacketsBelow: 1.4-9.3% faster than 4 at
// 20 of 23 such points measured off the sweep on 8- and 16-chip lines, bf16 and fp32 (T3K, Galaxy
// axis 1, mesh:1x16), up to 2.0% slower at 3 (Galaxy 8-line, 32 bf16 output tiles: 65.75 against
// 64.48 us). Not on 4-lines (the Galaxy 4-line at 256 KiB: 2 workers 31.75 us, 4 31.04) nor on 2
// links (3 or 6 fastest there; 2 up to 7.3% slower than 4), nor rings (the Galaxy 32-chip ring 2 MiB:
// 2 workers 178.82, 4 168.08).
// docs/collectives.md "One-packet messages on long lines (session 40)".
inline constexpr std::uint32_t kMinLongLineChips = 8;
inline constexpr std::uint32_t kLongLineWorkersPerLink = 2;
inline constexpr std::uint64_t kLongLineMessagePacketsFrom = 2;
inline constexpr std::uint64_t kLongLineMessagePacketsBelow = 3;

// How a line runs (a ring ignores it): see the algorithm above.
enum class LineAlgorithm : std::uint8_t { TwoSided, Wrap };
std::string to_string(LineAlgorithm algorithm);

// How a fabric ring runs (a line ignores it): Chain, the ring reduce-scatter above, or OneShot,
// the one-shot direct algorithm (one_shot.hpp: every chip sends slice d straight to chip d, which
// sums the N copies; about 2.3x the chain's link bytes on 8 chips, in one step instead of N - 1
// chained ones). Auto: OneShot when each chip's input is at most kDefaultOneShotMaxBytes, as
// tt-metal's ring RS (REFERENCE 7.5: "a ring RS with <= 512 KiB per device uses a one-shot
// direct algorithm ... a visible step in the bandwidth curve between 512 KiB and 1 MiB"), and
// workers_per_link is unset or 1 (the one-shot runs one sender per link and direction), else
// HalfWay (above): tt-metal's ring RS since PR #41522 (2026-04, REFERENCE 7.5, 12), which the
// calibration rows (measured 2026-09, REFERENCE 14) ran. Chain, the ring RS before it, only when
// asked for (until session 33 it was Auto's choice; docs/performance.md has both against the
// calibration).
enum class RingAlgorithm : std::uint8_t { Auto, OneShot, Chain, HalfWay };
std::string to_string(RingAlgorithm algorithm);
inline constexpr std::uint64_t kDefaultOneShotMaxBytes = 512 * 1024;

struct Params {
  TensorSpec input = {};  // each chip's input; the output is `input` with dim / N
  // 0..3 = w, z, y, x; pages along dim must split into N equal slices (ROW_MAJOR along dim 3: a
  // row's elements, the rows cut in 32 B-aligned pieces, scattered_rows.hpp).
  std::uint32_t dim = 3;
  BufferHandle input_buffer = {};   // mesh buffers: the same address on every chip
  BufferHandle output_buffer = {};  // also the receive buffer of the partials (ring, wrap line)
  // Two-sided line, one-shot and half-way ring (fabric mode) only: the partials' (the copies')
  // receive buffer, intermediate_spec().
  std::optional<BufferHandle> intermediate_buffer = {};
  CclTopology topology = CclTopology::Ring;
  LineAlgorithm line_algorithm = LineAlgorithm::TwoSided;
  RingAlgorithm ring_algorithm = RingAlgorithm::Auto;
  std::uint32_t num_links = 1;
  // Workers per link and direction (tt-metal's num_workers_per_link), each on its own run of
  // the output. A router's worker channel takes one worker (REFERENCE 6.3), so with more than
  // one the workers of a link and direction share it through a fabric mux core
  // (kernels/fabric_mux.cpp); 1 connects the worker to the router directly. Unset: chosen by
  // size (workers_per_link() below).
  std::optional<std::uint32_t> workers_per_link = {};
  GroupSelection groups = {};  // default: every chip of the fabric, in fabric order
  CclMode mode = CclMode::Fabric;
  FabricOptions fabric = {};  // the device's fabric
  // Global semaphore on the worker cores (semaphore_cores()), created once, initially 0.
  std::optional<GlobalSemaphore> barrier_semaphore = {};
  // Legacy EDM mode only (reduce_scatter_legacy.hpp): the per-op EDMs' termination and buffers.
  LegacyEdmOptions legacy = {};
  // Worker cores (ring, half-way ring and two-sided line 2, wrap line 1 per link, times
  // workers_per_link(); the one-shot ring 3 per link) along the row, then with
  // workers_per_link > 1 two mux cores per link (forward, backward).
  CoreCoord first_worker{0, 0};
  std::uint32_t packet_size_in_pages = 0;  // CB packet; 0: what 4 fabric payloads hold
  // CB packets per synchronised chunk. Unset: fitted to a worker's message, so that it is at least
  // 3 chunks of at most 8 packets (fitted_reduction_chunk_packets, reduction_chunks.hpp); set: that
  // many. Either way raised so a message is at most 255 chunks (8-bit waits, REFERENCE 4.11).
  std::optional<std::uint32_t> chunk_packets = {};
  std::uint32_t cb_packets = 3;            // depth of the local-input CB in packets
  bool operator==(const Params&) const = default;
};

std::size_t hash_value(const Params& params);

// The scattered tensor: `input` with dim / N.
TensorSpec output_spec(const Params& params, const topo::Topology& topology);
// The ring algorithm the op runs (Auto resolved; Chain on a line and in legacy mode).
RingAlgorithm resolved_ring_algorithm(const Params& params);
// The same and why, in one clause ("asked for", "auto: 262144 B per chip are within the
// one-shot's 524288 B"): what the CLI's --json records, so a sweep shows where Auto switched.
struct RingAlgorithmChoice {
  RingAlgorithm algorithm = RingAlgorithm::Auto;
  std::string reason;
};
RingAlgorithmChoice ring_algorithm_choice(const Params& params);
// The op per shape its groups run as (collective.hpp, groups_by_shape), each part built apart:
// `params` itself, unless a ring group runs as a line around a down link; that part is a line
// reduce_scatter (line_algorithm, the line's reduction order), the ring's algorithm choice left to
// the rings. Legacy mode: `params`. What a part runs is its ring_algorithm_choice() on a ring, its
// line_algorithm on a line.
std::vector<Params> parts_by_shape(const Params& params, const topo::Topology& topology);
// What each part of parts_by_shape() runs, in its order (rings first): the part's shape and
// groups, its ring_algorithm_choice() (on a line "a line chains"), and its line_algorithm, which a
// line runs. What a run records (T3K 256 KiB, ring opened by link-down:0-2: the line's two_sided,
// not the ring's one-shot), for the op and for all_reduce's reduce_scatter half alike.
struct PartChoice {
  CclTopology shape = CclTopology::Ring;
  GroupSelection groups;
  RingAlgorithmChoice ring;
  LineAlgorithm line = LineAlgorithm::TwoSided;
};
std::vector<PartChoice> part_choices(const Params& params, const topo::Topology& topology);
// Whether the op needs intermediate_buffer (a two-sided line, a one-shot or half-way ring in
// fabric mode), and the tensor it must hold: the output's with dim 0 doubled (two receive
// regions), or times N for the one-shot (copy k from rank k). A ring op whose groups include a ring run as a line
// around a down link (collective.hpp, groups_by_shape) builds its rings and its lines apart:
// the buffer of the part that needs the largest, which the other accepts (a larger one is).
bool needs_intermediate(const Params& params, const topo::Topology& topology);
TensorSpec intermediate_spec(const Params& params, const topo::Topology& topology);
// The workers per link and direction the op runs: Params::workers_per_link, or when unset the
// size rule above on link_pages_for_the_size_rule(); the one-shot 1, the half-way ring on an even
// ring both sets' (rounded up to even, half_way_ring.hpp). An op built in parts (a ring run as a
// line around a down link beside rings, params_by_shape) answers the most any part runs: each part
// by its own shape and group size.
std::uint32_t workers_per_link(const Params& params, const topo::Topology& topology);
// The pages the size rule counts: what each link and direction carries over the op (see
// kDefaultWorkersPerLink), ROW_MAJOR rows wider than a payload counting as the tiles of their
// dtype that their bytes fill; the most of any part, as workers_per_link().
std::uint64_t link_pages_for_the_size_rule(const Params& params, const topo::Topology& topology);
// The worker cores every chip uses (for creating the barrier semaphore).
std::vector<CoreRange> semaphore_cores(const Params& params, const topo::Topology& topology);

// Throws CclParamsError (or FabricPlanError / topo::InputError / BufferConfigError) naming what
// is wrong, REFERENCE 11.15's cases included (shape[dim] % N != 0, 2-chip ring, ...).
void validate(const Params& params, const topo::Topology& topology);
MeshWorkload build(const Params& params, const topo::Topology& topology);
void run(MeshDevice& device, const Params& params);

// The expected output of every rank of one group (inputs in rank order, page images), summed in
// the order the device sums (see above); bfp8_b re-quantised after every addition, as the device.
// With several groups, throws CclParamsError when a group runs from mid-line (give the group: below).
std::vector<reference::Bytes> reference_outputs(const Params& params, const topo::Topology& topology,
                                                const std::vector<reference::Bytes>& inputs_by_rank);
// The same for `group` (chips in rank order) of an op whose groups may run as different shapes
// or orders: a ring run as a line around a down link sums in the line's order, from the chip after
// the link (fabric_order), whose rank need not be 0.
std::vector<reference::Bytes> reference_outputs(const Params& params, const topo::Topology& topology,
                                                const std::vector<ChipId>& group,
                                                const std::vector<reference::Bytes>& inputs_by_rank);

}  // namespace cclmesh::runtime::ccl::reduce_scatter
