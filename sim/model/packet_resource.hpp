#pragma once
// Contention at packet granularity (DESIGN.md): every shared piece of hardware a packet crosses
// (a NoC link, an NIU, a DRAM channel, an ethernet wire, an ERISC) is a server with the time it
// next becomes free. A packet passes a chain of them; each one starts serving it when both the
// packet's head has arrived and the server is free. Servers are booked in the order packets reach their first server, so a run is
// deterministic and costs O(servers on the path) per packet, with no event per hop.

#include <algorithm>
#include <cstdint>

#include "sim/engine/time.hpp"

namespace cclmesh::sim {

// A span of simulated time inside which every server also sums the part of its busy time that
// falls in it (a diagnostic for performance work: what bounds an op's steady state, not its
// start-up or tail; tools/cclmesh's CCLMESH_NOC_STATS_WINDOW). Empty unless a tool sets it; it
// changes no simulated figure. Each chip holds its own (Chip::busy_window), so two systems
// simulated in one process do not share one; its servers are passed it.
struct BusyWindow {
  SimTime begin = SimTime::max();
  SimTime end = SimTime::max();
};

struct PacketResource {
  SimTime free_at;
  std::int64_t packets = 0;
  std::int64_t bytes = 0;
  SimTime busy;            // total time held
  SimTime busy_in_window;  // the part of `busy` inside the chip's busy window
};

// The overlap of [start, end) with `window`.
inline SimTime overlap_with(const BusyWindow& window, SimTime start, SimTime end) {
  const SimTime from = std::max(start, window.begin);
  const SimTime to = std::min(end, window.end);
  return to > from ? to - from : SimTime::zero();
}

// Where a packet is: its head may enter the next server at `head`; its tail cannot pass it
// before `tail` (a slower server upstream stretches the packet).
struct PacketFront {
  SimTime head;
  SimTime tail;

  PacketFront after(SimTime latency) const { return PacketFront{head + latency, tail + latency}; }
  static PacketFront at(SimTime t) { return PacketFront{t, t}; }
};

// Serves a packet of `bytes` taking `serialisation` at this server; returns the packet's front
// as it leaves (head = service start, tail = when its last byte is through). `window`: the
// owning chip's busy window.
//
// The server is held for the packet's own serialisation only, even when a slower server
// upstream makes the tail arrive later: the idle cycles in between go to other packets, as the
// NoC's virtual channels interleave flits of different packets on one physical link. Without
// this, a link shared by two sources slower than it could never run at its full rate.
// The statistics of a packet `server` serves from `start` for `serialisation`, and the packet's
// front as it leaves (every server kind: pass_through here, pass_through_gap in noc_server.hpp).
inline PacketFront account_served(PacketResource& server, SimTime start, SimTime serialisation, PacketFront in,
                                  std::int64_t bytes, const BusyWindow& window) {
  const SimTime served = start + serialisation;
  server.busy += serialisation;
  if (served > window.begin) [[unlikely]] server.busy_in_window += overlap_with(window, start, served);
  server.bytes += bytes;
  ++server.packets;
  return PacketFront{start, std::max(served, in.tail)};
}

inline PacketFront pass_through(PacketResource& server, SimTime serialisation, PacketFront in, std::int64_t bytes,
                                const BusyWindow& window) {
  const SimTime start = std::max(in.head, server.free_at);
  server.free_at = start + serialisation;
  return account_served(server, start, serialisation, in, bytes, window);
}

}  // namespace cclmesh::sim
