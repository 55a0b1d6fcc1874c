#pragma once
// Debug aid for performance work (docs/performance.md): with CCLMESH_NOC_STATS=<chip id> set,
// `cclmesh run` prints to stderr where that chip's NoC time went: per ethernet and DRAM NIU its
// injection and absorption busy time, packets and bytes, and every NoC link busy for at least a
// quarter of the op. Figures are totals since the device started (the routers' start-up adds a
// few hundred bytes); the busy time of a server is the sum of its packets' serialisation.
//
// With CCLMESH_NOC_STATS_WINDOW=<begin_us>:<end_us> as well (simulated µs on the trace's clock,
// `--trace`), it also prints the busy time inside that window of every NIU, NoC link (those busy
// for at least a quarter of it), DRAM channel, ERISC and outgoing ethernet wire of the chip:
// what bounds the op's steady state, which the totals blur with its start-up and tail; and, per
// kernel of the chip, the time it spent in each kind of wait (read barrier, cb_wait_front, a
// semaphore wait, ...) inside the window: which side of a pipeline waits for which.

#include <optional>
#include <string>

#include "sim/model/packet_resource.hpp"
#include "sim/device/sim_mesh_device.hpp"
#include "topologies/topology.hpp"

namespace cclmesh::cli {

// "<begin_us>:<end_us>" (decimal µs, begin < end) as a window; UsageError naming the variable,
// the value and the accepted form otherwise.
sim::BusyWindow parse_busy_window(const std::string& text);

// The window CCLMESH_NOC_STATS_WINDOW asks for (parsed before the run), or an empty one if
// unset; the run gives it to its own system's chips (SimSystem::set_busy_window).
sim::BusyWindow requested_busy_window();

// The chip CCLMESH_NOC_STATS names (parsed before the run, so a bad value costs no simulation),
// or none if unset; UsageError naming the variable, the value and the system's chip ids when it
// is not a chip of `topology`.
std::optional<sim::ChipId> requested_noc_stats_chip(const topo::Topology& topology);

// Prints `chip`'s NoC use. op_start_us: the op's first kernel start on the simulated clock;
// op_us: its time.
void print_noc_usage(sim::device::SimMeshDevice& device, sim::ChipId chip, double op_start_us, double op_us);

}  // namespace cclmesh::cli
