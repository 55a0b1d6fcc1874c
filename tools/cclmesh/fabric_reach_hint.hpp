#pragma once
// The hint added to a builder's refusal of a whole-system group past the 1D fabric's reach.

#include <cstdint>
#include <string>
#include <string_view>

#include "tools/cclmesh/run_options.hpp"
#include "topologies/topology.hpp"

namespace cclmesh::cli::detail {

// What to run instead when a whole-system group is past the 1D fabric's reach (a route holds
// at most ccl::kMaxFabricHops hops, REFERENCE 6.5): a Galaxy's 32-chip ring refuses every op but
// all_gather, and the builders' refusal says why but not what a user can do.
// Only the axes whose groups are within reach are named: ring:64's axis 1 is the same 64 chips
// and its axis 0 has none, so it is told --chips alone.
std::string route_length_hint(const RunOptions& options, const topo::Topology& topology, std::uint32_t n_chips,
                              std::string_view refusal);

}  // namespace cclmesh::cli::detail
