#pragma once
// Ethernet links and the neighbour edges that group them.

#include <compare>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "topologies/chip.hpp"

namespace cclmesh::topo {

// One end of a link: a chip's logical ethernet channel, i.e. the channel-th entry of the SoC
// descriptor's eth list (REFERENCE 1.4).
struct EthEndpoint {
  ChipId chip = 0;
  std::int32_t channel = 0;
  auto operator<=>(const EthEndpoint&) const = default;
};

// A full-duplex physical link. In a Topology, a is the endpoint on the lower chip id, so each
// link has exactly one spelling.
struct EthLink {
  EthEndpoint a;
  EthEndpoint b;
  std::int64_t rate_bytes_per_s = 0;  // per direction
  std::int64_t latency_ps = 0;        // one way

  bool operator==(const EthLink&) const = default;
};

// All the links between two chips. a < b; links are indices into Topology::links(), sorted by
// the channel on chip a, which is the order in which k parallel links are chosen.
struct NeighbourEdge {
  ChipId a = 0;
  ChipId b = 0;
  std::vector<std::size_t> links;

  std::size_t multiplicity() const { return links.size(); }
  bool operator==(const NeighbourEdge&) const = default;
};

}  // namespace cclmesh::topo
