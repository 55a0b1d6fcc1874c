// The receiver of one direction of the legacy-EDM reduce-scatter (REFERENCE 7.5, the 2024
// ring): for every message of every received step, pulls the previous chip's partial sum out
// of its EDM receiver channel into the partial CB, and this chip's operand (its input run, or
// for a line's second direction its own output once the first direction's sender has written
// it) into the local CB; the reduce kernel adds the two. The operand is read first: it never
// depends on another chip, so its read overlaps the wait for the EDM.
//
// Messages go chunk-lockstep: message c of every step before message c + 1 of any
// (legacy_reduce_scatter_args.hpp). Arguments: legacy_reduce_scatter/legacy_reduce_scatter_args.hpp.

#include <cstdint>

#include "kernels/api/dataflow_api.hpp"
#include "kernels/api/fabric_connection.hpp"
#include "kernels/api/legacy_edm_interface.hpp"
#include "kernels/kernels.hpp"
#include "kernels/legacy_all_gather/message_pages.hpp"
#include "kernels/legacy_reduce_scatter/legacy_reduce_scatter_args.hpp"
#include "kernels/legacy_reduce_scatter/worker_main.hpp"

namespace cclmesh::kernels {
namespace {

namespace rs = legacy_reduce_scatter;

class LegacyReduceScatterReceiver {
 public:
  LegacyReduceScatterReceiver(const LegacyReduceScatterArgs& args, const uint32_t* words,
                              api::LegacyEdmWorkerChannel& channel, uint8_t noc)
      : args_(args),
        words_(words),
        channel_(channel),
        noc_(noc),
        partial_cb_(static_cast<int32_t>(get_compile_time_arg_val(static_cast<int>(rs::kCtPartialCbId)))),
        local_cb_(static_cast<int32_t>(get_compile_time_arg_val(static_cast<int>(rs::kCtLocalCbId)))),
        input_(args.input, words, args.page_stride_bytes, args.pages_per_message, noc),
        output_(args.output, words, args.page_stride_bytes, args.pages_per_message, noc) {}

  void run() {
    for_each_legacy_rs_message(words_, args_, [this](uint32_t c, uint32_t kind, const api::CclCommandTensor& message) {
      const bool with_output = kind == rs::kReduceWithOutput;
      if (with_output) {
        // The other direction's sender +1s once per message of my output it has written.
        noc_semaphore_wait_min(api::l1_word_ptr(get_semaphore(args_.ready_semaphore_id)), c + 1);
      }
      MessagePages& operand = with_output ? output_ : input_;
      cb_reserve_back(local_cb_, 1);
      operand.begin(message);
      operand.read_next(get_write_ptr(static_cast<uint32_t>(local_cb_)));
      cb_reserve_back(partial_cb_, 1);
      channel_.wait_for_payload();
      channel_.read_into(get_write_ptr(static_cast<uint32_t>(partial_cb_)),
                         message.worker_pages_per_slice * args_.page_stride_bytes);
      channel_.release();
      cb_push_back(partial_cb_, 1);
      noc_async_read_barrier(noc_);
      cb_push_back(local_cb_, 1);
    });
  }

 private:
  const LegacyReduceScatterArgs& args_;
  const uint32_t* words_;
  api::LegacyEdmWorkerChannel& channel_;
  uint8_t noc_;
  int32_t partial_cb_;
  int32_t local_cb_;
  MessagePages input_;
  MessagePages output_;
};

}  // namespace
}  // namespace cclmesh::kernels

void kernel_main_legacy_reduce_scatter_receiver() {
  cclmesh::kernels::run_legacy_reduce_scatter_worker<cclmesh::kernels::LegacyReduceScatterReceiver>(false);
}
