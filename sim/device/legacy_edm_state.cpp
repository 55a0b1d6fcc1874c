#include "sim/device/legacy_edm_state.hpp"

#include <fmt/format.h>

#include "kernels/api/legacy_edm_interface.hpp"
#include "kernels/legacy_all_gather/legacy_all_gather_args.hpp"
#include "kernels/legacy_reduce_scatter/legacy_reduce_scatter_args.hpp"
#include "runtime/device/l1_map.hpp"

namespace cclmesh::sim::device {

bool is_legacy_edm(const KernelContext& k) { return k.kernel == kernels::kLegacyEdmKernelName; }

std::optional<LegacyEdmState> legacy_edm_state(const KernelContext& k) {
  namespace e = kernels::legacy_edm;
  if (!is_legacy_edm(k) || k.l1 == nullptr) return std::nullopt;
  const std::vector<std::uint32_t>& ct = k.compile_time_args;
  const std::vector<std::uint32_t>& rt = k.runtime_args;
  LegacyEdmState state;
  state.config = kernels::read_legacy_edm_config([&ct](std::uint32_t i) { return i < ct.size() ? ct[i] : 0u; });
  const std::uint32_t num_channels = state.config.num_sender_channels + state.config.num_receiver_channels;
  if (num_channels == 0 || num_channels > e::kMaxChannels || rt.size() < e::channel_block(num_channels)) {
    return std::nullopt;
  }
  const kernels::LegacyEdmL1Layout layout = kernels::make_legacy_edm_layout(state.config);
  const bool bounded = state.config.termination_mode == e::kTerminationMessageCountReached;
  for (std::uint32_t c = 0; c < num_channels; ++c) {
    const std::uint32_t b = e::channel_block(c);
    LegacyEdmChannelState ch;
    ch.channel = c;
    ch.sender = c < state.config.num_sender_channels;
    ch.worker = CoreCoord{static_cast<std::int32_t>(rt[b + e::kChannelWorkerNocX]),
                          static_cast<std::int32_t>(rt[b + e::kChannelWorkerNocY])};
    ch.worker_semaphore = runtime::tensix_program_semaphore_address(rt[b + e::kChannelWorkerSemaphoreId]);
    ch.edm_semaphore = k.erisc_l1.program_semaphore_address(rt[b + e::kChannelEdmSemaphoreId]);
    ch.worker_count = k.l1->read_u32(ch.edm_semaphore);
    // LegacyAckWord: first_level, then completions. A sender channel's mailbox holds what the
    // peer acked; a receiver channel's staging word what it last acked to the peer.
    const std::uint64_t acks = ch.sender ? layout.ack_mailbox(c) : layout.ack_staging(c);
    ch.arrived = k.l1->read_u32(acks);
    ch.completed = k.l1->read_u32(acks + sizeof(std::uint32_t));
    if (bounded) ch.messages = rt[b + e::kChannelNumMessages];
    state.channels.push_back(ch);
  }
  if (!bounded) {
    state.end_signals = k.l1->read_u32(k.erisc_l1.program_semaphore_address(rt[e::kRtTerminationSemaphoreId]));
  }
  return state;
}

bool channel_idle(const LegacyEdmChannelState& channel) {
  // A sender has sent what it was given before the completions can catch up with it; a
  // receiver's completions are the acks it has sent for what its worker pulled.
  if (channel.sender) return channel.completed == channel.worker_count;
  return channel.arrived == channel.worker_count && channel.completed == channel.worker_count;
}

std::optional<LegacyEdmWorkerChannel> legacy_edm_channel_of_worker(const KernelContext& k) {
  std::uint32_t offset_word = 0;
  if (k.kernel == kernels::kLegacyAllGatherSenderKernelName || k.kernel == kernels::kLegacyAllGatherReceiverKernelName) {
    offset_word = kernels::legacy_all_gather::kRtEdmChannelOffset;
  } else if (k.kernel == kernels::kLegacyReduceScatterSenderKernelName ||
             k.kernel == kernels::kLegacyReduceScatterReceiverKernelName) {
    offset_word = kernels::legacy_reduce_scatter::kRtEdmChannelOffset;
  } else {
    return std::nullopt;
  }
  const std::vector<std::uint32_t>& rt = k.runtime_args;
  if (rt.size() <= offset_word) return std::nullopt;
  const std::uint64_t at = rt[offset_word];
  // Offset 0: a reduce-scatter sender that only writes its sums (a line's end has no EDM onward).
  if (at == 0 || at + api::kLegacyEdmChannelArgWords > rt.size()) return std::nullopt;
  const api::LegacyEdmChannelConfig c = api::read_legacy_edm_channel_config(rt.data() + at);
  return LegacyEdmWorkerChannel{CoreCoord{static_cast<std::int32_t>(c.edm_noc_x), static_cast<std::int32_t>(c.edm_noc_y)},
                                runtime::tensix_program_semaphore_address(c.worker_semaphore_id)};
}

std::string describe_channel_counters(const LegacyEdmChannelState& channel, std::uint32_t num_buffers) {
  const std::string limit = channel.messages ? fmt::format(" of {} messages", *channel.messages) : "";
  if (channel.sender) {
    return fmt::format("{} buffers, {}{} filled by its worker, {} acknowledged by the peer, {} completed", num_buffers,
                       channel.worker_count, limit, channel.arrived, channel.completed);
  }
  return fmt::format("{} buffers, {}{} arrived, {} pulled by its worker", num_buffers, channel.arrived, limit,
                     channel.worker_count);
}

}  // namespace cclmesh::sim::device
