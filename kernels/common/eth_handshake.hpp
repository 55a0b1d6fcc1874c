#pragma once
// The start-up handshake across an ethernet link (REFERENCE §5 "Handshake", §6.4): the master
// (the lower chip id, or the legacy EDM side owning the lowest sender channel) sends STARTED
// into the peer's mailbox; the peer answers REMOTE_HANDSHAKE_COMPLETE into the master's. No
// payload may land in a peer that has not answered, so a late-starting kernel is never
// overwritten.
//
// Each side clears its own mailbox when it consumes the message and never clears it at start:
// the master's message may arrive before the peer kernel runs, and a kernel relaunched on the
// same core (legacy per-op EDM) finds its mailbox empty because the previous run consumed it.
//
// Device code: calls the dataflow API.

#include <cstdint>

#include "kernels/api/dataflow_api.hpp"
#include "kernels/api/fabric_connection.hpp"
#include "kernels/api/fabric_packet_header.hpp"

namespace cclmesh::kernels {

inline void eth_wait_for_tx_queue() {
  while (eth_txq_is_busy()) {
    wait_for_l1_activity();
  }
}

inline void eth_send_status_word(uint32_t staging_address, uint32_t remote_address, api::EdmStatus status) {
  eth_wait_for_tx_queue();
  const uint32_t word[4] = {static_cast<uint32_t>(status), 0, 0, 0};
  l1_write_bytes(staging_address, word, sizeof(word));
  eth_send_bytes(staging_address, remote_address, sizeof(word));
}

// `mailbox` is ours and, at the same address, the peer's; `staging` is ours.
inline void eth_handshake(bool is_master, uint32_t mailbox_address, uint32_t staging_address) {
  volatile uint32_t* mailbox = api::l1_word_ptr(mailbox_address);
  if (is_master) {
    eth_send_status_word(staging_address, mailbox_address, api::EdmStatus::STARTED);
    noc_semaphore_wait(mailbox, static_cast<uint32_t>(api::EdmStatus::REMOTE_HANDSHAKE_COMPLETE));
    l1_write_u32(mailbox_address, 0);
  } else {
    noc_semaphore_wait(mailbox, static_cast<uint32_t>(api::EdmStatus::STARTED));
    l1_write_u32(mailbox_address, 0);
    eth_send_status_word(staging_address, mailbox_address, api::EdmStatus::REMOTE_HANDSHAKE_COMPLETE);
  }
}

}  // namespace cclmesh::kernels
