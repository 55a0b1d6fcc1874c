#include "sim/model/soc_descriptor.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <charconv>

#include "sim/model/sim_fault.hpp"

namespace cclmesh::sim {

namespace {

std::int32_t parse_int(std::string_view text, const std::string& where) {
  std::int32_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size()) {
    throw ModelConfigError(fmt::format("{}: '{}' is not an integer", where, text));
  }
  return value;
}

class Reader {
 public:
  Reader(const std::filesystem::path& path, YAML::Node root) : file_(path.string()), root_(std::move(root)) {}

  YAML::Node required(const std::string& key) const {
    YAML::Node node = root_[key];
    if (!node) throw ModelConfigError(fmt::format("{}: missing field '{}'", file_, key));
    return node;
  }

  std::vector<CoreCoord> cores(const std::string& key, bool optional = false) const {
    std::vector<CoreCoord> out;
    YAML::Node node = root_[key];
    if (!node) {
      if (optional) return out;
      throw ModelConfigError(fmt::format("{}: missing field '{}'", file_, key));
    }
    if (!node.IsSequence()) throw ModelConfigError(fmt::format("{}: field '{}' must be a list of \"x-y\" cores", file_, key));
    for (std::size_t i = 0; i < node.size(); ++i) {
      out.push_back(parse_core_coord(node[i].as<std::string>(), fmt::format("{}: {}[{}]", file_, key, i)));
    }
    return out;
  }

  std::vector<std::int32_t> ints(const std::string& key) const {
    YAML::Node node = required(key);
    if (!node.IsSequence()) throw ModelConfigError(fmt::format("{}: field '{}' must be a list of integers", file_, key));
    std::vector<std::int32_t> out;
    for (std::size_t i = 0; i < node.size(); ++i) {
      out.push_back(parse_int(node[i].as<std::string>(), fmt::format("{}: {}[{}]", file_, key, i)));
    }
    return out;
  }

  std::uint64_t positive(const std::string& key) const {
    YAML::Node node = required(key);
    std::int64_t value = 0;
    try {
      value = node.as<std::int64_t>();
    } catch (const YAML::Exception&) {
      throw ModelConfigError(fmt::format("{}: field '{}' = '{}' must be a positive integer", file_, key,
                                         node.as<std::string>("?")));
    }
    if (value <= 0) throw ModelConfigError(fmt::format("{}: field '{}' = {} must be positive", file_, key, value));
    return static_cast<std::uint64_t>(value);
  }

  const std::string& file() const { return file_; }
  const YAML::Node& root() const { return root_; }

 private:
  std::string file_;
  YAML::Node root_;
};

}  // namespace

CoreCoord parse_core_coord(const std::string& text, const std::string& where) {
  const auto dash = text.find('-');
  if (dash == std::string::npos || dash == 0 || dash + 1 == text.size()) {
    throw ModelConfigError(fmt::format("{}: '{}' is not a core \"x-y\"", where, text));
  }
  return CoreCoord{parse_int(std::string_view(text).substr(0, dash), where),
                   parse_int(std::string_view(text).substr(dash + 1), where)};
}

std::vector<TileKind> SocDescriptor::tile_map() const {
  std::vector<TileKind> map(static_cast<std::size_t>(grid_x) * static_cast<std::size_t>(grid_y), TileKind::None);
  auto mark = [&](const std::vector<CoreCoord>& cores, TileKind kind) {
    for (CoreCoord c : cores) map[static_cast<std::size_t>(c.y * grid_x + c.x)] = kind;
  };
  mark(tensix, TileKind::Tensix);
  mark(eth, TileKind::Eth);
  for (const auto& channel : dram) mark(channel, TileKind::Dram);
  mark(arc, TileKind::Arc);
  mark(pcie, TileKind::Pcie);
  mark(router_only, TileKind::RouterOnly);
  mark(security, TileKind::Security);
  mark(l2cpu, TileKind::L2Cpu);
  return map;
}

SocDescriptor load_soc_descriptor(const std::filesystem::path& path) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path.string());
  } catch (const YAML::Exception& e) {
    throw ModelConfigError(fmt::format("{}: cannot read SoC descriptor: {}", path.string(), e.what()));
  }
  Reader in(path, root);
  SocDescriptor soc;
  soc.arch_name = in.required("arch_name").as<std::string>();
  YAML::Node grid = in.required("grid");
  soc.grid_x = grid["x_size"].as<std::int32_t>(0);
  soc.grid_y = grid["y_size"].as<std::int32_t>(0);
  if (soc.grid_x <= 0 || soc.grid_y <= 0 || soc.grid_x > 64 || soc.grid_y > 64) {
    throw ModelConfigError(fmt::format("{}: grid {}x{} must have sizes in 1..64 (6-bit NoC coordinates)", in.file(),
                                       soc.grid_x, soc.grid_y));
  }
  soc.tensix = in.cores("functional_workers");
  soc.eth = in.cores("eth");
  soc.arc = in.cores("arc", true);
  soc.pcie = in.cores("pcie", true);
  soc.router_only = in.cores("router_only", true);
  soc.security = in.cores("security", true);
  soc.l2cpu = in.cores("l2cpu", true);
  YAML::Node dram = in.required("dram");
  if (!dram.IsSequence() || dram.size() == 0) throw ModelConfigError(fmt::format("{}: 'dram' must be a non-empty list of channels", in.file()));
  for (std::size_t c = 0; c < dram.size(); ++c) {
    std::vector<CoreCoord> endpoints;
    for (std::size_t e = 0; e < dram[c].size(); ++e) {
      endpoints.push_back(parse_core_coord(dram[c][e].as<std::string>(), fmt::format("{}: dram[{}][{}]", in.file(), c, e)));
    }
    if (endpoints.empty()) throw ModelConfigError(fmt::format("{}: dram[{}] has no endpoints", in.file(), c));
    soc.dram.push_back(std::move(endpoints));
  }
  soc.noc0_x_to_noc1_x = in.ints("noc0_x_to_noc1_x");
  soc.noc0_y_to_noc1_y = in.ints("noc0_y_to_noc1_y");
  soc.worker_l1_bytes = in.positive("worker_l1_size");
  soc.eth_l1_bytes = in.positive("eth_l1_size");
  soc.dram_channel_bytes = in.positive("dram_bank_size");

  if (soc.noc0_x_to_noc1_x.size() != static_cast<std::size_t>(soc.grid_x) ||
      soc.noc0_y_to_noc1_y.size() != static_cast<std::size_t>(soc.grid_y)) {
    throw ModelConfigError(fmt::format("{}: noc0_x_to_noc1_x / noc0_y_to_noc1_y must have {} / {} entries, got {} / {}",
                                       in.file(), soc.grid_x, soc.grid_y, soc.noc0_x_to_noc1_x.size(),
                                       soc.noc0_y_to_noc1_y.size()));
  }
  // Every listed core inside the grid and on its own node.
  std::vector<std::string> owner(static_cast<std::size_t>(soc.grid_x * soc.grid_y));
  auto claim = [&](const std::vector<CoreCoord>& cores, const std::string& list) {
    for (CoreCoord c : cores) {
      if (c.x < 0 || c.y < 0 || c.x >= soc.grid_x || c.y >= soc.grid_y) {
        throw ModelConfigError(fmt::format("{}: {} core {}-{} lies outside the {}x{} grid", in.file(), list, c.x, c.y,
                                           soc.grid_x, soc.grid_y));
      }
      std::string& slot = owner[static_cast<std::size_t>(c.y * soc.grid_x + c.x)];
      if (!slot.empty()) {
        throw ModelConfigError(fmt::format("{}: core {}-{} is listed in both '{}' and '{}'", in.file(), c.x, c.y, slot, list));
      }
      slot = list;
    }
  };
  claim(soc.tensix, "functional_workers");
  claim(soc.eth, "eth");
  for (const auto& channel : soc.dram) claim(channel, "dram");
  claim(soc.arc, "arc");
  claim(soc.pcie, "pcie");
  claim(soc.router_only, "router_only");
  claim(soc.security, "security");
  claim(soc.l2cpu, "l2cpu");
  return soc;
}

}  // namespace cclmesh::sim
