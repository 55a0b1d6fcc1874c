#include "sim/model/l1_activity.hpp"

#include <fmt/format.h>

#include "sim/engine/check.hpp"
#include "sim/engine/cycle_counter.hpp"
#include "sim/engine/engine.hpp"
#include "sim/model/memory_region.hpp"

namespace cclmesh::sim {

std::string describe_activity_mask(ActivityMask mask) {
  static constexpr const char* kNames[] = {"a write to a watched L1 word", "NoC reads done", "NoC writes acked",
                                           "NoC writes flushed", "NoC atomics done", "a CB change",
                                           "TX queue room", "a write to a secondary watched L1 word",
                                           "a transaction id's NoC writes flushed"};
  static_assert(std::size(kNames) == static_cast<std::size_t>(ActivityKind::Count));
  std::string text;
  for (std::size_t k = 0; k < std::size(kNames); ++k) {
    if ((mask & (ActivityMask{1} << k)) == 0) continue;
    if (!text.empty()) text += ", ";
    text += kNames[k];
  }
  return text;
}

void ActivityListener::watch(std::uint64_t begin, std::uint64_t end) {
  CCLMESH_CHECK(begin < end, fmt::format("{}: empty watched range [{:#x}, {:#x})", name_, begin, end));
  watched_.emplace_back(begin, end);
}

void ActivityListener::ignore(std::uint64_t begin, std::uint64_t end) {
  CCLMESH_CHECK(begin < end, fmt::format("{}: empty ignored range [{:#x}, {:#x})", name_, begin, end));
  ignored_.emplace_back(begin, end);
}

void ActivityListener::watch_secondary(std::uint64_t begin, std::uint64_t end) {
  CCLMESH_CHECK(begin < end, fmt::format("{}: empty watched range [{:#x}, {:#x})", name_, begin, end));
  watched_secondary_.emplace_back(begin, end);
}

ActivityMask ActivityListener::write_kinds(std::uint64_t address, std::uint64_t bytes) const {
  for (const auto& [begin, end] : ignored_) {
    if (address >= begin && address + bytes <= end) return 0;
  }
  if (watches_everything()) return activity_bit(ActivityKind::L1Write);
  const auto overlaps = [&](const std::vector<std::pair<std::uint64_t, std::uint64_t>>& ranges) {
    for (const auto& [begin, end] : ranges) {
      if (address < end && begin < address + bytes) return true;
    }
    return false;
  };
  ActivityMask kinds = 0;
  if (overlaps(watched_)) kinds |= activity_bit(ActivityKind::L1Write);
  if (overlaps(watched_secondary_)) kinds |= activity_bit(ActivityKind::L1WriteSecondary);
  return kinds;
}

void ActivityListener::set_quiet_window(std::uint32_t for_cycles, std::uint64_t clock_hz) {
  CCLMESH_CHECK(clock_hz > 0, name_ + ": a quiet window without a clock");
  quiet_since_ = Engine::current().now();
  quiet_cycles_ = for_cycles;
  quiet_clock_hz_ = clock_hz;
}

// Asked only when the write would wake the parked kernel (rare next to the declarations), so
// the cycle count is worked out here rather than when the word is declared.
bool ActivityListener::quiet_write(std::uint64_t address, std::uint64_t bytes, const MemoryRegion& memory,
                                   SimTime now) const {
  for (std::size_t i = 0; i < quiet_count_; ++i) {
    const QuietWord& q = quiet_[i];
    if (address < q.address || address + bytes > q.address + 4) continue;
    if (memory.read_u32(q.address) - q.base > q.limit) return false;
    const auto clock_hz = static_cast<std::int64_t>(quiet_clock_hz_);
    return cycles_since_zero(now, clock_hz) - cycles_since_zero(quiet_since_, clock_hz) < quiet_cycles_;
  }
  return false;
}

void ActivityListener::wait_blocking(ActivityMask wake_on, bool since_mark) {
  CCLMESH_CHECK(wake_on != 0, name_ + ": a wait for no kind of activity can never end");
  CCLMESH_CHECK(activity_ != nullptr, name_ + ": waits for activity without being attached");
  const ActivityMask lazy = wake_on & kLazyActivity;
  // Per source, its kinds in ascending order (the order alarms are armed in): only the set
  // bits, as a router parks for one or two lazy kinds of eight.
  const auto for_each_lazy_kind = [&](auto&& action) {
    if (lazy == 0) return;
    for (ActivitySource* source : activity_->sources_) {
      for (ActivityMask bits = lazy; bits != 0; bits &= bits - 1) {
        action(*source, static_cast<ActivityKind>(__builtin_ctz(bits)));
      }
    }
  };
  // After a poll mark, only what happened since the mark is news (mark_poll()).
  const bool from_mark = since_mark && poll_marked_;
  ActivityMask& news = from_mark ? since_mark_ : pending_;
  const SimTime since = from_mark ? mark_time_ : last_return_;
  if ((news & wake_on) == 0) {
    for_each_lazy_kind([&](ActivitySource& source, ActivityKind kind) {
      if (source.happened_since(kind, since)) news |= activity_bit(kind);
    });
  }
  Engine& engine = Engine::current();
  if ((news & wake_on) == 0) {
    Fiber* self = Fiber::current();
    CCLMESH_CHECK(self != nullptr, "a blocking wait was called outside a fiber");
    record_.actor = &engine.require_current_actor("wait_for_activity");
    wake_on_ = wake_on;
    for_each_lazy_kind([](ActivitySource& source, ActivityKind kind) { source.want(kind); });
    engine.park_current(WaitInfo{this, 0, nullptr});
    self->suspend();
    wake_on_ = 0;
  }
  pending_ = 0;
  since_mark_ = 0;
  poll_marked_ = false;
  quiet_count_ = 0;
  quiet_cycles_ = 0;
  last_return_ = engine.now();
}

std::string ActivityListener::describe_wait(std::int64_t) const {
  // What it waits for in detail is in the kernel's blocked description (it knows the mask).
  return "condition '" + name_ + "' to be notified";
}

void L1Activity::attach(ActivityListener& listener) {
  CCLMESH_CHECK(!listener.attached_.is_linked(), "an activity listener attached twice");
  listeners_.push_back(listener);
  listener.activity_ = this;
  listener.last_return_ = Engine::current().now();
}

void L1Activity::deliver(ActivityListener& listener, ActivityMask kinds) {
  listener.pending_ |= kinds;
  listener.since_mark_ |= kinds;
  if ((listener.wake_on_ & kinds) != 0) {
    listener.wake_on_ = 0;  // woken once
    listener.record_.actor->engine()->wake(*listener.record_.actor);
  }
}

void L1Activity::notify(ActivityKind kind) {
  ++events_;
  for (ActivityListener& listener : listeners_) deliver(listener, activity_bit(kind));
}

// A write to a quiet word does not wake the parked listener; it is still recorded as
// pending, which changes nothing (pending is cleared when the wait returns).
void L1Activity::deliver_write(ActivityListener& listener, ActivityMask kinds, std::uint64_t address,
                               std::uint64_t bytes, const MemoryRegion* memory) {
  listener.pending_ |= kinds;
  listener.since_mark_ |= kinds;
  if ((listener.wake_on_ & kinds) == 0) return;
  if (listener.quiet_cycles_ != 0 && memory != nullptr &&
      listener.quiet_write(address, bytes, *memory, listener.record_.actor->engine()->now())) {
    return;
  }
  listener.wake_on_ = 0;  // woken once
  listener.record_.actor->engine()->wake(*listener.record_.actor);
}

void L1Activity::notify_write(std::uint64_t address, std::uint64_t bytes, const MemoryRegion* memory) {
  ++events_;
  for (ActivityListener& listener : listeners_) {
    const ActivityMask kinds = listener.write_kinds(address, bytes);
    if (kinds != 0) deliver_write(listener, kinds, address, bytes, memory);
  }
}

}  // namespace cclmesh::sim
