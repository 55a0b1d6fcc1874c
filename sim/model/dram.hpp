#pragma once
// DRAM: one channel (a UMD "channel", a controller) is a memory reached through several NoC
// endpoints and a server shared by all of them (REFERENCE 1.1, 3.8). Interleaved buffers spread
// pages over banks (REFERENCE 4.10); on Wormhole tt-metal counts 12 banks of 1 GiB, two per
// channel (REFERENCE 3.8 caveat), so a bank is a (channel, offset) view of a channel.

#include <cstdint>
#include <memory>
#include <vector>

#include "sim/engine/time.hpp"
#include "sim/model/core_coord.hpp"
#include "sim/model/memory_region.hpp"
#include "sim/model/packet_resource.hpp"

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
  PacketResource& server() { return server_; }
  const PacketResource& server() const { return server_; }

 private:
  MemoryRegion memory_;
  std::vector<CoreCoord> endpoints_;
  Bandwidth rate_;
  SimTime access_latency_;
  PacketResource server_;
};

// Where an interleaved page lives (REFERENCE 4.10): bank = page mod banks, offset inside the
// bank = base + (page div banks) * aligned page size. The one function to swap for
// kernels/api's address generator once it exists.
struct InterleavedPage {
  std::int32_t bank = 0;
  std::uint64_t offset = 0;
};

constexpr InterleavedPage interleaved_page(std::uint64_t page_index, std::int32_t bank_count,
                                           std::uint64_t aligned_page_bytes, std::uint64_t bank_base_address) {
  const auto banks = static_cast<std::uint64_t>(bank_count);
  return InterleavedPage{static_cast<std::int32_t>(page_index % banks),
                         bank_base_address + (page_index / banks) * aligned_page_bytes};
}

static_assert(interleaved_page(13, 12, 2048, 0x100).bank == 1);
static_assert(interleaved_page(13, 12, 2048, 0x100).offset == 0x100 + 2048);

// A DRAM bank as a NoC target: the channel behind it, the endpoint used to reach it and the
// bank's first byte inside the channel.
struct DramBank {
  std::int32_t channel = 0;
  CoreCoord endpoint;
  std::uint64_t channel_offset = 0;
};

}  // namespace cclmesh::sim
