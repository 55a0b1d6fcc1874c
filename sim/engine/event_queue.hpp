#pragma once
// The one event queue, ordered by (time, sequence number): events at equal times run in the
// order they were scheduled, so a run is reproducible bit for bit. Cancellation is by flag: a
// cancelled event stays queued and is skipped when it surfaces.
//
// Three places hold pending events, and pop() takes the earlier of two fronts, so the order is
// exactly (time, sequence) whichever place an event went to:
// - the current run: the entries of the earliest non-empty 512 ps bucket the calendar ring held
//   when the previous run was used up and of the non-empty ones among its next 7 (one refill for
//   ~4 ns instead of one per bucket), sorted, taken from the front. Events scheduled into those
//   buckets while they run (wake-ups at the current time, zero-delay hand-offs: a large share of
//   all events) are inserted in order; each is newer than everything queued, so it goes after
//   every entry at its time, usually near the end;
// - a calendar ring of 512 ps buckets (4 entries in place each, more in a chain of overflow
//   nodes) covering the next ~2.1 us after the current run's bucket, where nearly every model
//   event lands (NoC packets, ethernet frames, kernel delays), unsorted: a bucket is sorted
//   once, when it becomes the current run, and a bitmap finds the next non-empty bucket.
//   Nothing in the ring is earlier than the current run;
// - a 4-ary min-heap for the rest: events beyond the ring's horizon, deep inside a crowded
//   current run, or in a bucket the ring no longer covers (before the current run's).
// The ring's front is therefore never compared event by event: a pop looks at the current
// run's front and the heap's. An entry carries its function and context, so running it reads
// only the entry: its slot (cold by then) is only written, to free it; a cancelled event's
// slot stays reserved until its entry surfaces, so while nothing is cancelled (nearly always)
// no entry's liveness needs its slot either. (The previous design kept a FIFO for the current time and found
// the ring's earliest entry by scanning a bucket at every pop: ~300 instructions per event.)

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "sim/engine/check.hpp"
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
  std::uint32_t slot = 0;  // for unpop()
};

class EventQueue {
 public:
  EventQueue();
  EventQueue(const EventQueue&) = delete;
  EventQueue& operator=(const EventQueue&) = delete;
  ~EventQueue();

  // `drop` (optional) releases `context` if the event is cancelled or never runs.
  EventId push(SimTime time, EventFn fn, void* context, EventFn drop = nullptr) {
    return push_at(time, take_sequence(), fn, context, drop);
  }
  // The sequence number of an event not pushed now: push_reserved() queues it later in the
  // place it would have had if pushed now (same time, same sequence number).
  std::uint64_t reserve_sequence() { return take_sequence(); }
  EventId push_reserved(SimTime time, std::uint64_t sequence, EventFn fn, void* context, EventFn drop = nullptr) {
    return push_at(time, sequence, fn, context, drop);
  }
  // Puts back the event the last pop took, as it was (same slot, so its EventId stays valid),
  // when nothing was pushed or popped since.
  void unpop(const DueEvent& event);
  // True when the event was still pending; its drop function has run.
  bool cancel(EventId id);
  bool pending(EventId id) const;

  // Removes the earliest live event; false when there is none.
  bool pop(DueEvent& out) { return pop_until(SimTime::max(), out); }
  // Removes the earliest live event if it is due at or before `limit`; false otherwise (then
  // live_events() tells an empty queue from one whose next event is later). One call per event
  // in the run loop, instead of a look at the next time followed by a pop.
  // Inline for the common case: the current run holds the earliest entry and nothing is
  // cancelled; pop_elsewhere() for the rest (refill, heap, cancelled entries).
  bool pop_until(SimTime limit, DueEvent& out) {
    if (run_head_ < run_size_ && cancelled_queued_ == 0 &&
        (heap_.empty() || !later(run_[run_head_], heap_.front()))) [[likely]] {
      const Entry& least = run_[run_head_];
      if (least.time_ps > limit.ps()) return false;
      ++run_head_;
      take(least, out);
      return true;
    }
    return pop_elsewhere(limit, out);
  }
  // Time of the earliest live event, or SimTime::max() when there is none.
  SimTime next_time();

  std::size_t live_events() const { return live_; }
  std::uint64_t scheduled_total() const { return next_sequence_; }

 private:
  // 32 bytes: the time, then the sequence number above the slot index (sequence numbers are
  // unique, so comparing `order` compares sequence numbers), then what to run. Carrying fn and
  // context here spares a pop the load of the event's slot, cold by the time it runs.
  static constexpr int kSlotBits = 24;  // up to 16M events pending at once
  static constexpr int kSequenceBits = 64 - kSlotBits;
  struct Entry {
    std::int64_t time_ps;
    std::uint64_t order;
    EventFn fn;
    void* context;
    std::uint64_t sequence() const { return order >> kSlotBits; }
    std::uint32_t slot() const { return static_cast<std::uint32_t>(order & ((std::uint64_t{1} << kSlotBits) - 1)); }
  };
  // What cancel() and the destructor need; written when the event is pushed (a slot freed
  // last is taken first, so its line is usually hot) and freed when its entry leaves.
  struct Slot {
    EventFn drop = nullptr;
    void* context = nullptr;
    std::uint32_t generation = 0;  // for EventIds: advanced at each push
    std::uint32_t next_free = 0;
    bool in_use = false;     // pending: pushed, neither run nor cancelled
    bool cancelled = false;  // cancelled, its entry still queued: the slot is freed when it surfaces
  };
  // A function object, not a function pointer, so the heap algorithms inline the comparison.
  struct Later {
    bool operator()(const Entry& a, const Entry& b) const {
      return a.time_ps != b.time_ps ? a.time_ps > b.time_ps : a.order > b.order;
    }
  };
  static constexpr Later later{};
  static constexpr std::size_t kArity = 4;
  // Entries go by value: a copy through the stack right after separate 8-byte stores defeats
  // store forwarding and stalls every push.
  std::uint64_t take_sequence() {
    CCLMESH_CHECK(next_sequence_ < (std::uint64_t{1} << kSequenceBits), "event sequence numbers exhausted");
    return next_sequence_++;
  }
  // The common case inline: a free slot to reuse and a ring bucket with room (nearly every
  // push); anything else in push_elsewhere(). Out of line, the whole push saved and restored
  // six registers and a stack frame for the rare paths' sake.
  EventId push_at(SimTime time, std::uint64_t sequence, EventFn fn, void* context, EventFn drop) {
    CCLMESH_CHECK(fn != nullptr, "event without a function");
    const std::int64_t time_ps = time.ps();
    const std::int64_t bucket = time_ps >> kBucketShift;
    const std::int64_t ahead = bucket - ring_start_;
    if (free_head_ != kNoSlot && bucket != run_bucket_ && ahead >= 0 &&
        ahead < static_cast<std::int64_t>(kRingBuckets)) [[likely]] {
      const std::size_t at = static_cast<std::size_t>(bucket) & (kRingBuckets - 1);
      if (ring_count_[at] < kBucketEntries) [[likely]] {
        const std::uint32_t index = free_head_;
        Slot& slot = slots_[index];
        free_head_ = slot.next_free;
        const std::uint32_t generation = fill_slot(slot, drop, context);
        Entry& entry = ring_store_[at].entries[ring_count_[at]++];
        entry.time_ps = time_ps;
        entry.order = (sequence << kSlotBits) | index;
        entry.fn = fn;
        entry.context = context;
        ring_filled_[at / 64] |= std::uint64_t{1} << (at % 64);
        ++ring_entries_;
        ++live_;
        return EventId{index, generation};
      }
    }
    return push_elsewhere(time, sequence, fn, context, drop);
  }
  bool pop_elsewhere(SimTime limit, DueEvent& out);
  // The popped entry's event, out; its slot freed.
  void take(const Entry& entry, DueEvent& out) {
    CCLMESH_CHECK(entry.time_ps >= now_time_ps_, "event queue went back in time");
    now_time_ps_ = entry.time_ps;
    // An empty ring may restart at this event's bucket (nothing pending is earlier), so events
    // scheduled after a long gap served by the heap land in the ring again. A non-empty ring
    // already starts after the current run, which is not later than this event's bucket.
    if (ring_entries_ == 0) ring_start_ = std::max(ring_start_, entry.time_ps >> kBucketShift);
    out.time = SimTime::from_ps(entry.time_ps);
    out.sequence = entry.sequence();
    out.fn = entry.fn;
    out.context = entry.context;
    out.slot = entry.slot();
    free_slot(entry.slot());
    --live_;
  }
  EventId push_elsewhere(SimTime time, std::uint64_t sequence, EventFn fn, void* context, EventFn drop);
  // A taken slot's fields for a new event; returns its new generation.
  static std::uint32_t fill_slot(Slot& slot, EventFn drop, void* context) {
    slot.drop = drop;
    slot.context = context;
    slot.in_use = true;
    // Generation 0 means "no event"; skip it on wrap-around.
    slot.generation = slot.generation == 0xffffffffu ? 1 : slot.generation + 1;
    return slot.generation;
  }
  void heap_push(Entry entry);
  Entry heap_pop();
  // Stores only: the slot's line is usually cold when its event runs.
  void free_slot(std::uint32_t index) {
    Slot& slot = slots_[index];
    slot.in_use = false;
    slot.next_free = free_head_;
    free_head_ = index;
  }
  bool live(const Entry& e) const { return cancelled_queued_ == 0 || !slots_[e.slot()].cancelled; }
  // A cancelled entry leaves the queue: its slot becomes free.
  void discard(const Entry& e);
  void discard_cancelled_top();
  // Drops cancelled entries at the current run's front; when the run is used up, makes the
  // ring's earliest bucket the current run. Afterwards the run is empty only if the ring is.
  void refill_run();
  std::size_t append_bucket_to_run(std::size_t at_ring, std::size_t size);
  void insert_into_run(Entry entry);
  // Room for one more entry at the run's back: the consumed front moved out, else a larger buffer.
  void make_run_room();
  void push_overflow(std::size_t bucket, Entry entry);
  void take_overflow(std::uint32_t node);
  void prefetch_bucket_after(std::size_t bucket);

  static constexpr int kBucketShift = 9;             // 512 ps per bucket
  static constexpr std::size_t kRingBuckets = 4096;  // a power of two: 2.1 us ahead
  static constexpr std::size_t kCrowdedBucket = 64;  // a run insert this deep goes to the heap
  static constexpr std::size_t kInitialRunCapacity = 256;
  // The current run, sorted: run_[run_head_ .. run_size_). A plain buffer rather than a
  // std::vector: every pop reads its size (one word here, two pointers and a shift there), and a
  // refill writes a bucket's entries without a capacity check each (the buffer always holds at
  // least a full bucket's inline entries).
  std::unique_ptr<Entry[]> run_;
  std::size_t run_capacity_ = 0;
  std::size_t run_size_ = 0;
  std::size_t run_head_ = 0;
  // take_overflow()'s second buffer for a crowded bucket's counting sort (empty until then).
  std::unique_ptr<Entry[]> spare_;
  std::size_t spare_capacity_ = 0;
  // The run's buckets, absolute numbers (time >> kBucketShift): run_bucket_ .. run_last_bucket_.
  // A push into them is inserted into the run.
  std::int64_t run_bucket_ = -1;
  std::int64_t run_last_bucket_ = -1;
  // A bucket is two cache lines of entries in one flat array, its count in a small array of
  // its own: a push or a refill touches one bucket of the ring (a vector per bucket cost a
  // header and a separately allocated buffer, two cache misses: the ring is visited once per
  // 2.1 us of simulated time, long enough for the payload copies to evict it from the caches).
  // A fuller bucket chains further entries (below). (Measured on the T3K 64 MiB timing-only
  // all_gather, with 16-byte entries: 4 entries of 512 ps buckets beat 4 of 256 ps, 2 of
  // 512 ps and 8 of 1 ns.)
  static constexpr std::size_t kBucketEntries = 4;
  struct alignas(128) Bucket {
    Entry entries[kBucketEntries];
  };
  static_assert(sizeof(Bucket) == 128, "a bucket is two cache lines");
  static_assert(kInitialRunCapacity >= 64 * kBucketEntries, "a refill writes its buckets' inline entries unchecked");
  std::vector<Bucket> ring_store_ = std::vector<Bucket>(kRingBuckets);
  std::uint8_t ring_count_[kRingBuckets] = {};
  // A full bucket's further entries, chained from the bucket (newest first) in nodes from a
  // free list, instead of the heap: on a dense mesh (TG, 32 chips) one 512 ps bucket often
  // gets more than kBucketEntries events, and the heap's sifts through ~50 entries then cost
  // more than the ring saves (measured: 15% of the TG axis-1 all_gather's events overflowed).
  // A bucket's chain is sorted into the run with its inline entries when the bucket comes up.
  struct OverflowNode {
    Entry entry;
    std::uint32_t next;
  };
  static constexpr std::uint32_t kNoNode = 0xffffffffu;
  std::vector<OverflowNode> overflow_nodes_;
  std::uint32_t overflow_free_ = kNoNode;
  std::uint32_t ring_overflow_[kRingBuckets];  // chain head per bucket, kNoNode when none
  std::uint64_t ring_filled_[kRingBuckets / 64] = {};  // bit: that bucket is not empty
  // Absolute bucket number the ring starts at: always after run_bucket_, so the ring holds
  // nothing the current run should hold or precede.
  std::int64_t ring_start_ = 0;
  std::size_t ring_entries_ = 0;
  std::vector<Entry> heap_;
  std::int64_t now_time_ps_ = -1;  // time of the last event popped
  std::vector<Slot> slots_;
  std::uint32_t free_head_ = kNoSlot;
  std::size_t cancelled_queued_ = 0;  // cancelled events whose entries are still queued
  std::uint64_t next_sequence_ = 0;
  std::size_t live_ = 0;
  static constexpr std::uint32_t kNoSlot = 0xffffffffu;
};

}  // namespace cclmesh::sim
