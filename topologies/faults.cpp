#include "topologies/faults.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "topologies/errors.hpp"

namespace cclmesh::topo {
namespace {

std::vector<Chip> copy_chips(const Topology& topology) {
  return {topology.chips().begin(), topology.chips().end()};
}

std::vector<EthLink> copy_links(const Topology& topology) {
  return {topology.links().begin(), topology.links().end()};
}

std::size_t require_link(const Topology& topology, EthEndpoint port) {
  const auto link = topology.link_at(port);
  if (!link) {
    throw InputError(fmt::format("topology '{}': port {} has no link; expected a port in use",
                                 topology.name(), to_string(port)));
  }
  return *link;
}

constexpr std::string_view kFaultSyntax =
    "link:CHIP.CH, edge:A-B, chip:CHIP or slow:CHIP.CH*FACTOR";

[[noreturn]] void bad_fault(std::string_view spec, std::string_view problem) {
  throw InputError(fmt::format("fault '{}': {}; expected {}", spec, problem, kFaultSyntax));
}

std::int32_t parse_int(std::string_view spec, std::string_view text) {
  std::int32_t value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || ptr != text.data() + text.size() || value < 0) {
    bad_fault(spec, fmt::format("'{}' is not a non-negative integer", text));
  }
  return value;
}

EthEndpoint parse_port(std::string_view spec, std::string_view text) {
  const auto dot = text.find('.');
  if (dot == std::string_view::npos) bad_fault(spec, fmt::format("port '{}' has no '.'", text));
  return EthEndpoint{parse_int(spec, text.substr(0, dot)), parse_int(spec, text.substr(dot + 1))};
}

}  // namespace

Topology without_link(const Topology& topology, EthEndpoint port) {
  const auto index = require_link(topology, port);
  auto links = copy_links(topology);
  links.erase(links.begin() + static_cast<std::ptrdiff_t>(index));
  return Topology(fmt::format("{} without link {}", topology.name(), to_string(port)),
                  copy_chips(topology), std::move(links), topology.mesh_shape());
}

Topology without_edge(const Topology& topology, ChipId a, ChipId b) {
  const auto edge = topology.edge_between(a, b);
  if (!edge) {
    throw InputError(
        fmt::format("topology '{}': chips {} and {} are not neighbours; expected "
                    "two linked chips",
                    topology.name(), a, b));
  }
  std::vector<EthLink> links;
  for (const EthLink& link : topology.links()) {
    const bool on_edge =
        (link.a.chip == a && link.b.chip == b) || (link.a.chip == b && link.b.chip == a);
    if (!on_edge) links.push_back(link);
  }
  return Topology(fmt::format("{} without edge {}-{}", topology.name(), a, b), copy_chips(topology),
                  std::move(links), topology.mesh_shape());
}

Topology without_chip(const Topology& topology, ChipId chip) {
  topology.chip(chip);  // throws InputError when missing
  std::vector<Chip> chips;
  for (const Chip& c : topology.chips()) {
    if (c.id != chip) chips.push_back(c);
  }
  std::vector<EthLink> links;
  for (const EthLink& link : topology.links()) {
    if (link.a.chip != chip && link.b.chip != chip) links.push_back(link);
  }
  return Topology(fmt::format("{} without chip {}", topology.name(), chip), std::move(chips),
                  std::move(links), topology.mesh_shape());
}

Topology with_link_rate_scaled(const Topology& topology, EthEndpoint port, double factor) {
  if (!std::isfinite(factor) || factor <= 0.0) {
    throw InputError(
        fmt::format("topology '{}': rate factor {} for link {}; expected a finite "
                    "number > 0",
                    topology.name(), factor, to_string(port)));
  }
  const auto index = require_link(topology, port);
  auto links = copy_links(topology);
  const double scaled = std::round(static_cast<double>(links[index].rate_bytes_per_s) * factor);
  if (scaled > 9.0e18) {
    throw InputError(
        fmt::format("topology '{}': rate factor {} for link {} overflows; expected a "
                    "smaller factor",
                    topology.name(), factor, to_string(port)));
  }
  links[index].rate_bytes_per_s = std::max<std::int64_t>(1, static_cast<std::int64_t>(scaled));
  return Topology(
      fmt::format("{} with link {} at {}x rate", topology.name(), to_string(port), factor),
      copy_chips(topology), std::move(links), topology.mesh_shape());
}

Topology apply_fault(const Topology& topology, std::string_view spec) {
  const auto colon = spec.find(':');
  if (colon == std::string_view::npos) bad_fault(spec, "no ':' after the kind");
  const std::string_view kind = spec.substr(0, colon);
  const std::string_view rest = spec.substr(colon + 1);
  if (kind == "link") return without_link(topology, parse_port(spec, rest));
  if (kind == "chip") return without_chip(topology, parse_int(spec, rest));
  if (kind == "edge") {
    const auto dash = rest.find('-');
    if (dash == std::string_view::npos) bad_fault(spec, "no '-' between the two chips");
    return without_edge(topology, parse_int(spec, rest.substr(0, dash)),
                        parse_int(spec, rest.substr(dash + 1)));
  }
  if (kind == "slow") {
    const auto star = rest.find('*');
    if (star == std::string_view::npos) bad_fault(spec, "no '*' before the factor");
    const std::string factor_text(rest.substr(star + 1));
    char* end = nullptr;
    const double factor = std::strtod(factor_text.c_str(), &end);
    if (factor_text.empty() || end != factor_text.c_str() + factor_text.size()) {
      bad_fault(spec, fmt::format("factor '{}' is not a number", factor_text));
    }
    return with_link_rate_scaled(topology, parse_port(spec, rest.substr(0, star)), factor);
  }
  bad_fault(spec, fmt::format("unknown kind '{}'", kind));
}

}  // namespace cclmesh::topo
