// The receiver of one direction of the legacy-EDM all-gather (REFERENCE 7.4): pulls every
// message of the slices that arrive through its EDM receiver channel from the previous chip of
// the direction, writes its pages to the output, and +1s the relay semaphore of the same
// core's sender once they have landed, so the sender can re-read and forward them. It never
// waits for the next hop, so the EDM buffers feeding it always drain (no ring deadlock).
//
// Per message: wait for the EDM's signal, read the buffer into one of two scratch slots (read
// barrier), release the buffer (+1 on the EDM channel), then the previous message's writes are
// awaited and signalled while this one's go out. The previous message is signalled before
// blocking for the next one when that has not arrived: on a ring, with one message per slice,
// the next arrival waits for the upstream relay of the previous one (a cycle otherwise). Arguments:
// legacy_all_gather/legacy_all_gather_args.hpp.

#include <cstdint>

#include "kernels/api/dataflow_api.hpp"
#include "kernels/api/legacy_edm_interface.hpp"
#include "kernels/kernels.hpp"
#include "kernels/legacy_all_gather/legacy_all_gather_args.hpp"
#include "kernels/legacy_all_gather/message_pages.hpp"
#include "kernels/legacy_all_gather/scratch_slots.hpp"
#include "kernels/legacy_all_gather/worker_main.hpp"

namespace cclmesh::kernels {
namespace {

namespace la = legacy_all_gather;

class LegacyAllGatherReceiver {
 public:
  LegacyAllGatherReceiver(const LegacyAllGatherArgs& args, const uint32_t* words, uint32_t scratch, uint8_t noc)
      : args_(args),
        words_(words),
        noc_(noc),
        slots_(scratch, args.pages_per_message * args.page_stride_bytes),
        channel_(legacy_all_gather_channel(args, noc)),
        output_(args.output, words, args.page_stride_bytes, args.pages_per_message, noc),
        relay_semaphore_noc_addr_(get_noc_addr(my_x(0), my_y(0), get_semaphore(args.relay_semaphore_id), noc)) {}

  void run() {
    bool pending = false;
    for (uint32_t s = 0; s < args_.num_slices; ++s) {
      const api::CclCommandTensor slice = read_slice_record(words_ + args_.slices_offset + s * la::kSliceRecordWords);
      uint32_t pages_left = output_.begin(slice);
      while (pages_left > 0) {
        const uint32_t pages = pages_left < args_.pages_per_message ? pages_left : args_.pages_per_message;
        const uint32_t slot = slots_.next();
        // The previous message's signal may wait for this one's arrival only if it is already
        // here: on a ring the next payload can depend on the sender relaying the previous one.
        if (pending && !channel_.signal_pending()) {
          signal_landed();
          pending = false;
        }
        channel_.wait_for_payload();
        channel_.read_into(slot, pages * args_.page_stride_bytes);
        channel_.release();
        if (pending) {
          signal_landed();
        }
        output_.write_next(slot);
        pending = true;
        pages_left -= pages;
      }
    }
    if (pending) {
      signal_landed();
    }
  }

 private:
  // Every write issued so far has landed: tell the sender (one +1 per message). The NoC
  // orders only per destination, so the barrier keeps the increment behind the output writes.
  void signal_landed() {
    noc_async_write_barrier(noc_);
    noc_semaphore_inc(relay_semaphore_noc_addr_, 1, noc_);
  }

  const LegacyAllGatherArgs& args_;
  const uint32_t* words_;
  uint8_t noc_;
  ScratchSlots slots_;
  api::LegacyEdmWorkerChannel channel_;
  MessagePages output_;
  uint64_t relay_semaphore_noc_addr_;
};

}  // namespace
}  // namespace cclmesh::kernels

void kernel_main_legacy_all_gather_receiver() {
  cclmesh::kernels::run_legacy_all_gather_worker<cclmesh::kernels::LegacyAllGatherReceiver>(false);
}
