#pragma once
// Where a program's circular buffers sit in L1, by the device contract of l1_map.hpp: in
// declaration order, bottom up from kTensixCircularBufferBase, each 32 B aligned. As tt-metal
// allocates them, a CB goes at the lowest address above every CB already placed on any of its
// cores, so CBs of disjoint cores reuse the same L1 (a program with many worker cores needs no
// more L1 per core than its busiest core's CBs). Backends place CBs with it; a builder that
// must hand one kernel another core's CB address (the fabric mux's slots, which its clients
// write over the NoC) computes it with the same function.

#include <cstdint>
#include <map>
#include <vector>

#include "runtime/device/l1_map.hpp"
#include "runtime/device/types.hpp"
#include "runtime/device/workload.hpp"

namespace cclmesh::runtime {

// The address of each CB of `cbs` (64-bit: an oversized program is the backend's to refuse).
inline std::vector<std::uint64_t> circular_buffer_addresses(const std::vector<CircularBufferSpec>& cbs) {
  std::map<CoreCoord, std::uint64_t> next_free;  // per core: one past its highest CB so far
  std::vector<std::uint64_t> addresses;
  addresses.reserve(cbs.size());
  for (const CircularBufferSpec& cb : cbs) {
    const std::vector<CoreCoord> cores = cores_of(cb.cores);
    std::uint64_t next = kTensixCircularBufferBase;
    for (const CoreCoord& c : cores) {
      const auto it = next_free.find(c);
      if (it != next_free.end() && it->second > next) next = it->second;
    }
    const std::uint64_t address = (next + kCircularBufferAlignment - 1) / kCircularBufferAlignment * kCircularBufferAlignment;
    addresses.push_back(address);
    for (const CoreCoord& c : cores) next_free[c] = address + std::uint64_t{cb.num_pages} * cb.page_size_bytes;
  }
  return addresses;
}

}  // namespace cclmesh::runtime
