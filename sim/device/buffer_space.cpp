#include "sim/device/buffer_space.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iterator>
#include <limits>

#include "runtime/device/buffer_layout.hpp"
#include "runtime/device/l1_map.hpp"
#include "sim/engine/check.hpp"

namespace cclmesh::sim::device {

BufferSpace::BufferSpace(runtime::CoreCoord worker_grid, std::uint32_t dram_banks, std::uint64_t dram_bank_bytes,
                         std::uint64_t tensix_l1_bytes)
    : worker_grid_(worker_grid),
      dram_banks_(dram_banks),
      dram_bank_bytes_(dram_bank_bytes),
      tensix_l1_bytes_(tensix_l1_bytes) {}

void BufferSpace::add_buffer(const runtime::BufferHandle& buffer) {
  const runtime::BufferLayout layout = runtime::buffer_layout(buffer, worker_grid_, dram_banks_);
  const bool dram = buffer.config.type == runtime::BufferType::Dram;
  Allocation allocation;
  allocation.what = fmt::format("buffer #{}", buffer.id);
  allocation.kind = fmt::format("{} {}", dram ? "DRAM" : "L1", runtime::to_string(buffer.config.layout));
  allocation.address = buffer.address;
  allocation.allocated_bytes = layout.bytes_per_target();
  const std::size_t targets = dram ? dram_banks_ : std::size_t{worker_grid_.x} * worker_grid_.y;
  allocation.bytes_by_target.assign(targets, 0);
  if (!layout.sharded()) {
    // Page i in bank i mod B: bank b holds the pages b, b + B, ... (formula, not a walk: a
    // timing-only buffer may have millions of pages).
    const std::uint32_t banks = layout.num_targets();
    CCLMESH_CHECK(banks == targets, fmt::format("{}: {} interleaving banks, {} targets", allocation.what, banks,
                                                targets));
    for (std::uint32_t b = 0; b < banks; ++b) {
      const std::uint64_t pages = layout.num_pages() / banks + (b < layout.num_pages() % banks ? 1 : 0);
      allocation.bytes_by_target[b] = pages * layout.aligned_page_size();
    }
  } else {
    for (std::uint32_t i = 0; i < layout.num_pages(); ++i) {
      const runtime::PageLocation page = layout.page(i);
      const std::size_t target = dram ? page.bank : std::size_t{page.core.y} * worker_grid_.x + page.core.x;
      CCLMESH_CHECK(target < targets, fmt::format("{}: page {} on target {} of {}", allocation.what, i, target,
                                                  targets));
      const std::uint64_t reach = page.address + std::uint64_t{layout.aligned_page_size()} - buffer.address;
      allocation.bytes_by_target[target] = std::max(allocation.bytes_by_target[target], reach);
    }
  }
  Allocations& pool = dram ? dram_ : l1_;
  const bool added = pool.emplace(buffer.address, std::move(allocation)).second;
  CCLMESH_CHECK(added, fmt::format("buffer #{} at {:#x}: the address is taken", buffer.id, buffer.address));
  ++generation_;
}

void BufferSpace::add_global_semaphore(const runtime::GlobalSemaphore& semaphore, std::uint64_t bytes) {
  Allocation allocation;
  allocation.what = fmt::format("global semaphore #{}", semaphore.id);
  allocation.kind = "L1 word";
  allocation.address = semaphore.address;
  allocation.allocated_bytes = bytes;
  allocation.cores = semaphore.cores;
  const bool added = l1_.emplace(semaphore.address, std::move(allocation)).second;
  CCLMESH_CHECK(added,
                fmt::format("global semaphore #{} at {:#x}: the address is taken", semaphore.id, semaphore.address));
  ++generation_;
}

void BufferSpace::remove(MemorySpace space, std::uint64_t address) {
  Allocations& pool = space == MemorySpace::Dram ? dram_ : l1_;
  CCLMESH_CHECK(pool.erase(address) == 1, fmt::format("no allocation at {:#x} to remove", address));
  ++generation_;
}

std::uint64_t BufferSpace::floor(MemorySpace space) const {
  if (space == MemorySpace::Dram) return runtime::kDramBufferBase;
  return l1_.empty() ? tensix_l1_bytes_ : l1_.begin()->first;
}

std::uint64_t BufferSpace::bytes_at(const Allocation& allocation, const AccessTarget& target) const {
  if (!allocation.cores.empty()) {
    const bool on_core = std::any_of(allocation.cores.begin(), allocation.cores.end(),
                                     [&](const runtime::CoreRange& range) { return range.contains(target.core); });
    return on_core ? allocation.allocated_bytes : 0;
  }
  if (target.space == MemorySpace::Dram) {
    return target.dram_bank < allocation.bytes_by_target.size() ? allocation.bytes_by_target[target.dram_bank] : 0;
  }
  if (target.core.x >= worker_grid_.x || target.core.y >= worker_grid_.y) return 0;  // off the common grid
  return allocation.bytes_by_target[std::size_t{target.core.y} * worker_grid_.x + target.core.x];
}

bool BufferSpace::allows(const AccessTarget& target, std::uint64_t address, std::uint64_t bytes,
                         AllowedSpan* span) const {
  AllowedSpan allowed;
  const std::uint64_t end = address + bytes;
  const std::uint64_t floor_here = floor(target.space);
  if (end <= floor_here) {
    allowed = AllowedSpan{0, floor_here};
  } else if (target.space == MemorySpace::TensixL1 && address >= tensix_l1_bytes_) {
    // Past L1's end the memory region refuses the access itself.
    allowed = AllowedSpan{tensix_l1_bytes_, std::numeric_limits<std::uint64_t>::max()};
  } else {
    const Allocations& pool = allocations(target.space);
    const auto above = pool.upper_bound(address);
    if (above == pool.begin()) return false;
    const auto it = std::prev(above);
    if (address < it->first || end > it->first + bytes_at(it->second, target)) return false;
    // Clamped at the next allocation, so that every access in the span finds this one.
    const std::uint64_t span_end = it->first + bytes_at(it->second, target);
    allowed = AllowedSpan{it->first, above == pool.end() ? span_end : std::min(span_end, above->first)};
  }
  if (span != nullptr) *span = allowed;
  return true;
}

std::string BufferSpace::describe(const Allocation& allocation, const AccessTarget& target) const {
  const std::uint64_t here = bytes_at(allocation, target);
  if (here == 0) {
    return fmt::format("{} ({:#x}..{:#x}, {} B, {}, none of it {})", allocation.what, allocation.address,
                       allocation.address + allocation.allocated_bytes, allocation.allocated_bytes, allocation.kind,
                       target.space == MemorySpace::Dram ? "in this bank" : "on this core");
  }
  return fmt::format("{} ({:#x}..{:#x}{}, {} B, {})", allocation.what, allocation.address, allocation.address + here,
                     here == allocation.allocated_bytes ? "" : " here", here, allocation.kind);
}

std::string BufferSpace::describe_refusal(const AccessTarget& target, std::uint64_t address,
                                          std::uint64_t bytes) const {
  const std::uint64_t end = address + bytes;
  const std::string range = fmt::format("{:#x}..{:#x}", address, end);
  const Allocations& pool = allocations(target.space);
  const auto above = pool.upper_bound(address);
  const Allocation* below = above == pool.begin() ? nullptr : &std::prev(above)->second;
  if (below != nullptr) {
    const std::uint64_t below_end = below->address + bytes_at(*below, target);
    if (address < below_end) {
      return fmt::format("{} runs {:#x} past the end of {}", range, end - below_end, describe(*below, target));
    }
  }
  if (above != pool.end() && end > above->first) {
    return fmt::format("{} starts in unallocated memory and runs into {}", range, describe(above->second, target));
  }
  std::string text = fmt::format("{} lies in unallocated memory", range);
  std::vector<std::string> nearest;
  if (below != nullptr) nearest.push_back("above " + describe(*below, target));
  if (above != pool.end()) nearest.push_back("below " + describe(above->second, target));
  if (nearest.empty()) return text + " (no buffer is allocated there)";
  return fmt::format("{} ({})", text, fmt::join(nearest, ", "));
}

}  // namespace cclmesh::sim::device
