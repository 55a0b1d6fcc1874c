#pragma once
// What a simulated device builds from a topology: one core map per chip and the SimSystem's
// configuration (chips, links, what-if link rates and latencies). Functions of the topology
// alone, so that what the simulator cannot build is refused before any chip is.

#include <cstddef>
#include <cstdint>
#include <map>
#include <string_view>
#include <vector>

#include "runtime/device/core_map.hpp"
#include "runtime/device/types.hpp"
#include "sim/model/arch_params.hpp"
#include "sim/model/sim_system.hpp"
#include "topologies/topology.hpp"

namespace cclmesh::sim::device {

ChipArch sim_arch(topo::Arch arch);

// std::invalid_argument naming two chips of different architectures: one per mesh is supported.
void require_one_architecture(const topo::Topology& topology);

// Every chip's core map (throws as runtime::chip_core_map does).
std::map<runtime::ChipId, runtime::ChipCoreMap> chip_core_maps(const topo::Topology& topology);

// MeshDevice::chips() and active_ethernet_channels() of a simulated device (the simulator and
// the planning device answer alike): chip ids in topology order; `chip`'s link channels, sorted
// (throws for an unknown chip).
std::vector<runtime::ChipId> topology_chip_ids(const topo::Topology& topology);
std::vector<std::uint32_t> topology_ethernet_channels(const topo::Topology& topology, runtime::ChipId chip);
// What a host write or read of `bytes` into `buffer` on `chip` is checked for at the call, on
// either device: std::invalid_argument, starting "`call`: ", for a chip the topology lacks or a
// size other than the buffer's (whether the buffer is live is the allocator's check).
void require_host_copy(const topo::Topology& topology, std::string_view call, runtime::ChipId chip,
                       const runtime::BufferHandle& buffer, std::size_t bytes);

// Throws std::invalid_argument for a what-if link latency the chip model cannot run (below the
// share of the default it spends outside the link's flight).
SystemConfig simulated_system_config(const topo::Topology& topology,
                                     const std::map<runtime::ChipId, runtime::ChipCoreMap>& core_maps, DataMode mode);

}  // namespace cclmesh::sim::device
