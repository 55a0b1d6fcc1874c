#pragma once
// Debug aid for performance work (docs/performance.md): with CCLMESH_NOC_STATS=<chip id> set,
// `cclmesh run` prints to stderr where that chip's NoC time went: per ethernet and DRAM NIU its
// injection and absorption busy time, packets and bytes, and every NoC link busy for at least a
// quarter of the op. Figures are totals since the device started (the routers' start-up adds a
// few hundred bytes); the busy time of a server is the sum of its packets' serialisation.

#include "sim/model/sim_system.hpp"

namespace cclmesh::cli {

void print_noc_usage_if_requested(sim::SimSystem& system, double op_us);

}  // namespace cclmesh::cli
