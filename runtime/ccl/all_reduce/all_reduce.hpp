#pragma once
// all_reduce: every chip of a group ends with the element-wise sum of all chips' inputs
// (REFERENCE 7.6). Sum only; bf16 and fp32.
//
// An all-reduce is element-wise, so it runs on the tensor's pages as a flat row: TILE tensors as
// (1, 1, 32, 32 x tiles), ROW_MAJOR as (1, 1, rows, width), which are the same bytes in the same
// page order. Two algorithms:
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
// Auto picks OneShot on 1 link up to `one_shot_max_bytes` of tensor (64 KiB ring, 32 KiB line), above it the first when it can, else
// the composite. build() returns the op's workloads in order (2, or for a composite whose running sums do not fit L1
// 1 + (N - 1): one per local pass, local_sum.hpp);
// run() enqueues them all and waits once. OneShot builds 1 workload. Each chip runs them one after another, so a chip's
// second program sees its first one's results; across chips the global semaphores order them.
//
// Reduction order (reference_outputs() reproduces it bit for bit): the reduce_scatter's (see
// reduce_scatter.hpp) on its slices, or rank order for the composite and the one-shot; bf16 rounds after every
// addition.

#include <cstddef>
#include <cstdint>
#include <optional>
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

// Auto's one-shot thresholds: the simulated crossovers on the T3K 8-ring (between 64 and 80
// KiB) and 8-line (about 32 KiB), bf16 tiles in DRAM, with the local sum's running sums in L1
// (docs/collectives.md has the table).
inline constexpr std::uint64_t kDefaultOneShotMaxBytesRing = 64 * 1024;
inline constexpr std::uint64_t kDefaultOneShotMaxBytesLine = 32 * 1024;

enum class Algorithm : std::uint8_t { Auto, ReduceScatterAllGather, Composite, OneShot };
std::string to_string(Algorithm algorithm);

struct Params {
  TensorSpec tensor;          // each chip's input, and the output
  BufferHandle input_buffer;  // mesh buffers: the same address on every chip
  BufferHandle output_buffer;
  BufferHandle intermediate_buffer;  // intermediate_spec(): the slice, or the N gathered copies
  // reduce_scatter + all_gather on a two-sided line (fabric mode): the reduce_scatter's partials
  // (needs_rs_intermediate(), rs_intermediate_spec()). Its own buffer: the output buffer is not
  // free, as a neighbour's all_gather may write it while this chip's reduce_scatter still runs.
  std::optional<BufferHandle> rs_intermediate_buffer;
  CclTopology topology = CclTopology::Ring;
  std::uint32_t num_links = 1;
  // reduce_scatter's workers per link and direction (reduce_scatter::Params::workers_per_link;
  // unset: chosen by its size rule).
  std::optional<std::uint32_t> workers_per_link;
  GroupSelection groups;
  CclMode mode = CclMode::Fabric;
  FabricOptions fabric;
  Algorithm algorithm = Algorithm::Auto;
  // reduce_scatter + all_gather on a line: the reduce_scatter's line algorithm.
  reduce_scatter::LineAlgorithm rs_line_algorithm = reduce_scatter::LineAlgorithm::TwoSided;
  // reduce_scatter + all_gather on a ring: the reduce_scatter's ring algorithm. Chain by default,
  // not the reduce_scatter's Auto: all_reduce has its own one-shot for small tensors (Auto's
  // one_shot_max_bytes), and its crossover table (docs/collectives.md) was measured against the
  // chained reduce_scatter. OneShot / Auto need rs_intermediate_buffer (needs_rs_intermediate()).
  reduce_scatter::RingAlgorithm rs_ring_algorithm = reduce_scatter::RingAlgorithm::Chain;
  // Auto runs OneShot for tensors of at most this many bytes; unset: the topology's default
  // (kDefaultOneShotMaxBytesRing / Line).
  std::optional<std::uint64_t> one_shot_max_bytes;
  // Global semaphores on the worker cores (semaphore_cores()), created once, initially 0: the
  // reduce_scatter's entry barrier and the all_gather's (the one-shot's) completion count.
  std::optional<GlobalSemaphore> barrier_semaphore;
  std::optional<GlobalSemaphore> done_semaphore;
  CoreCoord first_worker{0, 0};
  std::uint32_t packet_size_in_pages = 0;
  std::uint32_t chunk_packets = 8;  // reduce_scatter's and the local reduction's sync chunks
  all_gather::RingAlgorithm ag_ring_algorithm = all_gather::RingAlgorithm::Auto;  // the all_gather half's
  bool operator==(const Params&) const = default;
};

std::size_t hash_value(const Params& params);

// The algorithm Auto resolves to (OneShot up to one_shot_max_bytes, else Composite when the
// pages do not split into N slices).
Algorithm resolved_algorithm(const Params& params, const topo::Topology& topology);
// The tensor the intermediate buffer must hold.
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

}  // namespace cclmesh::runtime::ccl::all_reduce
