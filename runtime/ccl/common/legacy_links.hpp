#pragma once
// How many links per hop a legacy-EDM op may use (REFERENCE 6.9: in the legacy era `num_links`
// was `min(requested, active ethernet cores between the pair)` [EDMB]). Without a persistent
// fabric there are no routing planes (REFERENCE 3.5) for dispatch to reserve on every edge, as
// topo::usable_links does for the fabric; but fast dispatch still tunnels to every chip that is
// not host-attached over ethernet cores (REFERENCE 3.1: on N300 "dispatch reserves one" of the
// two links; 3.3), and a core carrying a tunnel is not active for a CCL. So a hop loses one
// link when a dispatch tunnel runs over it, and keeps them all otherwise (inferred: which hops
// the tunnels take is not in REFERENCE; see dispatch_tunnel_hops).
//
// This reproduces REFERENCE 8's legacy-era rows 3, 4, 6, 30 and 32 (4 chips on 2 links on a
// T3K: the square of its host-attached chips has no tunnel on it) and 1 link on N300 and on the
// T3K's 8-chip ring (each of its n300 cards' internal hops carries a tunnel).
// Pure functions of a topology: no device, no engine.

#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "runtime/ccl/common/collective.hpp"
#include "topologies/topology.hpp"

namespace cclmesh::runtime::ccl {

// The hops (as (lower id, higher id) pairs) dispatch's ethernet tunnels run over: for every
// chip that is not MMIO-attached, the shortest path to it from a host-attached chip, found by a
// breadth-first search from all MMIO chips at once, in chip-id order, taking neighbours in id
// order (deterministic). On a T3K that is each n300 card's L-R hop (0-4, 1-5, 2-6, 3-7: the
// remote chip's nearest host-attached chip is its own card's L chip, as tt-metal tunnels), on
// N300 its one hop, on TG a tree from the gateway N150s into the Galaxy (inferred: the real
// TG tunnel paths are not in REFERENCE). Empty when every chip is host-attached.
std::set<std::pair<ChipId, ChipId>> dispatch_tunnel_hops(const topo::Topology& topology);

// Links a legacy op may use on the hop between neighbours `a` and `b`: the hop's physical
// links, less one when a dispatch tunnel runs over it.
std::uint32_t legacy_hop_links(const topo::Topology& topology, ChipId a, ChipId b);

// The most links a legacy op on `group` (rank order; a ring also uses the hop from its last chip
// to its first) may use: the minimum of legacy_hop_links over its hops; 0 for one chip.
std::uint32_t legacy_usable_links(const topo::Topology& topology, const std::vector<ChipId>& group, CclTopology shape);

// The hop that sets legacy_usable_links (the first with the fewest links), for messages.
std::pair<ChipId, ChipId> legacy_narrowest_hop(const topo::Topology& topology, const std::vector<ChipId>& group,
                                               CclTopology shape);

}  // namespace cclmesh::runtime::ccl
