#pragma once
// Chip architectures and the per-architecture facts a Topology needs: how many ethernet
// channels a chip has (links must name one of them), and the rate and latency a link gets when
// a file does not say otherwise.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cclmesh::topo {

enum class Arch : std::uint8_t { Wormhole, Blackhole };

struct ArchTraits {
  std::string_view name;  // the spelling written to files: "wormhole_b0", "blackhole"
  std::int32_t eth_channel_count;
  std::int64_t link_rate_bytes_per_s;  // per direction, full duplex
  std::int64_t link_latency_ps;        // one way, wire plus ethernet subsystem
  // Links a chip has towards one neighbour direction (routing planes, REFERENCE 3.5).
  std::int32_t links_per_direction;
  // The Tensix rows (Wormhole) or columns (Blackhole) a harvest mask's bits name: bit i is the
  // i-th (tt-umd's harvest_mask); a mask with a higher bit names one the chip does not have.
  std::int32_t tensix_harvest_positions;
};

// Wormhole B0: 16 ethernet cores (REFERENCE 1.1); 100 Gb/s = 12.5 GB/s per direction ([CDG],
// [CBW]); one-way raw link latency 530-620 ns ([CDG], REFERENCE 1.7), and tt-npe's hop model
// uses 600 cycles at the 1 GHz AI clock, so 600 ns; 4 links per direction (REFERENCE 3.5); 10
// Tensix rows of 8 (tt-umd's wormhole_b0_8x10 SoC descriptor), harvested by row.
inline constexpr ArchTraits kWormholeTraits{"wormhole_b0", 16, 12'500'000'000, 600'000, 4, 10};

// Blackhole: 14 ethernet cores (REFERENCE 2); links run at half their 50 GB/s rating, so
// 25 GB/s is the line rate used ([CBW]); no raw-link latency is published, so we scale the
// Wormhole 600 ns by the fabric per-hop ratio BH/WH = 515/711 ns (REFERENCE 1.7), giving
// 435 ns (inferred, a parameter); 2 links per direction (REFERENCE 3.5); 14 Tensix columns of 10
// (tt-umd's blackhole_140_arch SoC descriptor), harvested by column (REFERENCE 2).
inline constexpr ArchTraits kBlackholeTraits{"blackhole", 14, 25'000'000'000, 435'000, 2, 14};

// The rate and one-way latency a simulated link may have (a system file's, or a what-if's): 0.1
// GB/s (about 1 Gb ethernet) to 1000 GB/s; 200 ns (the chip model spends about 100 ns of a
// link's 600 ns in the ethernet cores, REFERENCE 1.7) to 1 ms (200 km of fibre).
inline constexpr std::int64_t kMinLinkRateBytesPerS = 100'000'000;
inline constexpr std::int64_t kMaxLinkRateBytesPerS = 1'000'000'000'000;
inline constexpr std::int64_t kMinLinkLatencyPs = 200'000;
inline constexpr std::int64_t kMaxLinkLatencyPs = 1'000'000'000;

// "" when `mask` names only Tensix rows / columns `arch` has and leaves at least one, else why not
// ("0x800 sets bit 11, but a wormhole_b0 chip has 10 Tensix rows (bits 0-9); expected a mask below
// 0x400"; "0x3ff harvests every one of a wormhole_b0 chip's 10 Tensix rows; ...").
std::string tensix_harvest_mask_problem(Arch arch, std::uint32_t mask);

const ArchTraits& arch_traits(Arch arch);
std::string_view arch_name(Arch arch);

// Accepts the spellings found in tt-umd files and on the command line: wormhole_b0, Wormhole,
// WORMHOLE_B0, wh; blackhole, BLACKHOLE, bh. Anything else (quasar included) is nullopt.
std::optional<Arch> parse_arch(std::string_view text);

// A link between chips of two architectures runs at the slower rate and the longer latency.
std::int64_t default_link_rate_bytes_per_s(Arch a, Arch b);
std::int64_t default_link_latency_ps(Arch a, Arch b);

// For error messages: the spellings parse_arch accepts.
inline constexpr std::string_view kArchSpellings = "wormhole_b0, Wormhole, wh, blackhole or bh";

}  // namespace cclmesh::topo
