#pragma once
// An ethernet core and its ERISC (REFERENCE 1.4): its own L1, a TX command queue and a NoC
// endpoint (the NoC side lives in the chip's Endpoint table).
//
// Timing (REFERENCE 1.6, two regimes):
// - The ERISC is one server for both directions. Each data packet it sends costs it
//   `tx_issue`; each data packet it receives costs it `rx_handle`. Below ~1 KiB this is the
//   bottleneck: ~59 ns per packet one way, ~80 ns per packet per direction both ways.
// - The wire then carries the packet, store-and-forward, at the line rate with the packet header
//   and per-frame overhead; it lands in the peer's L1 `one_way_latency` after its last byte left.
// - A remote word write (credits, acks) is one 16 B ethernet word through the same TX queue,
//   in order with the data, but costs the ERISCs no issue or handling time.
// The TX queue keeps commands in order; it reports busy while txq_max_outstanding commands have
// not finished on the wire.

#include <coroutine>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/engine/fiber.hpp"
#include "sim/engine/wait_queue.hpp"
#include "sim/model/core_coord.hpp"
#include "sim/model/memory_region.hpp"
#include "sim/model/packet_resource.hpp"
#include "sim/model/payload_buffer.hpp"
#include "sim/trace/trace_recorder.hpp"

namespace cclmesh::sim {

class Chip;
class EthLink;
class EthWire;

struct EthCoreStats {
  std::int64_t packets_sent = 0;
  std::int64_t payload_bytes_sent = 0;
  std::int64_t words_sent = 0;
  std::int64_t packets_received = 0;
  std::int64_t payload_bytes_received = 0;
  std::int64_t packets_dropped = 0;  // sent while the link was down
  SimTime erisc_busy;                // issue + handling time of this ERISC
};

class EthCore final : public WaitTarget, public ActivitySource {
 public:
  EthCore(Chip& chip, std::int32_t channel, CoreCoord coord, MemoryRegion& l1);
  EthCore(const EthCore&) = delete;
  EthCore& operator=(const EthCore&) = delete;

  Chip& chip() const { return chip_; }
  std::int32_t channel() const { return channel_; }
  CoreCoord coord() const { return coord_; }
  MemoryRegion& l1() const { return l1_; }
  std::string name() const;

  bool connected() const { return link_ != nullptr; }
  EthLink* link() const { return link_; }
  EthCore* peer() const { return peer_; }
  // The ERISC as a server (its busy time, for diagnostics).
  const PacketResource& erisc_server() const { return erisc_; }

  // [eth_send_packet] Non-blocking: queues `bytes` from this L1 at `source_address` to the peer's
  // L1 at `destination_address`. Addresses and size are whole 16 B ethernet words.
  void send_packet(std::uint64_t source_address, std::uint64_t destination_address, std::uint32_t bytes);
  // [eth_write_remote_reg-style] Non-blocking: writes a 32-bit word into the peer's L1.
  void write_remote_word(std::uint64_t destination_address, std::uint32_t value);

  // [eth_txq_is_busy]
  bool txq_busy() const;
  std::int32_t txq_outstanding() const;

  // Parks while the TX queue is busy (a kernel's `while (eth_txq_is_busy())` loop).
  class TxqReady {
   public:
    explicit TxqReady(EthCore& core) : core_(core) {}
    TxqReady(const TxqReady&) = delete;
    TxqReady& operator=(const TxqReady&) = delete;
    bool await_ready() const { return !core_.txq_busy(); }
    void await_suspend(std::coroutine_handle<>) {
      core_.txq_waiters_.park(record_, 0, &core_);
      core_.arm_txq_alarm();
    }
    void await_resume() const {}

   private:
    EthCore& core_;
    WaitRecord record_;
  };
  TxqReady wait_txq_ready() { return TxqReady{*this}; }
  void wait_txq_ready_blocking() { block_on(wait_txq_ready()); }

  EthCoreStats stats() const;
  std::string describe_wait(std::int64_t) const override;
  // TxqReady, reported lazily (see txq_ends_).
  bool happened_since(ActivityKind kind, SimTime since) override;
  void want(ActivityKind kind) override;

  // Records every packet and credit word this core puts on its wire (a connected core only).
  void set_trace(trace::TraceRecorder* recorder);

 private:
  friend class SimSystem;
  void attach(EthLink& link, EthCore& peer);
  EthWire& tx_wire() const;
  void check_send(std::uint64_t source_address, std::uint64_t destination_address, std::uint32_t bytes) const;
  [[noreturn]] void fault(const std::string& what) const;
  // Books the wire for `payload_bytes` no earlier than `ready`; returns {wire start, wire end}.
  PacketFront book_wire(SimTime ready, std::int64_t payload_bytes);
  // Commands whose wire end is due by now leave the queue (in order).
  void retire_txq(SimTime now) const;
  void queue_command(SimTime wire_end);
  void arm_txq_alarm();
  void txq_alarm();
  // Logs the first send lost on a down wire as a warning; the later ones (one per packet) only
  // at debug level, since the fault report summarises them.
  void log_link_down_drop(const EthWire& wire, const std::string& what) const;
  void receive(std::uint64_t destination_address, const PayloadBuffer& data, std::uint32_t bytes);

  Chip& chip_;
  std::int32_t channel_;
  CoreCoord coord_;
  MemoryRegion& l1_;
  EthLink* link_ = nullptr;
  EthCore* peer_ = nullptr;
  PacketResource erisc_;  // the ERISC as a server: TX issue and RX handling
  // The TX queue as the wire-end times of its commands (ascending, the wire is in order): a
  // command leaves the queue when its last byte leaves the wire, counted by time with no event
  // of its own; an alarm event is set only while a kernel waits for room.
  mutable std::vector<SimTime> txq_ends_;  // [txq_head_, end) outstanding
  mutable std::size_t txq_head_ = 0;
  mutable SimTime txq_last_room_;  // the last time a command left and the queue had room
  bool txq_listener_wants_ = false;
  bool txq_alarm_armed_ = false;
  WaitQueue txq_waiters_;
  EthCoreStats stats_;
  trace::TraceRecorder* trace_ = nullptr;
  trace::WireId trace_wire_ = 0;
};

}  // namespace cclmesh::sim
