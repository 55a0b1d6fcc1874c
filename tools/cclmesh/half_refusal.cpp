#include "tools/cclmesh/half_refusal.hpp"

#include <fmt/format.h>

namespace cclmesh::cli::detail {

std::string refusal_named_as_op_run(CollectiveOp op, std::string_view refusal) {
  if (op != CollectiveOp::AllReduce) return std::string(refusal);
  for (const CollectiveOp half : {CollectiveOp::ReduceScatter, CollectiveOp::AllGather}) {
    const std::string name = to_string(half);
    if (!refusal.starts_with(name) || refusal.size() == name.size()) continue;
    const std::string named = fmt::format("{} (its {} half)", to_string(op), name);
    const std::string_view rest = refusal.substr(name.size());
    // "reduce_scatter: X" keeps its X; "all_gather (ring, ...) X" or "reduce_scatter reference: X"
    // (no colon right after the name) keeps the half's words whole.
    if (rest.front() == ':') return named + std::string(rest);
    if (rest.front() == ' ') return fmt::format("{}: {}", named, refusal);
  }
  return std::string(refusal);
}

}  // namespace cclmesh::cli::detail
