// The legacy EDM's channel bookkeeping and L1 layout (kernels/legacy_edm/legacy_edm_logic.hpp,
// kernel_args.hpp), with plain counters.
#include <gtest/gtest.h>

#include <cstdint>

#include "kernels/host/kernel_args_builder.hpp"
#include "kernels/kernel_args.hpp"
#include "kernels/legacy_edm/legacy_edm_logic.hpp"

namespace {

using namespace cclmesh;
using kernels::LegacyMessageLimit;
using kernels::LegacyReceiverChannel;
using kernels::LegacySenderChannel;

constexpr LegacyMessageLimit kUnbounded{false, 0};

TEST(LegacyEdmLogic, SenderAnnouncesOneBufferAtATime) {
  LegacySenderChannel s{};
  EXPECT_TRUE(kernels::legacy_sender_should_signal_worker(s, 2, kUnbounded, false));
  s.signaled = 1;  // announced, worker not done yet
  EXPECT_FALSE(kernels::legacy_sender_should_signal_worker(s, 2, kUnbounded, false));
  s.filled = 1;
  EXPECT_TRUE(kernels::legacy_sender_can_send(s, 2));
  EXPECT_TRUE(kernels::legacy_sender_should_signal_worker(s, 2, kUnbounded, false));  // 1 of 2 buffers in use
  s.signaled = 2;
  s.filled = 2;
  EXPECT_FALSE(kernels::legacy_sender_should_signal_worker(s, 2, kUnbounded, false));  // both in use
  s.sent = 2;
  EXPECT_FALSE(kernels::legacy_sender_can_send(s, 2));
  s.first_acked = 1;  // the peer has the first: its local buffer is free
  EXPECT_TRUE(kernels::legacy_sender_should_signal_worker(s, 2, kUnbounded, false));
  EXPECT_FALSE(kernels::legacy_sender_should_signal_worker(s, 2, kUnbounded, true));  // terminating
  EXPECT_FALSE(kernels::legacy_sender_should_signal_worker(s, 2, LegacyMessageLimit{true, 2}, false));
}

TEST(LegacyEdmLogic, SenderWaitsForTheRemoteBuffer) {
  LegacySenderChannel s{3, 3, 2, 2, 0};
  // Two sent, none completed, two buffers: the third must wait for level 2.
  EXPECT_FALSE(kernels::legacy_sender_can_send(s, 2));
  s.completed = 1;
  EXPECT_TRUE(kernels::legacy_sender_can_send(s, 2));
}

TEST(LegacyEdmLogic, SenderDoneNeedsEveryCompletion) {
  LegacySenderChannel s{2, 2, 2, 2, 1};
  EXPECT_FALSE(kernels::legacy_sender_done(s, LegacyMessageLimit{true, 2}, false));
  s.completed = 2;
  EXPECT_TRUE(kernels::legacy_sender_done(s, LegacyMessageLimit{true, 2}, false));
  EXPECT_FALSE(kernels::legacy_sender_done(s, kUnbounded, false));
  EXPECT_TRUE(kernels::legacy_sender_done(s, kUnbounded, true));
  s.filled = 3;
  s.signaled = 3;
  EXPECT_FALSE(kernels::legacy_sender_done(s, kUnbounded, true));
}

TEST(LegacyEdmLogic, OverrunDetection) {
  LegacySenderChannel s{1, 2, 0, 0, 0};
  EXPECT_TRUE(kernels::legacy_sender_worker_overran(s));
  s.signaled = 2;
  EXPECT_FALSE(kernels::legacy_sender_worker_overran(s));
  LegacyReceiverChannel r{1, 1, 2, 0};
  EXPECT_TRUE(kernels::legacy_receiver_worker_overran(r));
  EXPECT_TRUE(kernels::counter_ahead(1, 0xFFFFFFFFu));  // wrap
  EXPECT_FALSE(kernels::counter_ahead(0xFFFFFFFFu, 1));
}

TEST(LegacyEdmLogic, ReceiverSignalsAndAccepts) {
  LegacyReceiverChannel r{};
  EXPECT_TRUE(kernels::legacy_receiver_may_accept(r, 2));
  EXPECT_FALSE(kernels::legacy_receiver_should_signal_worker(r));
  r.arrived = 2;
  EXPECT_FALSE(kernels::legacy_receiver_may_accept(r, 2));  // both buffers hold unread messages
  EXPECT_TRUE(kernels::legacy_receiver_should_signal_worker(r));
  r.signaled = 1;
  EXPECT_FALSE(kernels::legacy_receiver_should_signal_worker(r));  // worker still reading
  r.pulled = 1;
  EXPECT_TRUE(kernels::legacy_receiver_should_signal_worker(r));
  r.completed = 1;
  EXPECT_TRUE(kernels::legacy_receiver_may_accept(r, 2));
  EXPECT_FALSE(kernels::legacy_receiver_done(r, LegacyMessageLimit{true, 2}, false));
  r = LegacyReceiverChannel{2, 2, 2, 2};
  EXPECT_TRUE(kernels::legacy_receiver_done(r, LegacyMessageLimit{true, 2}, false));
  EXPECT_TRUE(kernels::legacy_receiver_done(r, kUnbounded, true));
  EXPECT_FALSE(kernels::legacy_receiver_done(r, kUnbounded, false));
}

TEST(LegacyEdmLayout, ChannelsBuffersAndPeers) {
  const kernels::LegacyEdmConfig cfg{true, 0x18004, 2, 1, 3, 4096, 0, 1000};
  const kernels::LegacyEdmL1Layout l = kernels::make_legacy_edm_layout(cfg);
  EXPECT_EQ(l.status, 0x18010u);
  EXPECT_EQ(l.num_channels, 3u);
  EXPECT_EQ(l.buffers_base % 32, 0u);
  EXPECT_GE(l.buffers_base, l.ack_staging(2) + 16);
  EXPECT_EQ(l.buffer_stride_bytes, 4128u);  // 4096 + 16 rounded to 32
  EXPECT_EQ(l.sync(1, 2), l.buffer(1, 2) + 4096);
  EXPECT_EQ(l.buffer(2, 0), l.buffer(1, 2) + l.buffer_stride_bytes);
  EXPECT_EQ(l.end, l.buffers_base + 9 * 4128);
  // Senders 0, 1 pair with the peer's receivers 1, 2 (the peer has 1 sender, 2 receivers);
  // our receiver 2 pairs with the peer's sender 0.
  EXPECT_EQ(kernels::legacy_edm_peer_channel(cfg, 0), 1u);
  EXPECT_EQ(kernels::legacy_edm_peer_channel(cfg, 1), 2u);
  EXPECT_EQ(kernels::legacy_edm_peer_channel(cfg, 2), 0u);
  const kernels::LegacyEdmConfig peer{false, 0x18004, 1, 2, 3, 4096, 0, 1000};
  EXPECT_EQ(kernels::legacy_edm_peer_channel(peer, kernels::legacy_edm_peer_channel(cfg, 1)), 1u);
}

TEST(LegacyEdmArgs, BuilderAndWorkerBlocks) {
  const kernels::LegacyEdmConfig cfg{false, 0x18000, 1, 1, 2, 2048, kernels::legacy_edm::kTerminationWorkerInitiated,
                                     100};
  const kargs::KernelArgs args = kargs::build_legacy_edm_args(cfg, 5, {{{1, 2}, 0, 1, 10}, {{3, 4}, 2, 3, 10}});
  ASSERT_EQ(args.compile_time.size(), kernels::legacy_edm::kNumCompileTimeArgs);
  const auto back = kernels::read_legacy_edm_config([&](uint32_t i) { return args.compile_time.at(i); });
  EXPECT_EQ(back.num_buffers_per_channel, 2u);
  EXPECT_EQ(back.termination_mode, kernels::legacy_edm::kTerminationWorkerInitiated);
  EXPECT_EQ(args.runtime[kernels::legacy_edm::kRtTerminationSemaphoreId], 5u);
  EXPECT_EQ(args.runtime[kernels::legacy_edm::channel_block(1) + kernels::legacy_edm::kChannelWorkerNocY], 4u);
  EXPECT_THROW(kargs::build_legacy_edm_args(cfg, 5, {{{1, 2}, 0, 1, 10}}), kargs::KernelArgsError);
  kernels::LegacyEdmConfig odd = cfg;
  odd.buffer_size_bytes = 100;
  EXPECT_THROW(kargs::build_legacy_edm_args(odd, 5, {{{1, 2}, 0, 1, 10}, {{3, 4}, 2, 3, 10}}), kargs::KernelArgsError);

  const api::LegacyEdmChannelConfig w = kargs::legacy_edm_worker_channel(cfg, 1, 9, 0, 3, 2);
  const auto l = kernels::make_legacy_edm_layout(cfg);
  EXPECT_EQ(w.buffer_base_address, l.buffer(1, 0));
  EXPECT_EQ(w.buffer_stride_bytes, l.buffer_stride_bytes);
  EXPECT_EQ(w.num_buffers, 2u);
  uint32_t words[api::kLegacyEdmChannelArgWords] = {};
  api::write_legacy_edm_channel_config(w, words);
  EXPECT_EQ(api::read_legacy_edm_channel_config(words).edm_semaphore_id, 3u);
  EXPECT_THROW(kargs::legacy_edm_worker_channel(cfg, 2, 9, 0, 3, 2), kargs::KernelArgsError);
}

}  // namespace
