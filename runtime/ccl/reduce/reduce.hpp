#pragma once
// reduce: the element-wise sum of every chip's input lands in the output buffer of one chip of
// each group, the root (nccl's ncclReduce; REFERENCE 7.5, 9). Sum only; bf16 and fp32. The
// output buffer exists on every chip (a mesh buffer); on chips other than the root it is the
// landing zone of the partial sums and holds scratch afterwards, as nccl leaves the non-root
// receive buffers undefined.
//
// Algorithm: a pipelined chain reduction towards the root, partials reduced hop by hop by the
// reduce kernel (the reduce_scatter's chain, reduce_scatter.hpp, for the one slice that is the
// root's). Why a chain and not reduce-scatter + gather to the root: on a 1D fabric the chain
// moves each byte of the tensor over a link direction once (ring: half of it each way), so it
// needs n beta on a line and n/2 beta on a ring, against 2 (N-1)/N n beta and (N-1)/N n beta
// for reduce-scatter + gather (the gather's bytes all converge on the root's links). Its
// latency is N - 1 hops of pipeline fill, which the chunking keeps to one chunk per hop.
//   Ring: two chains at once, each on half of the tensor (runs of pages): the up chain starts at
//     root + 1 and moves up (root+1 -> root+2 -> ... -> root-1 -> root), the down chain starts
//     at root - 1 and moves down; both link directions carry n/2, and the root's two ports
//     receive at once (REFERENCE 10, bidirectional ring).
//   Line: one chain over the whole tensor. Root 0: the down chain N-1 -> ... -> 1 -> 0. Other
//     roots: the up chain root+1 -> ... -> N-1, then 0 -> ... -> root; the step N-1 -> 0 runs
//     over N - 1 hops back down (as the reduce_scatter's line wrap), so every link direction
//     carries the tensor once. Root N-1 has no wrap.
//
// Per worker and chip, by position k on its chain (0 = the start, N-1 = the root):
//   barrier  k > 0: ATOMIC_INC the previous chip's barrier (global); k < N-1: WAIT barrier >= 1,
//            SET 0, so nothing lands in a program that has not started
//   k = 0    stream 1: my input run -> reduced CB; stream 0, per chunk: STREAM_CB_TO_TENSOR
//            reduced CB -> next chip's output chunk, ATOMIC_INC its receive semaphore
//   0<k<N-1  stream 0, per chunk c: WAIT receive >= c + 1, STREAM_TENSOR_TO_CB output chunk ->
//            partial CB, STREAM_CB_TO_TENSOR reduced CB -> next chip's output chunk, ATOMIC_INC
//            its receive; stream 1: my input run -> local CB; reduce: partial + local -> reduced
//   root     as 0<k<N-1, but the reduced chunk is written to my own output chunk
// Every chunk of a chip's output is written once, so no credits flow back: the whole run is the
// receive buffer. A chip sends a chunk on only once it has landed whole and been summed, so the
// chain's pipeline fill is N - 1 chunks: unset, chunk_packets is one packet (docs/collectives.md,
// reduce). A worker's sync chunks are grown so a run has at most 255 (8-bit inline wait targets,
// REFERENCE 4.11).
//
// The chains run along the fabric, by position (FabricGroup), from the root's position: a ring
// run as a line around a down link mid-ring (ranks 1, 2, 3, 0 at positions 0..3 with 0-1 down)
// runs the line's chain toward the position holding the root's rank. Groups whose rings run as
// lines are built as a line reduce beside the rings' ring reduce, in one workload (the line's
// worker is the ring's first, so the ring's barrier semaphore covers it).
//
// Reduction order (reference_output() reproduces it bit for bit): bf16 is rounded after every
// addition (kernels/reduce/reduce_math.hpp); the up chain adds positions root+1, root+2, ...,
// root-1, root (mod N), the down chain root-1, root-2, ..., root+1, root (positions are ranks
// except on a ring run as a line from mid-ring).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "runtime/ccl/common/ccl_common.hpp"
#include "runtime/ccl/common/collective.hpp"
#include "runtime/ccl/common/host_reference.hpp"
#include "runtime/device/mesh_device.hpp"
#include "runtime/device/types.hpp"
#include "runtime/device/workload.hpp"
#include "runtime/fabric/fabric_plan.hpp"
#include "topologies/topology.hpp"

namespace cclmesh::runtime::ccl::reduce {

struct Params {
  TensorSpec tensor = {};           // each chip's input, and the root's output
  std::uint32_t root = 0;           // the root's rank in every group (0 .. N-1)
  BufferHandle input_buffer = {};   // mesh buffers: the same address on every chip
  BufferHandle output_buffer = {};  // the root's result; elsewhere the partials' landing zone
  CclTopology topology = CclTopology::Ring;
  std::uint32_t num_links = 1;
  GroupSelection groups = {};  // default: every chip of the fabric, in fabric order
  CclMode mode = CclMode::Fabric;
  FabricOptions fabric = {};  // the device's fabric
  // Global semaphore on the worker cores (semaphore_cores()), created once, initially 0.
  std::optional<GlobalSemaphore> barrier_semaphore = {};
  CoreCoord first_worker{0, 0};            // worker cores (ring 2, line 1 per link) along the row
  std::uint32_t packet_size_in_pages = 0;  // CB packet; 0: what 4 fabric payloads hold
  // CB packets per synchronised chunk, grown so a run has at most 255. Unset: 1, the smallest,
  // which keeps the chain's N - 1 chunks of pipeline fill shortest (reduce.cpp); set: that value.
  std::optional<std::uint32_t> chunk_packets = {};
  std::uint32_t cb_packets = 3;            // depth of the local-input CB in packets
  bool operator==(const Params&) const = default;
};

std::size_t hash_value(const Params& params);

// The worker cores every chip uses (for creating the barrier semaphore).
std::vector<CoreRange> semaphore_cores(const Params& params, const topo::Topology& topology);

// Throws CclParamsError (or FabricPlanError / topo::InputError / BufferConfigError) naming what
// is wrong: a root outside the group, a 2-chip ring, more than 15 hops, ...
void validate(const Params& params, const topo::Topology& topology);
MeshWorkload build(const Params& params, const topo::Topology& topology);
void run(MeshDevice& device, const Params& params);

// The ranks in the order the device adds them for the pages of run `run` (see above); for
// tests and the reference. Throws CclParamsError when the groups add in different orders (as
// reference_output below: give the group).
std::vector<std::uint32_t> chain_order(const Params& params, const topo::Topology& topology, std::uint32_t run);
// The same for `group` (chips in rank order).
std::vector<std::uint32_t> chain_order(const Params& params, const topo::Topology& topology,
                                       const std::vector<ChipId>& group, std::uint32_t run);

// The root's expected output for one group (inputs in rank order, page images), summed in the
// device's order (bfp8_b re-quantised after every addition). Throws CclParamsError for a
// wrong input count, and when the groups add in different orders (a ring run as a line around a
// down link: give the group, below).
reference::Bytes reference_output(const Params& params, const topo::Topology& topology,
                                  const std::vector<reference::Bytes>& inputs_by_rank);
// The same for `group` (chips in rank order) of an op whose groups may run as different shapes
// or from mid-line: its chain runs along the line the fabric runs it as (fabric_order).
reference::Bytes reference_output(const Params& params, const topo::Topology& topology,
                                  const std::vector<ChipId>& group,
                                  const std::vector<reference::Bytes>& inputs_by_rank);

}  // namespace cclmesh::runtime::ccl::reduce
