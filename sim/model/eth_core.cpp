#include "sim/model/eth_core.hpp"

#include <fmt/format.h>

#include "sim/engine/check.hpp"
#include "sim/engine/engine.hpp"
#include "sim/engine/sim_log.hpp"
#include "sim/model/chip.hpp"
#include "sim/model/eth_link.hpp"
#include "sim/model/packet_corruption.hpp"

namespace cclmesh::sim {

EthCore::EthCore(Chip& chip, std::int32_t channel, CoreCoord coord, MemoryRegion& l1)
    : chip_(chip), channel_(channel), coord_(coord), l1_(l1) {
  l1_.activity().add_source(*this);
}

std::string EthCore::name() const {
  return fmt::format("chip {} eth channel {} core {}", chip_.id(), channel_, to_string(coord_));
}

void EthCore::attach(EthLink& link, EthCore& peer) {
  CCLMESH_CHECK(link_ == nullptr, name() + " is wired twice");
  link_ = &link;
  peer_ = &peer;
}

void EthCore::set_trace(trace::TraceRecorder* recorder) {
  CCLMESH_CHECK(recorder == nullptr || connected(), name() + ": only a connected core has a wire to trace");
  trace_ = recorder;
  if (trace_ != nullptr) trace_wire_ = trace_->wire(chip_.id(), channel_, peer_->chip().id(), peer_->channel());
}

EthWire& EthCore::tx_wire() const { return link_->wire_from(*this); }

void EthCore::retire_txq(SimTime now) const {
  const auto max = static_cast<std::size_t>(chip_.params().eth.txq_max_outstanding);
  while (txq_head_ < txq_ends_.size() && txq_ends_[txq_head_] <= now) {
    const SimTime t = txq_ends_[txq_head_++];
    if (txq_ends_.size() - txq_head_ < max) txq_last_room_ = t;
  }
  if (txq_head_ == txq_ends_.size()) {
    txq_ends_.clear();  // keeps its capacity
    txq_head_ = 0;
  }
}

std::int32_t EthCore::txq_outstanding() const {
  retire_txq(chip_.engine().now());
  return static_cast<std::int32_t>(txq_ends_.size() - txq_head_);
}

bool EthCore::txq_busy() const { return txq_outstanding() >= chip_.params().eth.txq_max_outstanding; }

void EthCore::queue_command(SimTime wire_end) {
  retire_txq(chip_.engine().now());
  CCLMESH_CHECK(txq_ends_.size() == txq_head_ || txq_ends_.back() <= wire_end, name() + ": TX queue out of order");
  txq_ends_.push_back(wire_end);
  arm_txq_alarm();
}

bool EthCore::happened_since(ActivityKind kind, SimTime since) {
  if (kind != ActivityKind::TxqReady) return false;
  retire_txq(chip_.engine().now());
  return txq_last_room_ > since;
}

void EthCore::want(ActivityKind kind) {
  if (kind != ActivityKind::TxqReady) return;
  txq_listener_wants_ = true;
  arm_txq_alarm();
}

// The alarm goes off at the next time a command leaves and the queue has room: when the
// command that brings it under txq_max_outstanding leaves (or, when it has room already, at
// the next command leaving, as a kernel parked for TxqReady waits for the next drain).
void EthCore::arm_txq_alarm() {
  if (txq_alarm_armed_ || (!txq_listener_wants_ && txq_waiters_.empty())) return;
  const std::int32_t outstanding = txq_outstanding();
  if (outstanding == 0) return;  // nothing will leave: the next command arms
  const std::int32_t max = chip_.params().eth.txq_max_outstanding;
  const std::size_t leaving = outstanding >= max ? static_cast<std::size_t>(outstanding - max) : 0;
  txq_alarm_armed_ = true;
  chip_.engine().schedule_at(txq_ends_[txq_head_ + leaving], [this] { txq_alarm(); });
}

void EthCore::txq_alarm() {
  txq_alarm_armed_ = false;
  if (txq_busy() || txq_last_room_ != chip_.engine().now()) {
    arm_txq_alarm();
    return;
  }
  txq_listener_wants_ = false;
  txq_waiters_.grant_all();
  l1_.activity().notify(ActivityKind::TxqReady);  // a polling ERISC kernel may wait for room
}

EthCoreStats EthCore::stats() const {
  EthCoreStats copy = stats_;
  copy.erisc_busy = erisc_.busy;
  return copy;
}

std::string EthCore::describe_wait(std::int64_t) const {
  return fmt::format("{} TX queue to accept a command ({} of {} outstanding)", name(), txq_outstanding(),
                     chip_.params().eth.txq_max_outstanding);
}

void EthCore::fault(const std::string& what) const { throw SimFault(fault_time_now(), name() + ": " + what); }

void EthCore::check_send(std::uint64_t source_address, std::uint64_t destination_address, std::uint32_t bytes) const {
  if (!connected()) fault("eth_send_packet on a channel with no link");
  const std::uint32_t word = chip_.params().eth.word_bytes;
  if (bytes == 0 || bytes % word != 0 || source_address % word != 0 || destination_address % word != 0) {
    AccessError::Details d;
    d.chip = chip_.id();
    d.core = coord_;
    d.memory = MemoryKind::EriscL1;
    d.access = AccessKind::Read;
    d.address = source_address;
    d.bytes = bytes;
    d.memory_bytes = l1_.size_bytes();
    d.reason = fmt::format("to peer address {:#x} is not whole {} B ethernet words", destination_address, word);
    throw AccessError(fault_time_now(), std::move(d));
  }
  l1_.check(source_address, bytes, AccessKind::Read);
  peer_->l1().check(destination_address, bytes, AccessKind::Write);
}

PacketFront EthCore::book_wire(SimTime ready, std::int64_t payload_bytes) {
  EthWire& wire = tx_wire();
  const std::int64_t wire_bytes = chip_.params().eth.wire_bytes(payload_bytes);
  return pass_through(wire.server_, transfer_time(wire_bytes, wire.rate_), PacketFront::at(ready), wire_bytes,
                      chip_.busy_window());
}

void EthCore::log_link_down_drop(const EthWire& wire, const std::string& what) const {
  if (wire.dropped_packets() == 1) {
    sim_logger("eth")->warn("{}: {} dropped, link down (further drops on this wire: debug level, and counted in "
                            "the fault report)",
                            name(), what);
  } else {
    sim_logger("eth")->debug("{}: {} dropped, link down", name(), what);
  }
}

void EthCore::send_packet(std::uint64_t source_address, std::uint64_t destination_address, std::uint32_t bytes) {
  check_send(source_address, destination_address, bytes);
  Engine& engine = chip_.engine();
  const SimTime now = engine.now();
  // The ERISC issues the command, then the wire takes it: in order, store and forward.
  const PacketFront issued = pass_through(erisc_, chip_.params().eth.tx_issue, PacketFront::at(now), bytes, chip_.busy_window());
  const PacketFront on_wire = book_wire(issued.tail, bytes);
  if (trace_ != nullptr) {
    trace_->wire_busy(trace_wire_, on_wire.head, on_wire.tail, bytes, chip_.params().eth.wire_bytes(bytes), "packet");
  }
  queue_command(on_wire.tail);
  ++stats_.packets_sent;
  stats_.payload_bytes_sent += bytes;
  auto start = [this, source_address, destination_address, bytes, on_wire] {
    Engine& e = chip_.engine();
    EthWire& wire = tx_wire();
    if (!wire.up_) {
      ++wire.dropped_packets_;
      ++stats_.packets_dropped;
      chip_.faults().record(e.now(), name(), fmt::format("{} B packet dropped: link down", bytes));
      log_link_down_drop(wire, fmt::format("{} B packet", bytes));
      return;
    }
    const FrameFate fate = link_->draw_fate(chip_.params().eth.frames(bytes));
    if (fate == FrameFate::Dropped) {
      ++stats_.packets_dropped;
      chip_.faults().record(e.now(), name(), fmt::format("{} B packet to {:#x} lost: injected frame loss", bytes,
                                                         destination_address));
      return;
    }
    // The TX engine reads the source as the packet goes out.
    PayloadBuffer data;
    if (l1_.stores_data() && peer_->l1().stores_data()) data = l1_.sample(source_address, bytes);
    if (!link_->corruptions().empty()) data.materialise();  // a flipped bit needs the bytes
    for (PacketCorruption* corruption : link_->corruptions()) {
      if (const auto hit = corruption->maybe_corrupt(e.now(), data.span(), destination_address, name(), peer_->name())) {
        chip_.faults().record(e.now(), name(), fmt::format("{} B packet to {:#x}: bit {} of byte {} flipped: injected "
                                                           "corruption ({})", bytes, destination_address, hit->bit,
                                                           hit->byte, corruption->spec()));
      }
    }
    EthCore* peer = peer_;
    const SimTime lands = on_wire.tail + wire.latency_;
    if (fate == FrameFate::Duplicated) {
      // The copy carries the same bytes and lands one wire time after the original (it is not
      // booked on the wire: a duplicate costs the sender nothing).
      chip_.faults().record(e.now(), name(), fmt::format("{} B packet to {:#x} duplicated: injected frame "
                                                         "duplication", bytes, destination_address));
      e.schedule_at(lands + (on_wire.tail - on_wire.head), [peer, destination_address, bytes, copy = data.clone()] {
        peer->receive(destination_address, copy, bytes);
      });
    }
    e.schedule_at(lands, [peer, destination_address, bytes, data = std::move(data)] {
      peer->receive(destination_address, data, bytes);
    });
  };
  if (on_wire.head == now) {
    start();
  } else {
    engine.schedule_at(on_wire.head, std::move(start));
  }
}

void EthCore::receive(std::uint64_t destination_address, const PayloadBuffer& data, std::uint32_t bytes) {
  l1_.land(destination_address, data, bytes);
  ++stats_.packets_received;
  stats_.payload_bytes_received += bytes;
  // The ERISC handles the packet (REFERENCE 1.6: one ERISC serves send and receive).
  pass_through(erisc_, chip_.params().eth.rx_handle, PacketFront::at(chip_.engine().now()), bytes,
               chip_.busy_window());
}

void EthCore::write_remote_word(std::uint64_t destination_address, std::uint32_t value) {
  if (!connected()) fault("remote word write on a channel with no link");
  peer_->l1().check_word(destination_address, AccessKind::Write);
  Engine& engine = chip_.engine();
  const SimTime now = engine.now();
  const PacketFront on_wire = book_wire(now, chip_.params().eth.word_bytes);
  if (trace_ != nullptr) {
    const std::int64_t word = chip_.params().eth.word_bytes;
    trace_->wire_busy(trace_wire_, on_wire.head, on_wire.tail, word, chip_.params().eth.wire_bytes(word), "word");
  }
  queue_command(on_wire.tail);
  ++stats_.words_sent;
  auto start = [this, destination_address, value, on_wire] {
    Engine& e = chip_.engine();
    EthWire& wire = tx_wire();
    if (!wire.up_) {
      ++wire.dropped_packets_;
      ++stats_.packets_dropped;
      chip_.faults().record(e.now(), name(), fmt::format("remote word write to {:#x} dropped: link down",
                                                         destination_address));
      log_link_down_drop(wire, "remote word write");
      return;
    }
    const FrameFate fate = link_->draw_fate(1);
    if (fate == FrameFate::Dropped) {
      ++stats_.packets_dropped;
      chip_.faults().record(e.now(), name(), fmt::format("remote word write to {:#x} lost: injected frame loss",
                                                         destination_address));
      return;
    }
    EthCore* peer = peer_;
    const SimTime lands = on_wire.tail + wire.latency_;
    if (fate == FrameFate::Duplicated) {
      chip_.faults().record(e.now(), name(), fmt::format("remote word write to {:#x} duplicated: injected frame "
                                                         "duplication", destination_address));
      e.schedule_at(lands + (on_wire.tail - on_wire.head),
                    [peer, destination_address, value] { peer->l1().write_u32(destination_address, value); });
    }
    e.schedule_at(lands, [peer, destination_address, value] { peer->l1().write_u32(destination_address, value); });
  };
  if (on_wire.head == now) {
    start();
  } else {
    engine.schedule_at(on_wire.head, std::move(start));
  }
}

}  // namespace cclmesh::sim
