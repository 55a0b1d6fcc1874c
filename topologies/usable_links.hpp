#pragma once
// How many of a hop's physical links a collective may use. A Topology records every physical
// link; on real systems fast dispatch takes some of them (REFERENCE 3.1, 3.3):
//   - a system with tunnelled chips (chips not MMIO-attached, reached from the host through
//     another chip's ethernet) reserves one routing plane for dispatch, and a routing plane is
//     one port on every edge (REFERENCE 3.5), so every hop loses one link;
//   - the usable count on a line or ring is the minimum over its hops [CBW].
// This reproduces the published rule of thumb (inferred): N300 and T3K 1 link, TG 3 (its
// Galaxy chips are tunnelled through the gateways), Galaxy 6U 4, Blackhole systems 2.
// It is a policy, kept apart from the topology so that a caller can ignore or replace it.

#include <cstdint>

#include "topologies/embedding.hpp"
#include "topologies/topology.hpp"

namespace cclmesh::topo {

// 1 when some chip is not MMIO-attached, else 0.
std::int32_t dispatch_reserved_links(const Topology& topology);

// Minimum over the embedding's hops of (links on the hop - dispatch_reserved_links), at least
// 0; 0 for an embedding without hops.
std::int32_t usable_links(const Topology& topology, const Embedding& embedding);

}  // namespace cclmesh::topo
