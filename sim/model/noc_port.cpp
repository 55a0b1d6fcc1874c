#include "sim/model/noc_port.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "sim/engine/check.hpp"
#include "sim/engine/engine.hpp"

namespace cclmesh::sim {

bool NocBarrier::await_ready() const { return port_.complete(kind_); }

void NocBarrier::await_suspend(std::coroutine_handle<>) {
  port_.waiters_[static_cast<std::size_t>(kind_)].park(record_, static_cast<std::int64_t>(kind_), &port_);
  port_.arm(kind_);
}

NocPort::NocPort(std::string owner, NocId noc, Bandwidth inject_rate, Bandwidth absorb_rate,
                 std::int32_t request_slots)
    : owner_(std::move(owner)),
      noc_(noc),
      inject_rate_(inject_rate),
      absorb_rate_(absorb_rate),
      slot_free_(static_cast<std::size_t>(request_slots)) {
  CCLMESH_CHECK(request_slots > 0, "a NoC port needs at least one request slot");
}

SimTime NocPort::now() { return Engine::current().now(); }

bool NocPort::complete(NocBarrierKind kind) const {
  if (kind == NocBarrierKind::Reads) return reads_acked_ == reads_issued_;
  return clock(kind)->all_done(now());
}

NocCounters NocPort::counters() const {
  const SimTime t = now();
  NocCounters c;
  c.reads_issued = reads_issued_;
  c.reads_acked = reads_acked_;
  c.nonposted_writes_issued = acks_.issued();
  c.nonposted_writes_acked = acks_.completed(t);
  c.writes_issued = flushes_.issued();
  c.writes_flushed = flushes_.completed(t);
  c.atomics_issued = atomics_.issued();
  c.atomics_acked = atomics_.completed(t);
  return c;
}

SimTime NocPort::book_request(SimTime now, SimTime issue_spacing, SimTime setup, SimTime serialisation,
                              bool exclusive) {
  const SimTime issue_at = std::max({now, next_issue_, issue_floor_});
  next_issue_ = issue_at + issue_spacing;
  if (exclusive) {
    const SimTime all_free = *std::max_element(slot_free_.begin(), slot_free_.end());
    const SimTime depart = std::max(issue_at, all_free) + setup;
    std::fill(slot_free_.begin(), slot_free_.end(), depart + serialisation);
    return depart;
  }
  auto slot = std::min_element(slot_free_.begin(), slot_free_.end());  // first of the earliest: deterministic
  const SimTime depart = std::max(issue_at, *slot) + setup;
  *slot = depart + serialisation;
  return depart;
}

void NocPort::progress(NocBarrierKind kind) {
  if (!complete(kind)) return;
  waiters_[static_cast<std::size_t>(kind)].grant_all();
  if (activity_ == nullptr) return;
  switch (kind) {
    case NocBarrierKind::Reads: activity_->notify(ActivityKind::NocReadsDone); break;
    case NocBarrierKind::Writes: activity_->notify(ActivityKind::NocWritesAcked); break;
    case NocBarrierKind::WritesFlushed: activity_->notify(ActivityKind::NocWritesFlushed); break;
    case NocBarrierKind::Atomics: activity_->notify(ActivityKind::NocAtomicsDone); break;
  }
}

namespace {
// The barrier kind a lazily counted activity kind stands for.
bool barrier_kind_of(ActivityKind kind, NocBarrierKind& out) {
  switch (kind) {
    case ActivityKind::NocWritesAcked: out = NocBarrierKind::Writes; return true;
    case ActivityKind::NocWritesFlushed: out = NocBarrierKind::WritesFlushed; return true;
    case ActivityKind::NocAtomicsDone: out = NocBarrierKind::Atomics; return true;
    default: return false;
  }
}
}  // namespace

bool NocPort::happened_since(ActivityKind kind, SimTime since) {
  if (kind == ActivityKind::NocTridWritesFlushed) return some_trid_flushed_since(since);
  NocBarrierKind b{};
  if (!barrier_kind_of(kind, b)) return false;
  return clock(b)->last_all_done(now()) > since;
}

void NocPort::want(ActivityKind kind) {
  if (kind == ActivityKind::NocTridWritesFlushed) {
    trid_listener_wants_ = true;
    trid_wanted_since_ = now();
    arm_trid_alarm();
    return;
  }
  NocBarrierKind b{};
  if (!barrier_kind_of(kind, b)) return;
  listener_wants_[static_cast<std::size_t>(b)] = true;
  arm(b);
}

// An alarm at the time the last known transaction of the kind completes; when it goes off
// with everything done, the waiters are granted and the core's activity notified, else it is
// set again (more were issued meanwhile). Not armed while some completion time is unknown:
// resolving it (Noc) arms again.
void NocPort::arm_for_waiters(NocBarrierKind kind) {
  const auto i = static_cast<std::size_t>(kind);
  CompletionClock* c = clock(kind);
  if (kind == NocBarrierKind::Writes && unseen_ack_pending_) {
    Engine& engine = Engine::current();
    if (!engine.has_run(unseen_ack_landed_, unseen_ack_sequence_)) {
      // Unknown until the skipped landing's place: it must run after all, to arm there.
      if (!unseen_ack_scheduled_) {
        unseen_ack_scheduled_ = true;
        engine.schedule_reserved(unseen_ack_landed_, unseen_ack_sequence_, [this] { unseen_ack_place_reached(); });
      }
      return;
    }
    unseen_ack_pending_ = false;
  }
  if (!c->all_known()) return;
  const SimTime t = now();
  if (c->all_done(t)) return;  // nothing outstanding: the next issue arms
  alarm_armed_[i] = true;
  Engine::current().schedule_at(c->last_time(), [this, kind] { alarm(kind); });
}

void NocPort::resolved(NocBarrierKind kind, bool done_at_once) {
  if (!done_at_once) {
    arm(kind);
    return;
  }
  const auto i = static_cast<std::size_t>(kind);
  // An alarm still armed is due now (everything it could wait for is done by now) and reports
  // this change when it goes off, later in this same time.
  if (alarm_armed_[i]) return;
  // Told whether or not anyone waits now: a polling kernel between its look and its park (it
  // parks later at this time) would ask happened_since() by time and miss it.
  listener_wants_[i] = false;
  progress(kind);
}

// The skipped landing's place, reached while someone waits for acks: from here its ack is
// known. With no NoC latency the ack is due at the landing, so everything may have become done
// here and now, which is reported as resolved() reports an ack due at once.
void NocPort::unseen_ack_place_reached() {
  const bool latest = Engine::current().has_run(unseen_ack_landed_, unseen_ack_sequence_);
  if (latest) unseen_ack_pending_ = false;  // else a later skipped landing took its place
  resolved(NocBarrierKind::Writes, latest && acks_.all_done(now()));
}

void NocPort::resolve_unseen_ack(SimTime acked, SimTime landed, std::uint64_t sequence) {
  // The landing was skipped because it lies ahead, so its ack is later than now.
  CCLMESH_CHECK(!acks_.resolve(acked, now()), owner_ + ": a skipped landing's ack due at once");
  // A later booking may land earlier (another target, a shorter path): keep the latest place,
  // the one after which every skipped landing's ack is known.
  if (!unseen_ack_pending_ || unseen_ack_landed_ < landed ||
      (unseen_ack_landed_ == landed && unseen_ack_sequence_ < sequence)) {
    unseen_ack_landed_ = landed;
    unseen_ack_sequence_ = sequence;
    unseen_ack_scheduled_ = false;
  }
  unseen_ack_pending_ = true;
}

void NocPort::alarm(NocBarrierKind kind) {
  const auto i = static_cast<std::size_t>(kind);
  alarm_armed_[i] = false;
  if (!complete(kind)) {
    arm(kind);
    return;
  }
  listener_wants_[i] = false;
  progress(kind);
}

// --- transaction ids ---------------------------------------------------------------------------

NocPort::TridClocks& NocPort::trid_clocks(std::uint32_t trid) const {
  CCLMESH_CHECK(trid < kNocTransactionIds, fmt::format("{} on {}: transaction id {} (the NoC has ids 0..{})", owner_,
                                                       to_string(noc_), trid, kNocTransactionIds - 1));
  if (!trids_) trids_ = std::make_unique<std::array<TridClocks, kNocTransactionIds>>();
  return (*trids_)[trid];
}

bool NocPort::trid_writes_flushed(std::uint32_t trid) const { return trid_clocks(trid).flushes.all_done(now()); }

bool NocPort::trid_writes_acked(std::uint32_t trid) const { return trid_clocks(trid).acks.all_done(now()); }

void NocPort::issue_trid_write(std::uint32_t trid, bool nonposted) {
  TridClocks& c = trid_clocks(trid);
  trid_busy_ |= 1u << trid;
  c.flushes.issue(now());
  if (nonposted) c.acks.issue(now());
}

void NocPort::resolve_trid(std::uint32_t trid, NocBarrierKind kind, SimTime at) {
  TridClocks& c = trid_clocks(trid);
  const bool done_at_once = (kind == NocBarrierKind::WritesFlushed ? c.flushes : c.acks).resolve(at, now());
  if (kind != NocBarrierKind::WritesFlushed) return;  // no kernel parks for an id's acks
  // Unlike an ack, a flush is never due at once: it is resolved when the packet departs, and its
  // bytes take at least a picosecond to leave the NIU (transfer_time rounds up), so the alarm
  // below sees every flush of an id at its time.
  CCLMESH_CHECK(!done_at_once, fmt::format("{} on {}: transaction id {}'s writes flushed the moment they departed",
                                           owner_, to_string(noc_), trid));
  if (!trid_listener_wants_) return;
  // What arm_trid_alarm() would do, without visiting the other 15 ids: while a listener waits,
  // every full scan leaves either an alarm no later than every other id's candidate time, or
  // no alarm and no candidate at all; since then the other ids can only have dropped out
  // (issued again, or all flushed by now), so the earliest candidate is before the alarm (or
  // there is no alarm) exactly when this id's time is.
  CompletionClock& flushes = c.flushes;
  if (!flushes.all_known() || flushes.all_done(now())) return;
  if (trid_alarm_at_ && *trid_alarm_at_ <= flushes.last_time()) return;
  trid_alarm_at_ = flushes.last_time();
  Engine::current().schedule_at(*trid_alarm_at_, [this] { trid_alarm(); });
}

template <typename Visit>
void NocPort::for_each_busy_trid(Visit&& visit) {
  const SimTime t = now();
  for (std::uint32_t bits = trid_busy_; bits != 0; bits &= bits - 1) {
    const auto trid = static_cast<std::uint32_t>(__builtin_ctz(bits));
    CompletionClock& flushes = (*trids_)[trid].flushes;
    if (flushes.all_done(t)) {
      trid_busy_ &= ~(1u << trid);
      trid_idle_last_flushed_ = std::max(trid_idle_last_flushed_, flushes.last_all_done(t));
      continue;
    }
    visit(flushes);
  }
}

// An id's last all-flushed time only grows, so the latest over the ids cleared from the busy
// mask (also over ids busy again since) and the busy ids' own is the latest over all ids.
bool NocPort::some_trid_flushed_since(SimTime since) {
  if (!trids_) return false;
  const SimTime t = now();
  bool found = false;
  for_each_busy_trid([&](CompletionClock& flushes) { found = found || flushes.last_all_done(t) > since; });
  return found || trid_idle_last_flushed_ > since;
}

// The earliest time an id whose writes all have known flush times becomes all flushed. An id
// with a flush time still unknown (a write not departed yet) is left out: resolving it arms
// again, and an earlier time than the alarm already set schedules one more (a later alarm
// that goes off finds nothing and re-arms or ends).
void NocPort::arm_trid_alarm() {
  if (!trid_listener_wants_ || !trids_) return;
  std::optional<SimTime> earliest;
  for_each_busy_trid([&](CompletionClock& flushes) {  // an id all flushed is no candidate
    if (!flushes.all_known()) return;
    if (!earliest || flushes.last_time() < *earliest) earliest = flushes.last_time();
  });
  if (!earliest || (trid_alarm_at_ && *trid_alarm_at_ <= *earliest)) return;
  trid_alarm_at_ = earliest;
  Engine::current().schedule_at(*earliest, [this] { trid_alarm(); });
}

void NocPort::trid_alarm() {
  const SimTime t = now();
  if (trid_alarm_at_ && *trid_alarm_at_ <= t) trid_alarm_at_.reset();
  if (!trid_listener_wants_) return;
  if (!some_trid_flushed_since(trid_wanted_since_)) {
    arm_trid_alarm();
    return;
  }
  trid_listener_wants_ = false;
  if (activity_ != nullptr) activity_->notify(ActivityKind::NocTridWritesFlushed);
}

std::string NocPort::describe_wait(std::int64_t kind) const {
  const NocCounters c = counters();
  switch (static_cast<NocBarrierKind>(kind)) {
    case NocBarrierKind::Reads:
      return fmt::format("{} read barrier on {} ({} of {} reads back)", owner_, to_string(noc_), c.reads_acked,
                         c.reads_issued);
    case NocBarrierKind::Writes:
      return fmt::format("{} write barrier on {} ({} of {} non-posted writes acked)", owner_, to_string(noc_),
                         c.nonposted_writes_acked, c.nonposted_writes_issued);
    case NocBarrierKind::WritesFlushed:
      return fmt::format("{} writes-flushed barrier on {} ({} of {} writes sent)", owner_, to_string(noc_),
                         c.writes_flushed, c.writes_issued);
    case NocBarrierKind::Atomics:
      return fmt::format("{} atomic barrier on {} ({} of {} atomics acked)", owner_, to_string(noc_), c.atomics_acked,
                         c.atomics_issued);
  }
  return owner_ + " NoC barrier";
}

}  // namespace cclmesh::sim
