#pragma once
// all_reduce: every chip of a group ends with the element-wise sum of all chips' inputs
// (REFERENCE 7.6). Sum only; bf16 and fp32.
//
// An all-reduce is element-wise, so it runs on the tensor's pages as a flat row: TILE tensors as
// (1, 1, 32, 32 x tiles), ROW_MAJOR as (1, 1, rows, width), which are the same bytes in the same
// page order. ROW_MAJOR rows wider than a fabric payload move in equal 32 B-aligned pieces that
// fit one in every algorithm (the halves along dim 2 in q pieces a row, all_gather's filling a
// payload, reduce_scatter's the fewest; the one-shot and the local sum the fewest, in
// local_sum.hpp's moved_pages); a piece is whole elements, so the sums are
// those of whole rows. Two algorithms:
//   ReduceScatterAllGather  reduce_scatter of the flat tensor into the intermediate buffer (a
//                           1/N slice per chip), then all_gather of the slices into the output
//                           (REFERENCE 7.6: "reduce-scatter followed by all-gather over the same
//                           links, so 2x the bytes"). Needs the page count to divide by N.
//   Composite               when it does not (e.g. 3 tiles on 4 chips, REFERENCE 7.6):
//                           all_gather of the whole inputs into the intermediate buffer (N
//                           copies), then on every chip a local chain of reduce-kernel passes,
//                           output = ((g0 + g1) + g2) + ... in rank order.
//   OneShot                 for small tensors (one_shot.hpp): every chip multicasts its whole
//                           input to the others and sums the N copies locally, in one
//                           workload. Needs no divisibility.
// Auto (resolved_algorithm()), on any number of links: OneShot when the pages divide by N and
// the tensor is within default_one_shot_limits() (bytes and pages, by the group's chip count
// and topology, measured below), and whenever the pages do not divide as long as the
// one-shot's sums fit L1 (one_shot::sums_fit()): there it beats the composite by a third at every
// size measured (T3K ring 24 KiB 28.10 against 42.40 us, 510 KiB 485.74 against 714.04; on 2-4
// links too; docs/collectives.md); otherwise the first when the pages divide, else the composite.
// Legacy EDM mode (CclMode::Legacy, no persistent fabric): both halves of rs-ag and the
// composite's all_gather are the legacy builders (per-op EDMs, neighbour to neighbour), the
// composite's local sum is the same program as in fabric mode (it is local to a chip). Auto there:
// the composite while the tensor's weighted bytes (legacy_composite_weighted_bytes()) are at most
// default_legacy_composite_max_weighted_bytes() (by topology, chip count and links, measured below), else
// rs-ag when the pages divide by N and the legacy reduce_scatter has a page for every run of a
// slice (a ring's two halves, a line's whole, times the links), else the composite, each shape
// the groups run as by its own (part_choices(): a ring opened into a line around a down link by
// the line's, beside the other rings by the ring's). The one-shot multicasts through the fabric's
// routers and is refused, naming the composite.
// build() returns the op's workloads in order (2, or for a composite whose running sums do not fit L1
// 1 + (N - 1): one per local pass, local_sum.hpp);
// run() enqueues them all in one call (MeshDevice::enqueue_workloads: all or none) and waits
// once. OneShot builds 1 workload. Each chip runs them one after another, so a chip's
// second program sees its first one's results; across chips the global semaphores order them.
//
// Reduction order (reference_outputs() reproduces it bit for bit): the reduce_scatter's (see
// reduce_scatter.hpp) on its slices, or rank order for the composite and the one-shot; bf16 rounds after every
// addition.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/ccl/all_gather/all_gather.hpp"
#include "runtime/ccl/common/ccl_common.hpp"
#include "runtime/ccl/common/collective.hpp"
#include "runtime/ccl/common/host_reference.hpp"
#include "runtime/ccl/reduce_scatter/reduce_scatter.hpp"
#include "runtime/device/mesh_device.hpp"
#include "runtime/device/types.hpp"
#include "runtime/device/workload.hpp"
#include "runtime/fabric/fabric_plan.hpp"
#include "topologies/topology.hpp"

namespace cclmesh::runtime::ccl::all_reduce {

// Auto's one-shot limits: the largest tensor (bytes, and pages) at which the one-shot was
// measured no slower than reduce_scatter + all_gather with its reduce_scatter half as Auto runs
// it (on a ring the one-shot ring up to 512 KiB). Simulated kernel time, bf16 in DRAM, 4352 B
// payload, 1 link (`cclmesh run --op all_reduce --size S|--shape ... --no-data --all-reduce-algo
// one-shot|rs-ag`; docs/collectives.md "Auto, re-measured" has the sweeps). Between two sizes
// whose pages divide by N the pages do not, and those take the one-shot anyway (Auto's rule for
// them, below), so a limit anywhere between the last win and the first loss selects the same.
//
// Bytes, bf16 tiles, one-shot / rs-ag in us (session 37, main ed58223):
//   group                  last one-shot win           first rs-ag win
//   N300 (2-chip line)     48 KiB  15.39 / 16.66       56 KiB  17.98 / 17.87
//   ring:3                 30 KiB  13.80 / 14.20       36 KiB  16.61 / 14.58
//   T3K 4-ring 0,1,3,2     24 KiB  15.16 / 16.67       32 KiB  18.33 / 17.33
//   ring:5                 20 KiB  15.67 / 17.10       30 KiB  19.87 / 18.24
//   ring:6                 12 KiB  12.63 / 19.11       24 KiB  20.88 / 20.63
//   ring:7                 14 KiB  15.89 / 20.23       28 KiB  26.47 / 22.33
//   T3K 8-ring             16 KiB  19.29 / 24.32       32 KiB  36.63 / 26.49
//   ring:3 as a line       48 KiB  22.10 / 22.37       54 KiB  25.17 / 24.42
//   T3K 4-line 0,1,3,2     32 KiB  21.06 / 24.85       40 KiB  25.99 / 26.05 (tie), 48: 29.57 / 27.47
//   mesh:1x4 line          32 KiB  20.92 / 24.32       40 KiB  25.68 / 25.11
//   ring:5 as a line       30 KiB  24.38 / 26.66       40 KiB  31.70 / 28.78
//   ring:6 as a line       24 KiB  24.71 / 29.66       36 KiB  34.79 / 31.56
//   ring:7 as a line       28 KiB  31.56 / 34.30       42 KiB  45.49 / 36.11
//   T3K 8-line             16 KiB  23.05 / 35.29       32 KiB  40.09 / 39.35
// The crossover falls as the group grows (the one-shot moves (N-1)x the tensor into every chip),
// and it is higher on a line than on a ring of the same chips: rs-ag on a ring runs both of its
// halves around both ways (the one-shot reduce_scatter ring, the relay all_gather), on a line
// from end to end, while the one-shot multicasts half-way round a ring and to both ends of a line
// either way. (Until session 37 the rule was by chip count only, 32 KiB on 3-4 chips and 16 KiB
// on more, measured in session 10 on the T3K 4-ring and 8-ring/line; the 4-ring's crossover has
// since moved below 32 KiB, and lines kept the one-shot longer than the rule did.) So the limits
// are by chip count and topology: 2 chips 48 KiB; rings 30 KiB on 3-4 chips, 20 KiB on more;
// lines 36 KiB on 3-4 chips, 30 KiB on more.
//
// Small pages move the crossover down: the one-shot's fabric packets carry at most 4 interleaved
// pages (one scatter write; rs-ag's too), so with 128 B ROW_MAJOR rows (bf16, 64 wide) a 512 B
// packet pays the routers' whole per-packet cost, and the one-shot puts about twice rs-ag's
// packets on a link and reads every copy's pages one NoC read each (docs/collectives.md, "Small
// pages: the mechanism"). It loses from a few KiB (T3K 8-ring 16 KiB: 69.79 us against 34.51).
// Measured in pages of 128 B (same command with --layout row_major --shape 1,1,ROWS,64; session
// 37), one-shot / rs-ag us:
//   T3K 8-ring   40 pages 25.71 / 26.31     48 pages 31.76 / 26.51
//   ring:5       35 pages 14.42 / 15.57     40 pages 16.47 / 15.72
//   T3K 4-ring   48 pages 16.02 / 16.14     52 pages 16.80 / 16.64
//   ring:3       48 pages 11.47 / 11.77     54 pages 12.48 / 12.16
//   N300         142 pages 23.75 / 23.85    144 pages 23.88 / 23.46
//   T3K 8-line   56 pages 38.41 / 39.01     64 pages 42.43 / 39.05
//   ring:6 line  60 pages 30.35 / 31.39     66 pages 33.14 / 31.42
//   T3K 4-line   80 pages 26.78 / 27.19     88 pages 28.73 / 26.50
//   ring:3 line  90 pages 22.53 / 22.58     96 pages 23.60 / 22.64
// So Auto also caps the pages: 142 on 2 chips; on rings 48 on 3-4 chips and 40 on more (the
// 5-ring's 40 pages lose 4.5%, the 8-ring's win 2%); on lines 80 on 3-4 and 56 on more. Tiles
// reach the byte limit first; the cap only acts on pages smaller than the bytes / pages ratio.
struct OneShotLimits {
  std::uint64_t max_bytes;
  std::uint64_t max_pages;
};
inline constexpr OneShotLimits kOneShotLimitsTwoChips{48 * 1024, 142};
inline constexpr OneShotLimits kOneShotLimitsShortRing{30 * 1024, 48};  // 3-4 chips
inline constexpr OneShotLimits kOneShotLimitsLongRing{20 * 1024, 40};   // 5 or more
inline constexpr OneShotLimits kOneShotLimitsShortLine{36 * 1024, 80};  // 3-4 chips
inline constexpr OneShotLimits kOneShotLimitsLongLine{30 * 1024, 56};   // 5 or more
inline constexpr std::uint32_t kOneShotShortGroupMaxChips = 4;
// The limits for a group of group_size chips run as topology (a 2-chip group is a line either way).
OneShotLimits default_one_shot_limits(CclTopology topology, std::uint32_t group_size);

// Legacy mode's composite threshold. Small tensors are faster as the composite (the legacy
// all_gather of whole inputs, then the local sum) than as the legacy reduce_scatter + all_gather,
// whose two EDM set-ups and message-lockstep chains take 16 us on N300 and 140 us on the 8-line
// at the smallest sizes.
// The composite's time grows with the pages as well as the bytes (its gather relays every page
// and its local sum reads N copies of each), so the crossover is neither a byte nor a page count:
// it follows a weighted size, bytes + 256 B per page = pages x (page size + 256 B). Measured
// (simulated kernel time, DRAM; `cclmesh run --mode legacy --op all_reduce --all-reduce-algo
// rs-ag|composite --no-data --shape ...` over bf16 / fp32 / bfp8_b tiles and ROW_MAJOR pages of
// 1024, 512 and 128 B, 34-72 sizes per group; docs/collectives.md "Auto in legacy mode, measured"):
//   group (1 link unless said)   best threshold, weighted KiB   session 10's rule (links left out):
//                                                               KiB, total / worst loss
//   N300 (2-line)                24-25                          24: 0.18 us / 0.9 %
//   T3K 4-ring 0,1,3,2           26.5-29.5                      30: 3.67 us / 5.3 %
//   T3K 4-ring, 2 links          31.5-34.5                      30: 1.07 us / 3.2 %
//   T3K 8-ring                   30-35.5                        30: 0.35 us / 0.5 %
//   T3K 4-line 0,1,3,2           50-50.5                        48: 1.93 us / 1.9 %
//   Galaxy column, 4 links       60-62.5                        48: 28.49 us / 15.4 %
//   T3K 8-line                   80-83.5                        80: 8.63 us / 3.7 %
//   Galaxy row (8-line), 4 links 96-99.5                        80: 37.97 us / 10.4 %
// (The best rule in bytes alone loses 13-187 us per group, up to 41 % at one size; rs-ag
// wherever it runs, the rule before, loses 82-1202 us, up to 3x.) With bf16 tiles only
// (weighted 2.25 KiB per tile), composite wins at / rs-ag wins from: T3K 0,1,3 as a 3-line 27 /
// 33.75, ring:5 as a line 56.25 / 67.5, ring:6 as a line 67.5 / 81; ring:3 27 / 40.5, ring:5
// 22.5 / 33.75, ring:6 27 / 40.5. So: a ring 30 KiB whatever its chip count, a line 12 KiB per
// chip up to 80 KiB (the 8-line's reduce_scatter cost grows less than linearly; a 3-line loses
// 8 % at its 33.75). The composite's sums stay in L1 (one local-sum workload, 512 KiB) far
// beyond these sizes, so its per-pass fallback never meets the crossover.
//
// Links (session 11, re-fitted in session 12 after the NoC gaps). The thresholds above are 1
// link's. More links raise the crossover: the composite's cost per weighted KiB has a part that
// divides over the links (its gather's transfers and relays) and a part that does not (the local
// sum, N copies read on each chip), while rs-ag's cost at these sizes is its fixed part (the EDM
// set-ups and lockstep chains, about the same on 1 to 4 links). Galaxy column (4-line), bf16
// tiles, us per weighted KiB over 9-45 KiB (session 11): composite 0.91 / 0.74 / 0.70 / 0.64 on
// 1 / 2 / 3 / 4 links, rs-ag 0.21 / 0.14 / 0.07 / 0.09, rs-ag at 9-36 KiB 53.4-54.0 us on every
// count. So the crossover grows as 1 / (1 - s + s / links), s the part that divides. Measured
// crossovers after the NoC gaps (weighted KiB; `scripts/legacy_composite_crossover.py GROUP LINKS
// LAYOUT FROM TO`, i.e. `cclmesh run --mode legacy --op all_reduce --all-reduce-algo
// rs-ag|composite --no-data` at every dividing size over a fixed range past every candidate
// threshold; bf16 tiles / ROW_MAJOR rows of 128 B / 1024 B; the last composite win and the first
// rs-ag win, linearly interpolated, "<=" where rs-ag wins at its first runnable size, "-" where
// it cannot run in the range; docs/collectives.md, "Links re-fitted after the NoC gaps"):
//   group                  1 link            2 links           3 links           4 links
//   T3K 4-ring 0,1,3,2     26.0 27.0 29.5    <=36 35.7 34.2    (the T3K's legacy hops take 2 at most)
//   ring:4                 26.6 26.9 29.6    <=36 35.3 34.7    <=54 38.3 37.0    -    39.4 <=40
//   ring:6                 28.1 29.8 31.5    <=54 39.0 37.0    -    42.0 <=45    -    44.6 -
//   ring:8                 <=36 31.1 32.5    -    39.6 <=40    -    44.4 -        -    47.4 -
//   Galaxy column (4-line) 49.4 46.5 53.8    52.5 60.0 58.5    57.5 66.3 63.6    59.5 71.1 65.4
//   T3K 4-line 0,1,3,2     50.0 47.0 57.4    52.3 60.5 58.6
//   ring:6 as a 6-line     75.7 57.4 86.2    70.3 78.8 76.8    74.1 89.6 81.7    79.0 97.0 87.2
//   Galaxy row (8-line)    82.7 63.2 93.9    77.0 88.1 83.8    83.8 102.3 92.4   90.1 109.6 98.2
// (T3K's 8-ring and 8-line and N300 allow 1 legacy link; ring:4 and ring:8 as lines cross where
// the Galaxy's column and row do, within 2.5 KiB.) Rings fit s = 0.33 (x 1.20 / 1.28 / 1.33 on 2 /
// 3 / 4 links): more would take the T3K square's 16 tiles on 2 links (36 KiB, rs-ag 33.97 against
// 37.84 us) into the composite; the longer rings' crossovers on 3-4 links grow with the chips
// (ring:4 / 6 / 8 on 4 links 39 / 45 / 47 KiB for 128 B rows), which one s does not follow. Lines
// of up to 4 chips fit s = 0.38 (x 1.23 / 1.34 / 1.40); longer lines s = 0.22 (x 1.12 / 1.17 /
// 1.20): the links move their small pages' crossover far (8-line 128 B rows 63 -> 110 on 4
// links) and their large pages' little (tiles 83 -> 90), and the threshold sits between. Each
// threshold is rounded down to a whole KiB. Scored against the faster algorithm at every measured
// size (108 group x links x layout series, 1253 sizes, 805 of them on 2-4 links): on 1 link
// unchanged; on 2-4 links the time lost per group and link count (its three layouts) is 0-37.7
// us, at most 9.5 % at a size (the Galaxy row on 4 links, tiles against 128 B rows), where
// session 11's s = 0.30 / 0.30 / 0.15 lost 0-52.3 us, up to 11.6 % (321.6 us in all, now 187.1);
// no group and link count loses more than before.
inline constexpr std::uint64_t kLegacyCompositePageWeightBytes = 256;
inline constexpr std::uint64_t kLegacyCompositeMaxWeightedBytesRing = 30 * 1024;
inline constexpr std::uint64_t kLegacyCompositeMaxWeightedBytesPerLineChip = 12 * 1024;
inline constexpr std::uint64_t kLegacyCompositeMaxWeightedBytesLine = 80 * 1024;
inline constexpr std::uint64_t kLegacyCompositeRingLinkSharedPercent = 33;
inline constexpr std::uint32_t kLegacyCompositeShortLineMaxChips = 4;
inline constexpr std::uint64_t kLegacyCompositeShortLineLinkSharedPercent = 38;
inline constexpr std::uint64_t kLegacyCompositeLongLineLinkSharedPercent = 22;
// The tensor's pages x (page size + kLegacyCompositePageWeightBytes).
std::uint64_t legacy_composite_weighted_bytes(const TensorSpec& tensor);
// one_link_bytes / (1 - s + s / num_links), s = link_shared_percent / 100 (num_links 0 as 1).
std::uint64_t legacy_composite_threshold_on_links(std::uint64_t one_link_bytes, std::uint32_t num_links,
                                                  std::uint64_t link_shared_percent);
std::uint64_t default_legacy_composite_max_weighted_bytes(CclTopology topology, std::uint32_t group_size,
                                                          std::uint32_t num_links);

enum class Algorithm : std::uint8_t { Auto, ReduceScatterAllGather, Composite, OneShot };
std::string to_string(Algorithm algorithm);

struct Params {
  TensorSpec tensor = {};          // each chip's input, and the output
  BufferHandle input_buffer = {};  // mesh buffers: the same address on every chip
  BufferHandle output_buffer = {};
  BufferHandle intermediate_buffer = {};  // intermediate_spec(): the slice, or the N gathered copies
  // reduce_scatter + all_gather on a two-sided line (fabric mode): the reduce_scatter's partials
  // (needs_rs_intermediate(), rs_intermediate_spec()). Its own buffer: the output buffer is not
  // free, as a neighbour's all_gather may write it while this chip's reduce_scatter still runs.
  std::optional<BufferHandle> rs_intermediate_buffer = {};
  CclTopology topology = CclTopology::Ring;
  std::uint32_t num_links = 1;
  // reduce_scatter's workers per link and direction (reduce_scatter::Params::workers_per_link;
  // unset: chosen by its size rule).
  std::optional<std::uint32_t> workers_per_link = {};
  GroupSelection groups = {};
  CclMode mode = CclMode::Fabric;
  FabricOptions fabric = {};
  Algorithm algorithm = Algorithm::Auto;
  // reduce_scatter + all_gather on a line: the reduce_scatter's line algorithm.
  reduce_scatter::LineAlgorithm rs_line_algorithm = reduce_scatter::LineAlgorithm::TwoSided;
  // reduce_scatter + all_gather on a ring: the reduce_scatter's ring algorithm. Auto by default,
  // the reduce_scatter's own size rule applied to its input, i.e. this tensor (the one-shot ring
  // up to reduce_scatter::kDefaultOneShotMaxBytes = 512 KiB): REFERENCE 7.6 has tt-metal's
  // all_reduce as its reduce_scatter followed by its all_gather, and "it inherits" their
  // behaviour, so its reduce_scatter half chooses as a reduce_scatter of that tensor would (T3K
  // ring, 256 KiB: 62.92 us against 98.17 with the chain). OneShot / Chain force either; a
  // one-shot half needs rs_intermediate_buffer (needs_rs_intermediate()).
  reduce_scatter::RingAlgorithm rs_ring_algorithm = reduce_scatter::RingAlgorithm::Auto;
  // Set: Auto runs OneShot for tensors of at most this many bytes, whether or not the pages
  // divide by N (0: never), with no page cap. Unset: default_one_shot_limits() when they divide, the one-shot's
  // L1 limit when they do not.
  std::optional<std::uint64_t> one_shot_max_bytes = {};
  // Legacy mode: set, Auto runs the composite for tensors of at most this many weighted bytes
  // (legacy_composite_weighted_bytes(); 0: only where rs-ag cannot run). Unset:
  // default_legacy_composite_max_weighted_bytes().
  std::optional<std::uint64_t> legacy_composite_max_weighted_bytes = {};
  // Global semaphores on the worker cores (semaphore_cores()), created once, initially 0: the
  // reduce_scatter's entry barrier and the all_gather's (the one-shot's) completion count.
  std::optional<GlobalSemaphore> barrier_semaphore = {};
  std::optional<GlobalSemaphore> done_semaphore = {};
  CoreCoord first_worker{0, 0};
  std::uint32_t packet_size_in_pages = 0;
  // reduce_scatter's and the local reduction's sync chunks. Unset: reduce_scatter fits its chunk to
  // each message (reduce_scatter::Params::chunk_packets), the local reduction runs
  // kDefaultReductionChunkPackets (reduction_chunks.hpp).
  std::optional<std::uint32_t> chunk_packets = {};
  all_gather::RingAlgorithm ag_ring_algorithm = all_gather::RingAlgorithm::Auto;  // the all_gather half's
  bool operator==(const Params&) const = default;
};

std::size_t hash_value(const Params& params);

// The algorithm Auto resolves to (see Auto above and one_shot_max_bytes): the first part's
// (part_choices(); the rings' where rings and lines run at once).
Algorithm resolved_algorithm(const Params& params, const topo::Topology& topology);

// The algorithm the op runs and why, in words, for a user who otherwise sees only its time: a
// fallback can be 10x slower than the algorithm one page more or less takes (T3K ring, 488
// pages 209.74 us by reduce_scatter + all_gather, 489 pages 2380.86 us by the composite).
struct AlgorithmChoice {
  Algorithm algorithm = Algorithm::Auto;
  // Auto ran it because reduce_scatter + all_gather cannot run here (pages that do not divide by
  // N, or too few for the legacy reduce_scatter's runs), not by a size threshold or as asked.
  bool fallback = false;
  std::string reason;  // one clause, e.g. "asked for", "the 489 pages do not divide by the 8 chips, ..."
};
// The first part's (part_choices()): the op's one algorithm unless it runs in parts.
AlgorithmChoice algorithm_choice(const Params& params, const topo::Topology& topology);
// What each shape the groups run as runs and why. Legacy mode builds the op per shape
// (collective.hpp, groups_by_shape: rings first, then the rings opened into lines around a down
// link), each part with its own algorithm: Auto by the part's shape's threshold and needs (4x4
// torus rows, one opened, 16 bf16 tiles: 36 KiB weighted, past the rings' 30 KiB and within the
// line's 48 KiB, so rs-ag on the rings and the composite on the line); an algorithm asked runs
// on every part (or its refusal names the part that cannot). The op's k-th workload runs every
// part's k-th step; the intermediate buffer holds the largest part's tensor (intermediate_spec),
// the others use its first pages. Fabric mode: one part, the op (its halves split by shape).
struct PartChoice {
  CclTopology shape = CclTopology::Ring;  // what these groups run as
  GroupSelection groups;
  AlgorithmChoice choice;
};
std::vector<PartChoice> part_choices(const Params& params, const topo::Topology& topology);

// What the two halves of reduce_scatter + all_gather run and why, for the op's groups of one
// shape: each half's own choice function applied to the params build() gives that half, so it
// says what runs (T3K ring: a 256 KiB tensor's reduce_scatter half runs the one-shot ring, a
// 1 MiB one's the chain; the one-shot half made 256 KiB 62.92 us against 98.17, Params above).
struct HalvesChoice {
  CclTopology shape = CclTopology::Ring;  // what these groups run as
  // The reduce_scatter half: its ring algorithm on a ring; a line runs rs_line (and
  // rs_ring says "a line chains").
  reduce_scatter::RingAlgorithmChoice rs_ring;
  reduce_scatter::LineAlgorithm rs_line = reduce_scatter::LineAlgorithm::TwoSided;
  all_gather::RingAlgorithmChoice all_gather;  // relay or multicast
};
// One entry per shape the groups run as (collective.hpp, groups_by_shape): the op's own shape,
// or where a ring group runs as a line around a down link, the line (and the rings first, if
// some groups stay rings). Empty unless the op runs reduce_scatter + all_gather in fabric mode:
// legacy mode's halves run their EDM algorithms, which choose nothing.
std::vector<HalvesChoice> halves_choices(const Params& params, const topo::Topology& topology);
// What the composite's all_gather of the whole inputs runs and why (relay or multicast), per shape
// its groups run as: all_gather::part_choices() on the params build() gives the composite's gather
// (ag_ring_algorithm included), so it says what runs, as halves_choices() does for rs-ag (T3K ring,
// 489 pages: the relay, auto). Empty unless the op runs the composite in fabric mode: legacy
// mode's gather is the EDM one, which chooses nothing.
std::vector<all_gather::PartChoice> composite_gather_choices(const Params& params, const topo::Topology& topology);
// The tensor the intermediate buffer must hold: the largest part's (part_choices()).
TensorSpec intermediate_spec(const Params& params, const topo::Topology& topology);
// Whether the op needs rs_intermediate_buffer, and the tensor it must hold.
bool needs_rs_intermediate(const Params& params, const topo::Topology& topology);
TensorSpec rs_intermediate_spec(const Params& params, const topo::Topology& topology);
std::vector<CoreRange> semaphore_cores(const Params& params, const topo::Topology& topology);

void validate(const Params& params, const topo::Topology& topology);
std::vector<MeshWorkload> build(const Params& params, const topo::Topology& topology);
void run(MeshDevice& device, const Params& params);

// The expected output of every rank of one group (inputs in rank order), bit for bit.
std::vector<reference::Bytes> reference_outputs(const Params& params, const topo::Topology& topology,
                                                const std::vector<reference::Bytes>& inputs_by_rank);
// The same for `group` (chips in rank order): a ring run as a line around a down link sums its
// reduce_scatter half in the line's order (reduce_scatter.hpp). Empty: the op's one shape.
std::vector<reference::Bytes> reference_outputs(const Params& params, const topo::Topology& topology,
                                                const std::vector<ChipId>& group,
                                                const std::vector<reference::Bytes>& inputs_by_rank);

}  // namespace cclmesh::runtime::ccl::all_reduce
