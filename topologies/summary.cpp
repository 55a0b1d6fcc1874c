#include "topologies/summary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <limits>
#include <set>

#include "topologies/embedding.hpp"
#include "topologies/errors.hpp"
#include "topologies/routing.hpp"

namespace cclmesh::topo {
namespace {

constexpr std::size_t kMaxChipsExactBisection = 20;
// Longer rings are shown by their ends only, so that the summary stays a few lines.
constexpr std::size_t kMaxRingChipsShown = 40;

// Links crossing a split; side[i] is the side of chips()[i].
std::size_t crossing_links(const Topology& topology, const std::vector<int>& side) {
  std::size_t count = 0;
  for (const EthLink& link : topology.links()) {
    if (side[topology.chip_index(link.a.chip)] != side[topology.chip_index(link.b.chip)]) ++count;
  }
  return count;
}

// "4-0-2-6-7-3-1-5-4", or for long rings "0-1-2-3-...-67-66-65-64-0 (4096 chips)".
std::string ring_to_short_string(const Embedding& ring) {
  if (ring.chips.size() <= kMaxRingChipsShown) return ring.to_string();
  constexpr std::size_t kEnds = 4;
  std::string text;
  for (std::size_t i = 0; i < kEnds; ++i) text += fmt::format("{}-", ring.chips[i]);
  text += "...";
  for (std::size_t i = ring.chips.size() - kEnds; i < ring.chips.size(); ++i) {
    text += fmt::format("-{}", ring.chips[i]);
  }
  return text + fmt::format("-{} ({} chips)", ring.chips.front(), ring.chips.size());
}

Bisection mesh_bisection(const Topology& topology, const MeshShape& shape) {
  std::optional<std::size_t> best;
  std::string best_cut;
  for (int dim = 0; dim < shape.rank(); ++dim) {
    const auto extent = shape.extent(dim);
    if (extent < 2) continue;
    std::vector<int> side(topology.chip_count(), -1);
    for (std::size_t i = 0; i < topology.chip_count(); ++i) {
      const auto& coord = topology.chips()[i].mesh_coord;
      if (coord) side[i] = (*coord)[static_cast<std::size_t>(dim)] < extent / 2 ? 0 : 1;
    }
    // Chips off the mesh join the side they have more links to (ties: side 0).
    for (std::size_t i = 0; i < topology.chip_count(); ++i) {
      if (side[i] != -1) continue;
      std::array<std::size_t, 2> towards{0, 0};
      const ChipId id = topology.chips()[i].id;
      for (const ChipId peer : topology.neighbours(id)) {
        const int s = side[topology.chip_index(peer)];
        if (s >= 0) towards[static_cast<std::size_t>(s)] += topology.links_between(id, peer);
      }
      side[i] = towards[1] > towards[0] ? 1 : 0;
    }
    const auto count = crossing_links(topology, side);
    if (!best || count < *best) {
      best = count;
      static constexpr std::array<std::string_view, kMaxMeshRank> kDimNames{"rows", "cols",
                                                                            "depth"};
      best_cut = fmt::format("{} {}|{}", kDimNames[static_cast<std::size_t>(dim)], extent / 2,
                             extent - extent / 2);
    }
  }
  if (!best) return Bisection{0, "single chip"};
  return Bisection{best, fmt::format("min over the central cuts of the {} mesh (cut {})",
                                     shape.to_string(), best_cut)};
}

Bisection exact_bisection(const Topology& topology) {
  const auto n = topology.chip_count();
  const std::size_t half = n / 2;
  std::vector<std::pair<std::size_t, std::size_t>> ends;
  for (const EthLink& link : topology.links()) {
    ends.emplace_back(topology.chip_index(link.a.chip), topology.chip_index(link.b.chip));
  }
  std::size_t best = std::numeric_limits<std::size_t>::max();
  const std::uint32_t limit = 1u << n;
  for (std::uint32_t mask = 0; mask < limit; ++mask) {
    if (static_cast<std::size_t>(std::popcount(mask)) != half) continue;
    // With equal halves every split appears twice; keep the one with chip 0 outside the mask.
    if (n % 2 == 0 && (mask & 1u) != 0) continue;
    std::size_t count = 0;
    for (const auto& [a, b] : ends) {
      if (((mask >> a) & 1u) != ((mask >> b) & 1u)) ++count;
    }
    best = std::min(best, count);
  }
  return Bisection{
      best, fmt::format("exact minimum over all splits into {} and {} chips", half, n - half)};
}

}  // namespace

Bisection bisection_links(const Topology& topology) {
  const auto n = topology.chip_count();
  if (n <= 1) return Bisection{0, "single chip"};
  if (const auto& shape = topology.mesh_shape()) return mesh_bisection(topology, *shape);
  if (n <= kMaxChipsExactBisection) return exact_bisection(topology);
  return Bisection{std::nullopt, fmt::format("unknown: no mesh shape and more than {} chips",
                                             kMaxChipsExactBisection)};
}

TopologySummary summarize(const Topology& topology) {
  TopologySummary summary;
  summary.name = topology.name();
  summary.chips = topology.chip_count();
  summary.links = topology.links().size();
  summary.edges = topology.edges().size();
  std::set<std::string> archs;
  for (const Chip& chip : topology.chips()) {
    if (chip.mmio()) ++summary.mmio_chips;
    archs.emplace(arch_name(chip.arch));
  }
  summary.archs.assign(archs.begin(), archs.end());
  if (topology.mesh_shape()) summary.mesh_shape = topology.mesh_shape()->to_string();
  summary.components = connected_components(topology).size();
  summary.diameter = diameter(topology);
  const Bisection bisection = bisection_links(topology);
  summary.bisection_links = bisection.links;
  summary.bisection_method = bisection.method;
  if (topology.chip_count() == 0) {
    summary.ring_detail = "no chips";
    return summary;
  }
  try {
    const Embedding ring = find_system_ring(topology);
    summary.ring_detail = ring_to_short_string(ring);
    summary.ring = true;
  } catch (const EmbeddingError& e) {
    summary.ring_detail = e.what();
  }
  return summary;
}

nlohmann::json to_json(const TopologySummary& summary) {
  nlohmann::json json;
  json["name"] = summary.name;
  json["chips"] = summary.chips;
  json["links"] = summary.links;
  json["edges"] = summary.edges;
  json["mmio_chips"] = summary.mmio_chips;
  json["arch"] = summary.archs;
  json["mesh_shape"] = summary.mesh_shape ? nlohmann::json(*summary.mesh_shape) : nlohmann::json();
  json["components"] = summary.components;
  json["diameter"] = summary.diameter ? nlohmann::json(*summary.diameter) : nlohmann::json();
  json["bisection_links"] =
      summary.bisection_links ? nlohmann::json(*summary.bisection_links) : nlohmann::json();
  json["bisection_method"] = summary.bisection_method;
  json["ring"] = summary.ring;
  json["ring_detail"] = summary.ring_detail;
  return json;
}

std::string to_text(const TopologySummary& summary) {
  std::string archs;
  for (const auto& arch : summary.archs)
    archs += fmt::format("{}{}", archs.empty() ? "" : ", ", arch);
  std::string text;
  text += fmt::format("system     {}\n", summary.name);
  text += fmt::format("chips      {} ({} MMIO-attached), {}\n", summary.chips, summary.mmio_chips,
                      archs.empty() ? "-" : archs);
  text += fmt::format("links      {} in {} neighbour edges\n", summary.links, summary.edges);
  text += fmt::format("mesh       {}\n", summary.mesh_shape.value_or("none"));
  text += fmt::format("components {}\n", summary.components);
  text +=
      fmt::format("diameter   {}\n", summary.diameter ? fmt::format("{} hop{}", *summary.diameter, *summary.diameter == 1 ? "" : "s")
                                                      : std::string("- (disconnected)"));
  text += fmt::format("bisection  {} ({})\n",
                      summary.bisection_links ? fmt::format("{} links", *summary.bisection_links)
                                              : std::string("-"),
                      summary.bisection_method);
  text += fmt::format("ring       {}: {}\n", summary.ring ? "yes" : "no", summary.ring_detail);
  return text;
}

}  // namespace cclmesh::topo
