#include "topologies/system_loader.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>

#include "topologies/builtin_systems.hpp"
#include "topologies/cluster_descriptor.hpp"
#include "topologies/data_paths.hpp"
#include "topologies/detail/yaml_reader.hpp"
#include "topologies/errors.hpp"
#include "topologies/parametric.hpp"
#include "topologies/topology_yaml.hpp"

namespace cclmesh::topo {

std::string system_spec_help() {
  return fmt::format(
      "built-in name ({}), parametric spec (mesh:RxC[xD], torus:RxC[xD], ring:N, optional /L links per edge and "
      "@wh|@bh), a YAML file (a tt-umd cluster descriptor or cclmesh's own, `cclmesh topo --save`) or the NAME of "
      "a NAME.yaml in cclmesh's systems folder",
      fmt::join(builtin_system_names(), ", "));
}

Topology load_topology_any_format(const std::string& path) {
  const std::string text = detail::read_text_file(path);
  const detail::YamlReader yaml(path);
  const YAML::Node root = yaml.parse(text);
  if (!root.IsMap()) {
    yaml.fail(root, "top level",
              fmt::format("got {}; expected a map: a tt-umd cluster descriptor or a "
                          "'format: {}' file",
                          detail::describe(root), kTopologyFormatName));
  }
  if (root["format"]) {
    return parse_topology_yaml(text, path, std::filesystem::path(path).stem().string());
  }
  if (root["ethernet_connections"] || root["arch"]) {
    return parse_cluster_descriptor(text, path, std::filesystem::path(path).stem().string());
  }
  // tt-umd's other YAML, easily passed by mistake: it describes one chip, not a system.
  if (root["grid"] && root["functional_workers"]) {
    yaml.fail(root, "top level",
              fmt::format("this is a tt-umd SoC descriptor (one chip's cores: 'grid', 'functional_workers'), not "
                          "a system; expected a cluster descriptor (chips and their ethernet links, e.g. "
                          "t3k_cluster_desc.yaml) or a 'format: {}' file",
                          kTopologyFormatName));
  }
  yaml.fail(root, "top level",
            fmt::format("neither a tt-umd cluster descriptor (no 'arch' or "
                        "'ethernet_connections' key) nor an own-format file (no 'format: {}')",
                        kTopologyFormatName));
}

Topology load_system(const std::string& spec) {
  if (auto builtin = build_builtin_system(spec)) return std::move(*builtin);
  if (looks_parametric(spec)) return build_parametric(parse_parametric_spec(spec));
  std::error_code ec;
  if (std::filesystem::is_regular_file(spec, ec)) return load_topology_any_format(spec);
  if (std::filesystem::is_directory(spec, ec)) {
    throw InputError(fmt::format("{}: is a directory; expected a YAML file (a tt-umd cluster descriptor or a "
                                 "'format: {}' file)",
                                 spec, kTopologyFormatName));
  }
  const auto user_system = systems_dir() / (spec + ".yaml");
  if (spec.find('/') == std::string::npos && std::filesystem::is_regular_file(user_system, ec)) {
    return load_topology_any_format(user_system.string());
  }
  std::string builtins;
  for (const auto& name : builtin_system_names()) {
    builtins += fmt::format("{}{}", builtins.empty() ? "" : ", ", name);
  }
  throw InputError(fmt::format(
      "system '{}': not a built-in system, not a parametric spec and no such file; expected "
      "one of {}, a spec such as mesh:2x4, torus:8x8/3@bh or ring:8, or the path of a YAML file",
      spec, builtins));
}

}  // namespace cclmesh::topo
