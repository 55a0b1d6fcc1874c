#pragma once
// One core's interface to one NoC: its NIU (injection and absorption servers), its request
// slots, and the transaction counters behind the barriers (tt-metal noc_async_read_barrier,
// noc_async_write_barrier, noc_async_writes_flushed, noc_async_atomic_barrier).

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/engine/fiber.hpp"
#include "sim/engine/inline_task.hpp"
#include "sim/engine/ring_queue.hpp"
#include "sim/engine/wait_queue.hpp"
#include "sim/model/completion_clock.hpp"
#include "sim/model/core_coord.hpp"
#include "sim/model/l1_activity.hpp"
#include "sim/model/noc_server.hpp"
#include "sim/model/packet_resource.hpp"

namespace cclmesh::sim {

struct NocCounters {
  std::uint64_t reads_issued = 0;
  std::uint64_t reads_acked = 0;               // response landed in the requester's L1
  std::uint64_t nonposted_writes_issued = 0;
  std::uint64_t nonposted_writes_acked = 0;    // write ack back at the requester
  std::uint64_t writes_issued = 0;             // posted and non-posted
  std::uint64_t writes_flushed = 0;            // last byte left the requester's NIU
  std::uint64_t atomics_issued = 0;
  std::uint64_t atomics_acked = 0;
};

enum class NocBarrierKind : std::uint8_t { Reads, Writes, WritesFlushed, Atomics };
inline constexpr int kNocBarrierKinds = 4;

// Transaction ids per NoC (REFERENCE 1.1: 16 per NoC, [TTSIM]): a write may be tagged with one,
// and its flush and ack are then also counted per id, so a kernel can tell when one group of
// its writes has left (or landed) while later groups are still in flight (tt-metal
// noc_async_write_one_packet_with_trid and the per-id status registers).
inline constexpr std::uint32_t kNocTransactionIds = 16;

class NocPort;

// `co_await port.barrier(kind)` / `block_on(...)`: parks until every transaction of that kind
// issued so far on this core and NoC is complete.
class NocBarrier {
 public:
  NocBarrier(NocPort& port, NocBarrierKind kind) : port_(port), kind_(kind) {}
  NocBarrier(const NocBarrier&) = delete;
  NocBarrier& operator=(const NocBarrier&) = delete;
  bool await_ready() const;
  void await_suspend(std::coroutine_handle<>);
  void await_resume() const {}

 private:
  NocPort& port_;
  NocBarrierKind kind_;
  WaitRecord record_;
};

// Reads complete with their data landing (an event anyway). Write flushes, write acks and
// atomic acks are counted by time (CompletionClock): their events are scheduled only while a
// barrier or a parked polling kernel waits for all of a kind (one alarm at the time the last
// one completes), so a write nobody waits for costs two events (depart, land), not four.
class NocPort final : public WaitTarget, public ActivitySource {
 public:
  NocPort(std::string owner, NocId noc, Bandwidth inject_rate, Bandwidth absorb_rate, std::int32_t request_slots);
  NocPort(const NocPort&) = delete;
  NocPort& operator=(const NocPort&) = delete;

  // The counters as of now (tagged writes are counted here too, as well as per id).
  NocCounters counters() const;
  // Every write tagged with `trid` so far has left the NIU (tt-metal
  // ncrisc_noc_nonposted_write_with_transaction_id_sent) / is acked (..._flushed, which in
  // tt-metal means no request of the id outstanding). True for an id never used. A `trid` of
  // kNocTransactionIds or more fails a check.
  bool trid_writes_flushed(std::uint32_t trid) const;
  bool trid_writes_acked(std::uint32_t trid) const;
  bool complete(NocBarrierKind kind) const;
  NocBarrier barrier(NocBarrierKind kind) { return NocBarrier{*this, kind}; }
  void barrier_blocking(NocBarrierKind kind) { block_on(barrier(kind)); }

  // Told when a kind of this port's transactions is all complete (the core's L1 activity): a
  // kernel can only observe completions through the complete() probes, so a completion that
  // leaves others of its kind outstanding is no news to it.
  void set_activity(L1Activity* activity) { activity_ = activity; }

  // The core cannot issue its next request before `t` (it is still writing the command
  // registers of the previous ones): request bookings start no earlier.
  void hold_issue_until(SimTime t) { issue_floor_ = std::max(issue_floor_, t); }

  Bandwidth inject_rate() const { return inject_rate_; }
  Bandwidth absorb_rate() const { return absorb_rate_; }
  const PacketResource& inject() const { return inject_; }
  const PacketResource& absorb() const { return absorb_; }

  std::string describe_wait(std::int64_t kind) const override;
  bool happened_since(ActivityKind kind, SimTime since) override;
  void want(ActivityKind kind) override;

 private:
  friend class Noc;
  friend class NocBarrier;
  // Books a request: the issue spacing, then the earliest free slot (every slot when
  // `exclusive`), held for setup plus `serialisation`. Returns when its first flit may enter the
  // NIU.
  SimTime book_request(SimTime now, SimTime issue_spacing, SimTime setup, SimTime serialisation, bool exclusive);
  // The inline-write / atomic command buffer's one request slot (Noc::issue_control).
  SimTime book_control_request(SimTime now, SimTime issue_spacing, SimTime setup, SimTime serialisation);
  // Packets issued and not yet booked on their path, by target core. Inline for the common
  // cases (one call per issue and one per booking): the last entry's target, or the first
  // target into an empty list; a search of the others out of line. Only the counts matter,
  // not the entries' order (has_unbooked() asks whether one exists).
  void note_unbooked(CoreCoord to, int change) {
    if (!unbooked_.empty() && unbooked_.back().first == to) {
      int& count = unbooked_.back().second;
      count += change;
      CCLMESH_CHECK(count >= 0, owner_ + ": more packets booked than issued");
      if (count == 0) unbooked_.pop_back();
      return;
    }
    if (unbooked_.empty() && change > 0) {
      unbooked_.emplace_back(to, change);
      return;
    }
    note_unbooked_elsewhere(to, change);
  }
  void note_unbooked_elsewhere(CoreCoord to, int change);
  bool has_unbooked(CoreCoord to) const;
  void progress(NocBarrierKind kind);
  // The clock of a kind counted by time (nullptr for reads).
  CompletionClock* clock(NocBarrierKind kind) const {
    switch (kind) {
      case NocBarrierKind::Reads: return nullptr;
      case NocBarrierKind::Writes: return &acks_;
      case NocBarrierKind::WritesFlushed: return &flushes_;
      case NocBarrierKind::Atomics: return &atomics_;
    }
    return nullptr;
  }
  // Transactions of `kind` were issued or got their completion time: if someone waits for
  // the kind, make sure an alarm goes off when all are done. Inline up to the test whether
  // anyone waits (nearly always no: it runs for every NoC completion).
  void arm(NocBarrierKind kind) {
    const auto i = static_cast<std::size_t>(kind);
    if (kind == NocBarrierKind::Reads || alarm_armed_[i] || !wanted(kind)) return;
    arm_for_waiters(kind);
  }
  // A write ack at `acked` whose landing event (`landed`, `sequence`) was skipped: the clock
  // takes the time now, and arm() treats the ack as unknown until the landing's place passes,
  // as it did while the landing was an event (which then armed again).
  void resolve_unseen_ack(SimTime acked, SimTime landed, std::uint64_t sequence);
  void unseen_ack_place_reached();
  // A completion time of `kind` resolved (clock(kind)->resolve()) and what it said: whether the
  // kind became all done at once, now. If so that is a completion event here and now, reported
  // as the alarm would report one (grant the barrier's waiters, tell the core's activity):
  // nothing is left in the clock for an alarm to go off at, and a kernel that looked at the
  // counters earlier at this same time, or parked after looking, saw it not done, and asks
  // "done since my look?" by time, which a change at the time of the look does not pass. Else
  // arm() as for any other resolution.
  void resolved(NocBarrierKind kind, bool done_at_once);
  void alarm(NocBarrierKind kind);
  void arm_for_waiters(NocBarrierKind kind);
  bool wanted(NocBarrierKind kind) const {
    const auto i = static_cast<std::size_t>(kind);
    return listener_wants_[i] || !waiters_[i].empty();
  }
  static SimTime now();

  // Per transaction id: its writes' flushes and (non-posted) acks, counted by time like the
  // port's. Allocated on the first tagged write: most cores never tag one.
  struct TridClocks {
    CompletionClock flushes;
    CompletionClock acks;
  };
  TridClocks& trid_clocks(std::uint32_t trid) const;
  void issue_trid_write(std::uint32_t trid, bool nonposted);
  void resolve_trid(std::uint32_t trid, NocBarrierKind kind, SimTime at);
  // ActivityKind::NocTridWritesFlushed: an alarm at the earliest time some id's writes are all
  // flushed, while a parked polling kernel waits for that.
  void arm_trid_alarm();
  void trid_alarm();
  bool some_trid_flushed_since(SimTime since);

  std::string owner_;
  NocId noc_;
  Bandwidth inject_rate_;
  Bandwidth absorb_rate_;
  PacketResource inject_;
  NocServer absorb_;  // serves packets in gaps (noc_server.hpp); the source NIU's two keep their order
  PacketResource inject_control_;  // inline writes and atomics (Noc::inject_control)
  std::vector<SimTime> slot_free_;
  SimTime next_issue_;
  SimTime issue_floor_;
  std::uint64_t reads_issued_ = 0;
  std::uint64_t reads_acked_ = 0;
  mutable CompletionClock acks_;     // non-posted writes
  mutable CompletionClock flushes_;  // every write
  mutable CompletionClock atomics_;
  std::array<bool, kNocBarrierKinds> listener_wants_{};  // a parked polling kernel waits for the kind
  std::array<bool, kNocBarrierKinds> alarm_armed_{};
  // The latest skipped landing place whose ack resolve_unseen_ack() took early, and whether its
  // arming event is scheduled (in that place) because someone waits.
  SimTime unseen_ack_landed_;
  std::uint64_t unseen_ack_sequence_ = 0;
  bool unseen_ack_pending_ = false;
  bool unseen_ack_scheduled_ = false;
  std::array<WaitQueue, kNocBarrierKinds> waiters_;
  L1Activity* activity_ = nullptr;
  mutable std::unique_ptr<std::array<TridClocks, kNocTransactionIds>> trids_;
  // The scans over ids (the trid alarm, "some id flushed since") visit only the ids that may
  // have writes not yet flushed: a bit is set when the id tags a write and cleared when a scan
  // finds all its writes flushed (it stays so until it tags another). The latest time a
  // cleared id became all flushed is kept, so "since" is still answered for every id.
  std::uint32_t trid_busy_ = 0;
  SimTime trid_idle_last_flushed_;
  // Visits the busy ids in ascending order; clears (and remembers) those all flushed by now.
  template <typename Visit>
  void for_each_busy_trid(Visit&& visit);
  // Packets that left their request slot while the NIU was still busy, in order (Noc::drain_niu).
  struct WaitingPacket {
    CoreCoord to;
    InlineTask start;  // std::function would allocate: the lambdas are ~60 B
  };
  RingQueue<WaitingPacket> niu_waiting_;
  bool niu_drain_scheduled_ = false;
  std::vector<std::pair<CoreCoord, int>> unbooked_;  // few targets at a time
  // Per target, when the last packet booked from this port to it is through the target's NIU;
  // and the latest such time of the port's multicasts, for every target. A later packet of
  // this port to that target starts at the target's NIU no earlier (Noc::deliver), so packets
  // from one core on one NoC to one target still arrive in order now that servers take packets
  // in gaps: an inline write or atomic leaves through its own NIU server, not behind the data
  // packets' back-pressure, and a read response is not in the NIU's line. Entries that are
  // through by engine now are reused when one is added (few targets at a time).
  SimTime& last_arrival_at(CoreCoord to, SimTime now) {
    for (auto& [core, at] : last_arrival_) {
      if (core == to) return at;
    }
    return add_last_arrival(to, now);
  }
  SimTime& add_last_arrival(CoreCoord to, SimTime now);
  std::vector<std::pair<CoreCoord, SimTime>> last_arrival_;
  SimTime multicast_last_arrival_;
  SimTime control_slot_free_;
  bool trid_listener_wants_ = false;
  SimTime trid_wanted_since_;
  std::optional<SimTime> trid_alarm_at_;  // the earliest alarm scheduled and not yet gone off
};

}  // namespace cclmesh::sim
