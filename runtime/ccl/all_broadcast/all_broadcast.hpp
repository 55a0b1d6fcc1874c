#pragma once
// all_broadcast: every chip of a group sends its whole input to every other chip, into N
// separate output buffers per chip: output_buffers[i] on every chip ends holding rank i's input
// (tt-metal's all_broadcast_async, the first half of all_gather's fallback for tile-padded gather
// dims, REFERENCE 7.6). Fabric mode only, built on the command interpreter like all_gather:
//
//   every chip, per link (one worker core per link):
//     reader    STREAM_TENSOR_TO_CB   my input (the link's run of it) -> CB
//     writer    [barrier: ATOMIC_INC multicast barrier +1, WAIT_VALUE barrier >= N, SET 0]
//               STREAM_CB_TO_TENSOR   CB -> output_buffers[my rank], written locally and
//                                     multicast to every other chip of the group
//               ATOMIC_INC multicast  done +1 on the done core (worker 0) of every chip
//               [done core: WAIT_VALUE done >= N x links, SET done 0]
//
// The multicast reaches every other chip: half-way round both ways on a ring (REFERENCE 7.3
// FULL_TENSOR), to both ends on a line (FabricGroup::full_reach). Pages move verbatim, padding
// included, so output_buffers[i] is a byte copy of rank i's input buffer (reference_outputs).
// ROW_MAJOR rows wider than a fabric payload move as broadcast's do, in equal 32 B-aligned pieces
// that fill one (row_pieces.hpp, fabric_pages, FillPayload); a wide row that is not a multiple of 32 B is refused.
// A chip multicasts from its fabric position and writes its rank's buffer, so a ring run as a
// line from mid-ring (ranks 1, 2, 3, 0 at positions 0..3 with 0-1 down) fills the buffers as the
// ring would; groups whose rings run as lines are built as a line all_broadcast beside the rings'
// ring one, in one workload (the same workers and semaphores).

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

namespace cclmesh::runtime::ccl::all_broadcast {

struct Params {
  TensorSpec input = {};                          // each chip's input (TILE shapes padded to whole tiles)
  BufferHandle input_buffer = {};                 // mesh buffers: the same address on every chip
  std::vector<BufferHandle> output_buffers = {};  // one per rank, each holding an `input` tensor
  CclTopology topology = CclTopology::Ring;
  std::uint32_t num_links = 1;
  GroupSelection groups = {};  // default: every chip of the fabric, in fabric order
  FabricOptions fabric = {};   // the device's fabric
  // Global semaphores on the worker cores (semaphore_cores()), created once, initially 0.
  std::optional<GlobalSemaphore> done_semaphore = {};
  std::optional<GlobalSemaphore> barrier_semaphore = {};  // optional entry barrier (back-to-back ops)
  CoreCoord first_worker{0, 0};
  std::uint32_t packet_size_in_pages = 0;  // 0: as many pages as a fabric payload holds
  std::uint32_t cb_packets = 3;
  bool split_reader_writer = true;  // ccl_common.hpp add_copy_kernels
  bool operator==(const Params&) const = default;
};

std::size_t hash_value(const Params& params);

// The number of output buffers the op needs: the groups' size.
std::uint32_t output_buffer_count(const Params& params, const topo::Topology& topology);
// The worker cores every chip uses (one per link), for creating the global semaphores.
std::vector<CoreRange> semaphore_cores(const Params& params, const topo::Topology& topology);

// Throws CclParamsError (or FabricPlanError / topo::InputError / BufferConfigError) naming what
// is wrong.
void validate(const Params& params, const topo::Topology& topology);
// validate(), then a program on every chip of every group.
MeshWorkload build(const Params& params, const topo::Topology& topology);
void run(MeshDevice& device, const Params& params);

// Host reference for one group: what output_buffers[i] holds on every chip, for i in rank
// order: rank i's input bytes, unchanged.
std::vector<reference::Bytes> reference_outputs(const std::vector<reference::Bytes>& inputs_by_rank);

}  // namespace cclmesh::runtime::ccl::all_broadcast
