#pragma once
// The two-sided line reduce_scatter (reduce_scatter.hpp has the algorithm and its reduction
// order) as two partial chains (two_sided_chains.hpp): what each position's workers do, one
// chip's program, and the host reference in the same order.

#include <cstdint>
#include <vector>

#include "runtime/ccl/common/host_reference.hpp"
#include "runtime/ccl/reduce_scatter/reduce_scatter.hpp"
#include "runtime/ccl/reduce_scatter/reduce_scatter_plan.hpp"
#include "runtime/ccl/reduce_scatter/two_sided_chains.hpp"
#include "runtime/device/workload.hpp"
#include "topologies/topology.hpp"

namespace cclmesh::runtime::ccl::reduce_scatter::plan {

// The workers of the line's position `position` of `n` (the same on every page run).
ChainWorkers two_sided_line_workers(std::uint32_t n, std::uint32_t position);

// The program of the chip at `position` of group `g` (r.two_sided). The line runs by position:
// its slice s is the input slice of the rank at position s (FabricGroup::rank_at).
Program two_sided_line_program(const Params& p, const topo::Topology& topology, const Resolved& r,
                               const FabricGroup& g, std::uint32_t position);

// Throws CclParamsError, naming the size, when an owner's step worker's CBs do not fit a Tensix
// L1 (require_owner_step_fits_l1).
void require_two_sided_line_fits_l1(const Params& p, const topo::Topology& topology, const Resolved& r);

// The outputs of every position from slices[p][s] (position p's input slice s): slice N - 1 is
// fold(0, ..., N - 1); slice s < N - 1 is fold(N - 1, ..., s), plus fold(0, ..., s - 1) for s > 0.
std::vector<reference::Bytes> two_sided_line_reference(const std::vector<std::vector<reference::Bytes>>& slices,
                                                       DataType dtype);

}  // namespace cclmesh::runtime::ccl::reduce_scatter::plan
