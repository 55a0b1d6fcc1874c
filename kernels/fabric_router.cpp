// The persistent 1D fabric router (REFERENCE §6.1-6.8): one per ethernet core that carries a
// link, launched once for the mesh.
//
//   sender channel 0   packets from local workers (fabric_connection.hpp)
//   sender channel 1   pass-through packets from the opposite-direction router on this chip
//   receiver channel   packets from the peer: written locally when this chip is a destination,
//                      forwarded into the opposite-direction router's sender channel 1 when
//                      the route goes on (only once that channel has a free slot, so a packet
//                      is never split)
//
// The receiver keeps several packets' NoC writes in flight (up to `receiver_packets_in_flight`,
// by default every receiver slot): each packet's writes are tagged with its own transaction id
// (REFERENCE 1.1: 16 per NoC), the receiver moves on to the next packet without waiting for them,
// and frees slots and sends completion acks strictly in order, each once its id's writes have
// left this core (REFERENCE 6.4 step 3-4, per slot). That the real receiver overlaps packets
// this way is (inferred) from REFERENCE 1.6: "eth -> eth -> worker" keeps the raw link's
// 12.04 GB/s at 4096 B while the variants without transaction ids are slower; tt-metal's EDM
// tracks one id per receiver buffer slot.
//
// Each main-loop pass sends the ack word when a credit changed, then services one sender
// channel (alternating) and the receiver: acks before data (main_loop() says why). Two
// passes without progress park the router in wait_for_activity(), woken only by what it acts
// on (wake_sources()): a write to its control words or a receiver slot's sync word, and, only
// while it waits for one, its downstream credit, its NoC writes landing or flushing, or room in
// the TX queue. run_routing() is called every `switch_interval` idle passes, the passes it
// would have spun while parked included (common/idle_passes.hpp).
//
// Start-up: zero the control region (not the mailboxes) and the receiver slots' sync words;
// STARTED; local handshake with the same-chip neighbour (each writes the other's local
// mailbox); LOCAL_HANDSHAKE_COMPLETE; handshake with the peer across the link;
// REMOTE_HANDSHAKE_COMPLETE; connect to the neighbour's sender channel 1; READY_FOR_TRAFFIC.
// The host waits for READY_FOR_TRAFFIC before it launches ops that connect.
//
// Termination (the termination_signal word): GRACEFULLY_TERMINATE runs until every channel is
// drained, IMMEDIATELY_TERMINATE stops at the next pass. Then the connection to the neighbour
// is closed without waiting for its acknowledgement (the neighbour may be gone already), the
// TX queue and NoC writes drain, and the status becomes TERMINATED.
//
// Arguments and L1 layout: kernel_args.hpp (namespace fabric_router); decisions:
// fabric/router_logic.hpp.

#include <cstdint>

#include "kernels/api/dataflow_api.hpp"
#include "kernels/api/fabric_connection.hpp"
#include "kernels/api/fabric_packet_header.hpp"
#include "kernels/api/kernel_fault.hpp"
#include "kernels/common/eth_handshake.hpp"
#include "kernels/common/idle_passes.hpp"
#include "kernels/fabric/router_logic.hpp"
#include "kernels/kernel_args.hpp"
#include "kernels/kernels.hpp"

namespace cclmesh::kernels {
namespace {

using api::KernelFaultCode;
using api::PacketHeader;

uint32_t ct_arg(uint32_t index) { return get_compile_time_arg_val(static_cast<int>(index)); }

// kDatelineVcs is the config's dateline_vcs, known at compile time: without dateline VCs a router
// always services sender channels 0 and 1 and one receiver (VC0; check_config), so its main loop,
// which runs once per event a router acts on, keeps the fixed shape of a 2-channel router rather
// than loops over runtime counts (+31% of this function's host instructions when it had them).
template <bool kDatelineVcs>
class FabricRouter {
 public:
  explicit FabricRouter(const FabricRouterConfig& config)
      : cfg_(config),
        layout_(make_fabric_router_layout(config)),
        peer_layout_(neighbour_layout(config, config.peer_slots)),
        downstream_layout_(neighbour_layout(config, config.downstream_slots)),
        noc_(my_noc_index()) {}

  void run() {
    check_config();
    initialise();
    start_up();
    const bool drained_exit = main_loop();
    finish(drained_exit);
  }

 private:
  // The state of the next packet to dispatch (the receiver's head); the packets dispatched
  // before it wait only for their writes to leave (in flight, completed in order).
  enum class ReceiverState : uint8_t { IDLE, PENDING, WAIT_LANDED };

  struct SenderChannel {
    RouterSenderState state;
    uint64_t worker_flow_control_noc_addr;
    uint64_t worker_teardown_noc_addr;
  };

  // One receiver VC (VC0 only without dateline VCs): its slots, the packets in it, its acks to
  // the peer and its connection into the downstream sender channel.
  struct Receiver {
    uint32_t vc;
    uint32_t buffer_base;
    uint32_t slots;
    uint32_t packets_in_flight;
    uint32_t trid_base;  // its transaction ids: [trid_base, trid_base + packets_in_flight)
    uint32_t ack_staging;
    uint32_t ack_mailbox;  // the peer's, at the same address as ours
    bool has_downstream;
    api::WorkerToFabricEdmSender downstream;
    FabricAckWord ack_out;
    bool acks_dirty;
    ReceiverState state;
    uint32_t arrived;     // packets seen in slots (first-level acked)
    uint32_t dispatched;  // packets whose writes are all issued (in flight or completed)
    uint32_t received;    // packets completed: their slots freed
    // Per packet in flight (in_flight_index()): the sender channel its completion goes to, and
    // whether its writes carry no transaction id (then it waits for all writes to leave).
    uint32_t in_flight_src_channel[fabric_router::kMaxReceiverPacketsInFlight];
    bool in_flight_untagged[fabric_router::kMaxReceiverPacketsInFlight];
    PacketHeader header;
    uint32_t src_channel;
    ReceiverDecision decision;
    uint64_t pending_inc_noc_addr;
    uint32_t pending_inc_value;
  };

  // The peer's or the downstream neighbour's layout: the same as ours unless the fabric has
  // dateline VCs, whose routers' slot counts differ (REFERENCE 6.2) while their control fields
  // share addresses.
  static FabricRouterL1Layout neighbour_layout(const FabricRouterConfig& c, const FabricRouterSlotCounts& slots) {
    return c.dateline_vcs ? make_fabric_router_layout(c.l1_base, c.max_payload_bytes, slots, true)
                          : make_fabric_router_layout(c);
  }

  [[noreturn]] void fail(KernelFaultCode code, uint32_t detail) const {
    kernel_fault(api::fault_code(code), api::kFaultNoCommand, detail);
  }
  [[noreturn]] void fail(uint32_t code, uint32_t detail) const {
    kernel_fault(code, api::kFaultNoCommand, detail);
  }

  // Channels with slots and receivers, at compile time without dateline VCs (set_up checks it).
  uint32_t active_count() const { return kDatelineVcs ? num_active_channels_ : fabric_router::kNumSenderChannels; }
  uint32_t receiver_count() const { return kDatelineVcs ? num_receivers_ : 1u; }

  uint32_t num_sender_channels() const {
    return cfg_.dateline_vcs ? fabric_router::kMaxSenderChannels : fabric_router::kNumSenderChannels;
  }

  void check_config() const {
    namespace r = fabric_router;
    if (cfg_.max_payload_bytes > 0xFFFF) {
      fail(KernelFaultCode::BAD_ARGS, r::kCtMaxPayloadBytes);
    }
    if (cfg_.sender_slots[0] == 0) {
      fail(KernelFaultCode::BAD_ARGS, r::kCtSender0Slots);
    }
    // A dateline VC router may drop sender channel 1 or receiver VC0 (REFERENCE 6.2).
    if (cfg_.sender_slots[1] == 0 && !cfg_.dateline_vcs) {
      fail(KernelFaultCode::BAD_ARGS, r::kCtSender1Slots);
    }
    // Bubble flow control needs two receiver slots to ever let the injection channel send.
    if (cfg_.receiver_slots < (cfg_.bubble_flow_control ? 2u : 1u) && !cfg_.dateline_vcs) {
      fail(KernelFaultCode::BAD_ARGS, r::kCtReceiverSlots);
    }
    if (cfg_.topology != r::kTopologyLine && cfg_.topology != r::kTopologyRing) {
      fail(KernelFaultCode::BAD_ARGS, r::kCtTopology);
    }
    if (cfg_.topology == r::kTopologyRing && !cfg_.has_downstream) {
      fail(KernelFaultCode::BAD_ARGS, r::kCtHasDownstream);
    }
    if (cfg_.receiver_slots != 0 &&
        (cfg_.receiver_packets_in_flight == 0 || cfg_.receiver_packets_in_flight > cfg_.receiver_slots ||
         cfg_.receiver_packets_in_flight > r::kMaxReceiverPacketsInFlight)) {
      fail(KernelFaultCode::BAD_ARGS, r::kCtReceiverPacketsInFlight);
    }
    if (cfg_.dateline_vcs) {
      if (cfg_.bubble_flow_control || cfg_.receiver_slots + cfg_.vc1_receiver_slots == 0) {
        fail(KernelFaultCode::BAD_ARGS, r::kCtDatelineVcs);
      }
      const uint32_t vc0_in_flight = cfg_.receiver_slots != 0 ? cfg_.receiver_packets_in_flight : 0;
      if (cfg_.vc1_receiver_slots != 0 &&
          (cfg_.vc1_receiver_packets_in_flight == 0 || cfg_.vc1_receiver_packets_in_flight > cfg_.vc1_receiver_slots ||
           vc0_in_flight + cfg_.vc1_receiver_packets_in_flight > r::kMaxReceiverPacketsInFlight)) {
        fail(KernelFaultCode::BAD_ARGS, r::kCtVc1ReceiverPacketsInFlight);
      }
    }
  }

  // ---- Start-up ------------------------------------------------------------------------------
  void initialise() {
    for (uint32_t a = layout_.control_begin; a < layout_.control_end; a += sizeof(uint32_t)) {
      const bool mailbox = (a >= layout_.handshake_mailbox && a < layout_.handshake_mailbox + kFabricControlFieldBytes) ||
                           (a >= layout_.local_mailbox && a < layout_.local_mailbox + kFabricControlFieldBytes);
      if (!mailbox) {
        l1_write_u32(a, 0);
      }
    }
    set_up_receivers();
    for (uint32_t c = 0; c < num_sender_channels(); ++c) {
      if (layout_.sender[c].num_slots != 0) {
        active_channels_[num_active_channels_++] = c;
      }
    }
    if (!kDatelineVcs && (num_active_channels_ != fabric_router::kNumSenderChannels || num_receivers_ != 1)) {
      fail(KernelFaultCode::BAD_ARGS, fabric_router::kCtDatelineVcs);  // check_config's rules let this pass
    }
    for (uint32_t v = 0; v < receiver_count(); ++v) {
      for (uint32_t s = 0; s < receivers_[v].slots; ++s) {
        l1_write_u32(receiver_slot(receivers_[v], s) + layout_.sync_offset_in_slot, 0);
      }
    }
    // The router acts on its control words and on the receiver slots' sync words; packets
    // land in slots before the word that announces them (packets_written for a sender
    // channel, the sync word of a receiver slot), so those landings need not wake it.
    // The downstream credits are read only while a packet waits for a downstream slot.
    const uint32_t credit = layout_.downstream_flow_control_sem;
    l1_activity_watch_range(layout_.control_begin, credit);
    l1_activity_watch_range_secondary(credit, credit + kFabricControlFieldBytes);
    if (cfg_.dateline_vcs) {
      const uint32_t vc1_credit = layout_.vc1_downstream_flow_control_sem;
      l1_activity_watch_range(credit + kFabricControlFieldBytes, vc1_credit);
      l1_activity_watch_range_secondary(vc1_credit, vc1_credit + kFabricControlFieldBytes);
      l1_activity_watch_range(vc1_credit + kFabricControlFieldBytes, layout_.control_end);
    } else {
      l1_activity_watch_range(credit + kFabricControlFieldBytes, layout_.control_end);
    }
    for (uint32_t v = 0; v < receiver_count(); ++v) {
      for (uint32_t s = 0; s < receivers_[v].slots; ++s) {
        const uint32_t sync = receiver_slot(receivers_[v], s) + layout_.sync_offset_in_slot;
        l1_activity_watch_range(sync, sync + api::kEthChannelSyncBytes);
      }
    }
    set_status(api::EdmStatus::STARTED);
  }

  // The receivers with slots, VC0 first; transaction ids numbered on from VC0's.
  void set_up_receivers() {
    const uint32_t downstream_slots[fabric_router::kNumVcs] = {
        downstream_layout_.sender[fabric_router::kForwardingChannel].num_slots,
        cfg_.dateline_vcs ? downstream_layout_.sender[fabric_router::kVc1ForwardingChannel].num_slots : 0};
    uint32_t next_trid = 0;
    for (uint32_t vc = 0; vc < (cfg_.dateline_vcs ? fabric_router::kNumVcs : 1u); ++vc) {
      const uint32_t slots = vc == 0 ? layout_.receiver_slots : layout_.vc1_receiver_slots;
      if (slots == 0) {
        continue;
      }
      Receiver& r = receivers_[num_receivers_++];
      r.vc = vc;
      r.buffer_base = vc == 0 ? layout_.receiver_buffer_base : layout_.vc1_receiver_buffer_base;
      r.slots = slots;
      r.packets_in_flight = vc == 0 ? cfg_.receiver_packets_in_flight : cfg_.vc1_receiver_packets_in_flight;
      r.trid_base = next_trid;
      next_trid += r.packets_in_flight;
      r.ack_staging = vc == 0 ? layout_.ack_staging : layout_.vc1_ack_staging;
      r.ack_mailbox = vc == 0 ? layout_.ack_mailbox : layout_.vc1_ack_mailbox;
      r.has_downstream = cfg_.has_downstream && downstream_slots[vc] != 0;
    }
  }

  void start_up() {
    if (cfg_.has_downstream) {
      noc_inline_dw_write(get_noc_addr(cfg_.downstream_noc_x, cfg_.downstream_noc_y, layout_.local_mailbox, noc_),
                          kLocalNeighbourReady, noc_);
      noc_semaphore_wait(api::l1_word_ptr(layout_.local_mailbox), kLocalNeighbourReady);
      l1_write_u32(layout_.local_mailbox, 0);
      noc_async_write_barrier(noc_);
    }
    set_status(api::EdmStatus::LOCAL_HANDSHAKE_COMPLETE);
    eth_handshake(cfg_.is_handshake_master, layout_.handshake_mailbox, layout_.handshake_staging);
    set_status(api::EdmStatus::REMOTE_HANDSHAKE_COMPLETE);
    for (uint32_t v = 0; v < receiver_count(); ++v) {
      Receiver& r = receivers_[v];
      if (!r.has_downstream) {
        continue;
      }
      const bool vc0 = r.vc == 0;
      r.downstream = api::WorkerToFabricEdmSender(
          fabric_connection_for_channel(
              downstream_layout_, forwarding_channel_of_vc(r.vc), cfg_.downstream_noc_x, cfg_.downstream_noc_y,
              vc0 ? layout_.downstream_flow_control_sem : layout_.vc1_downstream_flow_control_sem,
              vc0 ? layout_.downstream_teardown_sem : layout_.vc1_downstream_teardown_sem,
              vc0 ? layout_.downstream_buffer_index_sem : layout_.vc1_downstream_buffer_index_sem),
          noc_);
      r.downstream.open();
    }
    set_status(api::EdmStatus::READY_FOR_TRAFFIC);
  }

  void set_status(api::EdmStatus status) { l1_write_u32(layout_.status, static_cast<uint32_t>(status)); }

  // ---- Main loop -----------------------------------------------------------------------------
  // Returns true on a graceful (drained) exit, false on an immediate one.
  bool main_loop() {
    uint32_t idle_passes = 0;  // in a row: park only after every sender channel had one
    IdlePassCounter counter;
    for (;; counter.next_pass()) {
      if (idle_passes == 0) {
        l1_activity_poll_mark();  // this pass may begin the idle round that ends in a park
      }
      const uint32_t signal = l1_read_u32(layout_.termination_signal);
      if (signal == static_cast<uint32_t>(api::TerminationSignal::IMMEDIATELY_TERMINATE)) {
        return false;
      }
      l1_read_bytes(layout_.ack_mailbox, &ack_in_[0], sizeof(ack_in_[0]));
      if (kDatelineVcs) {
        l1_read_bytes(layout_.vc1_ack_mailbox, &ack_in_[1], sizeof(ack_in_[1]));
      }
      // Acks before data. REFERENCE 6.4: the receiver returns the first-level ack when it sees
      // a packet and the completion ack once the packet's writes have flushed, and each pass
      // services a sender channel and the receiver. Both sends need the TX queue; with the acks
      // last, a sender channel that always had a packet ready refilled the queue every pass, the
      // acks went out only when this direction ran dry, and the other direction, short of
      // remote slots, stopped: the two took turns for hundreds of microseconds
      // (docs/performance.md, "all_to_all on 8-chip lines"). The acks this pass's receiver
      // owes go out first thing in the next pass, ahead of the next data packet.
      bool progress = false;
      for (uint32_t v = 0; v < receiver_count(); ++v) {
        progress |= send_acks(receivers_[v]);
      }
      progress |= service_sender(kDatelineVcs ? active_channels_[counter.pass() % num_active_channels_]
                                              : static_cast<uint32_t>(counter.pass() & 1));
      for (uint32_t v = 0; v < receiver_count(); ++v) {
        progress |= service_receiver(receivers_[v]);
      }
      if (signal == static_cast<uint32_t>(api::TerminationSignal::GRACEFULLY_TERMINATE) && drained()) {
        return true;
      }
      if (progress) {
        idle_passes = 0;
        txq_blocked_ = false;
        counter.progress();
        continue;
      }
      counter.idle_pass();
      if (++idle_passes < active_count()) {
        continue;
      }
      idle_passes = 0;
      if (counter.routing_due(cfg_.switch_interval)) {
        run_routing();
      }
      counter.parked(park(signal, counter.cycles_until_routing_due(cfg_.switch_interval, active_count())));
      txq_blocked_ = false;
    }
  }

  // What can change the outcome of the next pass, given the state the idle passes left. L1
  // writes only to the watched words (initialise()), the downstream credit only while a
  // packet waits for it; NoC and TX queue events only while the receiver or a send waits for
  // them (for the packets in flight: the oldest one's writes leaving). Anything else leaves
  // the next pass idle.
  uint32_t wake_sources() const {
    uint32_t wake = WAKE_ON_L1_WRITE;
    for (uint32_t v = 0; v < receiver_count(); ++v) {
      const Receiver& r = receivers_[v];
      if (r.state == ReceiverState::PENDING && r.decision.forward) {
        wake |= WAKE_ON_L1_WRITE_SECONDARY;  // waiting for the downstream credit
      }
      if (r.state == ReceiverState::WAIT_LANDED) {
        wake |= WAKE_ON_NOC_WRITES_DONE;
      }
      if (r.received != r.dispatched) {
        wake |= r.in_flight_untagged[in_flight_index(r, r.received)] ? WAKE_ON_NOC_WRITES_FLUSHED
                                                                       : WAKE_ON_NOC_TRID_SENT;
      }
    }
    if (txq_blocked_) {
      wake |= WAKE_ON_TXQ_READY;
    }
    return wake;
  }

  // Parks until something the next pass may act on happens (wake_sources()), with two hints
  // that skip wake-ups whose passes would find nothing, as long as such a wake-up's idle passes
  // would not bring run_routing() due (`quiet_cycles`, see IdlePassCounter; 0: no hints):
  // - since the poll mark: the round of idle passes just run saw everything before its mark;
  // - quiet packets_written: a sender channel that cannot send for want of remote receiver
  //   slots does the same on its next pass whatever the word says, short of an overrun, until
  //   the ack word (watched) frees slots or the termination signal (watched) asks for a
  //   drained exit, which reads it.
  // Returns the cycles parked.
  uint32_t park(uint32_t signal, uint64_t quiet_cycles) {
    if (quiet_cycles == 0) {
      return wait_for_activity(wake_sources());
    }
    QuietWord quiet[fabric_router::kMaxSenderChannels]{};
    uint32_t count = 0;
    if (signal != static_cast<uint32_t>(api::TerminationSignal::GRACEFULLY_TERMINATE)) {
      for (uint32_t i = 0; i < active_count(); ++i) {
        const uint32_t c = active_channels_[i];
        if (!sender_may_send(c, cfg_.bubble_flow_control, remote_free_slots(c))) {
          quiet[count++] = QuietWord{layout_.sender[c].packets_written, sender_[c].state.freed, layout_.sender[c].num_slots};
        }
      }
    }
    const uint32_t cycles = quiet_cycles > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(quiet_cycles);
    return wait_for_activity_hinted(wake_sources(), WaitHints{quiet, count, cycles, true});
  }

  void finish(bool drained_exit) {
    for (uint32_t v = 0; v < receiver_count(); ++v) {
      if (drained_exit && receivers_[v].downstream.is_valid()) {
        receivers_[v].downstream.close_start();
      }
    }
    eth_wait_for_tx_queue();
    noc_async_write_barrier(noc_);
    set_status(api::EdmStatus::TERMINATED);
  }

  bool drained() const {
    if (!kDatelineVcs) {
      const Receiver& r = receivers_[0];
      RouterDrainView v{};
      for (uint32_t c = 0; c < fabric_router::kNumSenderChannels; ++c) {
        v.packets_written[c] = l1_read_u32(layout_.sender[c].packets_written);
        v.sender[c] = sender_[c].state;
      }
      v.remote_sent_total = remote_sent_total_[0];
      v.remote_completed_total = completions_total(ack_in_[0]);
      v.receiver_idle = r.state == ReceiverState::IDLE && r.dispatched == r.received;
      v.receiver_slot_empty = r.arrived == r.received &&
                              l1_read_u32(receiver_slot(r, r.arrived % r.slots) + layout_.sync_offset_in_slot) == 0;
      v.acks_pending = r.acks_dirty;
      return router_drained(v);
    }
    // Dateline VCs: the same conditions, for every channel, both VCs and each receiver.
    for (uint32_t i = 0; i < active_count(); ++i) {
      const uint32_t c = active_channels_[i];
      const uint32_t written = l1_read_u32(layout_.sender[c].packets_written);
      if (written != sender_[c].state.sent || sender_[c].state.sent != sender_[c].state.freed) {
        return false;
      }
    }
    for (uint32_t vc = 0; vc < fabric_router::kNumVcs; ++vc) {
      if (remote_sent_total_[vc] != completions_total(ack_in_[vc])) {
        return false;
      }
    }
    for (uint32_t v = 0; v < receiver_count(); ++v) {
      const Receiver& r = receivers_[v];
      if (r.state != ReceiverState::IDLE || r.dispatched != r.received || r.arrived != r.received || r.acks_dirty ||
          l1_read_u32(receiver_slot(r, r.arrived % r.slots) + layout_.sync_offset_in_slot) != 0) {
        return false;
      }
    }
    return true;
  }

  // ---- Sender channels -----------------------------------------------------------------------
  uint32_t sender_slot(uint32_t channel, uint32_t index) const {
    return layout_.sender[channel].buffer_base + index * layout_.slot_size_bytes;
  }
  uint32_t receiver_slot(const Receiver& r, uint32_t index) const {
    return r.buffer_base + index * layout_.slot_size_bytes;
  }

  // The worker connection on `channel` (kernels/api/fabric_connection.hpp; what the live word
  // asks for is api::connection_event()). A close is acknowledged whether or not this router
  // saw the open: a worker that opens and closes between two passes leaves only the close
  // request. The live word goes back to unused before the acknowledgement, which lets the
  // next worker open; so no later pass acknowledges the same close again.
  bool service_connection(uint32_t channel) {
    SenderChannel& ch = sender_[channel];
    const FabricSenderChannelLayout& l = layout_.sender[channel];
    const uint32_t live = l1_read_u32(l.connection_live);
    switch (api::connection_event(live, ch.state.connected)) {
      case api::ConnectionEvent::NONE:
        return false;
      case api::ConnectionEvent::PROTOCOL_VIOLATION:
        fail(KernelFaultCode::WORKER_PROTOCOL_VIOLATION, api::protocol_violation_live_detail(channel, live));
      case api::ConnectionEvent::OPEN:
        locate_worker(ch, l);
        ch.state.connected = true;
        noc_inline_dw_write(ch.worker_flow_control_noc_addr, ch.state.freed, noc_);
        return true;
      case api::ConnectionEvent::OPEN_AND_CLOSE:
        locate_worker(ch, l);
        break;
      case api::ConnectionEvent::CLOSE:
        break;
    }
    ch.state.connected = false;
    l1_write_u32(l.connection_live, api::kConnectionUnused);
    noc_inline_dw_write(ch.worker_teardown_noc_addr, api::kConnectionTeardownAck, noc_);
    return true;
  }

  void locate_worker(SenderChannel& ch, const FabricSenderChannelLayout& l) const {
    const api::WorkerLocation worker = api::read_worker_location(l.worker_location_info, noc_);
    ch.worker_flow_control_noc_addr = worker.flow_control_noc_addr;
    ch.worker_teardown_noc_addr = worker.teardown_noc_addr;
  }

  bool return_credits(uint32_t channel) {
    SenderChannel& ch = sender_[channel];
    const FabricAckWord& acks = ack_in_[sender_target_vc(channel, cfg_.sends_into_vc1)];
    const uint32_t freed = freed_by_acks(acks, ack_index_of_channel(channel), cfg_.first_level_acks);
    if (freed == ch.state.freed) {
      return false;
    }
    ch.state.freed = freed;
    l1_write_u32(layout_.sender[channel].packets_freed, freed);
    if (ch.state.connected) {
      noc_inline_dw_write(ch.worker_flow_control_noc_addr, freed, noc_);
    }
    return true;
  }

  // The free slots of the peer receiver VC `channel` sends into.
  uint32_t remote_free_slots(uint32_t channel) const {
    const uint32_t vc = sender_target_vc(channel, cfg_.sends_into_vc1);
    const uint32_t slots = vc == 0 ? peer_layout_.receiver_slots : peer_layout_.vc1_receiver_slots;
    return remote_receiver_free_slots(slots, remote_sent_total_[vc], completions_total(ack_in_[vc]));
  }

  bool service_sender(uint32_t channel) {
    bool progress = service_connection(channel);
    progress |= return_credits(channel);
    SenderChannel& ch = sender_[channel];
    const FabricSenderChannelLayout& l = layout_.sender[channel];
    const uint32_t written = l1_read_u32(l.packets_written);
    if (worker_overran_channel(written, ch.state, l.num_slots)) {
      fail(KernelFaultCode::WORKER_PROTOCOL_VIOLATION, api::protocol_violation_overrun_detail(channel));
    }
    if (packets_waiting(written, ch.state) == 0) {
      return progress;
    }
    if (!sender_may_send(channel, cfg_.bubble_flow_control, remote_free_slots(channel))) {
      return progress;
    }
    if (eth_txq_is_busy()) {
      txq_blocked_ = true;
      return progress;
    }
    send_packet(channel);
    return true;
  }

  void send_packet(uint32_t channel) {
    SenderChannel& ch = sender_[channel];
    const uint32_t slot_index = ch.state.sent % layout_.sender[channel].num_slots;
    const uint32_t slot = sender_slot(channel, slot_index);
    PacketHeader header{};
    l1_read_bytes(slot, &header, sizeof(header));
    const uint32_t bad = check_outgoing_packet(header, layout_.max_payload_bytes);
    if (bad != 0) {
      fail(bad, slot_index);
    }
    const uint32_t vc = sender_target_vc(channel, cfg_.sends_into_vc1);
    const uint32_t remote_slots = vc == 0 ? peer_layout_.receiver_slots : peer_layout_.vc1_receiver_slots;
    const uint32_t remote_base = vc == 0 ? peer_layout_.receiver_buffer_base : peer_layout_.vc1_receiver_buffer_base;
    const uint32_t remote = remote_base + (remote_sent_total_[vc] % remote_slots) * layout_.slot_size_bytes;
    const EthChannelSync sync{api::kPacketHeaderSizeBytes + header.payload_size_bytes, 0, channel,
                              remote_sent_total_[vc]};
    const uint32_t sync_offset = layout_.sync_offset_in_slot;
    l1_write_bytes(slot + sync_offset, &sync, sizeof(sync));
    if (packet_fills_slot(header.payload_size_bytes, layout_.max_payload_bytes)) {
      eth_send_bytes(slot, remote, sync_offset + api::kEthChannelSyncBytes);
    } else {
      // The sync word goes after the payload in a second send: the link keeps order, so it
      // lands after the data.
      eth_send_bytes(slot, remote, packet_send_bytes(header.payload_size_bytes));
      eth_send_bytes(slot + sync_offset, remote + sync_offset, api::kEthChannelSyncBytes);
    }
    ch.state.sent += 1;
    remote_sent_total_[vc] += 1;
  }

  // ---- Receivers -----------------------------------------------------------------------------
  // Packets in flight are numbered by their receive order; packet n's record is n mod the
  // receiver's packets in flight, its transaction id that plus the receiver's first id. At
  // most that many are dispatched and not completed, so no id is reused while its previous
  // packet's writes are outstanding.
  static uint32_t in_flight_index(const Receiver& r, uint32_t packet) { return packet % r.packets_in_flight; }
  static uint32_t trid_of(const Receiver& r, uint32_t packet) { return r.trid_base + in_flight_index(r, packet); }

  bool service_receiver(Receiver& r) {
    bool progress = acknowledge_arrivals(r);
    progress |= complete_sent_packets(r);
    if (r.state == ReceiverState::IDLE) {
      if (!accept_packet(r)) {
        return progress;
      }
      progress = true;
    }
    if (r.state == ReceiverState::PENDING) {
      if (!dispatch_packet(r)) {
        return progress;
      }
      progress = true;
    }
    if (r.state == ReceiverState::WAIT_LANDED) {
      if (!noc_writes_done(noc_)) {
        return progress;
      }
      noc_semaphore_inc(r.pending_inc_noc_addr, r.pending_inc_value, noc_);
      finish_dispatch(r);
      progress = true;
    }
    return progress;
  }

  // Completes, in order, the packets in flight whose writes have all left this core.
  bool complete_sent_packets(Receiver& r) {
    bool progress = false;
    while (r.received != r.dispatched) {
      const bool sent = r.in_flight_untagged[in_flight_index(r, r.received)]
                            ? noc_nonposted_writes_flushed(noc_)
                            : ncrisc_noc_nonposted_write_with_transaction_id_sent(noc_, trid_of(r, r.received));
      if (!sent) {
        break;
      }
      complete_packet(r);
      progress = true;
    }
    return progress;
  }

  // First-level acks go out as packets arrive, ahead of processing: a packet queued behind
  // one that waits for the downstream channel must not also hold its sender's slot (that
  // would hide the bubble that bubble flow control keeps in a ring).
  bool acknowledge_arrivals(Receiver& r) {
    bool progress = false;
    while (r.arrived - r.received < r.slots) {
      EthChannelSync sync{};
      l1_read_bytes(receiver_slot(r, r.arrived % r.slots) + layout_.sync_offset_in_slot, &sync, sizeof(sync));
      if (sync.bytes_sent == 0) {
        break;
      }
      if (sync.src_ch_id >= num_sender_channels()) {
        fail(KernelFaultCode::BAD_PACKET_HEADER, r.arrived % r.slots);
      }
      if (cfg_.first_level_acks) {
        r.ack_out.first_level[ack_index_of_channel(sync.src_ch_id)] += 1;
        r.acks_dirty = true;
      }
      r.arrived += 1;
      progress = true;
    }
    return progress;
  }

  // The next packet in order has arrived and a transaction id is free: read and check it.
  bool accept_packet(Receiver& r) {
    if (r.dispatched == r.arrived || r.dispatched - r.received >= r.packets_in_flight) {
      return false;
    }
    const uint32_t index = r.dispatched % r.slots;
    const uint32_t slot = receiver_slot(r, index);
    EthChannelSync sync{};
    l1_read_bytes(slot + layout_.sync_offset_in_slot, &sync, sizeof(sync));
    l1_read_bytes(slot, &r.header, sizeof(r.header));
    const uint32_t bad =
        check_received_packet(r.header, sync, layout_.max_payload_bytes, r.has_downstream, num_sender_channels());
    if (bad != 0) {
      fail(bad, index);
    }
    r.src_channel = sync.src_ch_id;
    r.decision = decide_receiver_action(r.header.routing_fields);
    r.state = ReceiverState::PENDING;
    return true;
  }

  // Forward (once the downstream channel has a free slot) and deliver locally, every write
  // that reads the slot tagged with the packet's transaction id.
  bool dispatch_packet(Receiver& r) {
    const uint32_t slot = receiver_slot(r, r.dispatched % r.slots);
    const uint32_t payload = r.header.payload_size_bytes;
    const uint32_t trid = trid_of(r, r.dispatched);
    if (r.decision.forward) {
      if (!r.downstream.edm_has_space_for_packet()) {
        return false;
      }
      PacketHeader next = r.header;
      next.routing_fields = r.decision.next_routing;
      l1_write_bytes(slot, &next, sizeof(next));
      r.downstream.send_payload_non_blocking_from_address_with_trid(slot, api::kPacketHeaderSizeBytes + payload, trid);
    }
    const uint32_t index = in_flight_index(r, r.dispatched);
    r.in_flight_src_channel[index] = r.src_channel;
    r.in_flight_untagged[index] = false;
    r.state = ReceiverState::IDLE;
    if (r.decision.deliver_locally) {
      deliver_locally(r, slot + api::kPacketHeaderSizeBytes, payload, trid);
    }
    if (r.state == ReceiverState::IDLE) {
      finish_dispatch(r);
    }
    return true;
  }

  // The head packet's writes are all issued: it is in flight, the next one may start.
  static void finish_dispatch(Receiver& r) {
    r.dispatched += 1;
    r.state = ReceiverState::IDLE;
  }

  void deliver_locally(Receiver& r, uint32_t payload_address, uint32_t payload, uint32_t trid) {
    const auto& c = r.header.command_fields;
    switch (r.header.get_noc_send_type()) {
      case api::NocSendType::NOC_UNICAST_WRITE:
        noc_async_write_one_packet_with_trid(payload_address, c.unicast_write.noc_address, payload, trid, noc_);
        break;
      case api::NocSendType::NOC_UNICAST_INLINE_WRITE:
        noc_inline_dw_write(c.unicast_inline_write.noc_address, c.unicast_inline_write.value, noc_);
        break;
      case api::NocSendType::NOC_UNICAST_ATOMIC_INC:
        increment(r, c.unicast_seminc.noc_address, c.unicast_seminc.value, c.unicast_seminc.flush != 0);
        break;
      case api::NocSendType::NOC_MULTICAST_WRITE: {
        const auto& m = c.mcast_write;
        const uint64_t dst = get_noc_multicast_addr(m.noc_x_start, m.noc_y_start,
                                                    m.noc_x_start + m.mcast_rect_size_x - 1u,
                                                    m.noc_y_start + m.mcast_rect_size_y - 1u, m.address, noc_);
        noc_async_write_multicast(payload_address, dst, payload, uint32_t{m.mcast_rect_size_x} * m.mcast_rect_size_y,
                                  false, noc_);
        // A multicast carries no transaction id here: the slot waits for all writes to leave.
        r.in_flight_untagged[in_flight_index(r, r.dispatched)] = true;
        break;
      }
      case api::NocSendType::NOC_FUSED_UNICAST_WRITE_ATOMIC_INC: {
        const auto& f = c.unicast_seminc_fused;
        noc_async_write_one_packet_with_trid(payload_address, f.noc_address, payload, trid, noc_);
        increment(r, f.semaphore_noc_address, f.value, f.flush != 0);
        break;
      }
      case api::NocSendType::NOC_UNICAST_SCATTER_WRITE: {
        const auto& sc = c.unicast_scatter_write;
        uint32_t offset = 0;
        for (uint32_t i = 0; i < sc.chunk_count; ++i) {
          const uint32_t bytes = i + 1u < sc.chunk_count ? sc.chunk_size[i] : payload - offset;
          noc_async_write_one_packet_with_trid(payload_address + offset, sc.noc_address[i], bytes, trid, noc_);
          offset += bytes;
        }
        break;
      }
      case api::NocSendType::NOC_MULTICAST_ATOMIC_INC:
        fail(KernelFaultCode::UNSUPPORTED_NOC_SEND_TYPE, r.dispatched % r.slots);
    }
  }

  // A semaphore increment is how a worker learns that data has arrived, so with `flush` set
  // (the default of every builder) it waits until every write the router issued so far,
  // this packet's and earlier packets' (in flight or not) to other cores, has landed; the NoC
  // orders transactions only per destination. The receiver's head waits with it (increments
  // come once per chunk, not per packet); the packets in flight still complete meanwhile.
  void increment(Receiver& r, uint64_t semaphore_noc_addr, uint32_t value, bool flush) {
    if (!flush) {
      noc_semaphore_inc(semaphore_noc_addr, value, noc_);
      return;
    }
    r.pending_inc_noc_addr = semaphore_noc_addr;
    r.pending_inc_value = value;
    r.state = ReceiverState::WAIT_LANDED;
  }

  // The oldest packet in flight has left the slot: free the slot and send its completion ack.
  void complete_packet(Receiver& r) {
    const uint32_t slot = receiver_slot(r, r.received % r.slots);
    l1_write_u32(slot + layout_.sync_offset_in_slot, 0);
    r.ack_out.completions[ack_index_of_channel(r.in_flight_src_channel[in_flight_index(r, r.received)])] += 1;
    r.acks_dirty = true;
    r.received += 1;
  }

  bool send_acks(Receiver& r) {
    if (!r.acks_dirty) {
      return false;
    }
    if (eth_txq_is_busy()) {
      txq_blocked_ = true;
      return false;
    }
    l1_write_bytes(r.ack_staging, &r.ack_out, sizeof(r.ack_out));
    eth_send_bytes(r.ack_staging, r.ack_mailbox, sizeof(r.ack_out));
    r.acks_dirty = false;
    return true;
  }

  FabricRouterConfig cfg_;
  FabricRouterL1Layout layout_;
  FabricRouterL1Layout peer_layout_;        // where the peer's receiver slots are
  FabricRouterL1Layout downstream_layout_;  // where the downstream router's sender channels are
  uint8_t noc_;
  SenderChannel sender_[fabric_router::kMaxSenderChannels]{};
  // The channels with slots, in order; each pass services the next one.
  uint32_t active_channels_[fabric_router::kMaxSenderChannels]{};
  uint32_t num_active_channels_ = 0;
  // Per peer receiver VC: packets sent into it and the ack word it returned.
  uint32_t remote_sent_total_[fabric_router::kNumVcs]{};
  FabricAckWord ack_in_[fabric_router::kNumVcs]{};
  bool txq_blocked_ = false;  // since the last park or progress, a send waited for the TX queue
  Receiver receivers_[fabric_router::kNumVcs]{};
  uint32_t num_receivers_ = 0;
};

}  // namespace
}  // namespace cclmesh::kernels

void kernel_main_fabric_router() {
  using namespace cclmesh::kernels;
  const FabricRouterConfig config = read_fabric_router_config(ct_arg);
  if (config.dateline_vcs) {
    FabricRouter<true>(config).run();
  } else {
    FabricRouter<false>(config).run();
  }
}
