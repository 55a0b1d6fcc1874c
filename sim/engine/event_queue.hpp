#pragma once
// The one event queue: a 4-ary min-heap ordered by (time, sequence number), so events at equal
// times run in the order they were scheduled and a run is reproducible bit for bit. Four
// children per node halve the depth of a binary heap, and the four siblings sit side by side
// in memory. Cancellation is by flag: a cancelled event stays in the heap and is skipped when
// it surfaces.
//
// Events scheduled for the time of the event being run (wake-ups, zero-delay hand-offs: a
// large share of all events) skip the heap: they go to a FIFO, which is already in sequence
// order. pop() takes whichever of the FIFO's front and the heap's top is earlier in (time,
// sequence), so the order is exactly the heap-only order.

#include <cstdint>
#include <vector>

#include "sim/engine/time.hpp"

namespace cclmesh::sim {

using EventFn = void (*)(void* context);

// Identifies one scheduled event; stale after the event ran or was cancelled.
struct EventId {
  std::uint32_t slot = 0;
  std::uint32_t generation = 0;  // 0 = no event
  constexpr bool valid() const { return generation != 0; }
  constexpr bool operator==(const EventId&) const = default;
};

struct DueEvent {
  SimTime time;
  std::uint64_t sequence = 0;
  EventFn fn = nullptr;
  void* context = nullptr;
};

class EventQueue {
 public:
  EventQueue() = default;
  EventQueue(const EventQueue&) = delete;
  EventQueue& operator=(const EventQueue&) = delete;
  ~EventQueue();

  // `drop` (optional) releases `context` if the event is cancelled or never runs.
  EventId push(SimTime time, EventFn fn, void* context, EventFn drop = nullptr);
  // True when the event was still pending; its drop function has run.
  bool cancel(EventId id);
  bool pending(EventId id) const;

  // Removes the earliest live event; false when there is none.
  bool pop(DueEvent& out) { return pop_until(SimTime::max(), out); }
  // Removes the earliest live event if it is due at or before `limit`; false otherwise (then
  // live_events() tells an empty queue from one whose next event is later). One call per event
  // in the run loop, instead of a look at the next time followed by a pop.
  bool pop_until(SimTime limit, DueEvent& out);
  // Time of the earliest live event, or SimTime::max() when there is none.
  SimTime next_time();

  std::size_t live_events() const { return live_; }
  std::uint64_t scheduled_total() const { return next_sequence_; }

 private:
  // 16 bytes, so a node's four children share a cache line: the time, then the sequence
  // number above the slot index. Sequence numbers are unique, so comparing `order` compares
  // sequence numbers, and the sequence also tells a live entry from a stale one.
  static constexpr int kSlotBits = 24;  // up to 16M events pending at once
  static constexpr int kSequenceBits = 64 - kSlotBits;
  struct Entry {
    std::int64_t time_ps;
    std::uint64_t order;
    std::uint64_t sequence() const { return order >> kSlotBits; }
    std::uint32_t slot() const { return static_cast<std::uint32_t>(order & ((std::uint64_t{1} << kSlotBits) - 1)); }
  };
  struct Slot {
    EventFn fn = nullptr;
    EventFn drop = nullptr;
    void* context = nullptr;
    std::uint64_t sequence = 0;   // of the event holding the slot
    std::uint32_t generation = 1;  // for EventIds
    std::uint32_t next_free = 0;
    bool in_use = false;
  };
  // A function object, not a function pointer, so the heap algorithms inline the comparison.
  struct Later {
    bool operator()(const Entry& a, const Entry& b) const {
      return a.time_ps != b.time_ps ? a.time_ps > b.time_ps : a.order > b.order;
    }
  };
  static constexpr Later later{};
  static constexpr std::size_t kArity = 4;
  void heap_push(const Entry& entry);
  Entry heap_pop();
  void release_slot(std::uint32_t slot);
  bool live(const Entry& e) const {
    const Slot& slot = slots_[e.slot()];
    return slot.in_use && slot.sequence == e.sequence();
  }
  void discard_cancelled_top();
  void discard_cancelled_front();

  std::vector<Entry> heap_;
  std::vector<Entry> now_fifo_;       // entries at now_time_ps_, in sequence order, from now_head_
  std::size_t now_head_ = 0;
  std::int64_t now_time_ps_ = -1;     // time of the last event popped
  std::vector<Slot> slots_;
  std::uint32_t free_head_ = kNoSlot;
  std::uint64_t next_sequence_ = 0;
  std::size_t live_ = 0;
  static constexpr std::uint32_t kNoSlot = 0xffffffffu;
};

}  // namespace cclmesh::sim
