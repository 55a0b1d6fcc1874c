#pragma once
// broadcast: copy a buffer from one chip (the root) into the output buffer of every chip of
// the fabric, the root included, with one fabric multicast per packet (REFERENCE 4.8, 7.6).
//
//   root:   reader  STREAM_TENSOR_TO_CB   input -> CB
//           writer  STREAM_CB_TO_TENSOR   CB -> local output + multicast both ways
//                   ATOMIC_INC multicast  +1 on every chip's done semaphore (and locally)
//   others: stream 0  WAIT_VALUE            done semaphore >= 1
// On a line the multicast reaches the chips before and after the root; on a ring it covers
// n/2 chips forward and (n-1)/2 backward.
// num_links L (at most the device fabric's routing planes, REFERENCE 3.5): L root workers (the
// cores along the row from `worker`), worker k multicasting the k-th of L runs of the pages over
// plane k's routers; every chip's done semaphore (on `worker`) waits for L.
// Groups (GroupSelection, as all_gather's): by default one group of every chip of the fabric;
// with cluster_axis every row (axis 1) or column (axis 0) of the mesh is its own broadcast, all
// at once, each group's root the chip at the root chip's rank in its own group (the same
// position along every row or column, as an SPMD program would run it). When every group is a
// whole fabric ring each multicasts both ways round it; otherwise every group is a line,
// multicast to both of its ends and no further (a ring opened around a down link among them).

#include <cstddef>
#include <cstdint>

#include "runtime/ccl/common/ccl_common.hpp"
#include "runtime/ccl/common/collective.hpp"
#include "runtime/device/mesh_device.hpp"
#include "runtime/device/types.hpp"
#include "runtime/device/workload.hpp"
#include "runtime/fabric/fabric_plan.hpp"
#include "topologies/topology.hpp"

namespace cclmesh::runtime::ccl::broadcast {

struct Params {
  ChipId root = 0;      // with several groups: sets the root's rank in every group
  BufferHandle input;   // read on every group's root
  BufferHandle output;  // written on every chip of every group
  GroupSelection groups;  // default: every chip of the fabric, in fabric order
  FabricOptions fabric;
  CoreCoord worker{0, 0};        // the done core on every chip, and the root's first sender
  std::uint32_t num_links = 1;  // routing planes used, one root worker each
  std::uint32_t packet_size_in_pages = 0;  // 0: as many as a fabric payload holds
  std::uint32_t cb_packets = 2;
  bool split_reader_writer = true;  // ccl_common.hpp add_copy_kernels
  bool operator==(const Params&) const = default;
};

std::size_t hash_value(const Params& params);

void validate(const Params& params, const topo::Topology& topology);
MeshWorkload build(const Params& params, const topo::Topology& topology);
void run(MeshDevice& device, const Params& params);

}  // namespace cclmesh::runtime::ccl::broadcast
