#pragma once
// The two ends of a copy from one chip into other chips' output buffers that broadcast and
// send_recv share: on the sending chip sender workers, each streaming its own run of the pages
// over its own routing plane to its own destination(s) and then +1-ing the done semaphore at
// every destination; on a receiving chip one worker that waits for one increment per sender
// that reaches it. A sender's increment follows its data on the same route and routers flush
// writes before an increment (docs/kernels.md), so a receiver that has counted every sender has
// all of its bytes.

#include <cstdint>
#include <vector>

#include "kernels/api/tensor_slice.hpp"
#include "kernels/host/kernel_args_builder.hpp"
#include "kernels/host/micro_ops.hpp"
#include "runtime/device/core_map.hpp"
#include "runtime/device/types.hpp"
#include "runtime/device/workload.hpp"
#include "runtime/fabric/fabric_plan.hpp"

namespace cclmesh::runtime::ccl {

// One sender worker: its core, its pages (may be empty: it then only increments), the routing
// plane it connects on and where its pages go. It connects to the plane's routers of the
// directions its destination takes, and no other.
struct LinkSender {
  CoreCoord core;
  api::TensorSlice run;
  std::uint32_t plane = 0;
  cmd::FabricDestination destination;  // a unicast to one chip or a multicast
};

struct LinkSenders {
  ChipId chip = 0;                  // the sending chip
  std::uint32_t fabric_line = 0;    // senders connect on their plane of this line
  std::vector<LinkSender> senders;  // one or more per plane
  kargs::TensorArgs input;          // read on `chip`
  kargs::TensorArgs output;         // written at the destination(s)
  Noc0Coord done_core;              // the destinations' done core (kDoneSemaphoreId)
  std::uint32_t page_size_bytes = 0;
  std::uint32_t packet_pages = 1;
  std::uint32_t cb_packets = 2;
  bool split_reader_writer = true;  // add_copy_kernels
};

// One sender per link, all to `destination`: sender k on cores[k] with runs[k] over plane k.
std::vector<LinkSender> one_sender_per_link(const std::vector<CoreCoord>& cores,
                                            const std::vector<api::TensorSlice>& runs,
                                            const cmd::FabricDestination& destination);

// The senders' kernels, CBs, semaphores and fabric connections, added to `program`.
void add_link_senders(Program& program, const FabricPlan& plan, const LinkSenders& senders);

// A receiving chip's program: one interpreter on `core` that waits until its done semaphore
// (kDoneSemaphoreId) has counted `increments`.
Program done_waiter_program(CoreCoord core, std::uint32_t increments);

}  // namespace cclmesh::runtime::ccl
