#pragma once
// The entry both legacy reduce-scatter workers share: parse the runtime args (a malformed
// block is a kernel fault naming the offending word), build the EDM channel the worker uses
// (a line end's sender has none), run the worker, then give the EDM its WORKER_INITIATED
// termination signal when the op was built with one.
// Device-clean.

#include <cstdint>

#include "kernels/api/dataflow_api.hpp"
#include "kernels/api/kernel_fault.hpp"
#include "kernels/api/legacy_edm_interface.hpp"
#include "kernels/legacy_reduce_scatter/legacy_reduce_scatter_args.hpp"

namespace cclmesh::kernels {

template <typename Worker>
void run_legacy_reduce_scatter_worker(bool is_sender) {
  namespace rs = legacy_reduce_scatter;
  const uint32_t num_args = get_num_args();
  const uint32_t* words = num_args == 0 ? nullptr : get_arg_ptr(0);
  LegacyReduceScatterArgs args{};
  const ArgsFault parsed = parse_legacy_reduce_scatter_args(is_sender, words, num_args, args);
  if (!parsed.ok()) {
    kernel_fault(parsed.code, api::kFaultNoCommand, parsed.word);
  }
  const uint8_t noc = my_noc_index();
  const bool has_channel = args.edm_channel_offset != 0;
  // A line end's sender writes its output only; it still needs a channel object, so it gets
  // one built from an all-zero block that it never uses.
  const api::LegacyEdmChannelConfig config =
      has_channel ? api::read_legacy_edm_channel_config(words + args.edm_channel_offset)
                  : api::LegacyEdmChannelConfig{0, 0, 0, 1, 0, 0, 0};
  api::LegacyEdmWorkerChannel channel(config, noc);
  Worker worker(args, words, channel, noc);
  worker.run();
  if (has_channel && args.edm_termination_semaphore_id != rs::kNoTermination) {
    api::signal_legacy_edm_termination(config.edm_noc_x, config.edm_noc_y, args.edm_termination_semaphore_id, noc);
  }
}

}  // namespace cclmesh::kernels
