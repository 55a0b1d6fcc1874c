#include "topologies/arch.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <string>

namespace cclmesh::topo {

const ArchTraits& arch_traits(Arch arch) {
  switch (arch) {
    case Arch::Wormhole:
      return kWormholeTraits;
    case Arch::Blackhole:
      return kBlackholeTraits;
  }
  return kWormholeTraits;  // unreachable: every enumerator is handled above
}

std::string_view arch_name(Arch arch) { return arch_traits(arch).name; }

std::int64_t default_link_rate_bytes_per_s(Arch a, Arch b) {
  return std::min(arch_traits(a).link_rate_bytes_per_s, arch_traits(b).link_rate_bytes_per_s);
}

std::int64_t default_link_latency_ps(Arch a, Arch b) {
  return std::max(arch_traits(a).link_latency_ps, arch_traits(b).link_latency_ps);
}

std::optional<Arch> parse_arch(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "wormhole_b0" || lower == "wormhole" || lower == "wh") return Arch::Wormhole;
  if (lower == "blackhole" || lower == "bh") return Arch::Blackhole;
  return std::nullopt;
}

std::string tensix_harvest_mask_problem(Arch arch, std::uint32_t mask) {
  const ArchTraits& traits = arch_traits(arch);
  const auto positions = static_cast<std::uint32_t>(traits.tensix_harvest_positions);
  const std::string_view what = arch == Arch::Wormhole ? "rows" : "columns";
  const std::uint32_t every = (std::uint32_t{1} << positions) - 1;
  if (mask == every) {
    // No Tensix core left: every op refused the chip late, naming neither file nor field ("4
    // worker cores from (0,0) do not fit the 8x0 worker grid"; bug bash, session 44).
    return fmt::format("{:#x} harvests every one of a {} chip's {} Tensix {}; expected a mask that leaves at least "
                       "one (a chip harvests a few)",
                       mask, traits.name, positions, what);
  }
  if (mask >> positions == 0) return "";
  return fmt::format("{:#x} sets bit {}, but a {} chip has {} Tensix {} (bits 0-{}); expected a mask below {:#x}", mask,
                     std::bit_width(mask) - 1, traits.name, positions, what, positions - 1,
                     std::uint32_t{1} << positions);
}

}  // namespace cclmesh::topo
