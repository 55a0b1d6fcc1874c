#include "sim/model/noc_port.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "sim/engine/check.hpp"

namespace cclmesh::sim {

bool NocBarrier::await_ready() const { return port_.complete(kind_); }

void NocBarrier::await_suspend(std::coroutine_handle<>) {
  port_.waiters_[static_cast<std::size_t>(kind_)].park(record_, static_cast<std::int64_t>(kind_), &port_);
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

bool NocPort::complete(NocBarrierKind kind) const {
  switch (kind) {
    case NocBarrierKind::Reads: return counters_.reads_acked == counters_.reads_issued;
    case NocBarrierKind::Writes: return counters_.nonposted_writes_acked == counters_.nonposted_writes_issued;
    case NocBarrierKind::WritesFlushed: return counters_.writes_flushed == counters_.writes_issued;
    case NocBarrierKind::Atomics: return counters_.atomics_acked == counters_.atomics_issued;
  }
  return true;
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

std::string NocPort::describe_wait(std::int64_t kind) const {
  const NocCounters& c = counters_;
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
