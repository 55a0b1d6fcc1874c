#include "sim/model/noc.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "sim/engine/check.hpp"
#include "sim/engine/engine.hpp"
#include "sim/model/chip.hpp"
#include "sim/model/payload_buffer.hpp"

namespace cclmesh::sim {

namespace {

Bandwidth slower(Bandwidth a, Bandwidth b) { return a < b ? a : b; }

// `value` modulo `size`, in [0, size). A difference of two coordinates on the grid is within
// one size of it, so the common case needs no division (hops() runs for every ack and flush).
std::int32_t wrap(std::int32_t value, std::int32_t size) {
  if (value >= 0 && value < size) [[likely]] return value;
  if (value < 0 && value >= -size) return value + size;
  return ((value % size) + size) % size;
}

// The payload sampled from `source` for `target`: empty when nothing needs copying (either side
// stores no bytes); an empty payload lands as zeros.
PayloadBuffer sample(const MemoryRegion& source, std::uint64_t address, std::uint32_t bytes,
                     const MemoryRegion& target) {
  if (!source.stores_data() || !target.stores_data()) return {};
  return source.sample(address, bytes);
}

void land(MemoryRegion& target, std::uint64_t address, std::uint32_t bytes, const PayloadBuffer& data) {
  target.land(address, data, bytes);
}

}  // namespace

void AtomicFetch::await_suspend(std::coroutine_handle<>) {
  Engine& engine = Engine::current();
  state_->waiter = &engine.require_current_actor("atomic_inc_fetch");
  engine.park_current(WaitInfo{this, 0, nullptr});
}

Noc::Noc(Chip& chip, NocId id)
    : chip_(chip),
      engine_(chip.engine()),
      id_(id),
      grid_x_(chip.grid_x()),
      grid_y_(chip.grid_y()),
      flit_bytes_(chip.params().noc.flit_bytes),
      max_payload_(chip.params().noc.max_packet_payload_bytes),
      link_rate_(chip.params().noc.link_rate),
      multicast_rate_(chip.params().noc.multicast_rate),
      router_hop_(chip.params().noc.router_hop),
      niu_to_router_(chip.params().noc.niu_to_router),
      router_to_niu_(chip.params().noc.router_to_niu),
      request_setup_(chip.params().noc.request_setup),
      request_issue_(chip.params().noc.request_issue),
      links_(static_cast<std::size_t>(grid_x_ * grid_y_ * 2)) {}

// --- routing ---------------------------------------------------------------------------------

std::int32_t Noc::hops(CoreCoord from, CoreCoord to) const {
  if (id_ == NocId::Noc0) return wrap(to.x - from.x, grid_x_) + wrap(to.y - from.y, grid_y_);
  return wrap(from.x - to.x, grid_x_) + wrap(from.y - to.y, grid_y_);
}

// One router on, wrapping around the torus; a step is +-1, so no division (this runs for every
// hop of every packet).
CoreCoord Noc::step(CoreCoord at, Direction direction) const {
  const auto next = [this](std::int32_t value, std::int32_t size) {
    if (id_ == NocId::Noc0) return value + 1 == size ? 0 : value + 1;
    return value == 0 ? size - 1 : value - 1;
  };
  if (direction == Direction::X) return CoreCoord{next(at.x, grid_x_), at.y};
  return CoreCoord{at.x, next(at.y, grid_y_)};
}

NocServer& Noc::link_at(CoreCoord at, Direction direction) {
  return links_[static_cast<std::size_t>((at.y * grid_x_ + at.x) * 2 + (direction == Direction::X ? 0 : 1))];
}

const PacketResource& Noc::link(CoreCoord at, int dim) const {
  CCLMESH_CHECK(chip_.in_grid(at) && (dim == 0 || dim == 1), "no such NoC link");
  return links_[static_cast<std::size_t>((at.y * grid_x_ + at.x) * 2 + dim)];
}

template <typename OnLink>
void Noc::walk(CoreCoord from, CoreCoord to, OnLink&& on_link) const {
  CoreCoord at = from;
  auto along = [&](Direction d) {
    while (d == Direction::X ? at.x != to.x : at.y != to.y) {
      on_link(at, d);
      at = step(at, d);
    }
  };
  if (id_ == NocId::Noc0) {
    along(Direction::X);  // east first (REFERENCE 1.2)
    along(Direction::Y);  // then south
  } else {
    along(Direction::Y);  // north first
    along(Direction::X);  // then west
  }
}

std::vector<CoreCoord> Noc::route(CoreCoord from, CoreCoord to) const {
  std::vector<CoreCoord> routers{from};
  walk(from, to, [&](CoreCoord at, Direction d) { routers.push_back(step(at, d)); });
  return routers;
}

// --- timing ----------------------------------------------------------------------------------

// Back-pressure: a packet's flits are barely buffered in the routers, so when a server
// downstream makes it wait, its source NIU cannot push the tail out any sooner. After booking
// a packet's servers in path order, the source NIU is held until the latest tail time seen on
// the path, less that server's pipeline offset from the source. This throttles a source to what
// its path can take instead of letting it queue unbounded work on a congested link.
//
// The source NIU is the path's first server and a FIFO one (its packets come in booking order,
// from the NIU's line; back-pressure holds it past the packet's serialisation, which a gap could
// not take). The links and the target NIU serve packets in gaps (NocServer).
[[gnu::always_inline]] inline void Noc::note_on_path(PacketResource& server, PacketFront out, SimTime offset) {
  if (path_source_ == nullptr) path_source_ = &server;  // the source NIU is always booked first
  path_source_tail_ = std::max(path_source_tail_, out.tail - offset);
}

[[gnu::always_inline]] inline PacketFront Noc::serve(PacketResource& server, SimTime serialisation, PacketFront in,
                                                    std::int64_t bytes, SimTime offset) {
  const PacketFront out = pass_through(server, serialisation, in, bytes, chip_.busy_window());
  note_on_path(server, out, offset);
  return out;
}

[[gnu::always_inline]] inline PacketFront Noc::serve(NocServer& server, SimTime serialisation, PacketFront in,
                                                    std::int64_t bytes, SimTime offset) {
  CCLMESH_CHECK(path_source_ != nullptr, "a NoC path booked from a link or target NIU, not its source NIU");
  const PacketFront out = pass_through_gap(server, serialisation, in, bytes, chip_.busy_window(), engine_.now());
  note_on_path(server, out, offset);
  return out;
}

[[gnu::always_inline]] inline SimTime Noc::apply_backpressure() {
  CCLMESH_CHECK(path_source_ != nullptr, "back-pressure on an empty path");
  const SimTime source_tail = path_source_tail_;
  if (source_tail > path_source_->free_at) path_source_->free_at = source_tail;
  path_source_ = nullptr;
  path_source_tail_ = SimTime::zero();
  return source_tail;
}

PacketFront Noc::inject(Endpoint& from, SimTime depart, std::int64_t wire_bytes, Bandwidth cap) {
  NocPort& port = from.port(id_);
  return serve(port.inject_, transfer_time(wire_bytes, slower(port.inject_rate_, cap)), PacketFront::at(depart),
               wire_bytes, SimTime::zero());
}

// The serialisation of `wire_bytes` at the slower of `rate` and the link rate, given the one at
// the link rate: the same value as transfer_time(wire_bytes, slower(rate, link_rate_)), without
// a second division when the link is the slower (a NIU at least as fast as the links).
SimTime Noc::capped_by_link(std::int64_t wire_bytes, Bandwidth rate, SimTime on_link) const {
  return rate < link_rate_ ? transfer_time(wire_bytes, rate) : on_link;
}

// Inline writes and atomics leave through their own command buffers (REFERENCE 1.1: 4 per NoC;
// tt-metal's write-register and atomic buffers), so they do not queue behind a data write the
// NIU is still pushing out: their own server (NocPort::inject_control_, deliver's `control`), at
// the NIU rate.

// Every directed link of the route, in order: NoC0 east (+x) then south (+y), NoC1 north (-y)
// then west (-x), wrapping around (walk() gives the same links). Each link is served as serve()
// would (pass_through, then the running maximum for back-pressure), with the packet's front,
// the offset and that maximum kept in locals: this runs for every hop of every packet (~8 on
// a 10x12 grid), and through the members and a lambda per hop it cost ~450 instructions a
// packet.
PacketFront Noc::cross_links(CoreCoord from, CoreCoord to, PacketFront front, std::int64_t wire_bytes,
                             SimTime serialisation, SimTime& offset) {
  // Plain picosecond counts: std::max on SimTime returns a reference, which kept every one of
  // these in memory (a load and a store per hop each).
  std::int64_t head = front.head.ps();
  std::int64_t tail = front.tail.ps();
  std::int64_t at_offset = offset.ps();
  std::int64_t source_tail = path_source_tail_.ps();
  const std::int64_t serial = serialisation.ps();
  const std::int64_t hop = router_hop_.ps();
  const BusyWindow& window = chip_.busy_window();
  const std::int64_t window_begin = window.begin.ps();
  const std::int64_t now = engine_.now().ps();
  // Heads only move on along the path; the servers drop reservations that ended by now.
  CCLMESH_CHECK(head >= now, "a NoC packet's head is before engine now");
  const auto cross = [&](NocServer& link) {
    const std::int64_t start = reserve(link, head, serial, now);  // the first gap that fits (noc_server.hpp)
    const std::int64_t served = start + serial;
    link.busy += serialisation;
    if (served > window_begin) [[unlikely]] {
      link.busy_in_window += overlap_with(window, SimTime::from_ps(start), SimTime::from_ps(served));
    }
    link.bytes += wire_bytes;
    ++link.packets;
    if (served > tail) tail = served;
    const std::int64_t source_bound = tail - at_offset;
    if (source_bound > source_tail) source_tail = source_bound;
    head = start + hop;
    tail += hop;
    at_offset += hop;
  };
  NocServer* const links = links_.data();
  const std::int32_t gx = grid_x_;
  const std::int32_t gy = grid_y_;
  // links_[(y * gx + x) * 2 + 0] leaves (x, y) along x, [.. + 1] along y.
  if (id_ == NocId::Noc0) {
    const std::ptrdiff_t row = static_cast<std::ptrdiff_t>(from.y) * gx;
    for (std::int32_t x = from.x; x != to.x; x = x + 1 == gx ? 0 : x + 1) cross(links[(row + x) * 2]);
    for (std::int32_t y = from.y; y != to.y; y = y + 1 == gy ? 0 : y + 1) {
      cross(links[(static_cast<std::ptrdiff_t>(y) * gx + to.x) * 2 + 1]);
    }
  } else {
    for (std::int32_t y = from.y; y != to.y; y = y == 0 ? gy - 1 : y - 1) {
      cross(links[(static_cast<std::ptrdiff_t>(y) * gx + from.x) * 2 + 1]);
    }
    const std::ptrdiff_t row = static_cast<std::ptrdiff_t>(to.y) * gx;
    for (std::int32_t x = from.x; x != to.x; x = x == 0 ? gx - 1 : x - 1) cross(links[(row + x) * 2]);
  }
  path_source_tail_ = SimTime::from_ps(source_tail);
  offset = SimTime::from_ps(at_offset);
  return PacketFront{SimTime::from_ps(head), SimTime::from_ps(tail)};
}

// `order_floor`: the packet starts at the NIU no earlier (NocPort::last_arrival_at).
PacketFront Noc::absorb(Endpoint& to, PacketFront at_router, std::int64_t wire_bytes, Bandwidth cap, SimTime& offset,
                        SimTime order_floor) {
  NocPort& port = to.port(id_);
  offset += router_to_niu_;
  PacketFront in = at_router.after(router_to_niu_);
  in.head = std::max(in.head, order_floor);
  return serve(port.absorb_, transfer_time(wire_bytes, slower(port.absorb_rate_, cap)), in, wire_bytes, offset);
}

// A unicast packet: the source NIU (or its control buffer), the links, the target NIU, each held
// for the packet's serialisation at the slower of its own rate and the links' (worked out once
// at the link rate and reused where the link is the slower: the same values).
Noc::Delivery Noc::deliver(Endpoint& from, Endpoint& to, SimTime depart, std::int64_t wire_bytes,
                           std::int64_t dram_bytes, bool control) {
  depart = std::max(depart, engine_.now());  // a packet that waited for its NIU starts when booked
  const SimTime on_link = transfer_time(wire_bytes, link_rate_);
  NocPort& source = from.port(id_);
  const SimTime at_source = capped_by_link(wire_bytes, source.inject_rate_, on_link);
  PacketFront front = serve(control ? source.inject_control_ : source.inject_, at_source, PacketFront::at(depart),
                            wire_bytes, SimTime::zero());
  SimTime offset = niu_to_router_;
  front = cross_links(from.coord, to.coord, front.after(niu_to_router_), wire_bytes, on_link, offset);
  NocPort& target = to.port(id_);
  offset += router_to_niu_;
  // In order with this port's earlier packets to the same target (NocPort::last_arrival_at).
  SimTime& last_arrival = source.last_arrival_at(to.coord, engine_.now());
  front = front.after(router_to_niu_);
  front.head = std::max({front.head, last_arrival, source.multicast_last_arrival_});
  const SimTime at_target = capped_by_link(wire_bytes, target.absorb_rate_, on_link);
  front = serve(target.absorb_, at_target, front, wire_bytes, offset);
  last_arrival = front.head + at_target;
  const SimTime injected = apply_backpressure();
  const SimTime arrived = front.tail;
  SimTime landed = arrived;
  // The DRAM controller queues requests, so a busy channel does not stall the NoC worm.
  if (to.dram != nullptr && dram_bytes > 0) {
    front = pass_through_gap(to.dram->server(), transfer_time(dram_bytes, to.dram->rate()), front, dram_bytes,
                             chip_.busy_window(), engine_.now());
    landed = front.tail + to.dram->access_latency();
  }
  ++stats_.packets;
  return Delivery{injected, arrived, landed};
}

SimTime Noc::ack_latency(CoreCoord from, CoreCoord to) const {
  return niu_to_router_ + router_hop_ * hops(from, to) + router_to_niu_;
}

// --- helpers ---------------------------------------------------------------------------------

namespace {
// The look-up below fails with an AccessError (a user's bad address, not a broken invariant),
// reported out of line: it runs for every NoC request, and with the formatting inline the common
// path saved and restored four registers and set up a frame on every call.
[[noreturn, gnu::cold, gnu::noinline]] void fail_no_memory(const Chip& chip, CoreCoord core, AccessKind access,
                                                           std::uint64_t address, std::uint64_t bytes) {
  AccessError::Details d;
  d.chip = chip.id();
  d.core = core;
  d.memory = MemoryKind::None;
  d.access = access;
  d.address = address;
  d.bytes = bytes;
  d.reason = fmt::format("targets a tile without memory ({})", to_string(chip.tile(core)));
  throw AccessError(fault_time_now(), std::move(d));
}
}  // namespace

Endpoint& Noc::requester_endpoint(CoreCoord core, const char* operation) {
  Endpoint* e = chip_.endpoint(core);
  CCLMESH_CHECK(e != nullptr && e->can_request(),
                fmt::format("{} on {} of chip {}: requester {} is not a Tensix or ethernet core", operation,
                            to_string(id_), chip_.id(), to_string(core)));
  return *e;
}

Endpoint& Noc::target_endpoint(CoreCoord core, AccessKind access, std::uint64_t address, std::uint64_t bytes) {
  Endpoint* e = chip_.endpoint(core);
  if (e == nullptr) [[unlikely]] fail_no_memory(chip_, core, access, address, bytes);
  e->memory->check(address, bytes, access);
  return *e;
}

NocPort& Noc::port(CoreCoord core) { return requester_endpoint(core, "barrier").port(id_); }

NocPort& Noc::requester_port(Endpoint& requester) { return requester.port(id_); }

void NocPort::note_unbooked_elsewhere(CoreCoord to, int change) {
  for (auto it = unbooked_.begin(); it != unbooked_.end(); ++it) {
    if (it->first != to) continue;
    it->second += change;
    CCLMESH_CHECK(it->second >= 0, owner_ + ": more packets booked than issued");
    if (it->second == 0) {  // the order of the entries does not matter: the last one moves here
      *it = unbooked_.back();
      unbooked_.pop_back();
    }
    return;
  }
  CCLMESH_CHECK(change > 0, owner_ + ": a packet booked that was never issued");
  unbooked_.emplace_back(to, change);
}

// A target not in the list: the first entry whose packet is through by now is reused (no later
// packet can start before it anyway), else a new one.
SimTime& NocPort::add_last_arrival(CoreCoord to, SimTime now) {
  for (auto& entry : last_arrival_) {
    if (entry.second <= now) {
      entry = {to, SimTime::zero()};
      return entry.second;
    }
  }
  last_arrival_.emplace_back(to, SimTime::zero());
  return last_arrival_.back().second;
}

bool NocPort::has_unbooked(CoreCoord to) const {
  for (const auto& [core, count] : unbooked_) {
    if (core == to || core == Noc::kAnyCore) return true;
  }
  return false;
}

SimTime NocPort::book_control_request(SimTime now, SimTime issue_spacing, SimTime setup, SimTime serialisation) {
  const SimTime issue_at = std::max({now, next_issue_, issue_floor_});
  next_issue_ = issue_at + issue_spacing;
  const SimTime depart = std::max(issue_at, control_slot_free_) + setup;
  control_slot_free_ = depart + serialisation;
  return depart;
}

// A request holds a slot for setup plus its payload's serialisation at the requester's NIU rate
// (for a read, the response's payload). A multicast holds every slot, at the multicast rate:
// (inferred) one core's multicasts do not overlap, which puts the one-to-all stream at
// 8224 B / (8224 / 14 + 40 cycles) = 13.1 B/c, as measured (12.77-13.26, REFERENCE 1.3).
SimTime Noc::book(Endpoint& requester, std::int64_t hold_bytes, bool multicast) {
  NocPort& port = requester.port(id_);
  const Bandwidth rate = multicast ? slower(port.inject_rate_, multicast_rate_) : port.inject_rate_;
  return port.book_request(engine_.now(), request_issue_, request_setup_, transfer_time(hold_bytes, rate), multicast);
}

// A transaction of the port got its completion time (>= now): counted by time, no event of
// its own unless someone waits for all of its kind (NocPort::arm), or it completes the kind
// at once (NocPort::resolved).
void Noc::resolve(NocPort& port, NocBarrierKind kind, SimTime at) {
  port.resolved(kind, port.clock(kind)->resolve(at, engine_.now()));
}

// A packet books its path when its head reaches the front of its source NIU, not when it
// leaves its request slot: while the NIU is still pushing out earlier packets (held by
// back-pressure, so possibly for long), later ones wait in order, unbooked. Booking them at
// once would reserve NoC links and targets far into the future and make every other source's
// packet wait behind those reservations (servers are booked in order, with no gaps), which a
// core that keeps many writes in flight (a router receiver with transaction ids) would
// otherwise turn into a stall of the whole chip's traffic.
void Noc::drain_niu(NocPort& port) {
  port.niu_drain_scheduled_ = false;
  while (!port.niu_waiting_.empty() && port.inject_.free_at <= engine_.now()) {
    InlineTask start = std::move(port.niu_waiting_.front().start);
    port.note_unbooked(port.niu_waiting_.front().to, -1);
    port.niu_waiting_.pop_front();
    start();
  }
  if (!port.niu_waiting_.empty()) {
    port.niu_drain_scheduled_ = true;
    schedule(port.inject_.free_at, [this, p = &port] { drain_niu(*p); });
  }
}

// --- reads -----------------------------------------------------------------------------------

void Noc::read(CoreCoord requester, NocAddress source, std::uint64_t local_address, std::uint32_t bytes) {
  Endpoint& req = requester_endpoint(requester, "read");
  Endpoint& src = target_endpoint(source.core, AccessKind::Read, source.address, bytes);
  req.memory->check(local_address, bytes, AccessKind::Write);
  NocPort& port = req.port(id_);
  for (std::uint32_t offset = 0; offset < bytes; offset += max_payload_) {
    const std::uint32_t n = std::min(max_payload_, bytes - offset);
    ++port.reads_issued_;
    const SimTime depart = book(req, flit_bytes_ + n);
    depart_into_niu(req, depart, src.coord, [this, r = &req, s = &src, a = source.address + offset, l = local_address + offset, n, depart] {
      start_read(r, s, a, l, n, depart);
    });
  }
}

void Noc::start_read(Endpoint* requester, Endpoint* source, std::uint64_t source_address, std::uint64_t local_address,
                     std::uint32_t bytes, SimTime depart) {
  const Delivery request = deliver(*requester, *source, depart, flit_bytes_, 0);  // header only
  schedule(request.landed, [=, this] { respond_read(requester, source, source_address, local_address, bytes); });
}

void Noc::respond_read(Endpoint* requester, Endpoint* source, std::uint64_t source_address,
                       std::uint64_t local_address, std::uint32_t bytes) {
  SimTime ready = engine_.now();
  if (source->dram != nullptr) {
    const PacketFront served =
        pass_through_gap(source->dram->server(), transfer_time(bytes, source->dram->rate()), PacketFront::at(ready),
                         bytes, chip_.busy_window(), engine_.now());
    ready = served.tail + source->dram->access_latency();
  }
  PayloadBuffer data = sample(*source->memory, source_address, bytes, *requester->memory);
  const Delivery response = deliver(*source, *requester, ready, flit_bytes_ + bytes, 0);
  stats_.payload_bytes += bytes;
  NocPort* port = &requester->port(id_);
  schedule(response.landed, [=, data = std::move(data)] {
    land(*requester->memory, local_address, bytes, data);
    ++port->reads_acked_;
    port->progress(NocBarrierKind::Reads);
  });
}

// --- writes ----------------------------------------------------------------------------------

void Noc::write(CoreCoord requester, std::uint64_t local_address, NocAddress destination, std::uint32_t bytes,
                WriteAck ack) {
  Endpoint& req = requester_endpoint(requester, "write");
  req.memory->check(local_address, bytes, AccessKind::Read);
  Endpoint& dst = target_endpoint(destination.core, AccessKind::Write, destination.address, bytes);
  NocPort& port = req.port(id_);
  for (std::uint32_t offset = 0; offset < bytes; offset += max_payload_) {
    const std::uint32_t n = std::min(max_payload_, bytes - offset);
    port.flushes_.issue(engine_.now());
    if (ack == WriteAck::NonPosted) port.acks_.issue(engine_.now());
    const SimTime depart = book(req, flit_bytes_ + n);
    depart_into_niu(req, depart, dst.coord, [this, r = &req, d = &dst, l = local_address + offset, a = destination.address + offset, n, ack,
                      depart] { start_write(r, d, l, a, n, ack, depart, kNoTrid); });
  }
}

void Noc::write_with_trid(CoreCoord requester, std::uint64_t local_address, NocAddress destination,
                          std::uint32_t bytes, std::uint32_t trid) {
  Endpoint& req = requester_endpoint(requester, "write_with_trid");
  NocPort& port = req.port(id_);
  CCLMESH_CHECK(trid < kNocTransactionIds,
                fmt::format("write_with_trid on {} of chip {} from {}: transaction id {} (the NoC has ids 0..{})",
                            to_string(id_), chip_.id(), to_string(requester), trid, kNocTransactionIds - 1));
  CCLMESH_CHECK(bytes > 0 && bytes <= max_payload_,
                fmt::format("write_with_trid on {} of chip {} from {}: {} B is not one packet (1..{} B)",
                            to_string(id_), chip_.id(), to_string(requester), bytes, max_payload_));
  req.memory->check(local_address, bytes, AccessKind::Read);
  Endpoint& dst = target_endpoint(destination.core, AccessKind::Write, destination.address, bytes);
  port.flushes_.issue(engine_.now());
  port.acks_.issue(engine_.now());
  port.issue_trid_write(trid, true);
  const SimTime depart = book(req, flit_bytes_ + bytes);
  depart_into_niu(req, depart, dst.coord, [this, r = &req, d = &dst, local_address, a = destination.address, bytes, depart, trid] {
    start_write(r, d, local_address, a, bytes, WriteAck::NonPosted, depart, trid);
  });
}

void Noc::start_write(Endpoint* requester, Endpoint* target, std::uint64_t local_address, std::uint64_t address,
                      std::uint32_t bytes, WriteAck ack, SimTime depart, std::uint32_t trid) {
  PayloadBuffer data = sample(*requester->memory, local_address, bytes, *target->memory);
  const Delivery delivery = deliver(*requester, *target, depart, flit_bytes_ + bytes, bytes);
  stats_.payload_bytes += bytes;
  NocPort* port = &requester->port(id_);
  resolve(*port, NocBarrierKind::WritesFlushed, delivery.injected);
  if (trid != kNoTrid) port->resolve_trid(trid, NocBarrierKind::WritesFlushed, delivery.injected);
  if (target->dram != nullptr) {
    land_in_dram(requester, target, address, std::move(data), bytes, ack, delivery, trid);
    return;
  }
  schedule(delivery.landed, [=, this, data = std::move(data)] {
    land(*target->memory, address, bytes, data);
    if (ack == WriteAck::Posted) return;
    const SimTime acked = engine_.now() + ack_latency(target->coord, requester->coord);
    resolve(*port, NocBarrierKind::Writes, acked);
    if (trid != kNoTrid) port->resolve_trid(trid, NocBarrierKind::Writes, acked);
  });
}

// DRAM order (docs/sim_model.md): the controller takes a channel's requests in the order they
// reach it, so a write's bytes are in the store from its arrival (a read samples the store at
// its own request's arrival, respond_read), while its ack waits for the channel's service
// (`delivery.landed`, unchanged). A read that follows a write on one NoC and route arrives after
// it and so gets its bytes, even when the write still waits in a busy channel.
//
// Nothing watches a DRAM channel (no kernel runs there), so the bytes need no event: they are
// deferred to the arrival's place (MemoryRegion::defer_land), taking the sequence number the
// landing event would have had. The ack is an event in that number's place only when a barrier
// or a polling kernel waits for this port's acks now; otherwise it only moves a counter kept by
// time and its event is skipped too (docs/sim_model.md, "Skipped events"). A watched channel,
// or the tests' switch, gives the bytes an event at the arrival and the landing one of its own.
void Noc::land_in_dram(Endpoint* requester, Endpoint* target, std::uint64_t address, PayloadBuffer data,
                       std::uint32_t bytes, WriteAck ack, const Delivery& delivery, std::uint32_t trid) {
  NocPort* port = &requester->port(id_);
  const auto acknowledge = [this, port, requester, target, trid] {
    const SimTime acked = engine_.now() + ack_latency(target->coord, requester->coord);
    resolve(*port, NocBarrierKind::Writes, acked);
    if (trid != kNoTrid) port->resolve_trid(trid, NocBarrierKind::Writes, acked);
  };
  if (!skip_unwatched_dram_landings_ || !target->memory->can_defer_landings()) {
    schedule(delivery.arrived,
             [target, address, bytes, data = std::move(data)] { land(*target->memory, address, bytes, data); });
    // A posted write's event too: the channel is busy with it until then, and a run ends there,
    // as where a skipped one ends.
    schedule(delivery.landed, [acknowledge, ack] {
      if (ack == WriteAck::NonPosted) acknowledge();
    });
    return;
  }
  const std::uint64_t sequence = engine_.skip_event(delivery.landed);
  target->memory->defer_land(engine_, delivery.arrived, sequence, address, std::move(data), bytes);
  if (ack == WriteAck::Posted) return;
  if (port->wanted(NocBarrierKind::Writes)) {
    engine_.schedule_reserved(delivery.landed, sequence, acknowledge);
    return;
  }
  const SimTime acked = delivery.landed + ack_latency(target->coord, requester->coord);
  port->resolve_unseen_ack(acked, delivery.landed, sequence);
  if (trid != kNoTrid) port->resolve_trid(trid, NocBarrierKind::Writes, acked);
}

void Noc::write_u32(CoreCoord requester, NocAddress destination, std::uint32_t value, WriteAck ack) {
  Endpoint& req = requester_endpoint(requester, "write_u32");
  Endpoint& dst = target_endpoint(destination.core, AccessKind::Write, destination.address, 4);
  dst.memory->check_word(destination.address, AccessKind::Write);
  NocPort& port = req.port(id_);
  port.flushes_.issue(engine_.now());
  if (ack == WriteAck::NonPosted) port.acks_.issue(engine_.now());
  issue_control(req, dst.coord, [this, r = &req, d = &dst, a = destination.address, value, ack](SimTime depart,
                                                                                                 bool control) {
    const Delivery delivery = deliver(*r, *d, depart, flit_bytes_, 4, control);  // the value rides in the header
    NocPort* p = &r->port(id_);
    resolve(*p, NocBarrierKind::WritesFlushed, delivery.injected);
    if (d->dram != nullptr) {
      PayloadBuffer word;
      if (d->memory->stores_data()) {
        word = PayloadBuffer::uninitialised(4);
        for (std::uint32_t i = 0; i < 4; ++i) word.data()[i] = static_cast<std::uint8_t>(value >> (8 * i));  // little-endian
      }
      land_in_dram(r, d, a, std::move(word), 4, ack, delivery, kNoTrid);
      return;
    }
    schedule(delivery.landed, [=, this] {
      d->memory->write_u32(a, value);
      if (ack == WriteAck::Posted) return;
      resolve(*p, NocBarrierKind::Writes, engine_.now() + ack_latency(d->coord, r->coord));
    });
  });
}

// --- multicast -------------------------------------------------------------------------------

void Noc::multicast_write(CoreCoord requester, std::uint64_t local_address, CoreRect destinations,
                          std::uint64_t address, std::uint32_t bytes, MulticastOptions options) {
  Endpoint& req = requester_endpoint(requester, "multicast_write");
  req.memory->check(local_address, bytes, AccessKind::Read);
  if (!chip_.in_grid(destinations.start) || !chip_.in_grid(destinations.end) ||
      destinations.start.x > destinations.end.x || destinations.start.y > destinations.end.y) {
    throw SimFault(fault_time_now(),
                   fmt::format("chip {}: multicast rectangle {}..{} is not a start <= end rectangle inside the {}x{} grid",
                               chip_.id(), to_string(destinations.start), to_string(destinations.end), grid_x_, grid_y_));
  }
  std::vector<Endpoint*> targets;
  for (CoreCoord c : chip_.tensix_cores()) {
    if (!destinations.contains(c) || (!options.include_self && c == requester)) continue;
    targets.push_back(&target_endpoint(c, AccessKind::Write, address, bytes));
  }
  if (targets.empty()) {
    throw SimFault(fault_time_now(), fmt::format("chip {}: multicast rectangle {}..{} holds no Tensix core to write",
                                                 chip_.id(), to_string(destinations.start), to_string(destinations.end)));
  }
  NocPort& port = req.port(id_);
  for (std::uint32_t offset = 0; offset < bytes; offset += max_payload_) {
    const std::uint32_t n = std::min(max_payload_, bytes - offset);
    port.flushes_.issue(engine_.now());
    if (options.ack == WriteAck::NonPosted) port.acks_.issue(engine_.now());
    const SimTime depart = book(req, flit_bytes_ + n, true);
    depart_into_niu(req, depart, kAnyCore, [=, this, r = &req] {
      start_multicast(r, targets, destinations, local_address + offset, address + offset, n, options.ack, depart);
    });
  }
}

void Noc::start_multicast(Endpoint* requester, std::vector<Endpoint*> targets, CoreRect rect,
                          std::uint64_t local_address, std::uint64_t address, std::uint32_t bytes, WriteAck ack,
                          SimTime depart) {
  auto data = std::make_shared<const PayloadBuffer>(
      sample(*requester->memory, local_address, bytes, *targets.front()->memory));
  std::vector<Endpoint*> target_at(static_cast<std::size_t>(grid_x_ * grid_y_), nullptr);
  for (Endpoint* t : targets) target_at[static_cast<std::size_t>(t->coord.y * grid_x_ + t->coord.x)] = t;

  const std::int64_t wire_bytes = flit_bytes_ + bytes;
  const Bandwidth rate = slower(link_rate_, multicast_rate_);
  const SimTime serialisation = transfer_time(wire_bytes, rate);
  depart = std::max(depart, engine_.now());  // as deliver(): every head at or after now
  PacketFront front = inject(*requester, depart, wire_bytes, rate);
  front = front.after(niu_to_router_);
  SimTime offset = niu_to_router_;

  // The tree is the union of the unicast routes to every target: along the first dimension of
  // this NoC's routing order, branching into the second dimension at every target column/row.
  const Direction first = id_ == NocId::Noc0 ? Direction::X : Direction::Y;
  const Direction second = id_ == NocId::Noc0 ? Direction::Y : Direction::X;
  auto coord = [](CoreCoord c, Direction d) { return d == Direction::X ? c.x : c.y; };
  auto size = [&](Direction d) { return d == Direction::X ? grid_x_ : grid_y_; };
  auto distance = [&](std::int32_t from, std::int32_t to, Direction d) {
    return id_ == NocId::Noc0 ? wrap(to - from, size(d)) : wrap(from - to, size(d));
  };
  auto farthest = [&](CoreCoord from, Direction d) {
    std::int32_t steps = 0;
    for (std::int32_t v = coord(rect.start, d); v <= coord(rect.end, d); ++v) {
      steps = std::max(steps, distance(coord(from, d), v, d));
    }
    return steps;
  };

  SimTime last_ack = engine_.now();
  NocPort& source = requester->port(id_);
  SimTime tree_last_arrival = source.multicast_last_arrival_;
  auto branch = [&](CoreCoord at, PacketFront branch_front, SimTime branch_offset) {
    const std::int32_t steps = farthest(at, second);
    for (std::int32_t j = 0; j <= steps; ++j) {
      Endpoint* target = target_at[static_cast<std::size_t>(at.y * grid_x_ + at.x)];
      if (target != nullptr) {
        SimTime target_offset = branch_offset;
        SimTime floor = source.multicast_last_arrival_;
        for (const auto& [core, at_time] : source.last_arrival_) {
          if (core == target->coord) floor = std::max(floor, at_time);
        }
        const PacketFront absorbed = absorb(*target, branch_front, wire_bytes, rate, target_offset, floor);
        const SimTime landed = absorbed.tail;
        tree_last_arrival = std::max(tree_last_arrival, absorbed.head +
                                                         transfer_time(wire_bytes, slower(target->port(id_).absorb_rate_, rate)));
        last_ack = std::max(last_ack, landed + ack_latency(at, requester->coord));
        schedule(landed, [target, address, bytes, data] { land(*target->memory, address, bytes, *data); });
      }
      if (j < steps) {
        branch_front =
            serve(link_at(at, second), serialisation, branch_front, wire_bytes, branch_offset).after(router_hop_);
        branch_offset += router_hop_;
        at = step(at, second);
      }
    }
  };
  CoreCoord at = requester->coord;
  const std::int32_t steps = farthest(at, first);
  const std::int32_t lo = coord(rect.start, first);
  const std::int32_t hi = coord(rect.end, first);
  for (std::int32_t k = 0; k <= steps; ++k) {
    if (coord(at, first) >= lo && coord(at, first) <= hi) branch(at, front, offset);
    if (k < steps) {
      front = serve(link_at(at, first), serialisation, front, wire_bytes, offset).after(router_hop_);
      offset += router_hop_;
      at = step(at, first);
    }
  }
  source.multicast_last_arrival_ = tree_last_arrival;
  // The whole tree moves as one worm: a stalled branch holds the source.
  const SimTime injected = apply_backpressure();
  ++stats_.packets;
  stats_.payload_bytes += bytes;

  NocPort* port = &requester->port(id_);
  resolve(*port, NocBarrierKind::WritesFlushed, injected);
  if (ack == WriteAck::NonPosted) resolve(*port, NocBarrierKind::Writes, last_ack);
}

// --- atomics ---------------------------------------------------------------------------------

void Noc::atomic_inc(CoreCoord requester, NocAddress destination, std::uint32_t increment) {
  issue_atomic(requester, destination, increment, nullptr);
}

AtomicFetch Noc::atomic_inc_fetch(CoreCoord requester, NocAddress destination, std::uint32_t increment) {
  auto state = std::make_shared<AtomicFetch::State>();
  issue_atomic(requester, destination, increment, state);
  return AtomicFetch{state, fmt::format("the return of an atomic increment from chip {} core {} to core {} word {:#x}",
                                        chip_.id(), to_string(requester), to_string(destination.core),
                                        destination.address)};
}

void Noc::issue_atomic(CoreCoord requester, NocAddress destination, std::uint32_t increment,
                       std::shared_ptr<AtomicFetch::State> result) {
  Endpoint& req = requester_endpoint(requester, "atomic_inc");
  Endpoint& dst = target_endpoint(destination.core, AccessKind::Atomic, destination.address, 4);
  if (dst.kind == TileKind::Dram) {
    AccessError::Details d;
    d.chip = chip_.id();
    d.core = destination.core;
    d.memory = MemoryKind::Dram;
    d.unit = chip_.dram_channel_of(destination.core);
    d.access = AccessKind::Atomic;
    d.address = destination.address;
    d.bytes = 4;
    d.memory_bytes = dst.memory->size_bytes();
    d.reason = "is not allowed: NoC atomics act on L1 words only";
    throw AccessError(fault_time_now(), std::move(d));
  }
  dst.memory->check_word(destination.address, AccessKind::Atomic);
  NocPort& port = req.port(id_);
  port.atomics_.issue(engine_.now());
  issue_control(req, dst.coord, [this, r = &req, d = &dst, a = destination.address, increment, result](
                                     SimTime depart, bool control) {
    const Delivery delivery = deliver(*r, *d, depart, flit_bytes_, 0, control);  // header-only packet
    schedule(delivery.landed, [=, this] {
      const std::uint32_t old = d->memory->atomic_add_u32(a, increment);
      NocPort* p = &r->port(id_);
      const SimTime acked = engine_.now() + ack_latency(d->coord, r->coord);
      resolve(*p, NocBarrierKind::Atomics, acked);
      if (!result) return;
      schedule(acked, [result, old] {  // the old value comes back with the ack
        result->done = true;
        result->old_value = old;
        if (Actor* waiter = std::exchange(result->waiter, nullptr)) waiter->engine()->wake(*waiter);
      });
    });
  });
}

}  // namespace cclmesh::sim
