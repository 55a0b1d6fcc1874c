#pragma once
// What `cclmesh topo` prints: the few numbers that characterise a system.
//
// Bisection links: on a topology with a mesh shape, the minimum over the central cut of each
// dimension (chips with coordinate < extent/2 on one side; wraparound links crossing the cut
// count), chips without coordinates (TG's gateways) joining the side they have more links to.
// Without a mesh shape, an exact minimum over all balanced splits for up to 20 chips, and
// unknown beyond.

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "topologies/topology.hpp"

namespace cclmesh::topo {

struct TopologySummary {
  std::string name;
  std::size_t chips = 0;
  std::size_t links = 0;
  std::size_t edges = 0;  // neighbour edges
  std::size_t mmio_chips = 0;
  std::vector<std::string> archs;  // distinct, sorted
  std::optional<std::string> mesh_shape;
  std::size_t components = 0;
  std::optional<std::int32_t> diameter;  // hops; nullopt when disconnected
  std::optional<std::size_t> bisection_links;
  std::string bisection_method;
  bool ring = false;        // a ring through all chips exists (1 link per hop)
  std::string ring_detail;  // the ring found, or why there is none
};

TopologySummary summarize(const Topology& topology);

// At least: chips, links, edges, diameter (null when disconnected), ring (true / false); also
// name, mmio_chips, arch, mesh_shape, components, bisection_links, bisection_method,
// ring_detail.
nlohmann::json to_json(const TopologySummary& summary);

// A few aligned lines for a terminal.
std::string to_text(const TopologySummary& summary);

struct Bisection {
  std::optional<std::size_t> links;
  std::string method;
};
Bisection bisection_links(const Topology& topology);

}  // namespace cclmesh::topo
