#include "topologies/arch.hpp"

#include <algorithm>
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

}  // namespace cclmesh::topo
