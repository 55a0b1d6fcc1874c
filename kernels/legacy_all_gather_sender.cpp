// The sender of one direction of the legacy-EDM all-gather (REFERENCE 7.4, legacy ring/line):
// pushes this chip's input into its EDM sender channel toward the next chip of the direction
// (and, if asked, writes it to the local output on the way), then relays the slices the same
// core's receiver wrote to the output, re-reading each message once the receiver has said it
// landed. Relaying from the output, not from the receiver's L1, is what keeps the ring free of
// deadlock: the receiver never waits for the next hop, so every EDM buffer always drains.
//
// Per message: read its pages into one of two scratch slots (read barrier), optionally write
// them to the local output, wait for an empty EDM buffer, NoC-write the message into it and +1
// the EDM channel (LegacyEdmWorkerChannel). The other slot is refilled while this one's write
// is in flight. Arguments: legacy_all_gather/legacy_all_gather_args.hpp.

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

class LegacyAllGatherSender {
 public:
  LegacyAllGatherSender(const LegacyAllGatherArgs& args, const uint32_t* words, uint32_t scratch, uint8_t noc)
      : args_(args),
        words_(words),
        noc_(noc),
        slots_(scratch, args.pages_per_message * args.page_stride_bytes),
        channel_(legacy_all_gather_channel(args, noc)),
        input_(args.input, words, args.page_stride_bytes, args.pages_per_message, noc),
        output_(args.output, words, args.page_stride_bytes, args.pages_per_message, noc),
        local_(args.output, words, args.page_stride_bytes, args.pages_per_message, noc) {}

  void run() {
    send_own_slice();
    for (uint32_t s = la::kSenderFixedSlices; s < args_.num_slices; ++s) {
      relay_slice(slice(s));
    }
    noc_async_write_barrier(noc_);
  }

 private:
  api::CclCommandTensor slice(uint32_t s) const {
    return read_slice_record(words_ + args_.slices_offset + s * la::kSliceRecordWords);
  }

  // The next scratch slot; its previous message must have left the core first.
  uint32_t next_slot() {
    noc_async_writes_flushed(noc_);
    return slots_.next();
  }

  void push(uint32_t slot, uint32_t pages) {
    channel_.wait_for_empty_buffer();
    channel_.send(slot, pages * args_.page_stride_bytes);
  }

  void send_own_slice() {
    input_.begin(slice(0));
    if (args_.local_copy) {
      local_.begin(slice(1));
    }
    while (!input_.done()) {
      const uint32_t slot = next_slot();
      const uint32_t pages = input_.read_next(slot);
      noc_async_read_barrier(noc_);
      if (args_.local_copy) {
        local_.write_next(slot);
      }
      push(slot, pages);
    }
  }

  void relay_slice(const api::CclCommandTensor& s) {
    output_.begin(s);
    while (!output_.done()) {
      // The receiver +1s the relay semaphore once per message it wrote, in arrival order, and
      // the relayed slices are the first ones to arrive: wait for this message's count.
      relayed_ += 1;
      noc_semaphore_wait_min(api::l1_word_ptr(get_semaphore(args_.relay_semaphore_id)), relayed_);
      const uint32_t slot = next_slot();
      const uint32_t pages = output_.read_next(slot);
      noc_async_read_barrier(noc_);
      push(slot, pages);
    }
  }

  const LegacyAllGatherArgs& args_;
  const uint32_t* words_;
  uint8_t noc_;
  ScratchSlots slots_;
  api::LegacyEdmWorkerChannel channel_;
  MessagePages input_;
  MessagePages output_;
  MessagePages local_;
  uint32_t relayed_ = 0;
};

}  // namespace
}  // namespace cclmesh::kernels

void kernel_main_legacy_all_gather_sender() {
  cclmesh::kernels::run_legacy_all_gather_worker<cclmesh::kernels::LegacyAllGatherSender>(true);
}
