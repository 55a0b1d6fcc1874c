#pragma once
// One of a chip's two NoCs (REFERENCE 1.1-1.3): a 2D torus of routers in NoC0 coordinates;
// NoC0 routes +x then +y, NoC1 -y then -x, both wrapping around.
//
// Timing, at packet granularity (one header flit plus up to max_packet_payload_bytes):
// - A request takes the requester's issue spacing and one of its request slots (NocPort), then
//   after `request_setup` its first flit enters the requester's NIU.
// - The packet then passes, in order, the source NIU (injection rate), every directed link of its
//   route (link rate, one router hop of latency each, niu_to_router / router_to_niu at the ends)
//   and the target NIU (absorption rate); DRAM targets add their channel server.
// - Every server is held for the packet's own serialisation only (virtual channels interleave
//   flits of different packets); a packet's tail still cannot pass a server before it reached
//   it. Back-pressure: the source NIU is held until the packet's tail can leave it, given every
//   wait downstream, so a source cannot queue unbounded work on a congested path.
// - A packet books its whole path at once, so a link, target NIU or DRAM channel may hold
//   reservations for packets whose heads get there later; it serves a packet in an idle gap
//   before them when the packet fits (NocServer, noc_server.hpp), as a router arbitrates the
//   heads that are at it. The source NIU stays first come, first served. A core's packets to
//   one target still arrive in order (NocPort::last_arrival_at).
// - A multicast holds all its requester's slots (one core's multicasts do not overlap) and is
//   serialised at the multicast rate on every server of its tree.
// - Reads send a header-only request; the target's NIU sends the data back on the same NoC.
//   Atomics and inline word writes are header-only packets. Acks (write acks, atomic returns)
//   travel on the response virtual channel and are modelled by latency only.
// Data is sampled from the source when the packet starts injecting and written to the target
// when its last byte lands, so races between kernels show. A DRAM channel takes requests in the
// order they reach it: a write's bytes are in its store from the write's arrival, a read samples
// it at the read request's arrival; the channel's service delays only the ack and the response.
//
// All operations are non-blocking and may be called from a fiber, a process or an event; the
// barriers park until this core's transactions of a kind are done.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sim/engine/engine.hpp"
#include "sim/engine/time.hpp"
#include "sim/model/core_coord.hpp"
#include "sim/model/noc_port.hpp"
#include "sim/model/noc_server.hpp"
#include "sim/model/packet_resource.hpp"
#include "sim/model/payload_buffer.hpp"
#include "sim/model/sim_fault.hpp"

namespace cclmesh::sim {

class Chip;
class Engine;
struct Endpoint;

// A byte address on a NoC: a core (NoC0 coordinates) and a local address in its L1, or in the
// DRAM channel behind a DRAM endpoint.
struct NocAddress {
  CoreCoord core;
  std::uint64_t address = 0;
};

enum class WriteAck : std::uint8_t { NonPosted, Posted };

struct MulticastOptions {
  bool include_self = false;  // tt-metal's *_loopback_src variants
  WriteAck ack = WriteAck::NonPosted;
};

// The old value an atomic increment returns, once its response is back.
class AtomicFetch final : public WaitTarget {
 public:
  struct State {
    bool done = false;
    std::uint32_t old_value = 0;
    Actor* waiter = nullptr;
  };
  AtomicFetch(std::shared_ptr<State> state, std::string what) : state_(std::move(state)), what_(std::move(what)) {}
  AtomicFetch(const AtomicFetch&) = delete;
  AtomicFetch& operator=(const AtomicFetch&) = delete;
  ~AtomicFetch() {
    if (state_) state_->waiter = nullptr;
  }
  bool await_ready() const { return state_->done; }
  void await_suspend(std::coroutine_handle<>);
  std::uint32_t await_resume() const { return state_->old_value; }
  std::string describe_wait(std::int64_t) const override { return what_; }

 private:
  std::shared_ptr<State> state_;
  std::string what_;
};

struct NocStats {
  std::int64_t packets = 0;
  std::int64_t payload_bytes = 0;
};

class Noc {
 public:
  Noc(Chip& chip, NocId id);
  Noc(const Noc&) = delete;
  Noc& operator=(const Noc&) = delete;

  NocId id() const { return id_; }

  // Routing on this NoC.
  std::int32_t hops(CoreCoord from, CoreCoord to) const;
  // The routers a packet visits from `from` to `to`, both included.
  std::vector<CoreCoord> route(CoreCoord from, CoreCoord to) const;

  // --- operations (tt-metal dataflow names in brackets) -----------------------------------
  // [noc_async_read] `bytes` from `source` into the requester's own L1 at `local_address`.
  void read(CoreCoord requester, NocAddress source, std::uint64_t local_address, std::uint32_t bytes);
  // [noc_async_write] `bytes` from the requester's L1 at `local_address` to `destination`.
  void write(CoreCoord requester, std::uint64_t local_address, NocAddress destination, std::uint32_t bytes,
             WriteAck ack = WriteAck::NonPosted);
  // [noc_async_write_one_packet_with_trid] one packet (at most max_packet_payload_bytes) whose
  // flush and ack are also counted for transaction id `trid` (< kNocTransactionIds), as well
  // as in the port's barriers: NocPort::trid_writes_flushed / trid_writes_acked.
  void write_with_trid(CoreCoord requester, std::uint64_t local_address, NocAddress destination, std::uint32_t bytes,
                       std::uint32_t trid);
  // [noc_inline_dw_write] a 32-bit value carried in the header.
  void write_u32(CoreCoord requester, NocAddress destination, std::uint32_t value, WriteAck ack = WriteAck::NonPosted);
  // [noc_async_write_multicast] to every Tensix core in `destinations` (NoC0 coordinates).
  void multicast_write(CoreCoord requester, std::uint64_t local_address, CoreRect destinations,
                       std::uint64_t address, std::uint32_t bytes, MulticastOptions options = {});
  // [noc_semaphore_inc] a 32-bit atomic increment of an L1 word.
  void atomic_inc(CoreCoord requester, NocAddress destination, std::uint32_t increment);
  // The same, with the old value delivered to whoever awaits the result.
  [[nodiscard]] AtomicFetch atomic_inc_fetch(CoreCoord requester, NocAddress destination, std::uint32_t increment);

  // --- barriers (awaiters; block_on(...) from a fiber) -----------------------------------
  NocPort& port(CoreCoord core);
  NocBarrier read_barrier(CoreCoord core) { return port(core).barrier(NocBarrierKind::Reads); }
  NocBarrier write_barrier(CoreCoord core) { return port(core).barrier(NocBarrierKind::Writes); }
  NocBarrier writes_flushed(CoreCoord core) { return port(core).barrier(NocBarrierKind::WritesFlushed); }
  NocBarrier atomic_barrier(CoreCoord core) { return port(core).barrier(NocBarrierKind::Atomics); }

  // The directed link leaving router `at` along x (dim 0) or y (dim 1) in this NoC's direction.
  const PacketResource& link(CoreCoord at, int dim) const;
  const NocStats& stats() const { return stats_; }
  // Whether a write into DRAM that nothing watches lands without an event of its own
  // (docs/sim_model.md, "Skipped events"; on by default). Off only in tests that check a run
  // is the same either way.
  void set_skip_unwatched_dram_landings(bool skip) { skip_unwatched_dram_landings_ = skip; }

 private:
  struct Delivery {
    SimTime injected;  // last byte left the source NIU
    SimTime arrived;   // last byte through the target's NIU (for DRAM: the request reached the channel)
    SimTime landed;    // last byte in the target memory (for DRAM: the channel has served it)
  };
  // One server a packet passed, for the back-pressure pass: when its tail left it, and the
  // pipeline latency from the source NIU to it.
  enum class Direction : std::uint8_t { X, Y };

  Endpoint& requester_endpoint(CoreCoord core, const char* operation);
  NocPort& requester_port(Endpoint& requester);
  Endpoint& target_endpoint(CoreCoord core, AccessKind access, std::uint64_t address, std::uint64_t bytes);
  std::uint32_t packet_count(std::uint32_t bytes) const;
  SimTime book(Endpoint& requester, std::int64_t hold_bytes, bool multicast = false);
  template <typename F>
  void schedule(SimTime when, F&& action) {
    engine_.schedule_at(when, std::forward<F>(action));
  }
  // At `depart` the request leaves its slot for the requester's NIU: `start` books the packet's
  // path now if the NIU is free and nothing waits before it, else in order once it is
  // (drain_niu).
  // `to`: the packet's target (kAnyCore for a multicast), for the ordering check below.
  template <typename F>
  void depart_into_niu(Endpoint& requester, SimTime depart, CoreCoord to, F&& start);
  // An inline write or atomic, `start(depart, control)`: through the core's own command buffer
  // for them (REFERENCE 1.1: 4 command buffers; tt-metal's inline-write and atomic buffers),
  // its own request slot and NIU server (inject_control), so it waits neither for the data
  // requests' slots nor behind their back-pressure. Unless a packet to the same core (or a
  // multicast) is issued and not yet booked: then in line behind it like a data packet, as
  // one VC per path keeps a core's packets to one target in order (REFERENCE 5: "the write
  // is ordered first").
  template <typename F>
  void issue_control(Endpoint& requester, CoreCoord to, F&& start);
  void drain_niu(NocPort& port);

 public:
  static constexpr CoreCoord kAnyCore{-1, -1};  // a multicast's target, for the ordering rule

 private:

  NocServer& link_at(CoreCoord at, Direction direction);
  CoreCoord step(CoreCoord at, Direction direction) const;
  template <typename OnLink>
  void walk(CoreCoord from, CoreCoord to, OnLink&& on_link) const;
  PacketFront serve(PacketResource& server, SimTime serialisation, PacketFront in, std::int64_t bytes, SimTime offset);
  PacketFront serve(NocServer& server, SimTime serialisation, PacketFront in, std::int64_t bytes, SimTime offset);
  void note_on_path(PacketResource& server, PacketFront out, SimTime offset);
  SimTime apply_backpressure();
  PacketFront cross_links(CoreCoord from, CoreCoord to, PacketFront front, std::int64_t wire_bytes,
                          SimTime serialisation, SimTime& offset);
  SimTime capped_by_link(std::int64_t wire_bytes, Bandwidth rate, SimTime on_link) const;
  PacketFront inject(Endpoint& from, SimTime depart, std::int64_t wire_bytes, Bandwidth cap);
  PacketFront absorb(Endpoint& to, PacketFront at_router, std::int64_t wire_bytes, Bandwidth cap, SimTime& offset,
                     SimTime order_floor);
  Delivery deliver(Endpoint& from, Endpoint& to, SimTime depart, std::int64_t wire_bytes, std::int64_t dram_bytes,
                   bool control = false);
  SimTime ack_latency(CoreCoord from, CoreCoord to) const;
  void resolve(NocPort& port, NocBarrierKind kind, SimTime at);

  void start_read(Endpoint* requester, Endpoint* source, std::uint64_t source_address, std::uint64_t local_address,
                  std::uint32_t bytes, SimTime depart);
  void respond_read(Endpoint* requester, Endpoint* source, std::uint64_t source_address, std::uint64_t local_address,
                    std::uint32_t bytes);
  static constexpr std::uint32_t kNoTrid = ~std::uint32_t{0};
  void start_write(Endpoint* requester, Endpoint* target, std::uint64_t local_address, std::uint64_t address,
                   std::uint32_t bytes, WriteAck ack, SimTime depart, std::uint32_t trid);
  // A write's bytes reaching a DRAM channel (docs/sim_model.md, "DRAM order"): in the channel's
  // store from the write's arrival, so every request that arrives after it sees them; its ack
  // after the channel has served it (`delivery.landed`).
  void land_in_dram(Endpoint* requester, Endpoint* target, std::uint64_t address, PayloadBuffer data,
                    std::uint32_t bytes, WriteAck ack, const Delivery& delivery, std::uint32_t trid);
  void start_multicast(Endpoint* requester, std::vector<Endpoint*> targets, CoreRect rect,
                       std::uint64_t local_address, std::uint64_t address, std::uint32_t bytes, WriteAck ack,
                       SimTime depart);
  void issue_atomic(CoreCoord requester, NocAddress destination, std::uint32_t increment,
                    std::shared_ptr<AtomicFetch::State> result);

  Chip& chip_;
  Engine& engine_;
  NocId id_;
  std::int32_t grid_x_;
  std::int32_t grid_y_;
  std::int64_t flit_bytes_;
  std::uint32_t max_payload_;
  Bandwidth link_rate_;
  Bandwidth multicast_rate_;
  SimTime router_hop_;
  SimTime niu_to_router_;
  SimTime router_to_niu_;
  SimTime request_setup_;
  SimTime request_issue_;
  std::vector<NocServer> links_;  // (y * grid_x + x) * 2 + {0: x link, 1: y link}
  // The packet being booked: its first server (the source NIU) and the latest tail seen on its
  // path less that server's pipeline offset (the max starts at zero), all apply_backpressure()
  // needs (a list of the stages cost a push per hop).
  PacketResource* path_source_ = nullptr;
  SimTime path_source_tail_;
  NocStats stats_;
  bool skip_unwatched_dram_landings_ = true;
};

template <typename F>
void Noc::depart_into_niu(Endpoint& requester, SimTime depart, CoreCoord to, F&& start) {
  NocPort* port = &requester_port(requester);
  port->note_unbooked(to, +1);
  schedule(depart, [this, port, to, start = std::forward<F>(start)]() mutable {
    if (port->niu_waiting_.empty() && port->inject_.free_at <= engine_.now()) {
      port->note_unbooked(to, -1);
      start();
      return;
    }
    port->niu_waiting_.push_back(NocPort::WaitingPacket{to, InlineTask(std::move(start))});
    if (!port->niu_drain_scheduled_) {
      port->niu_drain_scheduled_ = true;
      schedule(port->inject_.free_at, [this, port] { drain_niu(*port); });
    }
  });
}

template <typename F>
void Noc::issue_control(Endpoint& requester, CoreCoord to, F&& start) {
  NocPort& port = requester_port(requester);
  if (port.has_unbooked(to)) {
    const SimTime depart = book(requester, flit_bytes_);
    depart_into_niu(requester, depart, to, [start = std::forward<F>(start), depart]() mutable { start(depart, false); });
    return;
  }
  const SimTime depart = port.book_control_request(engine_.now(), request_issue_, request_setup_,
                                                   transfer_time(flit_bytes_, port.inject_rate_));
  schedule(depart, [start = std::forward<F>(start), depart]() mutable { start(depart, true); });
}

}  // namespace cclmesh::sim
