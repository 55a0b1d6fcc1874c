#pragma once
// A Topology is an immutable value: the chips of a system, the ethernet links between them, the
// neighbour edges grouping those links, and optionally the logical mesh the chips form. It is
// validated when built, so every algorithm may rely on its invariants: unique chip ids, links
// between existing chips on existing channels, no channel used twice, no chip linked to itself,
// mesh coordinates inside the mesh shape and unique.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "topologies/chip.hpp"
#include "topologies/link.hpp"
#include "topologies/mesh_shape.hpp"

namespace cclmesh::topo {

class Topology {
 public:
  // The chips and neighbour edges as a boost graph: topologies/topology_graph.hpp defines it
  // (graph().adjacency), so that only the graph algorithms pay for boost/graph.
  struct Graph;

  Topology();  // empty, named "empty"

  // Chips may come in any order and links in either orientation; both are normalised (chips by
  // id, links with the lower chip first, sorted). Throws InputError naming the offending chip
  // or link when the invariants above do not hold.
  Topology(std::string name, std::vector<Chip> chips, std::vector<EthLink> links,
           std::optional<MeshShape> mesh_shape = std::nullopt);

  const std::string& name() const { return name_; }
  std::span<const Chip> chips() const { return chips_; }
  std::span<const EthLink> links() const { return links_; }
  std::span<const NeighbourEdge> edges() const;
  const std::optional<MeshShape>& mesh_shape() const { return mesh_shape_; }
  const Graph& graph() const;

  std::size_t chip_count() const { return chips_.size(); }
  bool has_chip(ChipId id) const;
  // Throws InputError when the topology has no such chip.
  const Chip& chip(ChipId id) const;
  // The chip's vertex in graph() and its position in chips().
  std::size_t chip_index(ChipId id) const;
  std::vector<ChipId> chip_ids() const;

  // Index into edges(), or nullopt when a and b are not neighbours (either order).
  std::optional<std::size_t> edge_between(ChipId a, ChipId b) const;
  // Number of links between a and b; 0 when they are not neighbours.
  std::size_t links_between(ChipId a, ChipId b) const;
  // Index into links() of the link on this port, or nullopt when the port is idle.
  std::optional<std::size_t> link_at(EthEndpoint port) const;
  // The other end of the link on this port; throws InputError when the port is idle.
  EthEndpoint peer_of(EthEndpoint port) const;
  // Sorted by id.
  std::vector<ChipId> neighbours(ChipId id) const;

  // The chip placed at coord, if the topology has a mesh shape and a chip there.
  std::optional<ChipId> chip_at(const MeshCoord& coord) const;

  // Same chips and links under another name.
  Topology renamed(std::string name) const;

  // Structural equality of the value: name, chips, links and mesh shape. Derived indexes and
  // the graph follow from those.
  bool operator==(const Topology& other) const;

 private:
  // Everything derived from chips, links and mesh shape. Shared between copies: a Topology
  // never changes, so copying one copies no graph.
  struct Indexes;

  void normalise_and_validate(Indexes& indexes);
  void build_edges_and_graph(Indexes& indexes) const;

  std::string name_;
  std::vector<Chip> chips_;
  std::vector<EthLink> links_;
  std::optional<MeshShape> mesh_shape_;
  std::shared_ptr<const Indexes> indexes_;
};

// "0.ch8" for reports and errors.
std::string to_string(const EthEndpoint& port);

}  // namespace cclmesh::topo
