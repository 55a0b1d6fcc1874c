#pragma once
// The built-in systems, as builders. Each one also exists as a YAML file in the project's own
// format under topologies/systems/ (a test checks builder == file), so that users can copy one
// and edit it. Choices where REFERENCE says "unconfirmed" are listed in docs/topologies.md.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "topologies/topology.hpp"

namespace cclmesh::topo {

// One Wormhole chip on an N150 card, MMIO-attached.
Topology build_n150();
// Two Wormhole chips: L (chip 0, PCIe) and R (chip 1, tunnelled), links 0.ch8<->1.ch0 and
// 0.ch9<->1.ch1 (REFERENCE 3.2). Both physical links are recorded; dispatch reserves one of
// them on real hardware, which is a runtime policy, not a property of the wiring.
Topology build_n300();
// 4 N300 cards as a 2x4 mesh, 2 links per neighbour, tt-umd chip ids and the exact channel
// pairs of REFERENCE 3.3; chips 0-3 are MMIO (PCI 0->0, 1->1, 2->3, 3->2).
Topology build_t3k();
// A 32-chip Wormhole Galaxy as a 4x8 mesh, 4 links per neighbour, plus 4 gateway N150 cards
// (chips 32-35, the only MMIO chips), each with 2 links into the Galaxy's top row.
Topology build_tg();
// The Wormhole Galaxy 6U: 4x8 mesh, 4 links per neighbour, all 32 chips host-attached.
Topology build_galaxy();
// One Blackhole chip on a P150 card.
Topology build_p150();
// Two Blackhole chips on a P300 card, 2 links between them, both MMIO-attached.
Topology build_p300();
// A 32-chip Blackhole Galaxy: 4x8 mesh, 2 links per neighbour, all chips host-attached.
Topology build_bh_galaxy();

// n150, n300, t3k, tg, galaxy, p150, p300, bh_galaxy.
const std::vector<std::string>& builtin_system_names();
std::optional<Topology> build_builtin_system(std::string_view name);

}  // namespace cclmesh::topo
