#include "tools/cclmesh/disconnected_system_hint.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstddef>
#include <vector>

#include "topologies/embedding.hpp"
#include "topologies/errors.hpp"
#include "topologies/routing.hpp"

namespace cclmesh::cli::detail {

std::string disconnected_system_hint(const RunOptions& options, const topo::Topology& topology) {
  if (!options.chips.empty() || options.cluster_axis) return "";
  const std::vector<std::vector<topo::ChipId>> groups = topo::connected_components(topology);
  if (groups.size() < 2) return "";
  std::size_t largest = 0;
  for (std::size_t i = 1; i < groups.size(); ++i) {
    if (groups[i].size() > groups[largest].size()) largest = i;
  }
  std::string listed;
  for (std::size_t i = 0; i < groups.size() && i < 4; ++i) {
    listed += fmt::format("{}{{{}}}", i == 0 ? "" : ", ", fmt::join(groups[i], ","));
  }
  if (groups.size() > 4) listed += fmt::format(" and {} more", groups.size() - 4);
  std::string example;
  if (groups[largest].size() >= 2) {
    try {
      example = fmt::format(", e.g. --chips {}", fmt::join(topo::find_line(topology, groups[largest]).chips, ","));
    } catch (const topo::InputError&) {
      // No line through the group (a star of chips): say --chips without an example.
    }
  }
  return fmt::format("; the system is {} unconnected groups of chips ({}): run on one of them with --chips{}",
                     groups.size(), listed, example);
}

}  // namespace cclmesh::cli::detail
