// REFERENCE 11.5: several workers on one router sender channel. Each opens the connection and
// counts the channel's slots as its own (fabric_connection.hpp), so between them they write
// more packets than the channel has slots; the router stops with WORKER_PROTOCOL_VIOLATION
// ("overran its credits"), which alone does not say that two kernels shared the channel. The
// interpreters' connection arguments do: the router core and connection_live word each names.

#include "sim/device/wait_chain_builder.hpp"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "kernels/api/kernel_fault.hpp"

namespace cclmesh::sim::device {

using wait_chain_detail::ChainBuilder;
namespace ca = wait_chain_detail::ca;

std::string workers_sharing_an_overrun_channel(const KernelContext& failed, const std::vector<const KernelContext*>& kernels) {
  if (failed.kernel != kernels::kFabricRouterKernelName || !failed.fault ||
      failed.fault->code != static_cast<std::uint32_t>(api::KernelFaultCode::WORKER_PROTOCOL_VIOLATION) ||
      api::protocol_violation_live_value(failed.fault->word_offset) != 0) {
    return "";
  }
  const std::uint32_t channel = api::protocol_violation_channel(failed.fault->word_offset);
  if (channel >= kernels::fabric_router::kNumSenderChannels) return "";
  const kernels::FabricRouterConfig cfg = ChainBuilder::config(failed);
  const std::uint32_t live_word = kernels::make_fabric_router_layout(cfg).sender[channel].connection_live;
  std::vector<const KernelContext*> connected;
  for (const KernelContext* k : kernels) {
    if (k->chip != failed.chip || !k->started) continue;
    const std::vector<std::uint32_t>& rt = k->runtime_args;
    for (const std::size_t at : ChainBuilder::connection_arg_blocks(*k)) {
      if (static_cast<std::int32_t>(rt[at + ca::kEdmNocX]) == failed.noc0.x &&
          static_cast<std::int32_t>(rt[at + ca::kEdmNocY]) == failed.noc0.y &&
          rt[at + ca::kConnectionLiveAddress] == live_word) {
        connected.push_back(k);
        break;
      }
    }
  }
  // "At once": running at the fault, or ended after another of them started (one after the
  // other on a channel is the protocol's normal reuse).
  std::vector<const KernelContext*> overlapping;
  for (const KernelContext* k : connected) {
    for (const KernelContext* other : connected) {
      if (other == k) continue;
      const bool k_ends_after_other_starts = !k->done || other->start < k->end;
      const bool other_ends_after_k_starts = !other->done || k->start < other->end;
      if (k_ends_after_other_starts && other_ends_after_k_starts) {
        overlapping.push_back(k);
        break;
      }
    }
  }
  if (overlapping.size() < 2) return "";
  std::string names;
  for (const KernelContext* k : overlapping) names += (names.empty() ? "" : ", ") + k->name();
  return fmt::format("; {} kernels were connected to its sender channel {} at once: {} (a sender channel serves one "
                     "worker at a time; workers that share a link's direction share it through a fabric mux, REFERENCE "
                     "6.3 / 11.5)",
                     overlapping.size(), channel, names);
}

}  // namespace cclmesh::sim::device
