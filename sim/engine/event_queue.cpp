#include "sim/engine/event_queue.hpp"

#include <algorithm>
#include <array>
#include <iterator>
#include <utility>

#include "sim/engine/check.hpp"

namespace cclmesh::sim {

// A refill takes the non-empty buckets among this many from the earliest one (7.3 entries a
// refill on a T3K all_gather instead of 1.6: the refill's fixed cost was most of it); every
// push into them while they run costs an insert into the run instead of the ring's inline
// append (docs/performance.md, twenty-first pass: 8 measured best of 4-16).
constexpr std::size_t kRunBuckets = 8;
static_assert(kRunBuckets >= 1 && kRunBuckets < 64, "a run's buckets come from one bitmap word");

EventQueue::EventQueue() : run_(std::make_unique<Entry[]>(kInitialRunCapacity)), run_capacity_(kInitialRunCapacity) {
  std::fill(std::begin(ring_overflow_), std::end(ring_overflow_), kNoNode);
}

EventQueue::~EventQueue() {
  for (Slot& slot : slots_) {
    if (slot.in_use && slot.drop != nullptr) slot.drop(slot.context);
  }
}

EventId EventQueue::push_elsewhere(SimTime time, std::uint64_t sequence, EventFn fn, void* context, EventFn drop) {
  std::uint32_t index;
  if (free_head_ != kNoSlot) {
    index = free_head_;
    free_head_ = slots_[index].next_free;
  } else {
    CCLMESH_CHECK(slots_.size() < (std::size_t{1} << kSlotBits), "more than 16M events pending at once");
    index = static_cast<std::uint32_t>(slots_.size());
    slots_.emplace_back();
  }
  Slot& slot = slots_[index];
  fill_slot(slot, drop, context);
  const std::int64_t time_ps = time.ps();
  const std::uint64_t order = (sequence << kSlotBits) | index;
  const std::int64_t bucket = time_ps >> kBucketShift;
  if (bucket >= run_bucket_ && bucket <= run_last_bucket_) {
    insert_into_run(Entry{time_ps, order, fn, context});
  } else if (bucket >= ring_start_ && bucket - ring_start_ < static_cast<std::int64_t>(kRingBuckets)) {
    const std::size_t at = static_cast<std::size_t>(bucket) % kRingBuckets;
    if (ring_count_[at] < kBucketEntries) [[likely]] {
      Entry& slot_entry = ring_store_[at].entries[ring_count_[at]++];
      slot_entry.time_ps = time_ps;
      slot_entry.order = order;
      slot_entry.fn = fn;
      slot_entry.context = context;
      ring_filled_[at / 64] |= std::uint64_t{1} << (at % 64);
    } else {
      push_overflow(at, Entry{time_ps, order, fn, context});
    }
    ++ring_entries_;
  } else {
    heap_push(Entry{time_ps, order, fn, context});
  }
  ++live_;
  return EventId{index, slot.generation};
}

bool EventQueue::pending(EventId id) const {
  return id.valid() && id.slot < slots_.size() && slots_[id.slot].in_use &&
         slots_[id.slot].generation == id.generation;
}

bool EventQueue::cancel(EventId id) {
  if (!pending(id)) return false;
  Slot& slot = slots_[id.slot];
  EventFn drop = slot.drop;
  void* context = slot.context;
  // The entry stays queued (finding it would cost a search); the slot is freed when it surfaces.
  slot.in_use = false;
  slot.cancelled = true;
  slot.drop = nullptr;
  slot.context = nullptr;
  ++cancelled_queued_;
  --live_;
  if (drop != nullptr) drop(context);
  return true;
}

void EventQueue::discard(const Entry& e) {
  Slot& slot = slots_[e.slot()];
  slot.cancelled = false;
  --cancelled_queued_;
  free_slot(e.slot());
}

// Sift up through a hole: parents move down until the new entry's place is found.
void EventQueue::heap_push(Entry entry) {
  std::size_t hole = heap_.size();
  heap_.push_back(entry);
  Entry* heap = heap_.data();
  while (hole > 0) {
    const std::size_t parent = (hole - 1) / kArity;
    if (!later(heap[parent], entry)) break;
    heap[hole] = heap[parent];
    hole = parent;
  }
  heap[hole] = entry;
}

// Removes the top: the last entry sinks from the root through a hole, the earliest of each
// node's (up to four) children moving up.
EventQueue::Entry EventQueue::heap_pop() {
  Entry* heap = heap_.data();
  const Entry top = heap[0];
  const Entry last = heap_.back();
  heap_.pop_back();
  const std::size_t size = heap_.size();
  if (size == 0) return top;
  std::size_t hole = 0;
  while (true) {
    const std::size_t first_child = hole * kArity + 1;
    if (first_child >= size) break;
    const std::size_t end = std::min(first_child + kArity, size);
    std::size_t best = first_child;
    for (std::size_t c = first_child + 1; c < end; ++c) {
      if (later(heap[best], heap[c])) best = c;
    }
    if (!later(last, heap[best])) break;
    heap[hole] = heap[best];
    hole = best;
  }
  heap[hole] = last;
  return top;
}

void EventQueue::discard_cancelled_top() {
  while (!heap_.empty() && !live(heap_.front())) discard(heap_pop());
}

// The entry is nearly always newer than every queued one, so its place is after every entry at
// its time or earlier: found from the back, where it usually is (one pushed with a reserved
// sequence number goes before newer ones at its time), each entry passed moved up one place on
// the way (a few, nearly always: a memmove call for them cost more, and its size-dependent
// branches missed). A place deep inside a crowded run would cost a long shift; the heap orders
// such an entry just as well, so the entries passed are put back and it goes there.
void EventQueue::insert_into_run(Entry entry) {
  if (run_size_ == run_capacity_) make_run_room();
  Entry* run = run_.get();
  std::size_t at = run_size_;
  while (at > run_head_ && later(run[at - 1], entry)) {
    if (run_size_ - at == kCrowdedBucket) {
      std::copy(run + at + 1, run + run_size_ + 1, run + at);
      heap_push(entry);
      return;
    }
    run[at] = run[at - 1];
    --at;
  }
  run[at] = entry;
  ++run_size_;
}

void EventQueue::make_run_room() {
  Entry* run = run_.get();
  if (run_head_ >= run_capacity_ / 2) {  // at least half consumed: move the rest to the front
    std::copy(run + run_head_, run + run_size_, run);
  } else {
    auto larger = std::make_unique<Entry[]>(run_capacity_ * 2);
    std::copy(run + run_head_, run + run_size_, larger.get());
    run_ = std::move(larger);
    run_capacity_ *= 2;
  }
  run_size_ -= run_head_;
  run_head_ = 0;
}

// Inlined into pop_elsewhere() (a refill every ~2 events): as a call it saved and restored six
// registers each time.
[[gnu::always_inline]] inline void EventQueue::refill_run() {
  while (run_head_ < run_size_ && !live(run_[run_head_])) discard(run_[run_head_++]);
  if (run_head_ < run_size_) return;
  run_size_ = 0;
  run_head_ = 0;
  constexpr std::size_t kWords = kRingBuckets / 64;
  // Buckets in time order from the ring's start: to the end of the ring, then around to just
  // before the start. Every bucket found empty of live entries is cleared on the way.
  while (ring_entries_ > 0) {
    const std::size_t start = static_cast<std::size_t>(ring_start_) % kRingBuckets;
    // Nearly always the next non-empty bucket is in the start's own bitmap word (~2 events per
    // simulated ns on a T3K: a bucket in four is filled): tested before the walk of the words.
    const std::uint64_t start_word = ring_filled_[start / 64] & (~std::uint64_t{0} << (start % 64));
    std::size_t found = start_word != 0 ? (start & ~std::size_t{63}) + static_cast<std::size_t>(__builtin_ctzll(start_word))
                                        : kRingBuckets;
    for (std::size_t step = 1; step <= kWords && found == kRingBuckets; ++step) {
      const std::size_t word = (start / 64 + step) % kWords;
      std::uint64_t bits = ring_filled_[word];
      if (step == kWords) bits &= (std::uint64_t{1} << (start % 64)) - 1;
      if (bits != 0) found = word * 64 + static_cast<std::size_t>(__builtin_ctzll(bits));
    }
    CCLMESH_CHECK(found != kRingBuckets, "event queue ring counts entries it does not hold");
    const std::int64_t bucket = ring_start_ + static_cast<std::int64_t>((found - start) & (kRingBuckets - 1));
    const std::uint32_t overflow = std::exchange(ring_overflow_[found], kNoNode);
    // The run starts here even if every entry was cancelled: the ring then moves past it.
    run_bucket_ = bucket;
    std::size_t size = append_bucket_to_run(found, 0);
    std::size_t last = found;
    // Further non-empty buckets of the next few (kRunBuckets, in the same bitmap word) join
    // the run, each appended sorted: one refill serves them all. A chained bucket is left for
    // a refill of its own (take_overflow() sorts the whole run).
    if (overflow == kNoNode) [[likely]] {
      std::uint64_t more = ring_filled_[found / 64] & (((std::uint64_t{1} << kRunBuckets) - 1) << (found % 64));
      while (more != 0) {
        const std::size_t next = (found & ~std::size_t{63}) + static_cast<std::size_t>(__builtin_ctzll(more));
        if (ring_overflow_[next] != kNoNode) break;
        size = append_bucket_to_run(next, size);
        last = next;
        more &= more - 1;
      }
    }
    run_last_bucket_ = bucket + static_cast<std::int64_t>(last - found);
    ring_start_ = run_last_bucket_ + 1;
    // The ring is cold by the time a bucket comes up (the payload copies of 2 us of simulated
    // time went through the caches since): ask for the next non-empty bucket now, instead of
    // waiting for it then. The entries' slots are only written, to free them: no prefetch
    // (measured: asking for them, also for the next event's, cost more than it saved).
    prefetch_bucket_after(last);
    run_size_ = size;
    if (overflow != kNoNode) [[unlikely]] take_overflow(overflow);
    if (run_size_ != 0) return;
  }
}

// Insertion sort of the bucket's entries onto the run's back (`size` entries so far, all of
// earlier buckets, so no entry moves before them): a bucket holds a handful of entries, and the
// run has room for them all. The bucket is emptied; returns the run's new size.
[[gnu::always_inline]] inline std::size_t EventQueue::append_bucket_to_run(std::size_t at_ring, std::size_t size) {
  const std::size_t count = ring_count_[at_ring];
  const Entry* entries = ring_store_[at_ring].entries;
  ring_count_[at_ring] = 0;
  ring_entries_ -= count;
  ring_filled_[at_ring / 64] &= ~(std::uint64_t{1} << (at_ring % 64));
  Entry* run = run_.get();
  for (std::size_t i = 0; i < count; ++i) {
    const Entry e = entries[i];
    if (!live(e)) {
      discard(e);
      continue;
    }
    std::size_t at = size++;
    while (at > 0 && later(run[at - 1], e)) {
      run[at] = run[at - 1];
      --at;
    }
    run[at] = e;
  }
  return size;
}

// A full ring bucket's next entry, at the head of the bucket's chain.
void EventQueue::push_overflow(std::size_t bucket, Entry entry) {
  std::uint32_t node = overflow_free_;
  if (node != kNoNode) {
    overflow_free_ = overflow_nodes_[node].next;
  } else {
    node = static_cast<std::uint32_t>(overflow_nodes_.size());
    overflow_nodes_.emplace_back();
  }
  overflow_nodes_[node] = OverflowNode{entry, ring_overflow_[bucket]};
  ring_overflow_[bucket] = node;
}

// A coming-up bucket's chain joins its inline entries in the (empty before) run, which is then
// sorted as a whole; the nodes go back to the free list.
//
// A crowded bucket (a dense mesh: 256 chips put ~40 events into an average 512 ps bucket, bursts
// several times that) is sorted in two passes instead of by comparisons (std::sort was 5% of a
// 16x16 torus run's instructions): a stable counting sort by the 8 ps slice of the bucket each
// entry falls in, then an insertion pass, which makes the order exact, (time, sequence), and
// costs little more than a pass, as entries are by then out of order only within their slice
// and, at equal times, only where a reserved sequence number was pushed late.
void EventQueue::take_overflow(std::uint32_t node) {
  const std::size_t first_chained = run_size_;
  while (node != kNoNode) {
    OverflowNode& n = overflow_nodes_[node];
    const std::uint32_t next = n.next;
    --ring_entries_;
    if (live(n.entry)) {
      if (run_size_ == run_capacity_) make_run_room();
      run_[run_size_++] = n.entry;
    } else {
      discard(n.entry);
    }
    n.next = overflow_free_;
    overflow_free_ = node;
    node = next;
  }
  // The chain is newest first: reversed, the run is in push order, which is nearly sequence order.
  Entry* run = run_.get();
  std::reverse(run + first_chained, run + run_size_);

  const auto insertion_sort = [](Entry* entries, std::size_t size) {
    for (std::size_t i = 1; i < size; ++i) {
      const Entry e = entries[i];
      std::size_t at = i;
      while (at > 0 && later(entries[at - 1], e)) {
        entries[at] = entries[at - 1];
        --at;
      }
      entries[at] = e;
    }
  };
  constexpr int kSliceShift = 3;  // 8 ps
  constexpr std::size_t kSlices = std::size_t{1} << (kBucketShift - kSliceShift);
  // A few entries: the slices' counts would cost more than the few moves.
  if (run_size_ <= kSlices / 4) {
    insertion_sort(run, run_size_);
    return;
  }
  const auto slice_of = [](const Entry& e) { return static_cast<std::size_t>(e.time_ps >> kSliceShift) & (kSlices - 1); };
  std::array<std::uint32_t, kSlices + 1> starts{};
  for (std::size_t i = 0; i < run_size_; ++i) ++starts[slice_of(run[i]) + 1];
  for (std::size_t i = 1; i <= kSlices; ++i) starts[i] += starts[i - 1];
  // The second buffer, as large as the run's, swapped with it afterwards (so no crowded bucket
  // allocates once the buffers have grown to the crowd).
  if (spare_capacity_ < run_capacity_) {
    spare_ = std::make_unique<Entry[]>(run_capacity_);
    spare_capacity_ = run_capacity_;
  }
  Entry* sorted = spare_.get();
  for (std::size_t i = 0; i < run_size_; ++i) sorted[starts[slice_of(run[i])]++] = run[i];
  insertion_sort(sorted, run_size_);
  std::swap(run_, spare_);
  std::swap(run_capacity_, spare_capacity_);
}

// The first non-empty bucket after `bucket` within the next two bitmap words, if any.
void EventQueue::prefetch_bucket_after(std::size_t bucket) {
  const std::size_t next = (bucket + 1) % kRingBuckets;
  const std::size_t word = next / 64;
  std::uint64_t bits = ring_filled_[word] & (~std::uint64_t{0} << (next % 64));
  std::size_t base = word * 64;
  if (bits == 0) {
    base = ((word + 1) % (kRingBuckets / 64)) * 64;
    bits = ring_filled_[base / 64];
  }
  if (bits != 0) {
    const Bucket& next_bucket = ring_store_[base + static_cast<std::size_t>(__builtin_ctzll(bits))];
    __builtin_prefetch(&next_bucket.entries[0]);
    __builtin_prefetch(&next_bucket.entries[kBucketEntries - 1]);
  }
}

bool EventQueue::pop_elsewhere(SimTime limit, DueEvent& out) {
  // refill_run() does nothing while the run holds an entry and no event is cancelled (only a
  // cancelled entry at its front could be dropped): most pops, at ~2 events per simulated ns.
  if (run_head_ >= run_size_ || cancelled_queued_ != 0) refill_run();
  discard_cancelled_top();
  // The earlier of the two fronts (the ring holds nothing earlier than the run).
  const bool from_run = run_head_ < run_size_;
  const bool from_heap = !heap_.empty() && (!from_run || later(run_[run_head_], heap_.front()));
  if (!from_run && !from_heap) return false;
  const Entry& least = from_heap ? heap_.front() : run_[run_head_];
  if (least.time_ps > limit.ps()) return false;
  const Entry entry = from_heap ? heap_pop() : run_[run_head_++];
  take(entry, out);
  return true;
}

void EventQueue::unpop(const DueEvent& event) {
  CCLMESH_CHECK(free_head_ == event.slot && !slots_[event.slot].in_use, "unpop after another push or pop");
  free_head_ = slots_[event.slot].next_free;
  slots_[event.slot].in_use = true;  // same generation: the event's id is still valid
  ++live_;
  heap_push(Entry{event.time.ps(), (event.sequence << kSlotBits) | event.slot, event.fn, event.context});
}

SimTime EventQueue::next_time() {
  refill_run();
  discard_cancelled_top();
  std::int64_t earliest = heap_.empty() ? SimTime::max().ps() : heap_.front().time_ps;
  if (run_head_ < run_size_) earliest = std::min(earliest, run_[run_head_].time_ps);
  return SimTime::from_ps(earliest);
}

}  // namespace cclmesh::sim
