// ShardRequest's views of its grid: the core count, the text the table prints, and the grid
// as one rectangle from (0,0) where it is one.
#include <fmt/format.h>

#include "tools/cclmesh/run_options.hpp"

namespace cclmesh::cli {

std::uint64_t ShardRequest::cores() const {
  std::uint64_t total = 0;
  for (const CoreRangeRequest& r : grid) total += std::uint64_t{r.x1 - r.x0 + 1} * (r.y1 - r.y0 + 1);
  return total;
}

std::optional<std::array<std::uint32_t, 2>> ShardRequest::origin_rectangle() const {
  if (grid.size() != 1 || grid.front().x0 != 0 || grid.front().y0 != 0) return std::nullopt;
  return std::array<std::uint32_t, 2>{grid.front().x1 + 1, grid.front().y1 + 1};
}

std::string ShardRequest::grid_text() const {
  if (const auto rectangle = origin_rectangle()) return fmt::format("{}x{}", (*rectangle)[0], (*rectangle)[1]);
  std::string text;
  for (const CoreRangeRequest& r : grid) {
    text += fmt::format("{}{},{}-{},{}", text.empty() ? "" : "+", r.x0, r.y0, r.x1, r.y1);
  }
  return text;
}

}  // namespace cclmesh::cli
