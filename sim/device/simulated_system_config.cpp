#include "sim/device/simulated_system_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>

#include "runtime/device/host_copy_check.hpp"
#include "topologies/arch.hpp"

namespace cclmesh::sim::device {

ChipArch sim_arch(topo::Arch arch) { return arch == topo::Arch::Wormhole ? ChipArch::WormholeB0 : ChipArch::Blackhole; }

void require_one_architecture(const topo::Topology& topology) {
  const topo::Chip& first = topology.chips().front();
  for (const topo::Chip& chip : topology.chips()) {
    if (chip.arch == first.arch) continue;
    throw std::invalid_argument(fmt::format("simulated device: chip {} is {} but chip {} is {}; one architecture per "
                                            "mesh is supported",
                                            chip.id, topo::arch_name(chip.arch), first.id, topo::arch_name(first.arch)));
  }
}

std::map<runtime::ChipId, runtime::ChipCoreMap> chip_core_maps(const topo::Topology& topology) {
  std::map<runtime::ChipId, runtime::ChipCoreMap> maps;
  for (const topo::Chip& chip : topology.chips()) maps.emplace(chip.id, runtime::chip_core_map(topology, chip.id));
  return maps;
}

SystemConfig simulated_system_config(const topo::Topology& topology,
                                     const std::map<runtime::ChipId, runtime::ChipCoreMap>& core_maps, DataMode mode) {
  SystemConfig config;
  config.mode = mode;
  for (const topo::Chip& chip : topology.chips()) {
    ChipConfig c;
    c.id = chip.id;
    c.arch = sim_arch(chip.arch);
    for (std::uint32_t row : core_maps.at(chip.id).harvested_rows()) c.harvested_tensix_rows.push_back(static_cast<std::int32_t>(row));
    config.chips.push_back(std::move(c));
  }
  for (const topo::EthLink& link : topology.links()) {
    EthConnection c;
    c.a = EthPort{link.a.chip, link.a.channel};
    c.b = EthPort{link.b.chip, link.b.channel};
    const topo::Arch arch_a = topology.chip(link.a.chip).arch;
    const topo::Arch arch_b = topology.chip(link.b.chip).arch;
    // A link at the topology's defaults gets the chip model's calibrated figures; a what-if
    // link (slower, faster) keeps its own rate. Its latency moves the model's calibrated one-way
    // latency by as much as it differs from the topology's default: the model counts part of
    // the default (REFERENCE 1.7's 530-620 ns) as the ERISC's issue cost and the wire time, so
    // taking the what-if figure as is would make a link at 600 ns and one at 600.001 ns differ
    // by 100 ns.
    if (link.rate_bytes_per_s != topo::default_link_rate_bytes_per_s(arch_a, arch_b)) {
      c.rate = Bandwidth::bytes_per_second(link.rate_bytes_per_s);
    }
    const std::int64_t default_latency_ps = topo::default_link_latency_ps(arch_a, arch_b);
    if (const std::int64_t beyond_default = link.latency_ps - default_latency_ps; beyond_default != 0) {
      const SimTime calibrated = builtin_arch_spec(sim_arch(arch_a))->params.eth.one_way_latency;
      if (calibrated.ps() + beyond_default <= 0) {
        throw std::invalid_argument(fmt::format(
            "simulated device: link {} <-> {} at {} ps one way; expected more than {} ps, the share of the "
            "arch's default {} ps the chip model spends outside the link's flight (issue cost, wire time)",
            topo::to_string(link.a), topo::to_string(link.b), link.latency_ps, default_latency_ps - calibrated.ps(),
            default_latency_ps));
      }
      c.latency = SimTime::from_ps(calibrated.ps() + beyond_default);
    }
    config.links.push_back(c);
  }
  return config;
}

std::vector<runtime::ChipId> topology_chip_ids(const topo::Topology& topology) {
  std::vector<runtime::ChipId> ids;
  for (const topo::ChipId id : topology.chip_ids()) ids.push_back(static_cast<runtime::ChipId>(id));
  return ids;
}

std::vector<std::uint32_t> topology_ethernet_channels(const topo::Topology& topology, runtime::ChipId chip) {
  const auto id = static_cast<topo::ChipId>(chip);
  topology.chip(id);  // throws for an unknown chip
  std::vector<std::uint32_t> channels;
  for (const topo::EthLink& link : topology.links()) {
    if (link.a.chip == id) channels.push_back(static_cast<std::uint32_t>(link.a.channel));
    if (link.b.chip == id) channels.push_back(static_cast<std::uint32_t>(link.b.channel));
  }
  std::sort(channels.begin(), channels.end());
  return channels;
}

void require_host_copy(const topo::Topology& topology, std::string_view call, runtime::ChipId chip,
                       const runtime::BufferHandle& buffer, std::size_t bytes) {
  if (!topology.has_chip(static_cast<topo::ChipId>(chip))) {
    throw std::invalid_argument(fmt::format("{}: no chip {} on this device", call, chip));
  }
  runtime::require_whole_buffer(call, buffer, bytes);
}

}  // namespace cclmesh::sim::device
