#pragma once
// The legacy per-op EDM's channel bookkeeping (REFERENCE §5) as pure functions of counters, so
// it is unit-tested with plain inputs.
//
// Every quantity is a cumulative count since the op started (uint32, compared by
// difference). Buffer k of a channel is used by messages k, k + B, k + 2B, ... on both ends of
// the link, so a sender's local buffer and the peer receiver's buffer advance in step.
//
// Sender channel (worker -> EDM -> link), worker push:
//   signaled     buffers announced free to the worker (EDM +1 on the worker semaphore)
//   filled       buffers the worker filled (its +1s on the EDM channel semaphore)
//   sent         buffers sent over the link
//   first_acked  level-1 acks: the peer received them; the local buffer is free again
//   completed    level-2 acks: the peer's worker pulled them; the peer buffer is free again
// The worker is announced one buffer at a time (it waits for 1, then resets to 0, so a second
// increment before its reset would be lost): signal only when the worker has filled every
// buffer it was given and a local buffer is free.
//
// Receiver channel (link -> EDM -> worker), worker pull:
//   arrived      buffers whose sync word showed data (level-1 ack count)
//   signaled     buffers announced to the worker
//   pulled       buffers the worker has read (its +1s on the EDM channel semaphore)
//   completed    buffers cleared and level-2 acked
//
// Device-clean: <cstdint> and kernels/ headers only.

#include <cstdint>

namespace cclmesh::kernels {

struct LegacySenderChannel {
  uint32_t signaled;
  uint32_t filled;
  uint32_t sent;
  uint32_t first_acked;
  uint32_t completed;
};

struct LegacyReceiverChannel {
  uint32_t arrived;
  uint32_t signaled;
  uint32_t pulled;
  uint32_t completed;
};

// Message limit of a channel: the count in MESSAGE_COUNT_REACHED mode, none otherwise.
struct LegacyMessageLimit {
  bool bounded;
  uint32_t messages;
  constexpr bool allows(uint32_t count) const { return !bounded || count < messages; }
};

// ---- Sender ----------------------------------------------------------------------------------
// `a` is ahead of `b` (cumulative counters, wrap-safe).
constexpr bool counter_ahead(uint32_t a, uint32_t b) { return a != b && a - b < 0x80000000u; }

// The worker filled a buffer it was not given.
constexpr bool legacy_sender_worker_overran(const LegacySenderChannel& s) { return counter_ahead(s.filled, s.signaled); }

constexpr bool legacy_sender_should_signal_worker(const LegacySenderChannel& s, uint32_t num_buffers,
                                                  LegacyMessageLimit limit, bool terminating) {
  return !terminating && s.signaled == s.filled && s.filled - s.first_acked < num_buffers && limit.allows(s.signaled);
}

constexpr bool legacy_sender_can_send(const LegacySenderChannel& s, uint32_t num_buffers) {
  return s.sent != s.filled && s.sent - s.completed < num_buffers;
}

// Every message the worker gave the EDM went out and came back completed.
constexpr bool legacy_sender_idle(const LegacySenderChannel& s) { return s.sent == s.filled && s.completed == s.sent; }

constexpr bool legacy_sender_done(const LegacySenderChannel& s, LegacyMessageLimit limit, bool terminating) {
  if (limit.bounded) {
    return s.completed == limit.messages && legacy_sender_idle(s);
  }
  return terminating && legacy_sender_idle(s);
}

// ---- Receiver --------------------------------------------------------------------------------
// Only look for an arrival in a buffer the worker has released: a full ring's next buffer
// still holds an unconsumed message.
constexpr bool legacy_receiver_may_accept(const LegacyReceiverChannel& r, uint32_t num_buffers) {
  return r.arrived - r.completed < num_buffers;
}

constexpr bool legacy_receiver_should_signal_worker(const LegacyReceiverChannel& r) {
  return r.signaled == r.pulled && r.signaled != r.arrived;
}

constexpr bool legacy_receiver_worker_overran(const LegacyReceiverChannel& r) { return counter_ahead(r.pulled, r.signaled); }

constexpr bool legacy_receiver_idle(const LegacyReceiverChannel& r) {
  return r.arrived == r.signaled && r.signaled == r.pulled && r.pulled == r.completed;
}

constexpr bool legacy_receiver_done(const LegacyReceiverChannel& r, LegacyMessageLimit limit, bool terminating) {
  if (limit.bounded) {
    return r.completed == limit.messages && legacy_receiver_idle(r);
  }
  return terminating && legacy_receiver_idle(r);
}

// The ack word a receiver channel sends into its peer sender channel's ack mailbox.
struct LegacyAckWord {
  uint32_t first_level;
  uint32_t completions;
  uint32_t reserved[2];
};
static_assert(sizeof(LegacyAckWord) == 16, "the ack word is one ethernet word");

}  // namespace cclmesh::kernels
