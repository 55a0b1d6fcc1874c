#pragma once
// The hint added when a whole-system group cannot be laid because the system's chips are not
// all connected (a cluster descriptor of two unlinked N300 cards, a YAML system with a chip
// left out): the embedding's refusal says the chips share no link, not what a user can run.

#include <string>

#include "tools/cclmesh/run_options.hpp"
#include "topologies/topology.hpp"

namespace cclmesh::cli::detail {

// "; the system is N unconnected groups of chips (...): run on one of them with --chips, e.g.
// --chips 0,1" when no --chips or --cluster-axis narrowed the group and the system has more than
// one connected component; "" otherwise. The example is a line through the largest group (the
// lowest-numbered one among equals), as --chips wants it: consecutive chips neighbours.
std::string disconnected_system_hint(const RunOptions& options, const topo::Topology& topology);

}  // namespace cclmesh::cli::detail
