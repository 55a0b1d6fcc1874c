#include "sim/device/free_list.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

#include "sim/engine/check.hpp"

namespace cclmesh::sim::device {

FreeList::FreeList(std::uint64_t begin, std::uint64_t end, std::uint64_t alignment)
    : begin_(begin), end_(end), alignment_(alignment), lowest_ever_(end), highest_end_ever_(begin) {
  CCLMESH_CHECK(alignment != 0 && (alignment & (alignment - 1)) == 0 && begin % alignment == 0 &&
                    end % alignment == 0 && begin <= end,
                fmt::format("free list [{:#x}, {:#x}) with alignment {}", begin, end, alignment));
  if (begin < end) free_.emplace(begin, end);
}

std::uint64_t FreeList::rounded(std::uint64_t bytes) const {
  return (std::max<std::uint64_t>(bytes, 1) + alignment_ - 1) / alignment_ * alignment_;
}

std::optional<std::uint64_t> FreeList::allocate(std::uint64_t bytes, From from) {
  const std::uint64_t size = rounded(bytes);
  const auto fits = [size](const auto& block) { return block.second - block.first >= size; };
  std::uint64_t address = 0;
  if (from == From::Bottom) {
    const auto it = std::find_if(free_.begin(), free_.end(), fits);
    if (it == free_.end()) return std::nullopt;
    address = it->first;
    const std::uint64_t block_end = it->second;
    free_.erase(it);
    if (address + size < block_end) free_.emplace(address + size, block_end);
  } else {
    const auto it = std::find_if(free_.rbegin(), free_.rend(), fits);
    if (it == free_.rend()) return std::nullopt;
    address = it->second - size;
    if (address == it->first) {
      free_.erase(std::next(it).base());
    } else {
      it->second = address;
    }
  }
  lowest_ever_ = std::min(lowest_ever_, address);
  highest_end_ever_ = std::max(highest_end_ever_, address + size);
  return address;
}

void FreeList::release(std::uint64_t address, std::uint64_t bytes) {
  const std::uint64_t end = address + rounded(bytes);
  CCLMESH_CHECK(address >= begin_ && end <= end_ && address % alignment_ == 0,
                fmt::format("released block [{:#x}, {:#x}) outside [{:#x}, {:#x})", address, end, begin_, end_));
  auto next = free_.lower_bound(address);
  CCLMESH_CHECK(next == free_.end() || next->first >= end,
                fmt::format("released block [{:#x}, {:#x}) overlaps the free block at {:#x}", address, end,
                            next == free_.end() ? 0 : next->first));
  std::uint64_t start = address;
  std::uint64_t stop = end;
  if (next != free_.begin()) {
    const auto previous = std::prev(next);
    CCLMESH_CHECK(previous->second <= address,
                  fmt::format("released block [{:#x}, {:#x}) overlaps the free block [{:#x}, {:#x})", address, end,
                              previous->first, previous->second));
    if (previous->second == address) {
      start = previous->first;
      free_.erase(previous);
    }
  }
  if (next != free_.end() && next->first == end) {
    stop = next->second;
    free_.erase(next);
  }
  free_.emplace(start, stop);
}

std::uint64_t FreeList::free_bytes() const {
  std::uint64_t total = 0;
  for (const auto& [start, stop] : free_) total += stop - start;
  return total;
}

std::uint64_t FreeList::largest_free_block() const {
  std::uint64_t largest = 0;
  for (const auto& [start, stop] : free_) largest = std::max(largest, stop - start);
  return largest;
}

std::uint64_t FreeList::lowest_in_use() const {
  if (free_.empty() || free_.begin()->first != begin_) return begin_;
  return free_.begin()->second;
}

}  // namespace cclmesh::sim::device
