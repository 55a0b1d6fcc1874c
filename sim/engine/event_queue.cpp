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
  if (entry.time_ps == now_time_ps_) {
    now_fifo_.push_back(entry);
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

bool EventQueue::pop_until(SimTime limit, DueEvent& out) {
  discard_cancelled_top();
  discard_cancelled_front();
  const bool fifo = now_head_ < now_fifo_.size();
  if (!fifo && heap_.empty()) return false;
  Entry entry;
  if (fifo && (heap_.empty() || later(heap_.front(), now_fifo_[now_head_]))) {
    if (now_time_ps_ > limit.ps()) return false;
    entry = now_fifo_[now_head_++];
  } else {
    if (heap_.front().time_ps > limit.ps()) return false;
    entry = heap_pop();
  }
  CCLMESH_CHECK(entry.time_ps >= now_time_ps_, "event queue went back in time");
  now_time_ps_ = entry.time_ps;
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
  return heap_.empty() ? SimTime::max() : SimTime::from_ps(heap_.front().time_ps);
}

}  // namespace cclmesh::sim
