#pragma once
// What a client takes from a server's hello about its fabric, held to the rules the server's own
// device applies (FabricPlan: chip_order a line or ring of the served topology with each chip
// once, num_links the hops have, slots and receivers that fit) and to the payload bound every
// --fabric-payload takes. A hello that fails them is not a cclmesh serve's: the client would
// build its ops for a fabric the device cannot run (session 32: `run --device` against such a
// peer ended in an internal error or planned the op on chips the topology lacks).

#include <string>

#include "runtime/device/fabric_options.hpp"
#include "topologies/topology.hpp"

namespace cclmesh::runtime::remote {

// Throws ProtocolError naming the field (under `path`, "hello reply.fabric"), the value and
// what was expected.
void check_served_fabric(const FabricOptions& fabric, const topo::Topology& topology, const std::string& path);

}  // namespace cclmesh::runtime::remote
