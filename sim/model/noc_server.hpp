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
// at or before engine now are dropped (every packet's head is at or after now, checked, so no
// later packet can use a gap before them); when the set is still full the two oldest are merged,
// losing the gap between them (a packet that would have fitted there waits, as it did with one
// `free_at`). The common case, a head at or after the last reservation, costs a compare and an
// append (or an extension of the last interval).
//
// `free_at` stays the end of the latest reservation, so "the server has nothing booked after t"
// still reads `free_at <= t`. The statistics (busy, bytes, packets, busy_in_window) sum each
// packet's own serialisation as before, whatever gap it takes.

#include <array>
#include <cstdint>

#include "sim/model/packet_resource.hpp"

namespace cclmesh::sim {

struct NocServer : PacketResource {
  static constexpr std::int32_t kReservedIntervals = 4;
  struct Interval {
    std::int64_t begin_ps;
    std::int64_t end_ps;
  };
  std::array<Interval, kReservedIntervals> reserved{};  // sorted, disjoint, not touching
  std::int32_t reserved_count = 0;
};

// Out of line: a reservation appended after the last one when the set is full, and a packet
// whose head is before the last reservation's end (the gap search).
void append_to_full(NocServer& server, std::int64_t begin, std::int64_t end, std::int64_t now);
std::int64_t reserve_in_gap(NocServer& server, std::int64_t head, std::int64_t serialisation, std::int64_t now);

// Reserves `serialisation` on `server` for a packet whose head arrives at `head` (picoseconds,
// >= `now`, engine now); returns when it starts. Inline up to the gap search: this runs for
// every hop of every packet (Noc::cross_links).
inline std::int64_t reserve(NocServer& server, std::int64_t head, std::int64_t serialisation, std::int64_t now) {
  const std::int64_t free_at = server.free_at.ps();
  if (head < free_at) return reserve_in_gap(server, head, serialisation, now);
  const std::int64_t end = head + serialisation;
  server.free_at = SimTime::from_ps(end);
  std::int32_t count = server.reserved_count;
  if (count > 0) {
    NocServer::Interval& last = server.reserved[static_cast<std::size_t>(count - 1)];
    if (last.end_ps == head) {  // back to back with the last one
      last.end_ps = end;
      return head;
    }
    if (last.end_ps <= now) {
      count = 0;  // every one has ended: no later packet can start before them
    } else if (count == NocServer::kReservedIntervals) {
      append_to_full(server, head, end, now);
      return head;
    }
  }
  server.reserved[static_cast<std::size_t>(count)] = NocServer::Interval{head, end};
  server.reserved_count = count + 1;
  return head;
}

// pass_through() for a NocServer: the packet starts in the first gap at or after its head.
inline PacketFront pass_through_gap(NocServer& server, SimTime serialisation, PacketFront in, std::int64_t bytes,
                                    const BusyWindow& window, SimTime now) {
  const SimTime start = SimTime::from_ps(reserve(server, in.head.ps(), serialisation.ps(), now.ps()));
  const SimTime served = start + serialisation;
  server.busy += serialisation;
  if (served > window.begin) [[unlikely]] server.busy_in_window += overlap_with(window, start, served);
  server.bytes += bytes;
  ++server.packets;
  return PacketFront{start, std::max(served, in.tail)};
}

}  // namespace cclmesh::sim
