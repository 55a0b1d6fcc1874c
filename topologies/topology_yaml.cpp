#include "topologies/topology_yaml.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <limits>
#include <map>
#include <string_view>
#include <system_error>
#include <vector>

#include "topologies/detail/yaml_reader.hpp"
#include "topologies/errors.hpp"

namespace cclmesh::topo {
namespace {

constexpr std::int64_t kMaxId = std::numeric_limits<std::int32_t>::max();

// ---------------------------------------------------------------------------------------------
// Writing

void emit_port(YAML::Emitter& out, const Topology& topology, const EthLink& link,
               const EthEndpoint& peer) {
  const Arch arch_a = topology.chip(link.a.chip).arch;
  const Arch arch_b = topology.chip(link.b.chip).arch;
  const bool default_rate = link.rate_bytes_per_s == default_link_rate_bytes_per_s(arch_a, arch_b);
  const bool default_latency = link.latency_ps == default_link_latency_ps(arch_a, arch_b);
  const auto emit_peer = [&] {
    out << YAML::Flow << YAML::BeginSeq << peer.chip << peer.channel << YAML::EndSeq;
  };
  if (default_rate && default_latency) {
    emit_peer();
    return;
  }
  out << YAML::Flow << YAML::BeginMap << YAML::Key << "peer" << YAML::Value;
  emit_peer();
  if (!default_rate) out << YAML::Key << "rate_bytes_per_s" << YAML::Value << link.rate_bytes_per_s;
  if (!default_latency) out << YAML::Key << "latency_ps" << YAML::Value << link.latency_ps;
  out << YAML::EndMap;
}

void emit_chip(YAML::Emitter& out, const Topology& topology, const Chip& chip) {
  out << YAML::BeginMap;
  out << YAML::Key << "id" << YAML::Value << chip.id;
  out << YAML::Key << "arch" << YAML::Value << std::string(arch_name(chip.arch));
  if (chip.board != BoardType::Unknown) {
    out << YAML::Key << "board" << YAML::Value << std::string(board_type_name(chip.board));
  }
  if (chip.board_id) out << YAML::Key << "board_id" << YAML::Value << *chip.board_id;
  if (chip.pci_device) out << YAML::Key << "pci_device" << YAML::Value << *chip.pci_device;
  if (chip.mesh_coord) {
    out << YAML::Key << "mesh_coord" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (int d = 0; d < topology.mesh_shape()->rank(); ++d) {
      out << (*chip.mesh_coord)[static_cast<std::size_t>(d)];
    }
    out << YAML::EndSeq;
  }
  if (chip.harvesting != Harvesting{}) {
    out << YAML::Key << "harvesting" << YAML::Value << YAML::Flow << YAML::BeginMap;
    out << YAML::Key << "tensix" << YAML::Value << chip.harvesting.tensix_mask;
    out << YAML::Key << "dram" << YAML::Value << chip.harvesting.dram_mask;
    out << YAML::Key << "eth" << YAML::Value << chip.harvesting.eth_mask;
    if (chip.harvesting.noc_translation) out << YAML::Key << "noc_translation" << YAML::Value << true;
    out << YAML::EndMap;
  }
  std::map<std::int32_t, std::size_t> ports;
  for (std::int32_t channel = 0; channel < arch_traits(chip.arch).eth_channel_count; ++channel) {
    if (const auto link = topology.link_at(EthEndpoint{chip.id, channel})) ports[channel] = *link;
  }
  if (!ports.empty()) {
    out << YAML::Key << "eth" << YAML::Value << YAML::Flow << YAML::BeginMap;
    for (const auto& [channel, index] : ports) {
      const EthLink& link = topology.links()[index];
      const EthEndpoint here{chip.id, channel};
      out << YAML::Key << channel << YAML::Value;
      emit_port(out, topology, link, link.a == here ? link.b : link.a);
    }
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
}

// ---------------------------------------------------------------------------------------------
// Reading

struct PortEntry {
  EthEndpoint self;
  EthEndpoint peer;
  std::optional<std::int64_t> rate_bytes_per_s;
  std::optional<std::int64_t> latency_ps;
  YAML::Node node;
  std::string entry;
};

class TopologyYamlReader {
 public:
  TopologyYamlReader(std::string source, std::string default_name)
      : yaml_(std::move(source)), default_name_(std::move(default_name)) {}

  Topology read(std::string_view text) {
    const YAML::Node root = yaml_.parse(text);
    yaml_.expect_keys(root, "top level", {"format", "version", "name", "mesh", "chips"});
    check_format(root);
    const std::string name = root["name"] ? yaml_.to_string(root["name"], "name") : default_name_;
    read_mesh(root["mesh"]);
    const YAML::Node chips = yaml_.require(root, "chips", "top level");
    if (!chips.IsNull()) {
      yaml_.expect_sequence(chips, "chips");
      for (std::size_t i = 0; i < chips.size(); ++i) read_chip(chips[i], i);
    }
    // A system of no chips runs nothing: before, it loaded and `topo` printed `chips 0`.
    if (chips_.empty()) yaml_.fail(chips, "chips", "no chips; expected at least one chip");
    check_ports();
    std::optional<Topology> topology;
    try {
      topology.emplace(name, chips_, links(), mesh_);
    } catch (const InputError& e) {
      throw InputError(fmt::format("{}: {}", yaml_.source(), e.what()));
    }
    check_empty_positions();
    check_mesh_spanned();  // after Topology's checks: a chip placed twice is named as such
    check_wraps_closed(*topology);
    return std::move(*topology);
  }

 private:
  void check_format(const YAML::Node& root) const {
    const YAML::Node format = yaml_.require(root, "format", "top level");
    if (yaml_.to_string(format, "format") != kTopologyFormatName) {
      yaml_.fail(format, "format",
                 fmt::format("got {}; expected '{}'", detail::quote_scalar(format.Scalar()), kTopologyFormatName));
    }
    const YAML::Node version = yaml_.require(root, "version", "top level");
    yaml_.to_int(version, "version", kTopologyFormatVersion, kTopologyFormatVersion);
  }

  void read_mesh(const YAML::Node& mesh) {
    if (!mesh.IsDefined() || mesh.IsNull()) return;
    yaml_.expect_keys(mesh, "mesh", {"shape", "wraps", "empty"});
    const YAML::Node shape = yaml_.require(mesh, "shape", "mesh");
    yaml_.expect_sequence(shape, "mesh.shape");
    std::vector<std::int32_t> extents;
    for (const auto& extent : shape) {
      extents.push_back(static_cast<std::int32_t>(yaml_.to_int(extent, "mesh.shape", 1, kMaxId)));
    }
    std::array<bool, kMaxMeshRank> wraps{false, false, false};
    std::size_t wrap_count = 0;
    if (const YAML::Node list = mesh["wraps"]) {
      yaml_.expect_sequence(list, "mesh.wraps");
      if (list.size() != extents.size()) {
        yaml_.fail(list, "mesh.wraps",
                   fmt::format("{} flags for {} dimensions; expected one per dimension",
                               list.size(), extents.size()));
      }
      wrap_count = std::min<std::size_t>(list.size(), kMaxMeshRank);
      for (std::size_t d = 0; d < wrap_count; ++d) wraps[d] = yaml_.to_bool(list[d], "mesh.wraps");
      mesh_wraps_node_ = list;
    }
    try {
      mesh_ = MeshShape(extents, std::span<const bool>(wraps.data(), wrap_count));
    } catch (const InputError& e) {
      yaml_.fail(shape, "mesh.shape", e.what());
    }
    mesh_shape_node_ = shape;
    if (const YAML::Node empty = mesh["empty"]) {
      yaml_.expect_sequence(empty, "mesh.empty");
      for (std::size_t i = 0; i < empty.size(); ++i) {
        empty_.push_back({read_coord(empty[i], fmt::format("mesh.empty[{}]", i)), empty[i]});
      }
    }
  }

  // A position mesh.empty names holds no chip.
  void check_empty_positions() const {
    for (std::size_t i = 0; i < empty_.size(); ++i) {
      for (const Chip& chip : chips_) {
        if (chip.mesh_coord != empty_[i].coord) continue;
        yaml_.fail(empty_[i].node, fmt::format("mesh.empty[{}]", i),
                   fmt::format("{} holds chip {}; expected a position of the shape without a chip",
                               mesh_coord_to_string(empty_[i].coord, mesh_->rank()), chip.id));
      }
    }
  }

  // The chips' mesh_coords span the whole shape: a shape larger than the chips placed in it (t3k's
  // 2x4 chips under [3, 4], or no chip with a mesh_coord) would make the mesh's rows, columns and
  // axis groups of chips that are not there. A position inside the span may be empty (a faulted
  // mesh: without_chip keeps the shape), and chips outside the mesh (TG's gateways) have no
  // mesh_coord; a chip placed twice is refused by Topology, naming both chips. Positions listed
  // in mesh.empty count as placed: a mesh whose whole last row or column was faulted away says
  // so there, and keeps its shape (to_yaml writes every empty position).
  void check_mesh_spanned() const {
    if (!mesh_) return;
    std::array<std::int32_t, kMaxMeshRank> span{};  // highest coordinate + 1, per dimension
    std::size_t placed = 0;
    const auto spans = [&](const MeshCoord& coord) {
      for (int d = 0; d < mesh_->rank(); ++d) {
        const auto i = static_cast<std::size_t>(d);
        span[i] = std::max(span[i], coord[i] + 1);
      }
    };
    for (const Chip& chip : chips_) {
      if (!chip.mesh_coord) continue;
      ++placed;
      spans(*chip.mesh_coord);
    }
    for (const EmptyPosition& empty : empty_) spans(empty.coord);
    std::vector<std::int32_t> extents;
    std::vector<std::int32_t> spanned;
    for (int d = 0; d < mesh_->rank(); ++d) {
      extents.push_back(mesh_->extent(d));
      spanned.push_back(span[static_cast<std::size_t>(d)]);
    }
    if (spanned == extents) return;
    const std::string what =
        placed == 0 ? fmt::format("none of the {} chips has a mesh_coord", chips_.size())
                    : fmt::format("the mesh_coords of its {} placed chips (of {}) span [{}]", placed, chips_.size(),
                                  fmt::join(spanned, ", "));
    yaml_.fail(mesh_shape_node_, "mesh.shape",
               fmt::format("[{}], but {}; expected the shape the chips fill, each chip of the mesh with its "
                           "mesh_coord (chips outside it, as TG's gateways, have none), or the positions without a "
                           "chip listed in mesh.empty",
                           fmt::join(extents, ", "), what));
  }

  // A dimension declared to wrap has a closing link on at least one of its lines (the chips at
  // its two ends linked). A wrap with none is a claim the links do not back (session 32: a T3K
  // file edited to `wraps: [false, true]` loaded, `topo` printed `mesh 2x4 (wraps: cols)` and
  // runs were the plain T3K's). Some lines without one are a torus with links missing, as
  // without_link / without_edge make and save, and lines with an end position empty (a chip
  // faulted away) cannot close: neither is refused.
  void check_wraps_closed(const Topology& topology) const {
    if (!mesh_) return;
    static constexpr std::array<std::string_view, kMaxMeshRank> kDimNames{"rows", "cols", "depth"};
    for (int dim = 0; dim < mesh_->rank(); ++dim) {
      if (!mesh_->wraps(dim)) continue;
      std::vector<std::string> missing;
      bool closes = false;
      for (std::int64_t i = 0; i < mesh_->chip_count() && !closes; ++i) {
        const MeshCoord first = mesh_->coord_at(i);
        if (first[static_cast<std::size_t>(dim)] != 0) continue;
        MeshCoord last = first;
        last[static_cast<std::size_t>(dim)] = mesh_->extent(dim) - 1;
        const std::optional<ChipId> a = topology.chip_at(first);
        const std::optional<ChipId> b = topology.chip_at(last);
        if (!a || !b) continue;
        closes = topology.edge_between(*a, *b).has_value();
        missing.push_back(fmt::format("chip {} {} - chip {} {}", *a, mesh_coord_to_string(first, mesh_->rank()), *b,
                                      mesh_coord_to_string(last, mesh_->rank())));
      }
      if (closes || missing.empty()) continue;
      const std::string name(kDimNames[static_cast<std::size_t>(dim)]);
      constexpr std::size_t kShown = 4;  // a 64x64 mesh's wrap would list 64 pairs
      const std::string more =
          missing.size() > kShown ? fmt::format(" and {} more", missing.size() - kShown) : std::string();
      missing.resize(std::min(missing.size(), kShown));
      yaml_.fail(mesh_wraps_node_, "mesh.wraps",
                 fmt::format("dimension {} ({}) wraps, but no link closes it: {}{} are not linked; expected a "
                             "link between the two end chips of a line of that dimension, or false for it",
                             dim, name, fmt::join(missing, ", "), more));
    }
  }

  void read_chip(const YAML::Node& node, std::size_t index) {
    const std::string entry = fmt::format("chips[{}]", index);
    yaml_.expect_keys(
        node, entry,
        {"id", "arch", "board", "board_id", "pci_device", "mesh_coord", "harvesting", "eth"});
    Chip chip;
    const YAML::Node id = yaml_.require(node, "id", entry);
    chip.id = static_cast<ChipId>(yaml_.to_int(id, entry + ".id", 0, kMaxId));
    if (!index_of_chip_.emplace(chip.id, chips_.size()).second) {
      yaml_.fail(id, entry + ".id",
                 fmt::format("chip {} is listed twice; expected unique chip ids", chip.id));
    }
    const YAML::Node arch = yaml_.require(node, "arch", entry);
    const std::string arch_text = yaml_.to_string(arch, entry + ".arch");
    const auto parsed_arch = parse_arch(arch_text);
    if (!parsed_arch) {
      yaml_.fail(arch, entry + ".arch",
                 fmt::format("unknown architecture {}; expected {}", detail::quote_scalar(arch_text), kArchSpellings));
    }
    chip.arch = *parsed_arch;
    if (const YAML::Node board = node["board"]) {
      const std::string text = yaml_.to_string(board, entry + ".board");
      const auto parsed = parse_board_type(text);
      if (!parsed) {
        yaml_.fail(board, entry + ".board",
                   fmt::format("unknown board type {}; expected {}", detail::quote_scalar(text), kBoardSpellings));
      }
      chip.board = *parsed;
    }
    if (const YAML::Node board_id = node["board_id"]) {
      chip.board_id = yaml_.to_uint(board_id, entry + ".board_id");
    }
    if (const YAML::Node pci = node["pci_device"]) {
      chip.pci_device =
          static_cast<std::int32_t>(yaml_.to_int(pci, entry + ".pci_device", 0, kMaxId));
      // One PCI device is one MMIO-attached chip (bug bash, session 44: two chips given device 0
      // loaded, and topo counted both as MMIO-attached).
      if (const auto [at, inserted] = chip_of_pci_device_.emplace(*chip.pci_device, chip.id); !inserted) {
        yaml_.fail(pci, entry + ".pci_device",
                   fmt::format("chip {} is PCI device {}, as chip {} is; expected each PCI device index on one chip",
                               chip.id, *chip.pci_device, at->second));
      }
    }
    if (const YAML::Node coord = node["mesh_coord"]) chip.mesh_coord = read_coord(coord, entry + ".mesh_coord");
    if (const YAML::Node harvesting = node["harvesting"]) {
      const std::string where = entry + ".harvesting";
      yaml_.expect_keys(harvesting, where, {"tensix", "dram", "eth", "noc_translation"});
      const auto mask = [&](const char* key) -> std::uint32_t {
        const YAML::Node value = harvesting[key];
        if (!value) return 0;
        return static_cast<std::uint32_t>(yaml_.to_int(value, fmt::format("{}.{}", where, key), 0,
                                                       std::numeric_limits<std::uint32_t>::max()));
      };
      chip.harvesting = Harvesting{mask("tensix"), mask("dram"), mask("eth")};
      if (const std::string problem = tensix_harvest_mask_problem(chip.arch, chip.harvesting.tensix_mask);
          !problem.empty()) {
        yaml_.fail(harvesting["tensix"], where + ".tensix", problem);
      }
      if (const YAML::Node translation = harvesting["noc_translation"]) {
        chip.harvesting.noc_translation = yaml_.to_bool(translation, where + ".noc_translation");
      }
    }
    if (const YAML::Node eth = node["eth"]) read_ports(eth, chip, entry);
    chips_.push_back(chip);
  }

  MeshCoord read_coord(const YAML::Node& node, const std::string& where) const {
    if (!mesh_) yaml_.fail(node, where, "a mesh coordinate needs a top-level `mesh` shape");
    yaml_.expect_sequence(node, where);
    if (node.size() != static_cast<std::size_t>(mesh_->rank())) {
      yaml_.fail(node, where,
                 fmt::format("{} numbers; expected {} for the {} mesh", node.size(), mesh_->rank(),
                             mesh_->to_string()));
    }
    MeshCoord coord{0, 0, 0};
    for (int d = 0; d < mesh_->rank(); ++d) {
      coord[static_cast<std::size_t>(d)] = static_cast<std::int32_t>(
          yaml_.to_int(node[static_cast<std::size_t>(d)], where, 0, mesh_->extent(d) - 1));
    }
    return coord;
  }

  void read_ports(const YAML::Node& eth, const Chip& chip, const std::string& entry) {
    yaml_.expect_map(eth, entry + ".eth");
    const auto channels = arch_traits(chip.arch).eth_channel_count;
    std::map<std::int32_t, bool> seen;
    for (const auto& item : eth) {
      const auto channel = static_cast<std::int32_t>(
          yaml_.to_int(item.first, fmt::format("{}.eth (chip {})", entry, chip.id), 0, kMaxId));
      const std::string where = fmt::format("{}.eth[{}]", entry, channel);
      if (channel >= channels) {
        yaml_.fail(item.first, where,
                   fmt::format("channel {} does not exist on chip {} ({}); expected 0..{}", channel,
                               chip.id, arch_name(chip.arch), channels - 1));
      }
      if (!seen.emplace(channel, true).second) {
        yaml_.fail(item.first, where,
                   fmt::format("channel {} of chip {} is listed twice; expected one link per "
                               "channel",
                               channel, chip.id));
      }
      PortEntry port{
          EthEndpoint{chip.id, channel}, {}, std::nullopt, std::nullopt, item.second, where};
      // Bound once: assigning to a yaml-cpp Node overwrites the node it refers to.
      const YAML::Node peer =
          item.second.IsMap() ? yaml_.require(item.second, "peer", where) : item.second;
      if (item.second.IsMap()) {
        yaml_.expect_keys(item.second, where, {"peer", "rate_bytes_per_s", "latency_ps"});
        if (const YAML::Node rate = item.second["rate_bytes_per_s"]) {
          // The range --link-rate accepts (arch.hpp): a 1 B/s link ran a 64 KiB op for hours.
          port.rate_bytes_per_s =
              yaml_.to_int(rate, where + ".rate_bytes_per_s", kMinLinkRateBytesPerS, kMaxLinkRateBytesPerS);
        }
        if (const YAML::Node latency = item.second["latency_ps"]) {
          // The range --link-latency accepts; 0 was refused only when a device was built.
          port.latency_ps = yaml_.to_int(latency, where + ".latency_ps", kMinLinkLatencyPs, kMaxLinkLatencyPs);
        }
      }
      if (!peer.IsSequence() || peer.size() != 2) {
        yaml_.fail(
            peer, where,
            fmt::format("got {}; expected [peer chip, peer channel]", detail::describe(peer)));
      }
      port.peer = EthEndpoint{static_cast<ChipId>(yaml_.to_int(peer[0], where, 0, kMaxId)),
                              static_cast<std::int32_t>(yaml_.to_int(peer[1], where, 0, kMaxId))};
      ports_.emplace(port.self, std::move(port));
    }
  }

  void check_ports() const {
    std::map<EthEndpoint, const PortEntry*> claimed;
    for (const auto& [self, port] : ports_) {
      const auto found = index_of_chip_.find(port.peer.chip);
      if (found == index_of_chip_.end()) {
        yaml_.fail(port.node, port.entry,
                   fmt::format("{} -> {}: chip {} does not exist; expected a chip listed under "
                               "chips",
                               to_string(self), to_string(port.peer), port.peer.chip));
      }
      const Chip& peer_chip = chips_[found->second];
      const auto channels = arch_traits(peer_chip.arch).eth_channel_count;
      if (port.peer.channel >= channels) {
        yaml_.fail(port.node, port.entry,
                   fmt::format("{} -> {}: channel {} does not exist on chip {} ({}); expected "
                               "0..{}",
                               to_string(self), to_string(port.peer), port.peer.channel,
                               peer_chip.id, arch_name(peer_chip.arch), channels - 1));
      }
      if (port.peer.chip == self.chip) {
        yaml_.fail(port.node, port.entry,
                   fmt::format("{} -> {} joins chip {} to itself; expected two chips",
                               to_string(self), to_string(port.peer), self.chip));
      }
      const auto [at, inserted] = claimed.emplace(port.peer, &port);
      if (!inserted) {
        yaml_.fail(port.node, port.entry,
                   fmt::format("channel {} is used twice: {} -> {} and {} -> {}; expected one "
                               "link per channel",
                               to_string(port.peer), to_string(at->second->self),
                               to_string(port.peer), to_string(self), to_string(port.peer)));
      }
    }
    for (const auto& [self, port] : ports_) {
      const auto back = ports_.find(port.peer);
      if (back == ports_.end()) {
        yaml_.fail(
            port.node, port.entry,
            fmt::format("asymmetric link: {} -> {}, but chip {} lists no eth {}; expected "
                        "the link on both chips",
                        to_string(self), to_string(port.peer), port.peer.chip, port.peer.channel));
      }
      if (back->second.peer != self) {
        yaml_.fail(port.node, port.entry,
                   fmt::format("asymmetric link: {} -> {}, but {} -> {}; expected both ends to "
                               "name each other",
                               to_string(self), to_string(port.peer), to_string(port.peer),
                               to_string(back->second.peer)));
      }
      if (back->second.rate_bytes_per_s != port.rate_bytes_per_s ||
          back->second.latency_ps != port.latency_ps) {
        yaml_.fail(port.node, port.entry,
                   fmt::format("asymmetric link: {} <-> {} has a different rate or latency on "
                               "each end; expected the same values on both",
                               to_string(self), to_string(port.peer)));
      }
    }
  }

  std::vector<EthLink> links() const {
    std::vector<EthLink> result;
    for (const auto& [self, port] : ports_) {
      if (!(self < port.peer)) continue;
      const Arch arch_a = chips_[index_of_chip_.at(self.chip)].arch;
      const Arch arch_b = chips_[index_of_chip_.at(port.peer.chip)].arch;
      result.push_back(
          EthLink{self, port.peer,
                  port.rate_bytes_per_s.value_or(default_link_rate_bytes_per_s(arch_a, arch_b)),
                  port.latency_ps.value_or(default_link_latency_ps(arch_a, arch_b))});
    }
    return result;
  }

  detail::YamlReader yaml_;
  std::string default_name_;
  std::optional<MeshShape> mesh_;
  YAML::Node mesh_shape_node_;  // mesh.shape, for a refusal that names its line
  YAML::Node mesh_wraps_node_;  // mesh.wraps, likewise
  struct EmptyPosition {
    MeshCoord coord;
    YAML::Node node;  // for a refusal that names its line
  };
  std::vector<EmptyPosition> empty_;  // mesh.empty
  std::vector<Chip> chips_;
  std::map<ChipId, std::size_t> index_of_chip_;
  std::map<std::int32_t, ChipId> chip_of_pci_device_;  // PCI device index -> the chip given it
  std::map<EthEndpoint, PortEntry> ports_;
};

}  // namespace

std::string to_yaml(const Topology& topology) {
  YAML::Emitter out;
  out << YAML::Comment("cclmesh topology, own format: see docs/topologies.md") << YAML::Newline;
  out << YAML::BeginMap;
  out << YAML::Key << "format" << YAML::Value << std::string(kTopologyFormatName);
  out << YAML::Key << "version" << YAML::Value << kTopologyFormatVersion;
  out << YAML::Key << "name" << YAML::Value << topology.name();
  if (const auto& shape = topology.mesh_shape()) {
    out << YAML::Key << "mesh" << YAML::Value << YAML::Flow << YAML::BeginMap;
    out << YAML::Key << "shape" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (int d = 0; d < shape->rank(); ++d) out << shape->extent(d);
    out << YAML::EndSeq;
    out << YAML::Key << "wraps" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (int d = 0; d < shape->rank(); ++d) out << shape->wraps(d);
    out << YAML::EndSeq;
    // The positions without a chip (a faulted mesh): without them a mesh whose last row or column
    // is gone would not load back under its shape.
    std::vector<MeshCoord> empty;
    for (std::int64_t i = 0; i < shape->chip_count(); ++i) {
      if (!topology.chip_at(shape->coord_at(i))) empty.push_back(shape->coord_at(i));
    }
    if (!empty.empty()) {
      out << YAML::Key << "empty" << YAML::Value << YAML::Flow << YAML::BeginSeq;
      for (const MeshCoord& coord : empty) {
        out << YAML::Flow << YAML::BeginSeq;
        for (int d = 0; d < shape->rank(); ++d) out << coord[static_cast<std::size_t>(d)];
        out << YAML::EndSeq;
      }
      out << YAML::EndSeq;
    }
    out << YAML::EndMap;
  }
  out << YAML::Key << "chips" << YAML::Value << YAML::BeginSeq;
  for (const Chip& chip : topology.chips()) emit_chip(out, topology, chip);
  out << YAML::EndSeq << YAML::EndMap;
  CCLMESH_TOPO_CHECK(out.good(), fmt::format("YAML emitter: {}", out.GetLastError()));
  return std::string(out.c_str()) + "\n";
}

void save_topology(const Topology& topology, const std::filesystem::path& path) {
  const std::string text = to_yaml(topology);
  std::filesystem::path temporary = path;
  temporary += ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) {
      std::error_code ignored;
      std::filesystem::remove(temporary, ignored);
      throw InputError(fmt::format("{}: cannot write the file", path.string()));
    }
  }
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    throw InputError(fmt::format("{}: cannot write the file: {}", path.string(), ec.message()));
  }
}

Topology load_topology_file(const std::filesystem::path& path) {
  return parse_topology_yaml(detail::read_text_file(path), path.string(), path.stem().string());
}

Topology parse_topology_yaml(std::string_view yaml_text, const std::string& source,
                             const std::string& default_name) {
  try {
    return TopologyYamlReader(source, default_name).read(yaml_text);
  } catch (const YAML::Exception& e) {
    throw InputError(fmt::format("{}: {}", source, e.what()));
  }
}

}  // namespace cclmesh::topo
