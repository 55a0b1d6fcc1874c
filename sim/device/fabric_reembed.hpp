#pragma once
// The fabric a simulated device runs when links are down from the start: a link down from
// time 0 is a topology without that edge, so a whole-system line or ring that would cross it
// is moved onto another one the topologies' embedding search finds over the links left, or a
// ring that has no other runs as a line around the link.
// A function of the topology, the fabric asked and the faults, so that a run can decide it
// (and refuse what cannot run) before a device is built.

#include "runtime/fabric/fabric_plan.hpp"
#include "sim/device/fault_plan.hpp"
#include "topologies/topology.hpp"

namespace cclmesh::sim::device {

// `fabric` with chip_order set to the re-embedded line or ring, or as given when no link down
// from the start crosses it (or --chips fixed its order); without a fabric (legacy mode) with
// every such link in down_edges, for the ops to lay their groups around (legacy_groups.hpp); a whole-system
// ring that no other ring avoids them by with chip_order the ring and every such link in
// down_edges, so that it runs as a line around the one on it; a per-axis fabric with every such
// link in down_edges, where a ring (a torus row or column) with one on it runs as a line around
// it. Throws runtime::DeviceError(Fault) when no other line avoids the down links, nor a ring (a
// whole-system ring with two on it), or a per-axis row or column is cut (a line with one, a ring
// with two); std::invalid_argument for a fault between chips that share no edge.
runtime::FabricOptions fabric_around_down_links(const topo::Topology& topology, runtime::FabricOptions fabric,
                                                const FaultPlan& faults);

}  // namespace cclmesh::sim::device
