// The legacy per-op ERISC data mover (REFERENCE §5): launched with each op on both ends of a
// link; N sender and M receiver channels, each serving one worker, each with a ring of
// buffers. Neighbour-only: multi-hop traffic is relayed by workers.
//
//   Worker -> EDM sender channel (push): the EDM +1s the worker's semaphore when a buffer is
//   free; the worker waits for 1, resets it to 0, NoC-writes the payload into the buffer and
//   +1s the EDM channel semaphore (same NoC, so after the write). The EDM sends the buffer and
//   its sync word across the link.
//   EDM receiver channel -> worker (pull): the EDM +1s the worker's semaphore when a buffer
//   holds a message; the worker NoC-reads it, waits for the read, and +1s the EDM channel
//   semaphore; the EDM clears the buffer's sync word and acks.
//   Two-level acks across the link: level 1 (the peer received it: the sender's local buffer
//   is free) and level 2 (the peer's worker pulled it: the peer buffer is free), sent as one
//   cumulative LegacyAckWord per channel into the peer channel's ack mailbox.
//
// Start-up: zero the ack words and the receive buffers' sync words, STARTED, handshake
// (nothing lands in a peer that has not answered), READY_FOR_TRAFFIC. Termination:
// MESSAGE_COUNT_REACHED (every channel moved its count) or WORKER_INITIATED (every channel's
// worker has +1'd the termination semaphore after its last message, and every channel is idle:
// one signal per channel, so an early worker cannot end the EDM under a late one). Before exit every sender channel has its
// level-2 acks back and every ack has been sent, so nothing of this op lands in the next one
// (REFERENCE §5, §11.9).
//
// Arguments and L1 layout: kernel_args.hpp (namespace legacy_edm); bookkeeping:
// legacy_edm/legacy_edm_logic.hpp.

#include <cstdint>

#include "kernels/api/dataflow_api.hpp"
#include "kernels/api/fabric_connection.hpp"
#include "kernels/api/kernel_fault.hpp"
#include "kernels/common/eth_handshake.hpp"
#include "kernels/common/idle_passes.hpp"
#include "kernels/fabric/router_logic.hpp"
#include "kernels/kernel_args.hpp"
#include "kernels/kernels.hpp"
#include "kernels/legacy_edm/legacy_edm_logic.hpp"

namespace cclmesh::kernels {
namespace {

using api::KernelFaultCode;

uint32_t ct_arg(uint32_t index) { return get_compile_time_arg_val(static_cast<int>(index)); }

struct ChannelRuntime {
  uint64_t worker_semaphore_noc_addr;
  uint32_t edm_semaphore_address;
  LegacyMessageLimit limit;
  bool acks_dirty;
  LegacyAckWord ack_out;
};

class LegacyEdm {
 public:
  explicit LegacyEdm(const LegacyEdmConfig& config)
      : cfg_(config), layout_(make_legacy_edm_layout(config)), noc_(my_noc_index()) {}

  void run() {
    read_args();
    initialise();
    eth_handshake(cfg_.is_handshake_master, layout_.handshake_mailbox, layout_.handshake_staging);
    set_status(api::EdmStatus::READY_FOR_TRAFFIC);
    profile_mark_ready();
    main_loop();
    eth_wait_for_tx_queue();
    noc_async_write_barrier(noc_);
    set_status(api::EdmStatus::TERMINATED);
  }

 private:
  [[noreturn]] void fail(KernelFaultCode code, uint32_t detail) const {
    kernel_fault(api::fault_code(code), api::kFaultNoCommand, detail);
  }

  uint32_t num_channels() const { return cfg_.num_sender_channels + cfg_.num_receiver_channels; }
  bool is_sender(uint32_t channel) const { return channel < cfg_.num_sender_channels; }

  void read_args() {
    namespace e = legacy_edm;
    if (num_channels() == 0 || num_channels() > e::kMaxChannels) {
      fail(KernelFaultCode::BAD_ARGS, e::kCtNumSenderChannels);
    }
    if (cfg_.num_buffers_per_channel == 0 || cfg_.num_buffers_per_channel > e::kMaxBuffersPerChannel) {
      fail(KernelFaultCode::BAD_ARGS, e::kCtNumBuffersPerChannel);
    }
    if (cfg_.buffer_size_bytes == 0 || cfg_.buffer_size_bytes % api::kEthWordBytes != 0) {
      fail(KernelFaultCode::BAD_ARGS, e::kCtBufferSizeBytes);
    }
    if (cfg_.termination_mode != e::kTerminationMessageCountReached &&
        cfg_.termination_mode != e::kTerminationWorkerInitiated) {
      fail(KernelFaultCode::BAD_ARGS, e::kCtTerminationMode);
    }
    if (get_num_args() < e::channel_block(num_channels())) {
      fail(KernelFaultCode::BAD_ARGS, get_num_args());
    }
    termination_semaphore_ = get_semaphore(get_arg_val<uint32_t>(static_cast<int>(e::kRtTerminationSemaphoreId)));
    const bool bounded = cfg_.termination_mode == e::kTerminationMessageCountReached;
    for (uint32_t c = 0; c < num_channels(); ++c) {
      const int b = static_cast<int>(e::channel_block(c));
      ChannelRuntime& rt = runtime_[c];
      rt = ChannelRuntime{};
      const uint32_t worker_semaphore = get_semaphore<ProgrammableCoreType::TENSIX>(
          get_arg_val<uint32_t>(b + static_cast<int>(e::kChannelWorkerSemaphoreId)));
      rt.worker_semaphore_noc_addr = get_noc_addr(get_arg_val<uint32_t>(b + static_cast<int>(e::kChannelWorkerNocX)),
                                                  get_arg_val<uint32_t>(b + static_cast<int>(e::kChannelWorkerNocY)),
                                                  worker_semaphore, noc_);
      rt.edm_semaphore_address = get_semaphore(get_arg_val<uint32_t>(b + static_cast<int>(e::kChannelEdmSemaphoreId)));
      rt.limit = LegacyMessageLimit{bounded, get_arg_val<uint32_t>(b + static_cast<int>(e::kChannelNumMessages))};
    }
  }

  void initialise() {
    for (uint32_t c = 0; c < num_channels(); ++c) {
      l1_write_bytes(layout_.ack_mailbox(c), kZeroWord, sizeof(kZeroWord));
      l1_write_bytes(layout_.ack_staging(c), kZeroWord, sizeof(kZeroWord));
      if (!is_sender(c)) {
        for (uint32_t b = 0; b < cfg_.num_buffers_per_channel; ++b) {
          l1_write_u32(layout_.sync(c, b), 0);
        }
      }
      senders_[c] = LegacySenderChannel{};
      receivers_[c] = LegacyReceiverChannel{};
    }
    watch_words();
    set_status(api::EdmStatus::STARTED);
  }

  // What the EDM acts on: its status, handshake and ack words, the channels' and the
  // termination semaphores, and the receive buffers' sync words. Payload landing in a sender
  // channel's buffer is announced by the channel semaphore, so it need not wake the EDM.
  void watch_words() {
    l1_activity_watch_range(layout_.status, layout_.ack_staging(num_channels() - 1) + api::kEthWordBytes);
    l1_activity_watch_range(termination_semaphore_, termination_semaphore_ + sizeof(uint32_t));
    for (uint32_t c = 0; c < num_channels(); ++c) {
      const uint32_t sem = runtime_[c].edm_semaphore_address;
      if (sem != termination_semaphore_) {
        l1_activity_watch_range(sem, sem + sizeof(uint32_t));
      }
      if (!is_sender(c)) {
        for (uint32_t b = 0; b < cfg_.num_buffers_per_channel; ++b) {
          l1_activity_watch_range(layout_.sync(c, b), layout_.sync(c, b) + api::kEthChannelSyncBytes);
        }
      }
    }
  }

  void set_status(api::EdmStatus status) { l1_write_u32(layout_.status, static_cast<uint32_t>(status)); }

  // An idle pass parks until a watched word is written (initialise()), or, when a send waited
  // for the TX queue, until it has room: nothing else changes what the next pass does (the
  // loop waits for no NoC completion).
  void main_loop() {
    IdlePassCounter counter;
    for (;; counter.next_pass()) {
      const bool terminating = cfg_.termination_mode == legacy_edm::kTerminationWorkerInitiated &&
                               l1_read_u32(termination_semaphore_) >= num_channels();
      bool progress = false;
      bool all_done = true;
      for (uint32_t c = 0; c < num_channels(); ++c) {
        progress |= is_sender(c) ? service_sender(c, terminating) : service_receiver(c);
        progress |= send_ack(c);
        all_done &= channel_done(c, terminating);
      }
      if (all_done) {
        return;
      }
      if (progress) {
        txq_blocked_ = false;
        counter.progress();
        continue;
      }
      counter.idle_pass();
      if (counter.routing_due(cfg_.switch_interval)) {
        run_routing();
      }
      counter.parked(wait_for_activity(WAKE_ON_L1_WRITE | (txq_blocked_ ? WAKE_ON_TXQ_READY : 0u)));
      txq_blocked_ = false;
    }
  }

  bool channel_done(uint32_t c, bool terminating) const {
    if (runtime_[c].acks_dirty) {
      return false;
    }
    return is_sender(c) ? legacy_sender_done(senders_[c], runtime_[c].limit, terminating)
                        : legacy_receiver_done(receivers_[c], runtime_[c].limit, terminating);
  }

  // ---- Sender channels -----------------------------------------------------------------------
  bool service_sender(uint32_t c, bool terminating) {
    LegacySenderChannel& s = senders_[c];
    ChannelRuntime& rt = runtime_[c];
    bool progress = false;
    LegacyAckWord ack{};
    l1_read_bytes(layout_.ack_mailbox(c), &ack, sizeof(ack));
    if (ack.first_level != s.first_acked || ack.completions != s.completed) {
      s.first_acked = ack.first_level;
      s.completed = ack.completions;
      progress = true;
    }
    const uint32_t filled = l1_read_u32(rt.edm_semaphore_address);
    if (filled != s.filled) {
      s.filled = filled;
      if (legacy_sender_worker_overran(s)) {
        fail(KernelFaultCode::WORKER_PROTOCOL_VIOLATION, c);
      }
      progress = true;
    }
    if (legacy_sender_can_send(s, cfg_.num_buffers_per_channel)) {
      if (eth_txq_is_busy()) {
        txq_blocked_ = true;
      } else {
        send_buffer(c);
        progress = true;
      }
    }
    if (legacy_sender_should_signal_worker(s, cfg_.num_buffers_per_channel, rt.limit, terminating)) {
      noc_semaphore_inc(rt.worker_semaphore_noc_addr, 1, noc_);
      s.signaled += 1;
      progress = true;
    }
    return progress;
  }

  void send_buffer(uint32_t c) {
    LegacySenderChannel& s = senders_[c];
    const uint32_t index = s.sent % cfg_.num_buffers_per_channel;
    const uint32_t peer = legacy_edm_peer_channel(cfg_, c);
    const EthChannelSync sync{cfg_.buffer_size_bytes, 0, c, s.sent};
    l1_write_bytes(layout_.sync(c, index), &sync, sizeof(sync));
    // Payload and sync word in one send (REFERENCE §5 "All-gather sizing").
    eth_send_bytes(layout_.buffer(c, index), layout_.buffer(peer, index),
                   cfg_.buffer_size_bytes + api::kEthChannelSyncBytes);
    s.sent += 1;
  }

  // ---- Receiver channels ---------------------------------------------------------------------
  bool service_receiver(uint32_t c) {
    LegacyReceiverChannel& r = receivers_[c];
    ChannelRuntime& rt = runtime_[c];
    bool progress = false;
    if (legacy_receiver_may_accept(r, cfg_.num_buffers_per_channel)) {
      const uint32_t index = r.arrived % cfg_.num_buffers_per_channel;
      if (l1_read_u32(layout_.sync(c, index)) != 0) {
        r.arrived += 1;
        rt.ack_out.first_level = r.arrived;
        rt.acks_dirty = true;
        progress = true;
      }
    }
    const uint32_t pulled = l1_read_u32(rt.edm_semaphore_address);
    if (pulled != r.pulled) {
      r.pulled = pulled;
      if (legacy_receiver_worker_overran(r)) {
        fail(KernelFaultCode::WORKER_PROTOCOL_VIOLATION, c);
      }
      progress = true;
    }
    while (r.completed != r.pulled) {
      l1_write_u32(layout_.sync(c, r.completed % cfg_.num_buffers_per_channel), 0);
      r.completed += 1;
      rt.ack_out.completions = r.completed;
      rt.acks_dirty = true;
      progress = true;
    }
    if (legacy_receiver_should_signal_worker(r)) {
      noc_semaphore_inc(rt.worker_semaphore_noc_addr, 1, noc_);
      r.signaled += 1;
      progress = true;
    }
    return progress;
  }

  bool send_ack(uint32_t c) {
    ChannelRuntime& rt = runtime_[c];
    if (!rt.acks_dirty) {
      return false;
    }
    if (eth_txq_is_busy()) {
      txq_blocked_ = true;
      return false;
    }
    l1_write_bytes(layout_.ack_staging(c), &rt.ack_out, sizeof(rt.ack_out));
    eth_send_bytes(layout_.ack_staging(c), layout_.ack_mailbox(legacy_edm_peer_channel(cfg_, c)), sizeof(rt.ack_out));
    rt.acks_dirty = false;
    return true;
  }

  static constexpr uint32_t kZeroWord[4] = {0, 0, 0, 0};

  LegacyEdmConfig cfg_;
  LegacyEdmL1Layout layout_;
  uint8_t noc_;
  uint32_t termination_semaphore_ = 0;
  bool txq_blocked_ = false;  // since the last park or progress, a send waited for the TX queue
  ChannelRuntime runtime_[legacy_edm::kMaxChannels]{};
  LegacySenderChannel senders_[legacy_edm::kMaxChannels]{};
  LegacyReceiverChannel receivers_[legacy_edm::kMaxChannels]{};
};

}  // namespace
}  // namespace cclmesh::kernels

void kernel_main_legacy_edm() {
  using namespace cclmesh::kernels;
  LegacyEdm edm(read_legacy_edm_config(ct_arg));
  edm.run();
}
