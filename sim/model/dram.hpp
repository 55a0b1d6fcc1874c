#pragma once
// DRAM: one channel (a UMD "channel", a controller) is a memory reached through several NoC
// endpoints and a server shared by all of them (REFERENCE 1.1, 3.8). Interleaved buffers spread
// pages over banks (REFERENCE 4.10); on Wormhole tt-metal counts 12 banks of 1 GiB, two per
// channel (REFERENCE 3.8 caveat), so a bank is a (channel, offset) view of a channel.

#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/api/addrgen.hpp"
#include "sim/engine/check.hpp"
#include "sim/engine/time.hpp"
#include "sim/model/core_coord.hpp"
#include "sim/model/memory_region.hpp"
#include "sim/model/noc_server.hpp"

namespace cclmesh::sim {

class DramChannel {
 public:
  DramChannel(MemoryId id, std::uint64_t bytes, StorageMode mode, std::vector<CoreCoord> endpoints, Bandwidth rate,
              SimTime access_latency)
      : memory_(id, bytes, mode), endpoints_(std::move(endpoints)), rate_(rate), access_latency_(access_latency) {}

  MemoryRegion& memory() { return memory_; }
  const MemoryRegion& memory() const { return memory_; }
  const std::vector<CoreCoord>& endpoints() const { return endpoints_; }
  Bandwidth rate() const { return rate_; }
  SimTime access_latency() const { return access_latency_; }
  NocServer& server() { return server_; }
  const NocServer& server() const { return server_; }

 private:
  MemoryRegion memory_;
  std::vector<CoreCoord> endpoints_;
  Bandwidth rate_;
  SimTime access_latency_;
  // Serves requests in idle gaps like a NoC link (noc_server.hpp): a write is booked when it
  // leaves its source NIU for the time it will arrive, so a single free_at made a request that
  // arrived earlier wait behind it, not the arrival order the controller takes them in
  // (docs/performance.md, "NoC bookings with gaps (session 12)").
  NocServer server_;
};

// Where an interleaved page lives (REFERENCE 4.10): bank = page mod banks, offset inside the
// bank = base + (page div banks) * aligned page size. The arithmetic is kernels/api's address
// generator, so kernels, runtime buffers and the memory model agree on every page's home.
struct InterleavedPage {
  std::int32_t bank = 0;
  std::uint64_t offset = 0;
};

inline InterleavedPage interleaved_page(std::uint64_t page_index, std::int32_t bank_count,
                                        std::uint64_t aligned_page_bytes, std::uint64_t bank_base_address) {
  constexpr std::uint64_t kMax = 0xffff'ffff;  // the device address generators are 32-bit
  CCLMESH_CHECK(bank_count > 0 && page_index <= kMax && aligned_page_bytes <= kMax && bank_base_address <= kMax,
                "interleaved page arguments exceed the 32-bit device address generator");
  const api::PageLocation location = api::interleaved_page_location(
      api::InterleavedAddrGenParams{static_cast<std::uint32_t>(bank_base_address), static_cast<std::uint32_t>(bank_count),
                                    static_cast<std::uint32_t>(aligned_page_bytes)},
      static_cast<std::uint32_t>(page_index));
  // The generator's 32-bit address wraps for offsets past 4 GiB; recompute it in 64 bits.
  return InterleavedPage{static_cast<std::int32_t>(location.target),
                         bank_base_address + std::uint64_t{location.page_in_target} * aligned_page_bytes};
}

// A DRAM bank as a NoC target: the channel behind it, the endpoint used to reach it and the
// bank's first byte inside the channel.
struct DramBank {
  std::int32_t channel = 0;
  CoreCoord endpoint;
  std::uint64_t channel_offset = 0;
};

}  // namespace cclmesh::sim
