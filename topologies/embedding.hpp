#pragma once
// Lines and rings for collectives: for a set of chips (the whole system, or each row or column
// of a 2D mesh given a cluster_axis), an order that visits every chip once, neighbour after
// neighbour, and for each hop the ethernet channels its k parallel links use.
//
// Choices, all deterministic:
// - On a complete mesh or torus, and on chips along one row or column, lines and rings are
//   constructed from the coordinates (detail/mesh_walks.hpp); otherwise a bounded search finds
//   them (detail/hamiltonian.hpp).
// - The k links of a hop are the first k of its neighbour edge in the order of the channel on
//   the lower chip id, so both directions of a hop use the same physical links. Which channel
//   TTNN uses as link 0 is unconfirmed (REFERENCE 3.3, 13).
// - A ring needs at least 3 chips: a 2-chip "ring" does not work (REFERENCE 3.2, 11.15).
// When no line or ring exists, an EmbeddingError says why: the chips are not connected, they
// form a line with no closing link, a chip has a single neighbour among them, the chips split
// into two sides of unequal size with links only across (a grid with an odd chip count), a hop
// has fewer than k links, or the search proved (or gave up proving) there is none.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "topologies/topology.hpp"

namespace cclmesh::topo {

enum class EmbeddingKind { Line, Ring };

struct HopLink {
  std::int32_t from_channel = 0;
  std::int32_t to_channel = 0;
  std::size_t link_index = 0;  // into Topology::links()
  bool operator==(const HopLink&) const = default;
};

struct Hop {
  ChipId from = 0;
  ChipId to = 0;
  std::vector<HopLink> links;  // num_links of them
  bool operator==(const Hop&) const = default;
};

struct Embedding {
  EmbeddingKind kind = EmbeddingKind::Line;
  std::vector<ChipId> chips;  // in visiting order
  // A line has chips.size() - 1 hops; a ring chips.size(), the last one closing back to
  // chips.front().
  std::vector<Hop> hops;
  std::int32_t num_links = 1;

  // "4-0-2-6-7-3-1-5-4" for a ring (first chip repeated), "4-0-2-6" for a line.
  std::string to_string() const;
  bool operator==(const Embedding&) const = default;
};

// Throws InputError for an empty chip set, an unknown or repeated chip or num_links < 1, and
// EmbeddingError when no line / ring exists (see above).
Embedding find_line(const Topology& topology, std::span<const ChipId> chips,
                    std::int32_t num_links = 1);
Embedding find_ring(const Topology& topology, std::span<const ChipId> chips,
                    std::int32_t num_links = 1);

// Through every chip of the topology.
Embedding find_system_line(const Topology& topology, std::int32_t num_links = 1);
Embedding find_system_ring(const Topology& topology, std::int32_t num_links = 1);

// The independent groups of a collective along cluster_axis on a mesh: for axis a, one group
// per combination of the other coordinates, each listing the chips that differ only in
// coordinate a, in coordinate order; groups in row-major order of the other coordinates. On
// MeshShape(8, 4), axis 1 gives 8 groups of 4 (rows) and axis 0 gives 4 groups of 8 (columns)
// (REFERENCE 3.4). Chips without coordinates (TG's gateways) belong to no group; positions
// without a chip (a removed chip) are skipped. Throws InputError when the topology has no mesh
// shape or the axis is out of range.
std::vector<std::vector<ChipId>> axis_groups(const Topology& topology, int cluster_axis);

std::vector<Embedding> find_axis_lines(const Topology& topology, int cluster_axis,
                                       std::int32_t num_links = 1);
std::vector<Embedding> find_axis_rings(const Topology& topology, int cluster_axis,
                                       std::int32_t num_links = 1);

// "0,1,2" (shortened in the middle for long lists), for messages.
std::string chip_list_to_string(std::span<const ChipId> chips);

}  // namespace cclmesh::topo
