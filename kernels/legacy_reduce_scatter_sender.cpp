// The sender of one direction of the legacy-EDM reduce-scatter (REFERENCE 7.5, the 2024 ring):
// per message of every step, pushes this chip's raw input run (a chain's first chip) or the
// reduce kernel's next sum into its EDM sender channel toward the next chip of the direction,
// or writes the sum to this chip's output (the chain's last chip). After an output message
// has landed it +1s the ready semaphore of the other direction's receiver when the builder
// gave one (a line's second direction adds its partial to this output).
//
// Raw messages alternate between two scratch slots, so one is refilled while the other's EDM
// write is in flight; a sum leaves the reduced CB only once its write has left the core.
// Messages go chunk-lockstep (legacy_reduce_scatter_args.hpp). Arguments:
// legacy_reduce_scatter/legacy_reduce_scatter_args.hpp.

#include <cstdint>

#include "kernels/api/dataflow_api.hpp"
#include "kernels/api/legacy_edm_interface.hpp"
#include "kernels/kernels.hpp"
#include "kernels/legacy_all_gather/message_pages.hpp"
#include "kernels/legacy_all_gather/scratch_slots.hpp"
#include "kernels/legacy_reduce_scatter/legacy_reduce_scatter_args.hpp"
#include "kernels/legacy_reduce_scatter/worker_main.hpp"

namespace cclmesh::kernels {
namespace {

namespace rs = legacy_reduce_scatter;

class LegacyReduceScatterSender {
 public:
  LegacyReduceScatterSender(const LegacyReduceScatterArgs& args, const uint32_t* words,
                            api::LegacyEdmWorkerChannel& channel, uint8_t noc)
      : args_(args),
        words_(words),
        channel_(channel),
        noc_(noc),
        reduced_cb_(static_cast<int32_t>(get_compile_time_arg_val(static_cast<int>(rs::kCtReducedCbId)))),
        raw_slots_(get_write_ptr(get_compile_time_arg_val(static_cast<int>(rs::kCtScratchCbId))),
                   args.pages_per_message * args.page_stride_bytes),
        input_(args.input, words, args.page_stride_bytes, args.pages_per_message, noc),
        output_(args.output, words, args.page_stride_bytes, args.pages_per_message, noc) {}

  void run() {
    for_each_legacy_rs_message(words_, args_, [this](uint32_t, uint32_t kind, const api::CclCommandTensor& message) {
      const uint32_t bytes = message.worker_pages_per_slice * args_.page_stride_bytes;
      switch (kind) {
        case rs::kSendRaw:
          send_raw(message, bytes);
          break;
        case rs::kSendReduced:
          send_reduced(bytes);
          break;
        default:
          write_reduced(message);
          break;
      }
    });
    noc_async_write_barrier(noc_);
  }

 private:
  void send_raw(const api::CclCommandTensor& message, uint32_t bytes) {
    noc_async_writes_flushed(noc_);  // the slot's previous message has left the core
    const uint32_t slot = raw_slots_.next();
    input_.begin(message);
    input_.read_next(slot);
    noc_async_read_barrier(noc_);
    channel_.wait_for_empty_buffer();
    channel_.send(slot, bytes);
  }

  void send_reduced(uint32_t bytes) {
    cb_wait_front(reduced_cb_, 1);
    channel_.wait_for_empty_buffer();
    channel_.send(get_read_ptr(static_cast<uint32_t>(reduced_cb_)), bytes);
    noc_async_writes_flushed(noc_);
    cb_pop_front(reduced_cb_, 1);
  }

  void write_reduced(const api::CclCommandTensor& message) {
    cb_wait_front(reduced_cb_, 1);
    output_.begin(message);
    output_.write_next(get_read_ptr(static_cast<uint32_t>(reduced_cb_)));
    // Landed, not just sent: the other direction's receiver reads it back after the +1.
    noc_async_write_barrier(noc_);
    cb_pop_front(reduced_cb_, 1);
    if (args_.ready_semaphore_id != rs::kNoReadySemaphore) {
      noc_semaphore_inc(get_noc_addr(args_.ready_noc_x, args_.ready_noc_y, get_semaphore(args_.ready_semaphore_id), noc_),
                        1, noc_);
    }
  }

  const LegacyReduceScatterArgs& args_;
  const uint32_t* words_;
  api::LegacyEdmWorkerChannel& channel_;
  uint8_t noc_;
  int32_t reduced_cb_;
  ScratchSlots raw_slots_;
  MessagePages input_;
  MessagePages output_;
};

}  // namespace
}  // namespace cclmesh::kernels

void kernel_main_legacy_reduce_scatter_sender() {
  cclmesh::kernels::run_legacy_reduce_scatter_worker<cclmesh::kernels::LegacyReduceScatterSender>(true);
}
