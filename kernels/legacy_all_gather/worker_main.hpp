#pragma once
// The entry both legacy all-gather workers share: parse the runtime args (a malformed block is
// a kernel fault naming the offending word), find the scratch CB, run the worker, then give the
// EDM its WORKER_INITIATED termination signal when the op was built with one. Also the EDM
// channel both workers open from their args. Device-clean.

#include <cstdint>

#include "kernels/api/dataflow_api.hpp"
#include "kernels/api/kernel_fault.hpp"
#include "kernels/api/legacy_edm_interface.hpp"
#include "kernels/legacy_all_gather/legacy_all_gather_args.hpp"

namespace cclmesh::kernels {

// The worker's EDM channel (sender channel for the sender, receiver channel for the receiver),
// from the block at args.edm_channel_offset.
inline api::LegacyEdmWorkerChannel legacy_all_gather_channel(const LegacyAllGatherArgs& args, uint8_t noc) {
  uint32_t at = args.edm_channel_offset;
  return api::LegacyEdmWorkerChannel::build_from_args(at, noc);
}

template <typename Worker>
void run_legacy_all_gather_worker(bool is_sender) {
  const uint32_t num_args = get_num_args();
  const uint32_t* words = num_args == 0 ? nullptr : get_arg_ptr(0);
  LegacyAllGatherArgs args{};
  const ArgsFault parsed = parse_legacy_all_gather_args(is_sender, words, num_args, args);
  if (!parsed.ok()) {
    kernel_fault(parsed.code, api::kFaultNoCommand, parsed.word);
  }
  const uint32_t scratch = get_write_ptr(get_compile_time_arg_val(static_cast<int>(legacy_all_gather::kCtScratchCbId)));
  const uint8_t noc = my_noc_index();
  Worker worker(args, words, scratch, noc);
  worker.run();
  if (args.edm_termination_semaphore_id != legacy_all_gather::kNoTermination) {
    const api::LegacyEdmChannelConfig c = api::read_legacy_edm_channel_config(words + args.edm_channel_offset);
    api::signal_legacy_edm_termination(c.edm_noc_x, c.edm_noc_y, args.edm_termination_semaphore_id, noc);
  }
}

}  // namespace cclmesh::kernels
