#pragma once
// Completions counted by their times instead of by an event each: a NoC port's write flushes,
// write acks and atomic acks are known in advance (when a packet departs or lands), so the
// counter "how many are done by now" is derived from the times, and an event is scheduled
// only when someone waits for all of them (NocPort arms an alarm). Queries and changes must
// come in non-decreasing simulated time (`now`), as the engine runs.

#include <cstdint>
#include <cstddef>
#include <vector>

#include "sim/engine/check.hpp"
#include "sim/engine/time.hpp"

namespace cclmesh::sim {

class CompletionClock {
 public:
  // One more transaction whose completion time is not known yet.
  void issue(SimTime now) {
    retire(now);
    ++issued_;
    ++unknown_;
  }
  // An issued transaction completes at `at` (>= now). Returns true when it is due at once
  // (`at` is now: no latency left, as on zero-latency what-if hardware) and was the last one
  // outstanding: everything became done now, in this event, after whatever ran earlier at the
  // same time. Nothing is due in the clock for such a change, so the caller must report it as
  // it happens (NocPort::done_at_once); a completion at a later time is found by its alarm.
  [[nodiscard]] bool resolve(SimTime at, SimTime now) {
    retire(now);
    CCLMESH_CHECK(unknown_ > 0, "a completion time resolved for no issued transaction");
    --unknown_;
    if (at <= now) {  // due at once
      if (pending() != 0 || unknown_ != 0) return false;
      last_all_done_ = now;
      return true;
    }
    auto it = times_.end();
    while (it != times_.begin() + static_cast<std::ptrdiff_t>(head_) && *std::prev(it) > at) --it;  // nearly always the back
    times_.insert(it, at);
    return false;
  }

  std::uint64_t issued() const { return issued_; }
  std::uint64_t completed(SimTime now) {
    retire(now);
    return issued_ - unknown_ - pending();
  }
  bool all_done(SimTime now) {
    retire(now);
    return unknown_ == 0 && pending() == 0;
  }
  // Whether every transaction issued so far has a known time, and the latest of them.
  bool all_known() const { return unknown_ == 0; }
  SimTime last_time() const { return pending() == 0 ? last_all_done_ : times_.back(); }
  // The latest time <= now at which everything issued was done (SimTime::zero() if never).
  SimTime last_all_done(SimTime now) {
    retire(now);
    return last_all_done_;
  }

 private:
  // Completions due by `now` happen, in time order; the state between two changes is known,
  // so when the last one retires with nothing unknown, that is when all became done.
  void retire(SimTime now) {
    while (head_ < times_.size() && times_[head_] <= now) {
      const SimTime t = times_[head_++];
      if (head_ == times_.size()) {
        times_.clear();  // keeps its capacity: no allocation per transaction
        head_ = 0;
        if (unknown_ == 0) last_all_done_ = t;
      }
    }
  }
  std::size_t pending() const { return times_.size() - head_; }

  std::uint64_t issued_ = 0;
  std::uint64_t unknown_ = 0;
  std::vector<SimTime> times_;  // [head_, end): known, not yet passed, ascending
  std::size_t head_ = 0;
  SimTime last_all_done_;
};

}  // namespace cclmesh::sim
