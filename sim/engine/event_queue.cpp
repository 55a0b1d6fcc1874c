#include "sim/engine/event_queue.hpp"

#include <algorithm>

#include "sim/engine/check.hpp"

namespace cclmesh::sim {

EventQueue::~EventQueue() {
  for (Slot& slot : slots_) {
    if (slot.in_use && slot.drop != nullptr) slot.drop(slot.context);
  }
}

EventId EventQueue::push(SimTime time, EventFn fn, void* context, EventFn drop) {
  CCLMESH_CHECK(fn != nullptr, "event without a function");
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
  slot.fn = fn;
  slot.drop = drop;
  slot.context = context;
  slot.in_use = true;
  CCLMESH_CHECK(next_sequence_ < (std::uint64_t{1} << kSequenceBits), "event sequence numbers exhausted");
  slot.sequence = next_sequence_++;
  const Entry entry{time.ps(), (slot.sequence << kSlotBits) | index};
  const std::int64_t bucket = entry.time_ps >> kBucketShift;
  if (entry.time_ps == now_time_ps_) {
    now_fifo_.push_back(entry);
  } else if (bucket >= ring_start_ && bucket - ring_start_ < static_cast<std::int64_t>(kRingBuckets) &&
             ring_[static_cast<std::size_t>(bucket) % kRingBuckets].size() < kCrowdedBucket) {
    const std::size_t at = static_cast<std::size_t>(bucket) % kRingBuckets;
    ring_[at].push_back(entry);
    ring_filled_[at / 64] |= std::uint64_t{1} << (at % 64);
    ++ring_entries_;
    if (least_known_ && later(ring_[least_bucket_][least_index_], entry)) {
      least_bucket_ = at;
      least_index_ = ring_[at].size() - 1;
    }
  } else {
    heap_push(entry);
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
  release_slot(id.slot);
  --live_;
  if (drop != nullptr) drop(context);
  return true;
}

void EventQueue::release_slot(std::uint32_t index) {
  Slot& slot = slots_[index];
  slot.in_use = false;
  slot.fn = nullptr;
  slot.drop = nullptr;
  slot.context = nullptr;
  // Generation 0 means "no event"; skip it on wrap-around.
  slot.generation = slot.generation == 0xffffffffu ? 1 : slot.generation + 1;
  slot.next_free = free_head_;
  free_head_ = index;
}

// Sift up through a hole: parents move down until the new entry's place is found.
void EventQueue::heap_push(const Entry& entry) {
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
  while (!heap_.empty() && !live(heap_.front())) heap_pop();
}

void EventQueue::discard_cancelled_front() {
  while (now_head_ < now_fifo_.size() && !live(now_fifo_[now_head_])) ++now_head_;
  if (now_head_ == now_fifo_.size()) {
    now_fifo_.clear();
    now_head_ = 0;
  }
}

bool EventQueue::ring_least(std::size_t& bucket, std::size_t& index) {
  if (least_known_ && live(ring_[least_bucket_][least_index_])) {
    bucket = least_bucket_;
    index = least_index_;
    return true;
  }
  least_known_ = false;
  constexpr std::size_t kWords = kRingBuckets / 64;
  const std::size_t start = static_cast<std::size_t>(ring_start_) % kRingBuckets;
  // Buckets in time order: from the ring's start to the end, then around to just before it.
  for (std::size_t step = 0; step <= kWords && ring_entries_ > 0; ++step) {
    const std::size_t word = (start / 64 + step) % kWords;
    std::uint64_t bits = ring_filled_[word];
    if (step == 0) bits &= ~std::uint64_t{0} << (start % 64);
    if (step == kWords) bits &= (std::uint64_t{1} << (start % 64)) - 1;
    while (bits != 0) {
      const std::size_t at = word * 64 + static_cast<std::size_t>(__builtin_ctzll(bits));
      bits &= bits - 1;
      std::vector<Entry>& entries = ring_[at];
      // No sentinel tied to entries.size(): dropping cancelled entries shrinks the bucket.
      constexpr std::size_t kNone = static_cast<std::size_t>(-1);
      std::size_t least = kNone;
      for (std::size_t i = 0; i < entries.size();) {
        if (!live(entries[i])) {  // cancelled: drop it (order inside a bucket does not matter)
          entries[i] = entries.back();
          entries.pop_back();
          --ring_entries_;
          continue;
        }
        if (least == kNone || later(entries[least], entries[i])) least = i;
        ++i;
      }
      if (least != kNone) {
        bucket = least_bucket_ = at;
        index = least_index_ = least;
        least_known_ = true;
        return true;
      }
      ring_filled_[at / 64] &= ~(std::uint64_t{1} << (at % 64));
    }
  }
  return false;
}

EventQueue::Entry EventQueue::ring_take(std::size_t bucket, std::size_t index) {
  std::vector<Entry>& entries = ring_[bucket];
  const Entry entry = entries[index];
  entries[index] = entries.back();
  entries.pop_back();
  if (entries.empty()) ring_filled_[bucket / 64] &= ~(std::uint64_t{1} << (bucket % 64));
  --ring_entries_;
  least_known_ = false;
  return entry;
}

bool EventQueue::pop_until(SimTime limit, DueEvent& out) {
  discard_cancelled_top();
  discard_cancelled_front();
  std::size_t bucket = 0;
  std::size_t index = 0;
  const bool ring = ring_least(bucket, index);
  // The earliest of the three fronts.
  enum class From { None, Fifo, Ring, Heap } from = From::None;
  const Entry* least = nullptr;
  if (now_head_ < now_fifo_.size()) {
    from = From::Fifo;
    least = &now_fifo_[now_head_];
  }
  if (ring && (least == nullptr || later(*least, ring_[bucket][index]))) {
    from = From::Ring;
    least = &ring_[bucket][index];
  }
  if (!heap_.empty() && (least == nullptr || later(*least, heap_.front()))) {
    from = From::Heap;
    least = &heap_.front();
  }
  if (least == nullptr || least->time_ps > limit.ps()) return false;
  Entry entry;
  switch (from) {
    case From::Fifo: entry = now_fifo_[now_head_++]; break;
    case From::Ring: entry = ring_take(bucket, index); break;
    case From::Heap: entry = heap_pop(); break;
    case From::None: return false;
  }
  CCLMESH_CHECK(entry.time_ps >= now_time_ps_, "event queue went back in time");
  now_time_ps_ = entry.time_ps;
  // Nothing pending is earlier than this event, so the ring may start at its bucket.
  ring_start_ = std::max(ring_start_, entry.time_ps >> kBucketShift);
  Slot& slot = slots_[entry.slot()];
  out.time = SimTime::from_ps(entry.time_ps);
  out.sequence = entry.sequence();
  out.fn = slot.fn;
  out.context = slot.context;
  release_slot(entry.slot());
  --live_;
  return true;
}

SimTime EventQueue::next_time() {
  discard_cancelled_top();
  discard_cancelled_front();
  if (now_head_ < now_fifo_.size()) return SimTime::from_ps(now_time_ps_);
  std::int64_t earliest = heap_.empty() ? SimTime::max().ps() : heap_.front().time_ps;
  std::size_t bucket = 0;
  std::size_t index = 0;
  if (ring_least(bucket, index)) earliest = std::min(earliest, ring_[bucket][index].time_ps);
  return SimTime::from_ps(earliest);
}

}  // namespace cclmesh::sim
