#include "topologies/parametric.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <numeric>
#include <span>

#include "topologies/detail/grid_wiring.hpp"
#include "topologies/errors.hpp"

namespace cclmesh::topo {
namespace {

constexpr std::string_view kSyntax =
    "mesh:RxC, mesh:RxCxD, torus:RxC, torus:RxCxD or ring:N, optionally followed by /L and "
    "@wh or @bh";

[[noreturn]] void fail(std::string_view spec, const std::string& problem,
                       std::string_view expected = kSyntax) {
  throw InputError(fmt::format("system spec '{}': {}; expected {}", spec, problem, expected));
}

std::int32_t parse_positive(std::string_view spec, std::string_view what, std::string_view text) {
  std::int32_t value = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc{} || ptr != end || value < 1) {
    fail(spec, fmt::format("{} '{}' is not a positive integer", what, text));
  }
  return value;
}

std::vector<std::int32_t> parse_extents(std::string_view spec, std::string_view text) {
  std::vector<std::int32_t> extents;
  std::size_t start = 0;
  while (true) {
    const auto x = text.find('x', start);
    extents.push_back(parse_positive(spec, "size", text.substr(start, x - start)));
    if (x == std::string_view::npos) break;
    start = x + 1;
  }
  return extents;
}

}  // namespace

std::string ParametricSpec::to_string() const {
  std::string text;
  if (kind == ParametricKind::Ring) {
    text = fmt::format("ring:{}", shape.extent(1));
  } else {
    text = kind == ParametricKind::Torus ? "torus:" : "mesh:";
    for (int d = 0; d < shape.rank(); ++d) {
      text += fmt::format("{}{}", d == 0 ? "" : "x", shape.extent(d));
    }
  }
  return fmt::format("{}/{}@{}", text, links_per_neighbour, arch == Arch::Wormhole ? "wh" : "bh");
}

bool looks_parametric(std::string_view text) {
  return text.starts_with("mesh:") || text.starts_with("torus:") || text.starts_with("ring:");
}

ParametricSpec parse_parametric_spec(std::string_view text) {
  const auto colon = text.find(':');
  if (colon == std::string_view::npos) fail(text, "no ':' after the kind");
  const std::string_view kind = text.substr(0, colon);
  std::string_view rest = text.substr(colon + 1);

  ParametricSpec spec;
  if (const auto at = rest.find('@'); at != std::string_view::npos) {
    const std::string_view arch_text = rest.substr(at + 1);
    const auto arch = parse_arch(arch_text);
    if (!arch) fail(text, fmt::format("unknown architecture '{}'", arch_text));
    spec.arch = *arch;
    rest = rest.substr(0, at);
  }
  std::optional<std::int32_t> links;
  if (const auto slash = rest.find('/'); slash != std::string_view::npos) {
    links = parse_positive(text, "links per neighbour", rest.substr(slash + 1));
    rest = rest.substr(0, slash);
  }

  std::vector<std::int32_t> extents = parse_extents(text, rest);
  std::vector<bool> wraps(extents.size(), false);
  if (kind == "mesh" || kind == "torus") {
    if (extents.size() < 2 || extents.size() > 3) {
      fail(text, fmt::format("a {} needs 2 or 3 sizes, got {}", kind, extents.size()));
    }
    std::fill(wraps.begin(), wraps.end(), kind == "torus");
    spec.kind = kind == "torus" ? ParametricKind::Torus : ParametricKind::Mesh;
  } else if (kind == "ring") {
    if (extents.size() != 1) fail(text, fmt::format("a ring needs 1 size, got {}", extents.size()));
    extents = {1, extents[0]};
    wraps = {false, true};
    spec.kind = ParametricKind::Ring;
  } else {
    fail(text, fmt::format("unknown kind '{}'", kind));
  }
  try {
    const std::array<bool, kMaxMeshRank> wrap_flags{wraps[0], wraps[1],
                                                    wraps.size() > 2 && wraps[2]};
    spec.shape = MeshShape(extents, std::span<const bool>(wrap_flags.data(), wraps.size()));
  } catch (const InputError& e) {
    throw InputError(fmt::format("system spec '{}': {}", text, e.what()));
  }
  if (spec.shape.chip_count() > kMaxParametricChips) {
    fail(text, fmt::format("{} chips", spec.shape.chip_count()),
         fmt::format("at most {} chips (e.g. mesh:128x128)", kMaxParametricChips));
  }

  const auto max_links = detail::grid_max_links_per_neighbour(spec.shape, spec.arch);
  if (links) {
    if (max_links > 0 && *links > max_links) {
      fail(text,
           fmt::format("{} links per neighbour need {} channels per chip but {} has {}", *links,
                       *links * detail::grid_direction_count(spec.shape), arch_name(spec.arch),
                       arch_traits(spec.arch).eth_channel_count),
           fmt::format("at most {} links per neighbour on this shape", max_links));
    }
    spec.links_per_neighbour = *links;
  } else {
    spec.links_per_neighbour =
        std::max(1, std::min(arch_traits(spec.arch).links_per_direction, max_links));
  }
  return spec;
}

Topology build_parametric(const ParametricSpec& spec) {
  std::vector<ChipId> ids(static_cast<std::size_t>(spec.shape.chip_count()));
  std::iota(ids.begin(), ids.end(), 0);
  std::vector<Chip> chips;
  chips.reserve(ids.size());
  for (const ChipId id : ids) {
    Chip chip;
    chip.id = id;
    chip.arch = spec.arch;
    chip.pci_device = id;
    chip.mesh_coord = spec.shape.coord_at(id);
    chips.push_back(chip);
  }
  auto links = detail::wire_grid(spec.shape, ids, spec.arch, spec.links_per_neighbour);
  return Topology(spec.to_string(), std::move(chips), std::move(links), spec.shape);
}

}  // namespace cclmesh::topo
