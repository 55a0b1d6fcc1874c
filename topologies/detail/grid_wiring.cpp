#include "topologies/detail/grid_wiring.hpp"

#include <fmt/format.h>

#include <array>

#include "topologies/errors.hpp"

namespace cclmesh::topo::detail {
namespace {

struct Direction {
  int dim;
  bool positive;
};

// Compass order: N, E, S, W, U, D.
constexpr std::array<Direction, 6> kCompass{
    {{0, false}, {1, true}, {0, true}, {1, false}, {2, false}, {2, true}}};

}  // namespace

std::int32_t grid_direction_count(const MeshShape& shape) {
  std::int32_t count = 0;
  for (const Direction& dir : kCompass) {
    if (shape.extent(dir.dim) > 1) ++count;
  }
  return count;
}

std::int32_t grid_max_links_per_neighbour(const MeshShape& shape, Arch arch) {
  const auto directions = grid_direction_count(shape);
  if (directions == 0) return 0;
  return arch_traits(arch).eth_channel_count / directions;
}

std::int32_t grid_channel(const MeshShape& shape, int dim, bool positive, std::int32_t k,
                          std::int32_t links_per_neighbour) {
  std::int32_t block = 0;
  for (const Direction& dir : kCompass) {
    if (shape.extent(dir.dim) <= 1) continue;
    if (dir.dim == dim && dir.positive == positive) return block * links_per_neighbour + k;
    ++block;
  }
  CCLMESH_TOPO_CHECK(
      false, fmt::format("no direction {}{} in {}", positive ? '+' : '-', dim, shape.to_string()));
  return 0;
}

std::vector<EthLink> wire_grid(const MeshShape& shape, const std::vector<ChipId>& chip_at_index,
                               Arch arch, std::int32_t links_per_neighbour) {
  CCLMESH_TOPO_CHECK(static_cast<std::int64_t>(chip_at_index.size()) == shape.chip_count(),
                     "one chip per mesh position");
  const auto& traits = arch_traits(arch);
  if (links_per_neighbour < 1 ||
      links_per_neighbour * grid_direction_count(shape) > traits.eth_channel_count) {
    throw InputError(fmt::format(
        "{} links per neighbour on a {} {} mesh need {} ethernet channels per chip; expected "
        "1..{} links ({} has {} channels)",
        links_per_neighbour, shape.to_string(), traits.name,
        links_per_neighbour * grid_direction_count(shape),
        grid_max_links_per_neighbour(shape, arch), traits.name, traits.eth_channel_count));
  }
  std::vector<EthLink> links;
  links.reserve(static_cast<std::size_t>(shape.chip_count() * shape.rank() * links_per_neighbour));
  for (std::int64_t index = 0; index < shape.chip_count(); ++index) {
    const MeshCoord here = shape.coord_at(index);
    for (int dim = 0; dim < shape.rank(); ++dim) {
      const auto extent = shape.extent(dim);
      if (extent <= 1) continue;
      MeshCoord next = here;
      auto& c = next[static_cast<std::size_t>(dim)];
      if (c + 1 < extent) {
        ++c;
      } else if (shape.wraps(dim)) {
        c = 0;
      } else {
        continue;
      }
      const ChipId from = chip_at_index[static_cast<std::size_t>(index)];
      const ChipId to = chip_at_index[static_cast<std::size_t>(shape.linear_index(next))];
      for (std::int32_t k = 0; k < links_per_neighbour; ++k) {
        links.push_back(
            EthLink{EthEndpoint{from, grid_channel(shape, dim, true, k, links_per_neighbour)},
                    EthEndpoint{to, grid_channel(shape, dim, false, k, links_per_neighbour)},
                    traits.link_rate_bytes_per_s, traits.link_latency_ps});
      }
    }
  }
  return links;
}

}  // namespace cclmesh::topo::detail
