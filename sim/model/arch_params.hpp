#pragma once
// Architecture parameters (Wormhole B0, Blackhole) loaded from sim/model/arch/*.yaml, paired
// with the chip's SoC descriptor. Every figure is an integer; durations and rates are exact
// SimTime / Bandwidth values derived once at load time.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "sim/engine/time.hpp"
#include "sim/model/soc_descriptor.hpp"

namespace cclmesh::sim {

enum class ChipArch : std::uint8_t { WormholeB0, Blackhole };
std::string_view to_string(ChipArch arch);

struct NiuRates {
  Bandwidth inject;
  Bandwidth absorb;
};

struct NocParams {
  std::int64_t flit_bytes = 0;                  // also the header flit every packet carries
  std::uint32_t max_packet_payload_bytes = 0;
  Bandwidth link_rate;
  Bandwidth multicast_rate;
  NiuRates tensix_niu;
  NiuRates eth_niu;
  NiuRates dram_niu;
  std::int32_t request_slots = 0;
  SimTime router_hop;      // per router -> router hop
  SimTime niu_to_router;
  SimTime router_to_niu;
  SimTime request_setup;   // slot taken -> first flit enters the NIU
  SimTime request_issue;   // minimum spacing of two requests from one core on one NoC
};

struct L1Params {
  std::uint64_t tensix_bytes = 0;
  std::uint64_t erisc_bytes = 0;  // the unreserved part: runtime/device/l1_map.hpp (EriscL1Map)
};

struct DramParams {
  std::int32_t channels = 0;
  std::uint64_t channel_bytes = 0;
  std::int32_t banks_per_channel = 0;
  Bandwidth channel_rate;
  SimTime access_latency;
  std::int32_t bank_count() const { return channels * banks_per_channel; }
  std::uint64_t bank_bytes() const { return channel_bytes / static_cast<std::uint64_t>(banks_per_channel); }
};

struct EthParams {
  Bandwidth line_rate;             // per direction
  std::uint32_t max_frame_bytes = 0;
  std::uint32_t frame_overhead_bytes = 0;
  std::uint32_t packet_header_bytes = 0;
  std::uint32_t word_bytes = 0;    // eth_send_packet granularity and alignment
  SimTime tx_issue;                // ERISC time to issue one data packet
  SimTime rx_handle;               // ERISC time to handle one received data packet
  SimTime one_way_latency;         // wire end at the sender -> data in the peer's L1
  std::int32_t txq_max_outstanding = 0;

  // Bytes on the wire for a packet carrying `payload_bytes`: payload + packet header, cut into
  // frames of at most max_frame_bytes, each paying frame_overhead_bytes (REFERENCE 1.5, 1.6).
  std::int64_t wire_bytes(std::int64_t payload_bytes) const;
  // Frames of such a packet.
  std::int64_t frames(std::int64_t payload_bytes) const;
};

struct ArchParams {
  ChipArch arch = ChipArch::WormholeB0;
  std::string name;                    // "wormhole_b0", "blackhole"
  std::string soc_descriptor_file;     // file name inside the SoC descriptor directory
  std::int64_t clock_hz = 0;
  NocParams noc;
  L1Params l1;
  DramParams dram;
  EthParams eth;

  SimTime cycles(std::int64_t count) const { return cycles_to_time(count, clock_hz); }
};

// Reads one arch file; throws ModelConfigError naming the file, field and value.
ArchParams load_arch_params(const std::filesystem::path& path);

// An arch file with its SoC descriptor, cross-checked (L1 sizes, DRAM channels and size).
struct ArchSpec {
  ArchParams params;
  SocDescriptor soc;
};

std::shared_ptr<const ArchSpec> load_arch_spec(const std::filesystem::path& arch_file,
                                               const std::filesystem::path& soc_descriptor_dir);
// The files that ship with cclmesh: sim/model/arch/<arch>.yaml and the SoC descriptors in
// ../shared/ecosystem/soc_descriptors/, or their installed copies (topologies/data_paths.hpp).
// Cached per arch.
std::shared_ptr<const ArchSpec> builtin_arch_spec(ChipArch arch);
std::filesystem::path builtin_arch_file(ChipArch arch);
std::filesystem::path builtin_soc_descriptor_dir();

}  // namespace cclmesh::sim
