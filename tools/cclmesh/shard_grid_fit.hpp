#pragma once
// A --shard-grid or --out-shard-grid past what the system's chips have, named by its option.

#include <optional>
#include <string>

#include "tools/cclmesh/run_options.hpp"
#include "topologies/topology.hpp"

namespace cclmesh::cli::detail {

// The buffer layout refuses such a grid by the first core it lacks ("DRAM shard.grid core (8,0)
// is not a DRAM bank"), which names no option and no grid that fits; the CLI knows which option
// gave the grid. Returns the refusal naming the option, its value and the largest grid the chips
// hold (DRAM: their banks x 1; L1: their common worker grid), or nullopt when every grid fits.
std::optional<std::string> shard_grid_past_chips(const RunOptions& options, const topo::Topology& topology);

}  // namespace cclmesh::cli::detail
