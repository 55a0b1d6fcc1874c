#pragma once
// The entry both legacy all-gather workers share: parse the runtime args (a malformed block is
// a kernel fault naming the offending word), find the scratch CB, run the worker.
// Device-clean.

#include <cstdint>

#include "kernels/api/dataflow_api.hpp"
#include "kernels/api/kernel_fault.hpp"
#include "kernels/legacy_all_gather/legacy_all_gather_args.hpp"

namespace cclmesh::kernels {

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
  Worker worker(args, words, scratch, my_noc_index());
  worker.run();
}

}  // namespace cclmesh::kernels
