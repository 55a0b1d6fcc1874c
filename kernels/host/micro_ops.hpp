#pragma once
// Host micro-ops (REFERENCE §4.6, tt-metal ccl_host_commands): each builds one Command. Op
// builders compose streams from these; encode_stream() turns them into runtime args.
//
// Argument order on the wire: source address, destination address, core descriptor, then the
// command's own value (slice, wait target, increment, burst). Address operands of NONE are not
// emitted (the interpreter's default).
//
// The builders check what only they can see (a slice that falls outside its tensor); value
// widths (8-bit inline values, 15 hops) are checked by the encoder, so a Command assembled by
// hand gets the same checks.

#include <cstdint>
#include <variant>

#include "kernels/api/tensor_slice.hpp"
#include "kernels/host/command.hpp"

namespace cclmesh::cmd {

// A semaphore on the target core: a per-program semaphore id (resolved on device with
// get_semaphore) or a global semaphore, which has the same L1 address on every core.
struct GlobalSemaphoreAddress {
  uint32_t address = 0;
  bool operator==(const GlobalSemaphoreAddress&) const = default;
};
using SemaphoreRef = std::variant<SemaphoreId, GlobalSemaphoreAddress>;

using FabricDestination = std::variant<ChipUnicast, ChipMulticast>;

// --- Streams ----------------------------------------------------------------------------------
// STREAM_TENSOR_TO_CB, local: stream k reads tensor k (src NONE) into the CB.
Command read_tensor_slice_to_cb(const api::TensorSlice& slice, uint32_t cb_id);
// The same with a 0-hop forward unicast destination: the tt-metal hack that makes the reader
// reserve packet-header room in each CB page for an eventual fabric write.
Command read_tensor_slice_to_cb_for_eventual_fabric_write(const api::TensorSlice& slice, uint32_t cb_id);
// STREAM_CB_TO_TENSOR, local NoC writes into stream k's tensor.
Command local_write_cb_to_tensor_slice(const api::TensorSlice& slice, uint32_t cb_id);
// STREAM_CB_TO_TENSOR over the fabric: unicast {hops, direction} or multicast {fwd, bwd}
// (multicast also writes locally).
Command fabric_write_cb_to_tensor_slice(const api::TensorSlice& slice, uint32_t cb_id, const FabricDestination& dest);

// --- Semaphores -------------------------------------------------------------------------------
// WAIT_VALUE: until *sem >= min_value; never resets the semaphore.
Command local_semaphore_wait(const SemaphoreRef& sem, uint32_t min_value);
// ATOMIC_INC on this core.
Command local_core_semaphore_inc(const SemaphoreRef& sem, uint32_t value);
// SET_SEMAPHORE_VALUE on this core (teardown resets, REFERENCE §4.11).
Command local_core_semaphore_set(const SemaphoreRef& sem, uint32_t value);
// ATOMIC_INC on core (x, y) of this chip.
Command local_chip_noc_semaphore_inc(uint32_t noc0_x, uint32_t noc0_y, const SemaphoreRef& sem, uint32_t value);
// ATOMIC_INC on every core of a NoC multicast rectangle of this chip.
Command local_chip_semaphore_inc_mcast(const SemaphoreRef& sem, uint32_t value, const NocRectangle& rect);
// ATOMIC_INC on core (x, y) of the chip `dest.distance_in_hops` away.
Command fabric_unicast_semaphore_inc(const SemaphoreRef& sem, uint32_t value, uint32_t noc0_x, uint32_t noc0_y,
                                     const ChipUnicast& dest);
// ATOMIC_INC on core (x, y) of this chip and of the chips in range both ways.
Command fabric_multicast_semaphore_inc(const SemaphoreRef& sem, uint32_t value, uint32_t noc0_x, uint32_t noc0_y,
                                       const ChipMulticast& dest);
// ATOMIC_INC on a NoC rectangle of a remote chip.
Command fabric_unicast_semaphore_inc_mcast(const SemaphoreRef& sem, uint32_t value, const NocRectangle& rect,
                                           const ChipUnicast& dest);
// Deprecated in tt-metal, still used for the EDM termination signal (REFERENCE §4.12 (d)).
Command local_chip_noc_absolute_address_semaphore_inc(uint32_t noc0_x, uint32_t noc0_y, uint32_t address,
                                                      uint32_t value);
Command fabric_unicast_absolute_address_semaphore_inc(uint32_t address, uint32_t value, uint32_t noc0_x,
                                                      uint32_t noc0_y, const ChipUnicast& dest);

// --- Raw writes and bursts ------------------------------------------------------------------
// RAW_INLINE_WRITE_BYTES: writes the (8-bit inline) value as a 32-bit word at (x, y, address).
Command inline_write(uint32_t address, uint32_t value, uint32_t noc0_x, uint32_t noc0_y, const ChipDestination& dest);
// NOC_READ_BURST: reads each transfer into the CB, a CB packet per group.
Command noc_read_burst_to_cb(const NocTransferBurstArg& burst, uint32_t cb_id);
// NOC_WRITE_BURST: writes CB pages out to each transfer, one packet per group.
Command noc_write_burst_from_cb(const NocTransferBurstArg& burst, uint32_t cb_id, const ChipDestination& dest);
// FLOW_CONTROLLED_NOC_READ_BURST: every read first waits for *sem >= min_value (src operand).
Command flow_controlled_noc_read_burst_to_cb(const NocTransferBurstArg& burst, uint32_t cb_id,
                                             const SemaphoreRef& sem, uint32_t min_value);
// NOC_WRITE_AND_ATOMIC_INC: the burst's writes, then sem += value on core (x, y) (dst operand).
Command noc_write_burst_and_semaphore_inc(const NocTransferBurstArg& burst, uint32_t cb_id, const SemaphoreRef& sem,
                                          uint32_t value, uint32_t noc0_x, uint32_t noc0_y,
                                          const ChipDestination& dest);

}  // namespace cclmesh::cmd
