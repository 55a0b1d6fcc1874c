#include "sim/device/noc_access_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace cclmesh::sim::device {

NocAccessCheck::NocAccessCheck(const Chip& chip, const runtime::ChipCoreMap& map, const BufferSpace& space)
    : space_(&space),
      chip_(chip.id()),
      grid_x_(chip.grid_x()),
      grid_y_(chip.grid_y()),
      banks_per_channel_(static_cast<std::uint32_t>(chip.params().dram.banks_per_channel)),
      bank_bytes_(chip.params().dram.bank_bytes()),
      nodes_(static_cast<std::size_t>(grid_x_) * static_cast<std::size_t>(grid_y_)) {
  for (std::int32_t y = 0; y < grid_y_; ++y) {
    for (std::int32_t x = 0; x < grid_x_; ++x) {
      const std::int32_t channel = chip.dram_channel_of(CoreCoord{x, y});
      if (channel >= 0) {
        Node& node = nodes_[node_index(CoreCoord{x, y})];
        node.reaches = Reaches::DramChannel;
        node.channel = static_cast<std::uint32_t>(channel);
      }
    }
  }
  const runtime::CoreCoord grid = map.worker_grid();
  for (std::uint32_t y = 0; y < grid.y; ++y) {
    for (std::uint32_t x = 0; x < grid.x; ++x) {
      const runtime::Noc0Coord noc0 = map.tensix_noc0(runtime::CoreCoord{x, y});
      Node& node = nodes_[node_index(CoreCoord{static_cast<std::int32_t>(noc0.x), static_cast<std::int32_t>(noc0.y)})];
      node.reaches = Reaches::TensixL1;
      node.logical = runtime::CoreCoord{x, y};
    }
  }
}

bool NocAccessCheck::dram_target(const Node& node, std::uint64_t address, AccessTarget& target,
                                 std::uint64_t& in_bank) const {
  const std::uint64_t within = address / bank_bytes_;
  if (within >= banks_per_channel_) return false;
  target.space = MemorySpace::Dram;
  target.dram_bank = node.channel * banks_per_channel_ + static_cast<std::uint32_t>(within);
  in_bank = address % bank_bytes_;
  return true;
}

bool NocAccessCheck::allows_at(Node& node, std::uint64_t address, std::uint64_t bytes) const {
  AccessTarget target;
  AllowedSpan span;
  if (node.reaches == Reaches::TensixL1) {
    target.space = MemorySpace::TensixL1;
    target.core = node.logical;
    if (!space_->allows(target, address, bytes, &span)) return false;
  } else {
    std::uint64_t in_bank = 0;
    if (dram_target(node, address, target, in_bank)) {
      if (!space_->allows(target, in_bank, bytes, &span)) return false;
      // Back to the channel's addresses, within this bank (an access running on into the next
      // bank is checked in this one, so it must not be remembered as allowed by the next).
      const std::uint64_t bank_base = address - in_bank;
      span = AllowedSpan{bank_base + span.begin, bank_base + std::min(span.end, bank_bytes_)};
    } else {
      // Past the channel's banks: unchecked.
      span = AllowedSpan{std::uint64_t{banks_per_channel_} * bank_bytes_, std::numeric_limits<std::uint64_t>::max()};
    }
  }
  remember(node, span);
  return true;
}

void NocAccessCheck::remember(Node& node, const AllowedSpan& span) const {
  if (node.remembered_generation != space_->generation()) {
    node.remembered_generation = space_->generation();
    node.spans[0] = span;
    node.spans[1] = AllowedSpan{};
    node.next_span = 1;
    return;
  }
  node.spans[node.next_span] = span;
  node.next_span ^= 1;
}

std::string NocAccessCheck::describe_refusal(CoreCoord core, std::uint64_t address, std::uint64_t bytes) const {
  const Node& node = nodes_[node_index(core)];
  AccessTarget target;
  if (node.reaches == Reaches::TensixL1) {
    target.space = MemorySpace::TensixL1;
    target.core = node.logical;
    return fmt::format("chip {} core ({},{}) [tensix ({},{})] L1: {}", chip_, core.x, core.y, node.logical.x,
                       node.logical.y, space_->describe_refusal(target, address, bytes));
  }
  std::uint64_t in_bank = 0;
  dram_target(node, address, target, in_bank);
  return fmt::format("chip {} DRAM bank {} (channel {} at ({},{})): {}", chip_, target.dram_bank, node.channel, core.x,
                     core.y, space_->describe_refusal(target, in_bank, bytes));
}

}  // namespace cclmesh::sim::device
