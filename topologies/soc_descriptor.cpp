#include "topologies/soc_descriptor.hpp"

#include <fmt/format.h>

#include <charconv>
#include <limits>

#include "topologies/data_paths.hpp"
#include "topologies/detail/yaml_reader.hpp"
#include "topologies/errors.hpp"

namespace cclmesh::topo {
namespace {

class SocDescriptorReader {
 public:
  explicit SocDescriptorReader(std::string source) : yaml_(std::move(source)) {}

  SocDescriptor read(std::string_view text) {
    const YAML::Node root = yaml_.parse(text);
    yaml_.expect_map(root, "top level");
    SocDescriptor soc;
    const YAML::Node arch_node = yaml_.require(root, "arch_name", "top level");
    const std::string arch_text = yaml_.to_string(arch_node, "arch_name");
    const auto arch = parse_arch(arch_text);
    if (!arch) {
      yaml_.fail(
          arch_node, "arch_name",
          fmt::format("unknown architecture '{}'; expected WORMHOLE_B0 or BLACKHOLE", arch_text));
    }
    soc.arch = *arch;

    const YAML::Node grid = yaml_.require(root, "grid", "top level");
    soc.grid_x_size = static_cast<std::int32_t>(
        yaml_.to_int(yaml_.require(grid, "x_size", "grid"), "grid.x_size", 1, kMaxGrid));
    soc.grid_y_size = static_cast<std::int32_t>(
        yaml_.to_int(yaml_.require(grid, "y_size", "grid"), "grid.y_size", 1, kMaxGrid));
    grid_x_ = soc.grid_x_size;
    grid_y_ = soc.grid_y_size;

    soc.tensix =
        coords(yaml_.require(root, "functional_workers", "top level"), "functional_workers");
    soc.eth = coords(yaml_.require(root, "eth", "top level"), "eth");
    const YAML::Node dram = yaml_.require(root, "dram", "top level");
    yaml_.expect_sequence(dram, "dram");
    for (std::size_t i = 0; i < dram.size(); ++i) {
      soc.dram.push_back(coords(dram[i], fmt::format("dram[{}]", i)));
    }
    soc.arc = optional_coords(root, "arc");
    soc.pcie = optional_coords(root, "pcie");
    soc.router_only = optional_coords(root, "router_only");
    soc.security = optional_coords(root, "security");
    soc.l2cpu = optional_coords(root, "l2cpu");

    soc.noc0_x_to_noc1_x = mirror(root, "noc0_x_to_noc1_x", soc.grid_x_size);
    soc.noc0_y_to_noc1_y = mirror(root, "noc0_y_to_noc1_y", soc.grid_y_size);

    soc.worker_l1_size_bytes = size(root, "worker_l1_size");
    soc.eth_l1_size_bytes = size(root, "eth_l1_size");
    soc.dram_bank_size_bytes = size(root, "dram_bank_size");
    return soc;
  }

 private:
  static constexpr std::int64_t kMaxGrid = 1024;

  NocCoord coord(const YAML::Node& node, const std::string& entry) const {
    const std::string text = yaml_.to_string(node, entry);
    const auto dash = text.find('-');
    NocCoord c;
    const auto parse = [&text](std::size_t from, std::size_t to, std::int32_t& out) {
      const auto [ptr, ec] = std::from_chars(text.data() + from, text.data() + to, out);
      return from < to && ec == std::errc{} && ptr == text.data() + to;
    };
    if (dash == std::string::npos || !parse(0, dash, c.x) || !parse(dash + 1, text.size(), c.y)) {
      yaml_.fail(node, entry, fmt::format("core '{}'; expected NoC0 coordinates \"x-y\"", text));
    }
    if (c.x < 0 || c.x >= grid_x_ || c.y < 0 || c.y >= grid_y_) {
      yaml_.fail(node, entry,
                 fmt::format("core {} is outside the {}x{} grid; expected x in 0..{}, y in 0..{}",
                             text, grid_x_, grid_y_, grid_x_ - 1, grid_y_ - 1));
    }
    return c;
  }

  std::vector<NocCoord> coords(const YAML::Node& list, const std::string& entry) const {
    yaml_.expect_sequence(list, entry);
    std::vector<NocCoord> result;
    for (std::size_t i = 0; i < list.size(); ++i) {
      result.push_back(coord(list[i], fmt::format("{}[{}]", entry, i)));
    }
    return result;
  }

  std::vector<NocCoord> optional_coords(const YAML::Node& root, const char* key) const {
    const YAML::Node list = root[key];
    if (!list.IsDefined() || list.IsNull()) return {};
    return coords(list, key);
  }

  std::vector<std::int32_t> mirror(const YAML::Node& root, const char* key,
                                   std::int32_t extent) const {
    const YAML::Node list = yaml_.require(root, key, "top level");
    yaml_.expect_sequence(list, key);
    if (list.size() != static_cast<std::size_t>(extent)) {
      yaml_.fail(
          list, key,
          fmt::format("{} entries; expected {}, one per grid coordinate", list.size(), extent));
    }
    std::vector<std::int32_t> result;
    for (std::size_t i = 0; i < list.size(); ++i) {
      result.push_back(static_cast<std::int32_t>(
          yaml_.to_int(list[i], fmt::format("{}[{}]", key, i), 0, extent - 1)));
    }
    return result;
  }

  std::int64_t size(const YAML::Node& root, const char* key) const {
    return yaml_.to_int(yaml_.require(root, key, "top level"), key, 1,
                        std::numeric_limits<std::int64_t>::max());
  }

  detail::YamlReader yaml_;
  std::int32_t grid_x_ = 0;
  std::int32_t grid_y_ = 0;
};

}  // namespace

NocCoord SocDescriptor::to_noc1(NocCoord noc0) const {
  CCLMESH_TOPO_CHECK(
      noc0.x >= 0 && noc0.x < grid_x_size && noc0.y >= 0 && noc0.y < grid_y_size,
      fmt::format("core {}-{} outside the {}x{} grid", noc0.x, noc0.y, grid_x_size, grid_y_size));
  return NocCoord{noc0_x_to_noc1_x[static_cast<std::size_t>(noc0.x)],
                  noc0_y_to_noc1_y[static_cast<std::size_t>(noc0.y)]};
}

NocCoord SocDescriptor::eth_core(std::int32_t channel) const {
  if (channel < 0 || static_cast<std::size_t>(channel) >= eth.size()) {
    throw InputError(fmt::format("ethernet channel {} does not exist on {}; expected 0..{}",
                                 channel, arch_name(arch), eth.size() - 1));
  }
  return eth[static_cast<std::size_t>(channel)];
}

SocDescriptor load_soc_descriptor(const std::filesystem::path& path) {
  return parse_soc_descriptor(detail::read_text_file(path), path.string());
}

SocDescriptor parse_soc_descriptor(std::string_view yaml_text, const std::string& source) {
  try {
    return SocDescriptorReader(source).read(yaml_text);
  } catch (const YAML::Exception& e) {
    throw InputError(fmt::format("{}: {}", source, e.what()));
  }
}

std::filesystem::path default_soc_descriptor_path(Arch arch) {
  const char* file = arch == Arch::Wormhole ? "wormhole_b0_8x10.yaml" : "blackhole_140_arch.yaml";
  return shared_dir() / "ecosystem" / "soc_descriptors" / file;
}

}  // namespace cclmesh::topo
