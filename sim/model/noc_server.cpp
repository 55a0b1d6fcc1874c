#include "sim/model/noc_server.hpp"

#include <fmt/format.h>

#include "sim/engine/check.hpp"

namespace cclmesh::sim {

namespace {

using Interval = NocServer::Interval;

Interval& earlier_at(NocServer& server, std::int32_t index) {
  return server.earlier[static_cast<std::size_t>(index)];
}

void erase_at(NocServer& server, std::int32_t index) {
  for (std::int32_t i = index; i + 1 < server.earlier_count; ++i) earlier_at(server, i) = earlier_at(server, i + 1);
  --server.earlier_count;
}

void insert_at(NocServer& server, std::int32_t index, Interval interval) {
  CCLMESH_CHECK(server.earlier_count < NocServer::kReservedIntervals - 1, "a NoC server's reservations overflowed");
  for (std::int32_t i = server.earlier_count; i > index; --i) earlier_at(server, i) = earlier_at(server, i - 1);
  earlier_at(server, index) = interval;
  ++server.earlier_count;
}

}  // namespace

// Drops the earlier intervals that end at or before `now` (sorted, so they are a prefix), then,
// if the set is still full, merges the two oldest.
void make_room(NocServer& server, std::int64_t now) {
  std::int32_t ended = 0;
  while (ended < server.earlier_count && earlier_at(server, ended).end_ps <= now) ++ended;
  if (ended > 0) {
    for (std::int32_t i = ended; i < server.earlier_count; ++i) earlier_at(server, i - ended) = earlier_at(server, i);
    server.earlier_count -= ended;
  }
  if (server.earlier_count < NocServer::kReservedIntervals - 1) return;
  earlier_at(server, 0).end_ps = earlier_at(server, 1).end_ps;
  erase_at(server, 1);
}

// The head is before the latest reservation: the first gap at or after it that the packet fits
// in, among the earlier intervals and before the latest one; else after the latest one.
std::int64_t reserve_in_gap(NocServer& server, std::int64_t head, std::int64_t serialisation, std::int64_t now) {
  CCLMESH_CHECK(head >= now, fmt::format("a NoC packet's head at {} ps is before engine now ({} ps): the server's "
                                         "reservations that ended by now may have been dropped",
                                         head, now));
  for (;;) {
    std::int64_t start = head;
    std::int32_t index = 0;
    for (; index < server.earlier_count; ++index) {
      const Interval& r = earlier_at(server, index);
      if (r.end_ps <= start) continue;
      if (start + serialisation <= r.begin_ps) break;
      start = r.end_ps;
    }
    const std::int64_t end = start + serialisation;
    const bool before_latest = index < server.earlier_count;
    if (!before_latest && end > server.latest_begin_ps) {  // no gap: after the latest reservation
      const std::int64_t after = server.free_at.ps();
      server.free_at = SimTime::from_ps(after + serialisation);
      return after;
    }
    Interval* previous = index > 0 ? &earlier_at(server, index - 1) : nullptr;
    const bool joins_previous = previous != nullptr && previous->end_ps == start;
    const bool joins_next = (before_latest ? earlier_at(server, index).begin_ps : server.latest_begin_ps) == end;
    if (!joins_previous && !joins_next && server.earlier_count == NocServer::kReservedIntervals - 1) {
      make_room(server, now);  // then search again: merging may have closed this gap
      continue;
    }
    if (joins_previous && joins_next) {
      if (before_latest) {
        previous->end_ps = earlier_at(server, index).end_ps;
        erase_at(server, index);
      } else {
        server.latest_begin_ps = previous->begin_ps;
        erase_at(server, index - 1);
      }
    } else if (joins_previous) {
      previous->end_ps = end;
    } else if (joins_next) {
      if (before_latest) {
        earlier_at(server, index).begin_ps = start;
      } else {
        server.latest_begin_ps = start;
      }
    } else {
      insert_at(server, index, Interval{start, end});
    }
    return start;
  }
}

}  // namespace cclmesh::sim
