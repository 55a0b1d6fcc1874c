#pragma once
// Two message-sized scratch slots in L1 that a legacy worker fills in turn, so that one is
// refilled while the other's NoC write is still in flight. The caller makes sure the slot it is
// handed is free again: the senders flush their writes first; the all-gather receiver's
// previous message in it has been written out and awaited by then.
//
// Device-clean: <cstdint> only.

#include <cstdint>

namespace cclmesh::kernels {

class ScratchSlots {
 public:
  ScratchSlots(uint32_t base, uint32_t slot_bytes) : base_(base), slot_bytes_(slot_bytes) {}

  // The slot for the next message: the two alternate.
  uint32_t next() {
    const uint32_t slot = base_ + (handed_out_ % 2) * slot_bytes_;
    handed_out_ += 1;
    return slot;
  }

 private:
  uint32_t base_;
  uint32_t slot_bytes_;
  uint32_t handed_out_ = 0;
};

}  // namespace cclmesh::kernels
