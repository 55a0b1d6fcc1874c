#pragma once
// Faults as edits, for what-if studies: the same topology with a link or a chip removed, or a
// link slowed down. Each returns a new value (Topology is immutable); chip ids, mesh shape and
// the other chips' coordinates are kept, so a removed chip leaves a hole in the mesh, which
// embeddings and routes then work around or report.

#include <string_view>

#include "topologies/topology.hpp"

namespace cclmesh::topo {

// Throws InputError when the port has no link.
Topology without_link(const Topology& topology, EthEndpoint port);
// Every link between a and b; throws InputError when they are not neighbours.
Topology without_edge(const Topology& topology, ChipId a, ChipId b);
// The chip and all its links; throws InputError when there is no such chip.
Topology without_chip(const Topology& topology, ChipId chip);
// The link's rate times factor, rounded to the nearest byte per second (at least 1); throws
// InputError when the port has no link or factor is not a finite number > 0.
Topology with_link_rate_scaled(const Topology& topology, EthEndpoint port, double factor);

// One fault from a command-line string, for `--fault`:
//   link:CHIP.CH        remove the link on chip CHIP's channel CH
//   edge:A-B            remove every link between chips A and B
//   chip:CHIP           remove the chip
//   slow:CHIP.CH*F      scale the link's rate by F (e.g. slow:0.8*0.5)
// Throws InputError naming the spec and the expected syntax.
Topology apply_fault(const Topology& topology, std::string_view spec);

}  // namespace cclmesh::topo
