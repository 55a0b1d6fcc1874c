#include "topologies/cluster_descriptor.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "topologies/detail/yaml_reader.hpp"
#include "topologies/errors.hpp"
#include "topologies/mesh_inference.hpp"

namespace cclmesh::topo {
namespace {

constexpr std::int64_t kMaxId = std::numeric_limits<std::int32_t>::max();

// (x, y, rack, shelf), REFERENCE 3.7.
struct EthCoord {
  std::int64_t x;
  std::int64_t y;
  std::int64_t rack;
  std::int64_t shelf;
};

class ClusterDescriptorReader {
 public:
  ClusterDescriptorReader(std::string source, std::string name)
      : yaml_(std::move(source)), name_(std::move(name)) {}

  Topology read(std::string_view text) {
    const YAML::Node root = yaml_.parse(text);
    yaml_.expect_map(root, "top level");
    read_arch(yaml_.require(root, "arch", "top level"));
    read_chip_coords(root["chips"]);
    read_links(yaml_.require(root, "ethernet_connections", "top level"));
    read_remote_links(root["ethernet_connections_to_remote_devices"]);
    read_mmio(root["chips_with_mmio"]);
    read_harvesting(root["harvesting"]);
    read_boards(root["boards"]);
    return build();
  }

 private:
  ChipId read_chip_id(const YAML::Node& node, const std::string& entry) const {
    return static_cast<ChipId>(yaml_.to_int(node, entry, 0, kMaxId));
  }

  // A chip id that must have been declared under `arch`.
  Chip& known_chip(const YAML::Node& node, const std::string& entry) {
    const ChipId id = read_chip_id(node, entry);
    const auto found = chips_.find(id);
    if (found == chips_.end()) {
      yaml_.fail(node, entry,
                 fmt::format("chip {} does not exist; expected a chip listed under arch ({})", id,
                             known_ids()));
    }
    return found->second;
  }

  std::string known_ids() const {
    std::string ids;
    for (const auto& [id, chip] : chips_) ids += fmt::format("{}{}", ids.empty() ? "" : ", ", id);
    return ids.empty() ? "none" : ids;
  }

  void read_arch(const YAML::Node& arch) {
    yaml_.expect_map(arch, "arch");
    for (const auto& item : arch) {
      const ChipId id = read_chip_id(item.first, "arch");
      const std::string entry = fmt::format("arch[{}]", id);
      const std::string text = yaml_.to_string(item.second, entry);
      const auto parsed = parse_arch(text);
      if (!parsed) {
        yaml_.fail(item.second, entry,
                   fmt::format("unknown architecture {}; expected {}", detail::quote_scalar(text), kArchSpellings));
      }
      Chip chip;
      chip.id = id;
      chip.arch = *parsed;
      if (!chips_.emplace(id, chip).second) {
        yaml_.fail(item.first, entry, "chip listed twice; expected each chip once");
      }
    }
  }

  void read_chip_coords(const YAML::Node& coords) {
    if (!coords.IsDefined() || coords.IsNull()) return;
    yaml_.expect_map(coords, "chips");
    for (const auto& item : coords) {
      const Chip& chip = known_chip(item.first, "chips");
      const std::string entry = fmt::format("chips[{}]", chip.id);
      yaml_.expect_sequence(item.second, entry);
      if (item.second.size() != 4) {
        yaml_.fail(item.second, entry,
                   fmt::format("{} numbers; expected 4: (x, y, rack, shelf)", item.second.size()));
      }
      std::array<std::int64_t, 4> v{};
      for (std::size_t i = 0; i < 4; ++i) v[i] = yaml_.to_int(item.second[i], entry, 0, kMaxId);
      coords_[chip.id] = EthCoord{v[0], v[1], v[2], v[3]};
    }
  }

  EthEndpoint read_endpoint(const YAML::Node& node, const std::string& entry) {
    yaml_.expect_keys(node, entry, {"chip", "chan"});
    const Chip& chip = known_chip(yaml_.require(node, "chip", entry), entry);
    const YAML::Node chan = yaml_.require(node, "chan", entry);
    const auto channels = arch_traits(chip.arch).eth_channel_count;
    const auto channel = yaml_.to_int(chan, entry, 0, kMaxId);
    if (channel >= channels) {
      yaml_.fail(chan, entry,
                 fmt::format("channel {} does not exist on chip {} ({}); expected 0..{}", channel,
                             chip.id, arch_name(chip.arch), channels - 1));
    }
    return EthEndpoint{chip.id, static_cast<std::int32_t>(channel)};
  }

  void read_links(const YAML::Node& connections) {
    if (connections.IsNull()) return;
    yaml_.expect_sequence(connections, "ethernet_connections");
    for (std::size_t i = 0; i < connections.size(); ++i) {
      const YAML::Node item = connections[i];
      const std::string entry = fmt::format("ethernet_connections[{}]", i);
      yaml_.expect_sequence(item, entry);
      if (item.size() < 2 || item.size() > 3) {
        yaml_.fail(item, entry,
                   fmt::format("{} items; expected 2 endpoints and an optional "
                               "{{routing_enabled: bool}}",
                               item.size()));
      }
      const EthEndpoint a = read_endpoint(item[0], entry);
      const EthEndpoint b = read_endpoint(item[1], entry);
      if (item.size() == 3) {
        yaml_.expect_keys(item[2], entry, {"routing_enabled"});
        yaml_.to_bool(yaml_.require(item[2], "routing_enabled", entry), entry);
      }
      if (a.chip == b.chip) {
        yaml_.fail(item, entry,
                   fmt::format("link {} <-> {} joins chip {} to itself; expected two chips",
                               to_string(a), to_string(b), a.chip));
      }
      add_link(item, entry, i, a, b);
    }
  }

  void add_link(const YAML::Node& item, const std::string& entry, std::size_t index, EthEndpoint a,
                EthEndpoint b) {
    const auto at_a = peer_.find(a);
    const auto at_b = peer_.find(b);
    if (at_a != peer_.end() && at_a->second.peer == b && at_b != peer_.end() &&
        at_b->second.peer == a) {
      return;  // the same physical link listed again
    }
    for (const auto& [end, found] : {std::pair{a, at_a}, std::pair{b, at_b}}) {
      if (found == peer_.end()) continue;
      yaml_.fail(item, entry,
                 fmt::format("channel {} is already used by ethernet_connections[{}] ({} <-> {}); "
                             "expected each channel in one link",
                             to_string(end), found->second.entry, to_string(end),
                             to_string(found->second.peer)));
    }
    peer_.emplace(a, PortUse{b, index});
    peer_.emplace(b, PortUse{a, index});
    const Arch arch_a = chips_.at(a.chip).arch;
    const Arch arch_b = chips_.at(b.chip).arch;
    links_.push_back(EthLink{a, b, default_link_rate_bytes_per_s(arch_a, arch_b),
                             default_link_latency_ps(arch_a, arch_b)});
  }

  void read_remote_links(const YAML::Node& remote) {
    if (!remote.IsDefined() || remote.IsNull()) return;
    yaml_.expect_sequence(remote, "ethernet_connections_to_remote_devices");
  }

  void read_mmio(const YAML::Node& mmio) {
    if (!mmio.IsDefined() || mmio.IsNull()) return;
    yaml_.expect_sequence(mmio, "chips_with_mmio");
    for (std::size_t i = 0; i < mmio.size(); ++i) {
      const YAML::Node item = mmio[i];
      const std::string entry = fmt::format("chips_with_mmio[{}]", i);
      if (item.IsScalar()) {
        set_pci_device(item, item, static_cast<std::int32_t>(i), entry);
        continue;
      }
      yaml_.expect_map(item, entry);
      if (item.size() != 1) {
        yaml_.fail(item, entry,
                   fmt::format("{} entries; expected one {{chip: PCI device index}}", item.size()));
      }
      for (const auto& pair : item) {
        set_pci_device(pair.first, pair.second,
                       static_cast<std::int32_t>(yaml_.to_int(pair.second, entry, 0, kMaxId)), entry);
      }
    }
  }

  // A chip is attached once, and a PCI device is one chip's (bug bash, session 44: a chip listed
  // twice took the second index, leaving the chip that had it unattached, and two chips given one
  // index both loaded as MMIO-attached).
  void set_pci_device(const YAML::Node& chip_node, const YAML::Node& index_node, std::int32_t index,
                      const std::string& entry) {
    Chip& chip = known_chip(chip_node, entry);
    if (chip.pci_device) {
      yaml_.fail(chip_node, entry,
                 fmt::format("chip {} is listed twice (PCI devices {} and {}); expected each chip once", chip.id,
                             *chip.pci_device, index));
    }
    if (const auto [at, inserted] = chip_of_pci_device_.emplace(index, chip.id); !inserted) {
      yaml_.fail(index_node, entry,
                 fmt::format("chip {} is PCI device {}, as chip {} is; expected each PCI device index on one chip",
                             chip.id, index, at->second));
    }
    chip.pci_device = index;
  }

  void read_harvesting(const YAML::Node& harvesting) {
    if (!harvesting.IsDefined() || harvesting.IsNull()) return;
    yaml_.expect_map(harvesting, "harvesting");
    for (const auto& item : harvesting) {
      Chip& chip = known_chip(item.first, "harvesting");
      const std::string entry = fmt::format("harvesting[{}]", chip.id);
      yaml_.expect_keys(item.second, entry,
                        {"noc_translation", "harvest_mask", "dram_harvesting_mask",
                         "eth_harvesting_mask", "pcie_harvesting_mask", "l2cpu_harvesting_mask"});
      const auto mask = [&](const char* key) -> std::uint32_t {
        const YAML::Node value = item.second[key];
        if (!value.IsDefined()) return 0;
        return static_cast<std::uint32_t>(yaml_.to_int(value, fmt::format("{}.{}", entry, key), 0,
                                                       std::numeric_limits<std::uint32_t>::max()));
      };
      if (const YAML::Node translation = item.second["noc_translation"]; translation.IsDefined()) {
        chip.harvesting.noc_translation = yaml_.to_bool(translation, entry + ".noc_translation");
      }
      chip.harvesting.tensix_mask = mask("harvest_mask");
      if (const std::string problem = tensix_harvest_mask_problem(chip.arch, chip.harvesting.tensix_mask);
          !problem.empty()) {
        yaml_.fail(item.second["harvest_mask"], entry + ".harvest_mask", problem);
      }
      chip.harvesting.dram_mask = mask("dram_harvesting_mask");
      chip.harvesting.eth_mask = mask("eth_harvesting_mask");
    }
  }

  void read_boards(const YAML::Node& boards) {
    if (!boards.IsDefined() || boards.IsNull()) return;
    yaml_.expect_sequence(boards, "boards");
    std::map<ChipId, std::size_t> board_of_chip;
    for (std::size_t i = 0; i < boards.size(); ++i) {
      const std::string entry = fmt::format("boards[{}]", i);
      const YAML::Node board = boards[i];
      yaml_.expect_sequence(board, entry);
      std::optional<std::uint64_t> board_id;
      BoardType type = BoardType::Unknown;
      std::vector<std::pair<YAML::Node, ChipId>> members;
      for (const auto& field : board) {
        yaml_.expect_keys(field, entry, {"board_id", "board_type", "chips"});
        if (field["board_id"]) board_id = yaml_.to_uint(field["board_id"], entry + ".board_id");
        if (const YAML::Node t = field["board_type"]) {
          const std::string text = yaml_.to_string(t, entry + ".board_type");
          const auto parsed = parse_board_type(text);
          if (!parsed) {
            yaml_.fail(t, entry + ".board_type",
                       fmt::format("unknown board type {}; expected {}", detail::quote_scalar(text), kBoardSpellings));
          }
          type = *parsed;
        }
        if (const YAML::Node list = field["chips"]) {
          yaml_.expect_sequence(list, entry + ".chips");
          for (const auto& member : list) {
            members.emplace_back(member, known_chip(member, entry + ".chips").id);
          }
        }
      }
      for (const auto& [node, id] : members) {
        const auto [at, inserted] = board_of_chip.emplace(id, i);
        if (!inserted) {
          yaml_.fail(node, entry + ".chips",
                     fmt::format("chip {} is already on boards[{}]; expected one board per chip",
                                 id, at->second));
        }
        chips_.at(id).board = type;
        chips_.at(id).board_id = board_id;
      }
    }
  }

  // The mesh from tt-umd coordinates, when they describe one (see the header); nullopt
  // otherwise.
  std::optional<MeshShape> mesh_from_coords(std::vector<Chip>& chips) const {
    if (chips.empty() || coords_.size() != chips.size()) return std::nullopt;
    const EthCoord& first = coords_.begin()->second;
    std::int64_t min_x = first.x, max_x = first.x, min_y = first.y, max_y = first.y;
    for (const auto& [id, c] : coords_) {
      if (c.rack != first.rack || c.shelf != first.shelf) return std::nullopt;
      min_x = std::min(min_x, c.x);
      max_x = std::max(max_x, c.x);
      min_y = std::min(min_y, c.y);
      max_y = std::max(max_y, c.y);
    }
    const std::int64_t rows = max_y - min_y + 1;
    const std::int64_t cols = max_x - min_x + 1;
    if (rows * cols != static_cast<std::int64_t>(chips.size())) return std::nullopt;
    std::map<std::pair<std::int64_t, std::int64_t>, ChipId> at;
    for (const auto& [id, c] : coords_) {
      if (!at.emplace(std::pair{c.y - min_y, c.x - min_x}, id).second) return std::nullopt;
    }
    // Every mesh neighbour pair linked; every link between mesh neighbours or across a wrap.
    std::set<std::pair<ChipId, ChipId>> linked;
    for (const EthLink& link : links_) {
      linked.emplace(std::min(link.a.chip, link.b.chip), std::max(link.a.chip, link.b.chip));
    }
    const auto is_linked = [&linked](ChipId a, ChipId b) {
      return linked.count({std::min(a, b), std::max(a, b)}) != 0;
    };
    std::array<bool, 2> wraps{rows > 2, cols > 2};
    for (std::int64_t r = 0; r < rows; ++r) {
      for (std::int64_t c = 0; c < cols; ++c) {
        const ChipId here = at.at({r, c});
        if (c + 1 < cols && !is_linked(here, at.at({r, c + 1}))) return std::nullopt;
        if (r + 1 < rows && !is_linked(here, at.at({r + 1, c}))) return std::nullopt;
        if (c == 0 && cols > 2) wraps[1] = wraps[1] && is_linked(here, at.at({r, cols - 1}));
        if (r == 0 && rows > 2) wraps[0] = wraps[0] && is_linked(here, at.at({rows - 1, c}));
      }
    }
    for (const auto& [a, b] : linked) {
      const EthCoord& ca = coords_.at(a);
      const EthCoord& cb = coords_.at(b);
      const auto dx = std::abs(ca.x - cb.x);
      const auto dy = std::abs(ca.y - cb.y);
      const bool neighbours = (dx + dy == 1) || (dy == 0 && dx == cols - 1 && cols > 2) ||
                              (dx == 0 && dy == rows - 1 && rows > 2);
      if (!neighbours) return std::nullopt;
    }
    for (Chip& chip : chips) {
      const EthCoord& c = coords_.at(chip.id);
      chip.mesh_coord = MeshCoord{static_cast<std::int32_t>(c.y - min_y),
                                  static_cast<std::int32_t>(c.x - min_x), 0};
    }
    const std::array<std::int32_t, 2> extents{static_cast<std::int32_t>(rows),
                                              static_cast<std::int32_t>(cols)};
    return MeshShape(extents, wraps);
  }

  Topology build() const {
    std::vector<Chip> chips;
    for (const auto& [id, chip] : chips_) chips.push_back(chip);
    const auto shape = mesh_from_coords(chips);
    if (!shape) {
      for (Chip& chip : chips) chip.mesh_coord.reset();
    }
    try {
      Topology topology(name_, std::move(chips), links_, shape);
      return shape ? topology : with_inferred_mesh_shape(topology);
    } catch (const InputError& e) {
      throw InputError(fmt::format("{}: {}", yaml_.source(), e.what()));
    }
  }

  struct PortUse {
    EthEndpoint peer;
    std::size_t entry;
  };

  detail::YamlReader yaml_;
  std::string name_;
  std::map<ChipId, Chip> chips_;
  std::map<std::int32_t, ChipId> chip_of_pci_device_;  // PCI device index -> the chip given it
  std::map<ChipId, EthCoord> coords_;
  std::map<EthEndpoint, PortUse> peer_;
  std::vector<EthLink> links_;
};

}  // namespace

Topology load_cluster_descriptor(const std::filesystem::path& path) {
  return parse_cluster_descriptor(detail::read_text_file(path), path.string(),
                                  path.stem().string());
}

Topology parse_cluster_descriptor(std::string_view yaml_text, const std::string& source,
                                  const std::string& name) {
  try {
    return ClusterDescriptorReader(source, name).read(yaml_text);
  } catch (const YAML::Exception& e) {
    // yaml-cpp conversions we did not guard; still bad input, never a crash.
    throw InputError(fmt::format("{}: {}", source, e.what()));
  }
}

}  // namespace cclmesh::topo
