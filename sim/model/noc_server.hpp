#pragma once
// A NoC link or target NIU as a server that can serve a packet in an idle gap before a later
// reservation (docs/sim_model.md, "NoC timing", step 2).
//
// Why: a packet books every server of its path at once, when its head reaches its source NIU
// (no event per hop). A packet booked early from far away therefore reserves a link for the
// time its head will get there; a packet booked later from close by reaches the link first.
// With one `free_at` per server the later one waited behind the reservation while the link sat
// idle (docs/performance.md, "2 workers per link on a torus (session 11)"). On hardware a
// router arbitrates the heads that are at it (REFERENCE 1.1: 16 virtual channels per physical
// channel), so an idle link serves the packet that is there. Here each server keeps its reserved
// intervals that end after engine now, sorted; a packet starts in the first gap at or after its
// head that its serialisation fits in.
//
// Bounded: at most kReservedIntervals intervals. Touching intervals are one; intervals that end
// at or before engine now are dropped when room is needed (every packet's head is at or after now, checked, so no
// later packet can use a gap before them); when the set is still full the two oldest are merged,
// losing the gap between them (a packet that would have fitted there waits, as it did with one
// `free_at`). The common cases cost about what the single `free_at` did: a head at or after the
// latest reservation's end (the latest moves to the set if still ahead), or inside the latest
// reservation (after it, as before).
//
// `free_at` stays the end of the latest reservation, so "the server has nothing booked after t"
// still reads `free_at <= t`. The statistics (busy, bytes, packets, busy_in_window) sum each
// packet's own serialisation as before, whatever gap it takes.

#include <array>
#include <cstdint>

#include "sim/engine/check.hpp"
#include "sim/model/packet_resource.hpp"

namespace cclmesh::sim {

struct NocServer : PacketResource {
  static constexpr std::int32_t kReservedIntervals = 4;  // the latest one included
  struct Interval {
    std::int64_t begin_ps;
    std::int64_t end_ps;
  };
  // The latest reservation is [latest_begin_ps, free_at) (empty before the first); the others,
  // sorted, disjoint and not touching each other or it, are `earlier[0 .. earlier_count)`.
  // Kept apart so the common cases touch only free_at and latest_begin_ps: a packet back to
  // back with the latest one, or whose head is inside it (no gap can be before free_at).
  std::int64_t latest_begin_ps = 0;
  std::int32_t earlier_count = 0;  // next to the fields every hop reads; the intervals after
  std::array<Interval, kReservedIntervals - 1> earlier{};
};
static_assert(NocServer::kReservedIntervals >= 3, "merging the two oldest needs two earlier intervals");

// Out of line: room for one more earlier interval (drops the ended ones, else merges the two
// oldest), and a packet whose head is before the latest reservation (the gap search).
void make_room(NocServer& server, std::int64_t now);
std::int64_t reserve_in_gap(NocServer& server, std::int64_t head, std::int64_t serialisation, std::int64_t now);

// Reserves `serialisation` on `server` for a packet whose head arrives at `head` (picoseconds,
// >= `now`, engine now, which the callers check); returns when it starts. Inline up to the gap
// search: this runs for every hop of every packet (Noc::cross_links).
inline std::int64_t reserve(NocServer& server, std::int64_t head, std::int64_t serialisation, std::int64_t now) {
  const std::int64_t free_at = server.free_at.ps();
  if (head >= free_at) [[likely]] {
    if (head != free_at) {  // a new latest reservation; the old one is kept while it is ahead
      if (free_at > now) {
        if (server.earlier_count == NocServer::kReservedIntervals - 1) [[unlikely]] make_room(server, now);
        server.earlier[static_cast<std::size_t>(server.earlier_count++)] =
            NocServer::Interval{server.latest_begin_ps, free_at};
      } else {
        server.earlier_count = 0;  // every one has ended: no later packet can start before them
      }
      server.latest_begin_ps = head;
    }
    server.free_at = SimTime::from_ps(head + serialisation);
    return head;
  }
  if (head >= server.latest_begin_ps) {  // inside the latest reservation: after it
    server.free_at = SimTime::from_ps(free_at + serialisation);
    return free_at;
  }
  return reserve_in_gap(server, head, serialisation, now);
}

// pass_through() for a NocServer: the packet starts in the first gap at or after its head.
inline PacketFront pass_through_gap(NocServer& server, SimTime serialisation, PacketFront in, std::int64_t bytes,
                                    const BusyWindow& window, SimTime now) {
  CCLMESH_CHECK(in.head >= now, "a NoC packet's head is before engine now");
  const SimTime start = SimTime::from_ps(reserve(server, in.head.ps(), serialisation.ps(), now.ps()));
  return account_served(server, start, serialisation, in, bytes, window);
}

}  // namespace cclmesh::sim
