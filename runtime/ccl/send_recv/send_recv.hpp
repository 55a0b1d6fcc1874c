#pragma once
// send/recv: copy a buffer from one chip to another over the persistent fabric (multi-hop),
// with the command interpreter (REFERENCE 4.7-4.8) on one worker core of each chip.
//
//   sender:   reader  STREAM_TENSOR_TO_CB        input -> CB (whole packets)
//             writer  STREAM_CB_TO_TENSOR        CB -> fabric unicast to the receiver's output
//                     ATOMIC_INC (fabric)        +1 on the receiver worker's done semaphore
//             (two interpreters on the core's two data-movement RISC-Vs, or one running both
//             streams: Params::split_reader_writer)
//   receiver: stream 0  WAIT_VALUE               done semaphore >= 1
// Packets of one direction arrive in order and the router flushes earlier writes before an
// increment (docs/kernels.md), so the receiver's program ends only after every byte landed.
// The same chip as sender and receiver is a local copy (no fabric).
// num_links L (at most the device fabric's routing planes, REFERENCE 3.5): L sender workers (the
// cores along the row from `worker`), worker k sending the k-th of L runs of the pages over plane
// k's routers; the receiver waits for L increments.
// Groups (GroupSelection): by default the one pair. With cluster_axis (or explicit chip lists)
// every group runs the same pair at once: the chips at the sender's and the receiver's ranks in
// their group (which must be the same one), e.g. along every row of a Galaxy at once.

#include <cstddef>
#include <cstdint>

#include "runtime/ccl/common/ccl_common.hpp"
#include "runtime/ccl/common/collective.hpp"
#include "runtime/device/mesh_device.hpp"
#include "runtime/device/types.hpp"
#include "runtime/device/workload.hpp"
#include "runtime/fabric/fabric_plan.hpp"
#include "topologies/topology.hpp"

namespace cclmesh::runtime::ccl::send_recv {

struct Params {
  ChipId sender = 0;
  ChipId receiver = 1;
  BufferHandle input = {};                 // read on the sender
  BufferHandle output = {};                // written on the receiver (mesh buffers: the same address everywhere)
  GroupSelection groups = {};              // default: the sender and the receiver alone
  FabricOptions fabric = {};               // the device's fabric (the plan is derived from it and the topology)
  CoreCoord worker{0, 0};                  // logical Tensix core on both chips (with L links: the first sender)
  std::uint32_t num_links = 1;             // routing planes used, one sender worker each
  std::uint32_t packet_size_in_pages = 0;  // 0: as many as a fabric payload holds
  std::uint32_t cb_packets = 2;            // CB depth in packets (double buffering)
  bool split_reader_writer = true;         // ccl_common.hpp add_copy_kernels
  bool operator==(const Params&) const = default;
};

std::size_t hash_value(const Params& params);

// Throws CclParamsError, FabricPlanError or topo::InputError naming what is wrong.
void validate(const Params& params, const topo::Topology& topology);
// validate(), then the workload: per pair one program on the sender and one on the receiver.
MeshWorkload build(const Params& params, const topo::Topology& topology);
// build() on the device's topology, enqueue, finish.
void run(MeshDevice& device, const Params& params);

}  // namespace cclmesh::runtime::ccl::send_recv
