#pragma once
// The two-sided line reduce_scatter (reduce_scatter.hpp has the algorithm and its reduction
// order): one chip's program, and the host reference in the same order.

#include <cstdint>
#include <vector>

#include "runtime/ccl/common/host_reference.hpp"
#include "runtime/ccl/reduce_scatter/reduce_scatter.hpp"
#include "runtime/ccl/reduce_scatter/reduce_scatter_plan.hpp"
#include "runtime/device/workload.hpp"
#include "topologies/topology.hpp"

namespace cclmesh::runtime::ccl::reduce_scatter::plan {

// The program of rank `rank` of group `g` (r.two_sided).
Program two_sided_line_program(const Params& p, const topo::Topology& topology, const Resolved& r,
                               const FabricGroup& g, std::uint32_t rank);

// The outputs of every rank from slices[rank][s] (rank's input slice s): slice N - 1 is
// fold(0, ..., N - 1); slice s < N - 1 is fold(N - 1, ..., s), plus fold(0, ..., s - 1) for s > 0.
std::vector<reference::Bytes> two_sided_line_reference(const std::vector<std::vector<reference::Bytes>>& slices,
                                                       DataType dtype);

}  // namespace cclmesh::runtime::ccl::reduce_scatter::plan
