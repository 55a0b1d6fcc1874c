#pragma once
// The NoC access check: a read or write a kernel issues through a raw NoC address must, where it
// lands in buffer space (a DRAM bank, a Tensix core's L1 above the CBs: buffer_space.hpp), lie
// wholly inside one live allocation on that bank or core. Checked at issue, where the issuing
// kernel is known, so the same check holds in timing-only mode (it reads no data). A fabric
// write is checked where it lands, at the destination router's NoC write (the packet header
// carries no origin).
//
// Per chip, a table by NoC0 node says what an address there reaches (nothing checked, a DRAM
// channel, a Tensix core by its logical coordinate), built once when the chips are built.

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/device/core_map.hpp"
#include "sim/device/buffer_space.hpp"
#include "sim/model/chip.hpp"

namespace cclmesh::sim::device {

class NocAccessCheck {
 public:
  NocAccessCheck(const Chip& chip, const runtime::ChipCoreMap& map, const BufferSpace& space);

  // Whether [address, address + bytes) at NoC0 core `core` is allowed (see above). Called for
  // every NoC read and write a kernel issues: a table look-up, and where the access lands in a
  // DRAM bank or a Tensix L1, the spans remembered for that node (most accesses land where the
  // node's last ones did), else one ordered-map look-up; no allocation.
  bool allows(CoreCoord core, std::uint64_t address, std::uint64_t bytes) const {
    if (!in_grid(core)) return true;
    Node& node = nodes_[node_index(core)];
    if (node.reaches == Reaches::Nothing) return true;
    return remembered(node, address, bytes) || allows_at(node, address, bytes);
  }
  // A multicast's destination: only the Tensix cores of its rectangle receive it.
  bool allows_multicast(CoreCoord core, std::uint64_t address, std::uint64_t bytes) const {
    if (!in_grid(core)) return true;
    Node& node = nodes_[node_index(core)];
    if (node.reaches != Reaches::TensixL1) return true;
    return remembered(node, address, bytes) || allows_at(node, address, bytes);
  }
  // allows() or allows_multicast() false: "chip 0 DRAM bank 3 (channel 1 at 0x..): 0x11800..0x12800 runs ..."
  std::string describe_refusal(CoreCoord core, std::uint64_t address, std::uint64_t bytes) const;

 private:
  enum class Reaches : std::uint8_t { Nothing, DramChannel, TensixL1 };
  struct Node {
    Reaches reaches = Reaches::Nothing;
    std::uint32_t channel = 0;  // DramChannel
    runtime::CoreCoord logical;  // TensixL1
    // The spans (in the node's addresses: channel-relative for DRAM) that allowed its last two
    // distinct accesses, valid while the buffer space's generation is `remembered_generation`:
    // two, as a core is written both below buffer space (its CBs) and in a buffer.
    std::uint64_t remembered_generation = 0;
    AllowedSpan spans[2];
    std::uint8_t next_span = 0;  // the one a new span replaces
  };
  bool remembered(const Node& node, std::uint64_t address, std::uint64_t bytes) const {
    return node.remembered_generation == space_->generation() &&
           (node.spans[0].holds(address, bytes) || node.spans[1].holds(address, bytes));
  }
  bool in_grid(CoreCoord c) const {
    // Unsigned: a negative coordinate compares above the grid.
    return static_cast<std::uint32_t>(c.x) < static_cast<std::uint32_t>(grid_x_) &&
           static_cast<std::uint32_t>(c.y) < static_cast<std::uint32_t>(grid_y_);
  }
  std::size_t node_index(CoreCoord c) const { return static_cast<std::size_t>(c.y) * grid_x_ + c.x; }
  // The look-up past the remembered spans; remembers the span that allowed the access.
  bool allows_at(Node& node, std::uint64_t address, std::uint64_t bytes) const;
  // Keeps `span` in place of the node's older one (of both, if the allocations changed since).
  void remember(Node& node, const AllowedSpan& span) const;
  // The DRAM bank a channel-relative address is in and the address inside it; false past the
  // channel's banks (the DRAM model refuses that access itself).
  bool dram_target(const Node& node, std::uint64_t address, AccessTarget& target, std::uint64_t& in_bank) const;

  const BufferSpace* space_;
  std::uint32_t chip_ = 0;
  std::int32_t grid_x_ = 0;
  std::int32_t grid_y_ = 0;
  std::uint32_t banks_per_channel_ = 0;
  std::uint64_t bank_bytes_ = 0;
  // Mutable: the remembered spans are a cache, they change no answer.
  mutable std::vector<Node> nodes_;
};

}  // namespace cclmesh::sim::device
