#pragma once
// The project's own topology format: a YAML file a person can read and edit, which round-trips
// exactly (save then load gives an equal Topology). Each chip lists its ethernet ports as
// `channel: [peer chip, peer channel]`, so every link appears on both of its chips, as on a
// cabling sheet, and a link written on one side only or differently on each side is caught as
// an asymmetric link. Format reference: docs/topologies.md.
//
//   format: cclmesh-topology
//   version: 1
//   name: n300
//   mesh: {shape: [1, 2], wraps: [false, false]}        # optional; `empty: [[r, c], ...]` lists
//                                                       # positions without a chip (faulted)
//   chips:
//     - id: 0
//       arch: wormhole_b0
//       board: n300                                     # optional, default unknown
//       board_id: 0                                     # optional
//       pci_device: 0                                   # optional: present = MMIO-attached
//       mesh_coord: [0, 0]                              # optional, needs `mesh`
//       harvesting: {tensix: 3, dram: 0, eth: 0}        # optional, default 0
//       eth: {8: [1, 0], 9: [1, 1]}                     # channel: [peer chip, peer channel]
//     - ...
//
// A port may instead be `{peer: [1, 0], rate_bytes_per_s: 6250000000, latency_ps: 600000}`
// when the link differs from its architecture's defaults (arch.hpp); both ends must agree.

#include <filesystem>
#include <string>
#include <string_view>

#include "topologies/topology.hpp"

namespace cclmesh::topo {

inline constexpr std::string_view kTopologyFormatName = "cclmesh-topology";
inline constexpr int kTopologyFormatVersion = 1;

// The file save_topology writes, for a caller that writes it its own way (the CLI writes every
// output through one function that keeps symlinks and pipes).
std::string to_yaml(const Topology& topology);

// Writes to a temporary file beside `path` and renames it into place, so that a failure never
// leaves a half-written file. Throws InputError when the file cannot be written.
void save_topology(const Topology& topology, const std::filesystem::path& path);

// Throws InputError naming the file, line, entry and problem. A file without `name` is named
// after its stem (load_topology_file) or default_name.
Topology load_topology_file(const std::filesystem::path& path);
Topology parse_topology_yaml(std::string_view yaml_text, const std::string& source,
                             const std::string& default_name = "unnamed");

}  // namespace cclmesh::topo
