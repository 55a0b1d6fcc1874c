// The fabric mux (REFERENCE §6.3, tt-metal's Fabric Mux, PR #25222): several workers share one
// router's worker channel, which takes one connection at a time. The mux runs on a Tensix core,
// holds the one connection to the router and offers each client worker a sender channel of its
// own with the router's protocol (kernels/api/fabric_connection.hpp), so a worker connects to
// the mux exactly as it would to the router.
//
// Per pass: service every client's connection (open: remember where its flow-control and
// teardown semaphores are and send it its credits; close: acknowledge), free the slots whose
// copies have left this core (credit the clients), and copy the next waiting packet, clients
// taken in turn, into the router's next slot when the router has one. Copies are not waited
// for one by one: the slots of every copy issued so far are freed together once the NoC says
// all writes have left (noc_nonposted_writes_flushed), so copies stream back to back.
// A pass without progress parks the kernel (park()) on what a pass reads (wake_sources()).
// The mux ends, closing its connection to the router, once every client has opened and closed
// and every packet a client wrote has been copied and its slot freed (finished()).
//
// The mux costs a second NoC copy of every packet (worker -> mux L1 -> router): its overhead is
// why tt-metal uses it only when several workers share a link (REFERENCE §6.3, PR #35142).
//
// Arguments and L1 layout: kernel_args.hpp (namespace fabric_mux).

#include <cstdint>

#include "kernels/api/dataflow_api.hpp"
#include "kernels/api/fabric_connection.hpp"
#include "kernels/api/fabric_packet_header.hpp"
#include "kernels/api/kernel_fault.hpp"
#include "kernels/kernel_args.hpp"
#include "kernels/kernels.hpp"

namespace cclmesh::kernels {
namespace {

using api::KernelFaultCode;

// The most quiet words one wait takes (wait_for_activity_hinted()).
constexpr uint32_t kMaxQuietWords = 4;

[[noreturn]] void fail(KernelFaultCode code, uint32_t detail) {
  kernel_fault(api::fault_code(code), api::kFaultNoCommand, detail);
}

struct Client {
  uint32_t connection_live;       // L1 addresses of the client's four words on this core
  uint32_t worker_location_info;
  uint32_t packets_written;
  uint32_t packets_freed;
  uint32_t slots_base;
  uint64_t flow_control_noc_addr;  // the worker's semaphores, once it has opened
  uint64_t teardown_noc_addr;
  uint32_t copied;    // packets copied to the router
  uint32_t freed;     // packets whose copies have left this core
  bool connected;
  bool closed;
};

class FabricMux {
 public:
  void run() {
    read_args();
    router_.open();
    for (;;) {
      bool progress = false;
      for (uint32_t c = 0; c < num_clients_; ++c) progress |= service_connection(c);
      progress |= free_copied_slots();
      progress |= copy_next_packet();
      if (finished()) break;
      if (!progress) park();
    }
    router_.close();
  }

 private:
  void read_args() {
    namespace m = fabric_mux;
    num_clients_ = get_compile_time_arg_val(static_cast<int>(m::kCtNumClients));
    slots_per_client_ = get_compile_time_arg_val(static_cast<int>(m::kCtSlotsPerClient));
    const uint32_t max_payload = get_compile_time_arg_val(static_cast<int>(m::kCtMaxPayloadBytes));
    const uint32_t cb = get_compile_time_arg_val(static_cast<int>(m::kCtSlotsCbId));
    const uint32_t slots_base = get_compile_time_arg_val(static_cast<int>(m::kCtSlotsBase));
    if (num_clients_ == 0 || num_clients_ > m::kMaxClients) fail(KernelFaultCode::BAD_ARGS, m::kCtNumClients);
    if (slots_per_client_ == 0) fail(KernelFaultCode::BAD_ARGS, m::kCtSlotsPerClient);
    slot_size_ = api::fabric_slot_size_bytes(max_payload);
    // The host placed the slots where this CB is; a disagreement would corrupt L1.
    if (get_write_ptr(cb) != slots_base ||
        get_cb_page_size(cb) < num_clients_ * slots_per_client_ * slot_size_) {
      fail(KernelFaultCode::BAD_ARGS, m::kCtSlotsBase);
    }
    if (get_num_args() < m::kRtRouterConnection + api::kFabricConnectionArgWords) {
      fail(KernelFaultCode::BAD_ARGS, get_num_args());
    }
    uint32_t arg = m::kRtRouterConnection;
    router_ = api::WorkerToFabricEdmSender::build_from_args(arg, noc_);
    if (router_.max_payload_bytes() < max_payload) fail(KernelFaultCode::BAD_ARGS, m::kCtMaxPayloadBytes);
    for (uint32_t c = 0; c < num_clients_; ++c) {
      Client& cl = clients_[c];
      cl = Client{};
      cl.connection_live = get_semaphore(m::client_semaphore_id(c, m::kClientConnectionLive));
      cl.worker_location_info = get_semaphore(m::client_semaphore_id(c, m::kClientWorkerLocationInfo));
      cl.packets_written = get_semaphore(m::client_semaphore_id(c, m::kClientPacketsWritten));
      cl.packets_freed = get_semaphore(m::client_semaphore_id(c, m::kClientPacketsFreed));
      cl.slots_base = m::client_slots_base(slots_base, c, slots_per_client_, max_payload);
    }
    // Packets land in slots before packets_written announces them.
    l1_activity_ignore_range(slots_base, slots_base + num_clients_ * slots_per_client_ * slot_size_);
  }

  // A client's connection (kernels/api/fabric_connection.hpp; what the live word asks for is
  // api::connection_event()). A close is acknowledged whether or not this mux saw the open: a
  // client that opens and closes (sending packets or not) between two passes leaves only the
  // close request, and its location was written before the open. Each client channel opens
  // and closes once per mux run: a closed client is done.
  bool service_connection(uint32_t c) {
    Client& cl = clients_[c];
    if (cl.closed) return false;
    const uint32_t live = l1_read_u32(cl.connection_live);
    switch (api::connection_event(live, cl.connected)) {
      case api::ConnectionEvent::NONE:
        return false;
      case api::ConnectionEvent::PROTOCOL_VIOLATION:
        fail(KernelFaultCode::WORKER_PROTOCOL_VIOLATION, api::protocol_violation_live_detail(c, live));
      case api::ConnectionEvent::OPEN:
        locate_client(cl);
        cl.connected = true;
        noc_inline_dw_write(cl.flow_control_noc_addr, cl.freed, noc_);
        return true;
      case api::ConnectionEvent::OPEN_AND_CLOSE:
        locate_client(cl);
        break;
      case api::ConnectionEvent::CLOSE:
        break;
    }
    // The worker closes after its write barrier: packets_written is final.
    cl.connected = false;
    cl.closed = true;
    l1_write_u32(cl.connection_live, api::kConnectionUnused);
    noc_inline_dw_write(cl.teardown_noc_addr, api::kConnectionTeardownAck, noc_);
    return true;
  }

  void locate_client(Client& cl) const {
    const api::WorkerLocation worker = api::read_worker_location(cl.worker_location_info, noc_);
    cl.flow_control_noc_addr = worker.flow_control_noc_addr;
    cl.teardown_noc_addr = worker.teardown_noc_addr;
  }

  bool free_copied_slots() {
    bool any = false;
    for (uint32_t c = 0; c < num_clients_; ++c) any |= clients_[c].freed != clients_[c].copied;
    if (!any || !noc_nonposted_writes_flushed(noc_)) return false;
    for (uint32_t c = 0; c < num_clients_; ++c) {
      Client& cl = clients_[c];
      if (cl.freed == cl.copied) continue;
      cl.freed = cl.copied;
      l1_write_u32(cl.packets_freed, cl.freed);
      if (cl.connected) noc_inline_dw_write(cl.flow_control_noc_addr, cl.freed, noc_);
    }
    return true;
  }

  bool copy_next_packet() {
    router_full_ = !router_.edm_has_space_for_packet();
    if (router_full_) return false;
    for (uint32_t k = 0; k < num_clients_; ++k) {
      const uint32_t c = (next_client_ + k) % num_clients_;
      Client& cl = clients_[c];
      const uint32_t written = l1_read_u32(cl.packets_written);
      if (written - cl.freed > slots_per_client_) {
        fail(KernelFaultCode::WORKER_PROTOCOL_VIOLATION, api::protocol_violation_overrun_detail(c));
      }
      if (written == cl.copied) continue;
      const uint32_t slot = cl.slots_base + (cl.copied % slots_per_client_) * slot_size_;
      api::PacketHeader header{};
      l1_read_bytes(slot, &header, sizeof(header));
      router_.send_payload_non_blocking_from_address(slot, api::kPacketHeaderSizeBytes + header.payload_size_bytes);
      cl.copied += 1;
      next_client_ = (c + 1) % num_clients_;
      return true;
    }
    return false;
  }

  // What the next pass can act on: a write to this core's L1 (a client's words, the router's
  // credits into router_'s flow-control word) and, while copies are in flight, their leaving
  // this core. A pass reads no other NoC completion: the acks of the credit writes and of the
  // packets_written increments sent to the router would only wake it for a pass that finds
  // nothing (docs/sim_model.md, "Polling kernels"; the mux counts no passes).
  uint32_t wake_sources() const {
    for (uint32_t c = 0; c < num_clients_; ++c) {
      if (clients_[c].freed != clients_[c].copied) return WAKE_ON_L1_WRITE | WAKE_ON_NOC_WRITES_FLUSHED;
    }
    return WAKE_ON_L1_WRITE;
  }

  // Parks until something the next pass may act on happens, with quiet words for writes that
  // cannot change what the next pass does (the mux counts no passes, so each promise holds for
  // the whole park; docs/sim_model.md, "Polling kernels"):
  // - the router has no free slot (as the pass just run found; only its credit, watched,
  //   changes that): a connected client's packets_written, short of an overrun (checked once the
  //   router has room). copy_next_packet() stops at the full router, and finished() reads the
  //   word only of clients that have closed;
  // - the router has a free slot: its credit word, whatever it says. The pass just run copied
  //   nothing, so no client has a packet waiting, and a credit only matters to a packet.
  void park() {
    const uint32_t wake = wake_sources();
    QuietWord quiet[kMaxQuietWords]{};
    uint32_t count = 0;
    if (router_full_) {
      for (uint32_t c = 0; c < num_clients_ && count < kMaxQuietWords; ++c) {
        const Client& cl = clients_[c];
        if (cl.connected) quiet[count++] = QuietWord{cl.packets_written, cl.freed, slots_per_client_};
      }
    } else {
      quiet[count++] = QuietWord{router_.config().worker_flow_control_sem, 0, UINT32_MAX};
    }
    wait_for_activity_hinted(wake, WaitHints{quiet, count, UINT32_MAX, false});
  }

  // Every client has closed and every packet it wrote has been copied and its slot freed, so
  // each client's packets_freed word ends equal to its packets_written.
  bool finished() const {
    for (uint32_t c = 0; c < num_clients_; ++c) {
      const Client& cl = clients_[c];
      if (!cl.closed || cl.copied != l1_read_u32(cl.packets_written) || cl.freed != cl.copied) return false;
    }
    return true;
  }

  uint8_t noc_ = my_noc_index();
  uint32_t num_clients_ = 0;
  uint32_t slots_per_client_ = 0;
  uint32_t slot_size_ = 0;
  uint32_t next_client_ = 0;
  bool router_full_ = false;  // copy_next_packet() found no free router slot
  api::WorkerToFabricEdmSender router_;
  Client clients_[fabric_mux::kMaxClients]{};
};

}  // namespace
}  // namespace cclmesh::kernels

void kernel_main_fabric_mux() {
  cclmesh::kernels::FabricMux mux;
  mux.run();
}
