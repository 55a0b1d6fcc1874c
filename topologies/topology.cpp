#include "topologies/topology.hpp"

#include "topologies/topology_graph.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "topologies/errors.hpp"

namespace cclmesh::topo {
namespace {

constexpr std::size_t kNoLink = std::numeric_limits<std::size_t>::max();

std::uint64_t pair_key(ChipId a, ChipId b) {
  if (a > b) std::swap(a, b);
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(a)) << 32) |
         static_cast<std::uint32_t>(b);
}

std::string link_to_string(const EthLink& link) {
  return fmt::format("{} <-> {}", to_string(link.a), to_string(link.b));
}

}  // namespace

struct Topology::Indexes {
  std::vector<NeighbourEdge> edges;
  std::unordered_map<ChipId, std::size_t> index_of_chip;
  // Per chip (by index), per channel: index into links_, or kNoLink.
  std::vector<std::vector<std::size_t>> link_of_port;
  std::unordered_map<std::uint64_t, std::size_t> edge_of_pair;  // pair_key -> index into edges
  std::unordered_map<std::int64_t, ChipId> chip_of_mesh_index;
  Graph graph;
};

std::string to_string(const EthEndpoint& port) {
  return fmt::format("{}.ch{}", port.chip, port.channel);
}

Topology::Topology() : name_("empty"), indexes_(std::make_shared<const Indexes>()) {}

Topology::Topology(std::string name, std::vector<Chip> chips, std::vector<EthLink> links,
                   std::optional<MeshShape> mesh_shape)
    : name_(std::move(name)),
      chips_(std::move(chips)),
      links_(std::move(links)),
      mesh_shape_(std::move(mesh_shape)) {
  auto indexes = std::make_shared<Indexes>();
  normalise_and_validate(*indexes);
  build_edges_and_graph(*indexes);
  indexes_ = std::move(indexes);
}

void Topology::normalise_and_validate(Indexes& indexes) {
  const auto fail = [this](const std::string& problem) {
    throw InputError(fmt::format("topology '{}': {}", name_, problem));
  };

  std::sort(chips_.begin(), chips_.end(), [](const Chip& x, const Chip& y) { return x.id < y.id; });
  std::map<std::int32_t, ChipId> chip_of_pci_device;
  for (std::size_t i = 0; i < chips_.size(); ++i) {
    const Chip& chip = chips_[i];
    if (chip.id < 0) fail(fmt::format("chip id {} is negative; expected an id >= 0", chip.id));
    if (i > 0 && chips_[i - 1].id == chip.id) {
      fail(fmt::format("chip {} is listed twice; expected unique chip ids", chip.id));
    }
    if (chip.pci_device && *chip.pci_device < 0) {
      fail(fmt::format("chip {}: PCI device index {} is negative; expected >= 0", chip.id,
                       *chip.pci_device));
    }
    if (chip.pci_device) {
      if (const auto [at, inserted] = chip_of_pci_device.emplace(*chip.pci_device, chip.id); !inserted) {
        fail(fmt::format("chips {} and {} are both PCI device {}; expected each PCI device index on one chip",
                         at->second, chip.id, *chip.pci_device));
      }
    }
    if (!chip.mesh_coord) continue;
    if (!mesh_shape_) {
      fail(
          fmt::format("chip {} has a mesh coordinate but the topology has no mesh shape", chip.id));
    }
    if (!mesh_shape_->contains(*chip.mesh_coord)) {
      fail(fmt::format("chip {}: mesh coordinate {} is outside the {} mesh", chip.id,
                       mesh_coord_to_string(*chip.mesh_coord, kMaxMeshRank),
                       mesh_shape_->to_string()));
    }
  }
  indexes.index_of_chip.clear();
  indexes.index_of_chip.reserve(chips_.size());
  for (std::size_t i = 0; i < chips_.size(); ++i) indexes.index_of_chip.emplace(chips_[i].id, i);

  indexes.link_of_port.assign(chips_.size(), {});
  for (std::size_t i = 0; i < chips_.size(); ++i) {
    indexes.link_of_port[i].assign(
        static_cast<std::size_t>(arch_traits(chips_[i].arch).eth_channel_count), kNoLink);
  }
  for (EthLink& link : links_) {
    if (std::tie(link.b.chip, link.b.channel) < std::tie(link.a.chip, link.a.channel)) {
      std::swap(link.a, link.b);
    }
    for (const EthEndpoint& end : {link.a, link.b}) {
      const auto found = indexes.index_of_chip.find(end.chip);
      if (found == indexes.index_of_chip.end()) {
        fail(fmt::format("link {}: chip {} does not exist", link_to_string(link), end.chip));
      }
      const Chip& chip = chips_[found->second];
      const auto channels = arch_traits(chip.arch).eth_channel_count;
      if (end.channel < 0 || end.channel >= channels) {
        fail(fmt::format("link {}: channel {} does not exist on {} chip {}; expected 0..{}",
                         link_to_string(link), end.channel, arch_name(chip.arch), chip.id,
                         channels - 1));
      }
    }
    if (link.a.chip == link.b.chip) {
      fail(fmt::format("link {} joins chip {} to itself; expected two different chips",
                       link_to_string(link), link.a.chip));
    }
    if (link.rate_bytes_per_s <= 0) {
      fail(fmt::format("link {}: rate {} B/s; expected > 0", link_to_string(link),
                       link.rate_bytes_per_s));
    }
    if (link.latency_ps < 0) {
      fail(fmt::format("link {}: latency {} ps; expected >= 0", link_to_string(link),
                       link.latency_ps));
    }
  }

  // Canonical order: grouped by chip pair, then by the channel on the lower chip, which is
  // also the order in which parallel links are chosen.
  std::sort(links_.begin(), links_.end(), [](const EthLink& x, const EthLink& y) {
    return std::tie(x.a.chip, x.b.chip, x.a.channel, x.b.channel) <
           std::tie(y.a.chip, y.b.chip, y.a.channel, y.b.channel);
  });
  for (std::size_t l = 0; l < links_.size(); ++l) {
    for (const EthEndpoint& end : {links_[l].a, links_[l].b}) {
      auto& slot = indexes.link_of_port[indexes.index_of_chip.at(end.chip)]
                                       [static_cast<std::size_t>(end.channel)];
      if (slot != kNoLink) {
        fail(
            fmt::format("channel {} is used by two links, {} and {}; expected one link per "
                        "channel",
                        to_string(end), link_to_string(links_[slot]), link_to_string(links_[l])));
      }
      slot = l;
    }
  }

  if (!mesh_shape_) return;
  indexes.chip_of_mesh_index.clear();
  for (const Chip& chip : chips_) {
    if (!chip.mesh_coord) continue;
    const auto index = mesh_shape_->linear_index(*chip.mesh_coord);
    const auto [at, inserted] = indexes.chip_of_mesh_index.emplace(index, chip.id);
    if (!inserted) {
      fail(fmt::format(
          "chips {} and {} share mesh coordinate {}; expected one chip per "
          "coordinate",
          at->second, chip.id, mesh_coord_to_string(*chip.mesh_coord, mesh_shape_->rank())));
    }
  }
}

void Topology::build_edges_and_graph(Indexes& indexes) const {
  // Vertices in chip order, edges in link order (sorted by chip pair): each vertex then lists
  // its neighbours in ascending chip id.
  for (std::size_t v = 0; v < chips_.size(); ++v) boost::add_vertex(indexes.graph.adjacency);
  for (std::size_t l = 0; l < links_.size(); ++l) {
    const EthLink& link = links_[l];
    auto& edges = indexes.edges;
    if (edges.empty() || edges.back().a != link.a.chip || edges.back().b != link.b.chip) {
      edges.push_back(NeighbourEdge{link.a.chip, link.b.chip, {}});
      indexes.edge_of_pair.emplace(pair_key(link.a.chip, link.b.chip), edges.size() - 1);
      boost::add_edge(indexes.index_of_chip.at(link.a.chip), indexes.index_of_chip.at(link.b.chip),
                      edges.size() - 1, indexes.graph.adjacency);
    }
    edges.back().links.push_back(l);
  }
}

std::span<const NeighbourEdge> Topology::edges() const { return indexes_->edges; }

const Topology::Graph& Topology::graph() const { return indexes_->graph; }

bool Topology::has_chip(ChipId id) const { return indexes_->index_of_chip.count(id) != 0; }

const Chip& Topology::chip(ChipId id) const { return chips_[chip_index(id)]; }

std::size_t Topology::chip_index(ChipId id) const {
  const auto found = indexes_->index_of_chip.find(id);
  if (found == indexes_->index_of_chip.end()) {
    throw InputError(fmt::format("topology '{}': no chip {}; expected one of its {} chip ids",
                                 name_, id, chips_.size()));
  }
  return found->second;
}

std::vector<ChipId> Topology::chip_ids() const {
  std::vector<ChipId> ids;
  ids.reserve(chips_.size());
  for (const Chip& chip : chips_) ids.push_back(chip.id);
  return ids;
}

std::optional<std::size_t> Topology::edge_between(ChipId a, ChipId b) const {
  if (a < 0 || b < 0) return std::nullopt;
  const auto found = indexes_->edge_of_pair.find(pair_key(a, b));
  if (found == indexes_->edge_of_pair.end()) return std::nullopt;
  return found->second;
}

std::size_t Topology::links_between(ChipId a, ChipId b) const {
  const auto edge = edge_between(a, b);
  return edge ? indexes_->edges[*edge].multiplicity() : 0;
}

std::optional<std::size_t> Topology::link_at(EthEndpoint port) const {
  const auto found = indexes_->index_of_chip.find(port.chip);
  if (found == indexes_->index_of_chip.end()) return std::nullopt;
  const auto& ports = indexes_->link_of_port[found->second];
  if (port.channel < 0 || static_cast<std::size_t>(port.channel) >= ports.size()) {
    return std::nullopt;
  }
  const auto link = ports[static_cast<std::size_t>(port.channel)];
  if (link == kNoLink) return std::nullopt;
  return link;
}

EthEndpoint Topology::peer_of(EthEndpoint port) const {
  const auto link = link_at(port);
  if (!link) {
    throw InputError(fmt::format("topology '{}': port {} has no link", name_, to_string(port)));
  }
  const EthLink& l = links_[*link];
  return l.a == port ? l.b : l.a;
}

std::vector<ChipId> Topology::neighbours(ChipId id) const {
  std::vector<ChipId> result;
  const auto vertex = chip_index(id);
  for (auto [it, end] = boost::adjacent_vertices(vertex, indexes_->graph.adjacency); it != end; ++it) {
    result.push_back(chips_[*it].id);
  }
  std::sort(result.begin(), result.end());
  return result;
}

std::optional<ChipId> Topology::chip_at(const MeshCoord& coord) const {
  if (!mesh_shape_ || !mesh_shape_->contains(coord)) return std::nullopt;
  const auto found = indexes_->chip_of_mesh_index.find(mesh_shape_->linear_index(coord));
  if (found == indexes_->chip_of_mesh_index.end()) return std::nullopt;
  return found->second;
}

Topology Topology::renamed(std::string name) const {
  Topology copy = *this;
  copy.name_ = std::move(name);
  return copy;
}

bool Topology::operator==(const Topology& other) const {
  return name_ == other.name_ && chips_ == other.chips_ && links_ == other.links_ &&
         mesh_shape_ == other.mesh_shape_;
}

}  // namespace cclmesh::topo
