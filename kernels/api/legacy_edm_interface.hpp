#pragma once
// Worker side of the legacy per-op EDM (REFERENCE §5): a worker pushing into one EDM sender
// channel, or pulling from one EDM receiver channel. Each channel serves exactly one worker;
// the EDM announces one buffer at a time on the worker's semaphore (+1), and the worker
// answers on the EDM's channel semaphore (+1) once it has written (push) or read (pull) it.
// Buffers are used in ring order on both sides, so the worker tracks the index itself.
//
//   push: wait_for_empty_buffer(); send(src, bytes)          (write, then +1, same NoC)
//   pull: wait_for_payload(); read_into(dst, bytes); release()
//   WORKER_INITIATED termination: signal_legacy_edm_termination() once per channel, after the
//   channel's last message (the EDM waits for one signal per channel).
//
// Device-clean: <cstdint> plus kernels/api only.

#include <cstdint>

#include "kernels/api/dataflow_api.hpp"
#include "kernels/api/fabric_connection.hpp"

namespace cclmesh::api {

// The worker's argument block for one EDM channel (kLegacyEdmChannelArgWords words).
namespace legacy_edm_channel_arg {
constexpr uint32_t kEdmNocX = 0;  // the EDM's ethernet core, NoC0
constexpr uint32_t kEdmNocY = 1;
constexpr uint32_t kBufferBaseAddress = 2;  // buffer 0 of the EDM channel
constexpr uint32_t kNumBuffers = 3;
constexpr uint32_t kBufferStrideBytes = 4;
constexpr uint32_t kEdmSemaphoreId = 5;     // per-program semaphore on the ERISC
constexpr uint32_t kWorkerSemaphoreId = 6;  // per-program semaphore on this worker
constexpr uint32_t kNumWords = 7;
}  // namespace legacy_edm_channel_arg
constexpr uint32_t kLegacyEdmChannelArgWords = legacy_edm_channel_arg::kNumWords;

struct LegacyEdmChannelConfig {
  uint32_t edm_noc_x;
  uint32_t edm_noc_y;
  uint32_t buffer_base_address;
  uint32_t num_buffers;
  uint32_t buffer_stride_bytes;
  uint32_t edm_semaphore_id;
  uint32_t worker_semaphore_id;
};

constexpr LegacyEdmChannelConfig read_legacy_edm_channel_config(const uint32_t* w) {
  namespace a = legacy_edm_channel_arg;
  return LegacyEdmChannelConfig{w[a::kEdmNocX],           w[a::kEdmNocY],          w[a::kBufferBaseAddress],
                                w[a::kNumBuffers],        w[a::kBufferStrideBytes], w[a::kEdmSemaphoreId],
                                w[a::kWorkerSemaphoreId]};
}

constexpr void write_legacy_edm_channel_config(const LegacyEdmChannelConfig& c, uint32_t* w) {
  namespace a = legacy_edm_channel_arg;
  w[a::kEdmNocX] = c.edm_noc_x;
  w[a::kEdmNocY] = c.edm_noc_y;
  w[a::kBufferBaseAddress] = c.buffer_base_address;
  w[a::kNumBuffers] = c.num_buffers;
  w[a::kBufferStrideBytes] = c.buffer_stride_bytes;
  w[a::kEdmSemaphoreId] = c.edm_semaphore_id;
  w[a::kWorkerSemaphoreId] = c.worker_semaphore_id;
}

class LegacyEdmWorkerChannel {
 public:
  LegacyEdmWorkerChannel(const LegacyEdmChannelConfig& config, uint8_t noc)
      : config_(config),
        noc_(noc),
        worker_semaphore_(get_semaphore(config.worker_semaphore_id)),
        edm_semaphore_noc_addr_(get_noc_addr(config.edm_noc_x, config.edm_noc_y,
                                             get_semaphore<ProgrammableCoreType::ACTIVE_ETH>(config.edm_semaphore_id),
                                             noc)) {}

  static LegacyEdmWorkerChannel build_from_args(uint32_t& arg_idx, uint8_t noc) {
    const LegacyEdmChannelConfig c = read_legacy_edm_channel_config(get_arg_ptr(static_cast<int>(arg_idx)));
    arg_idx += kLegacyEdmChannelArgWords;
    return LegacyEdmWorkerChannel(c, noc);
  }

  uint32_t buffer_index() const { return index_; }
  // The EDM has announced a buffer (push: empty; pull: holding a payload) that the worker has
  // not consumed yet: the next wait returns at once.
  bool signal_pending() const { return l1_read_u32(worker_semaphore_) != 0; }
  uint64_t current_buffer_noc_addr() const {
    return get_noc_addr(config_.edm_noc_x, config_.edm_noc_y,
                        config_.buffer_base_address + index_ * config_.buffer_stride_bytes, noc_);
  }

  // ---- Push (EDM sender channel) ----
  void wait_for_empty_buffer() { consume_signal(); }
  void send(uint32_t src_l1_address, uint32_t size_bytes) {
    noc_async_write(src_l1_address, current_buffer_noc_addr(), size_bytes, noc_);
    noc_semaphore_inc(edm_semaphore_noc_addr_, 1, noc_);
    advance();
  }

  // ---- Pull (EDM receiver channel) ----
  void wait_for_payload() { consume_signal(); }
  void read_into(uint32_t dst_l1_address, uint32_t size_bytes) {
    noc_async_read(current_buffer_noc_addr(), dst_l1_address, size_bytes, noc_);
    noc_async_read_barrier(noc_);
  }
  void release() {
    noc_semaphore_inc(edm_semaphore_noc_addr_, 1, noc_);
    advance();
  }

 private:
  void consume_signal() {
    noc_semaphore_wait(l1_word_ptr(worker_semaphore_), 1);
    noc_semaphore_set(l1_word_ptr(worker_semaphore_), 0);
  }
  void advance() { index_ = index_ + 1 == config_.num_buffers ? 0 : index_ + 1; }

  LegacyEdmChannelConfig config_;
  uint8_t noc_;
  uint32_t worker_semaphore_;
  uint64_t edm_semaphore_noc_addr_;
  uint32_t index_ = 0;
};

// WORKER_INITIATED termination: +1 on the EDM's termination semaphore (once per channel).
inline void signal_legacy_edm_termination(uint32_t edm_noc_x, uint32_t edm_noc_y, uint32_t termination_semaphore_id,
                                          uint8_t noc) {
  noc_semaphore_inc(get_noc_addr(edm_noc_x, edm_noc_y,
                                 get_semaphore<ProgrammableCoreType::ACTIVE_ETH>(termination_semaphore_id), noc),
                    1, noc);
}

}  // namespace cclmesh::api
