#pragma once
// Loader for tt-umd cluster descriptors (REFERENCE 3.7; schema in
// ../shared/ecosystem/cluster_descriptor.schema.yaml), the file a user has for their own machine.
//
// - Both YAML styles (flow, as in wormhole_N300.yaml, and block) are read by yaml-cpp.
// - `chips` coordinates are read as (x, y, rack, shelf), as the tt-umd parser does; when every
//   chip has one, all share a rack and shelf, and the (x, y) fill a rectangle whose neighbours
//   are linked, the mesh shape is rows = y extent, cols = x extent and a chip's mesh coordinate
//   is (y, x). Otherwise (Blackhole files write `chips: {}`) the shape is inferred from the
//   graph (mesh_inference.hpp), or left unset.
// - Links come only from `ethernet_connections`, never from board types. A link listed twice
//   (in either orientation) is one link; a channel in two different links is an error.
// - `chips_with_mmio` may list one-entry maps {chip: PCI index} or bare chip ids (older files;
//   the PCI index is then the position in the list).
// - `ethernet_connections_to_remote_devices` and `routing_enabled` are accepted and ignored:
//   the peer of a remote link is not part of this topology.
// Every problem is an InputError naming the file, line, entry, value and what was expected.

#include <filesystem>
#include <string>
#include <string_view>

#include "topologies/topology.hpp"

namespace cclmesh::topo {

// The topology is named after the file's stem.
Topology load_cluster_descriptor(const std::filesystem::path& path);

// source names the text in messages (a path, or "<string>").
Topology parse_cluster_descriptor(std::string_view yaml_text, const std::string& source,
                                  const std::string& name);

}  // namespace cclmesh::topo
