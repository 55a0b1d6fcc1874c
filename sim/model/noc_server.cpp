#include "sim/model/noc_server.hpp"

#include <fmt/format.h>

#include "sim/engine/check.hpp"

namespace cclmesh::sim {

namespace {

using Interval = NocServer::Interval;

void erase_at(NocServer& server, std::int32_t index) {
  for (std::int32_t i = index; i + 1 < server.reserved_count; ++i) {
    server.reserved[static_cast<std::size_t>(i)] = server.reserved[static_cast<std::size_t>(i + 1)];
  }
  --server.reserved_count;
}

void insert_at(NocServer& server, std::int32_t index, Interval interval) {
  CCLMESH_CHECK(server.reserved_count < NocServer::kReservedIntervals, "a NoC server's reservations overflowed");
  for (std::int32_t i = server.reserved_count; i > index; --i) {
    server.reserved[static_cast<std::size_t>(i)] = server.reserved[static_cast<std::size_t>(i - 1)];
  }
  server.reserved[static_cast<std::size_t>(index)] = interval;
  ++server.reserved_count;
}

void check_head(std::int64_t head, std::int64_t now) {
  CCLMESH_CHECK(head >= now, fmt::format("a NoC packet's head at {} ps is before engine now ({} ps): the server's "
                                         "reservations before now were dropped",
                                         head, now));
}

// Makes room for one more interval: drops those that end at or before `now` (sorted, so they
// are a prefix), then, if the set is still full, merges the two oldest.
void make_room(NocServer& server, std::int64_t now) {
  std::int32_t stale = 0;
  while (stale < server.reserved_count && server.reserved[static_cast<std::size_t>(stale)].end_ps <= now) ++stale;
  if (stale > 0) {
    for (std::int32_t i = stale; i < server.reserved_count; ++i) {
      server.reserved[static_cast<std::size_t>(i - stale)] = server.reserved[static_cast<std::size_t>(i)];
    }
    server.reserved_count -= stale;
  }
  if (server.reserved_count < NocServer::kReservedIntervals) return;
  server.reserved[0].end_ps = server.reserved[1].end_ps;
  erase_at(server, 1);
}

}  // namespace

void append_to_full(NocServer& server, std::int64_t begin, std::int64_t end, std::int64_t now) {
  check_head(begin, now);
  make_room(server, now);
  server.reserved[static_cast<std::size_t>(server.reserved_count)] = Interval{begin, end};
  ++server.reserved_count;
}

std::int64_t reserve_in_gap(NocServer& server, std::int64_t head, std::int64_t serialisation, std::int64_t now) {
  check_head(head, now);
  CCLMESH_CHECK(server.reserved_count > 0, "a NoC server booked after its head has no reservation on record");
  for (;;) {
    // The first gap at or after the head that the packet fits in; past the last interval
    // there always is one (the last interval ends at free_at, which is after the head).
    std::int64_t start = head;
    std::int32_t index = 0;
    for (; index < server.reserved_count; ++index) {
      const Interval& r = server.reserved[static_cast<std::size_t>(index)];
      if (r.end_ps <= start) continue;
      if (start + serialisation <= r.begin_ps) break;
      start = r.end_ps;
    }
    const std::int64_t end = start + serialisation;
    Interval* previous = index > 0 ? &server.reserved[static_cast<std::size_t>(index - 1)] : nullptr;
    Interval* next = index < server.reserved_count ? &server.reserved[static_cast<std::size_t>(index)] : nullptr;
    const bool joins_previous = previous != nullptr && previous->end_ps == start;
    const bool joins_next = next != nullptr && next->begin_ps == end;
    if (!joins_previous && !joins_next && server.reserved_count == NocServer::kReservedIntervals) {
      make_room(server, now);  // then search again: merging may have closed this gap
      continue;
    }
    if (joins_previous && joins_next) {
      previous->end_ps = next->end_ps;
      erase_at(server, index);
    } else if (joins_previous) {
      previous->end_ps = end;
    } else if (joins_next) {
      next->begin_ps = start;
    } else {
      insert_at(server, index, Interval{start, end});
    }
    if (end > server.free_at.ps()) server.free_at = SimTime::from_ps(end);
    return start;
  }
}

}  // namespace cclmesh::sim
