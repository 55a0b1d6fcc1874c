#include "sim/device/kernel_semaphore_writes.hpp"

#include <fmt/format.h>

#include "kernels/legacy_all_gather/legacy_all_gather_args.hpp"
#include "kernels/legacy_reduce_scatter/legacy_reduce_scatter_args.hpp"
#include "runtime/device/l1_map.hpp"
#include "sim/device/legacy_edm_state.hpp"

namespace cclmesh::sim::device {

std::vector<KernelSemaphoreWrite> kernel_semaphore_writes(const KernelContext& k) {
  std::vector<KernelSemaphoreWrite> writes;
  const std::vector<std::uint32_t>& rt = k.runtime_args;
  if (const std::optional<LegacyEdmState> edm = legacy_edm_state(k)) {
    for (const LegacyEdmChannelState& c : edm->channels) {
      writes.push_back({c.worker, c.worker_semaphore, c.channel,
                        c.sender ? fmt::format("+1 when its sender channel {} has a free buffer for the worker", c.channel)
                                 : fmt::format("+1 when a message has arrived on its receiver channel {}", c.channel)});
    }
    return writes;
  }
  if (k.kernel == kernels::kLegacyAllGatherReceiverKernelName) {
    namespace la = kernels::legacy_all_gather;
    if (rt.size() <= la::kRtRelaySemaphoreId) return writes;
    writes.push_back({k.noc0, runtime::tensix_program_semaphore_address(rt[la::kRtRelaySemaphoreId]), std::nullopt,
                      "+1 for each message it has written to the output (the relay semaphore its core's sender waits "
                      "on)"});
    return writes;
  }
  if (k.kernel == kernels::kLegacyReduceScatterSenderKernelName) {
    namespace rs = kernels::legacy_reduce_scatter;
    if (rt.size() <= rs::kRtReadyNocY || rt[rs::kRtReadySemaphoreId] == rs::kNoReadySemaphore) return writes;
    writes.push_back({CoreCoord{static_cast<std::int32_t>(rt[rs::kRtReadyNocX]), static_cast<std::int32_t>(rt[rs::kRtReadyNocY])},
                      runtime::tensix_program_semaphore_address(rt[rs::kRtReadySemaphoreId]), std::nullopt,
                      "+1 for each reduced message of this chip's output it has written (the ready semaphore of the "
                      "other direction's receiver)"});
  }
  return writes;
}

}  // namespace cclmesh::sim::device
