#include "runtime/ccl/all_reduce/half_refusal.hpp"

#include <fmt/format.h>

#include "runtime/ccl/common/ccl_common.hpp"
#include "runtime/ccl/common/reworded_refusal.hpp"

namespace cclmesh::runtime::ccl::all_reduce {

std::string refusal_in_all_reduce_name(std::string_view refusal) {
  for (const std::string_view half : {std::string_view("reduce_scatter"), std::string_view("all_gather")}) {
    if (!refusal.starts_with(half) || refusal.size() == half.size()) continue;
    const std::string named = fmt::format("all_reduce (its {} half)", half);
    const std::string_view rest = refusal.substr(half.size());
    // "reduce_scatter: X" keeps its X; "all_gather (ring, ...) X" or "reduce_scatter reference: X"
    // (no colon right after the name) keeps the half's words whole.
    if (rest.front() == ':') return named + std::string(rest);
    if (rest.front() == ' ') return fmt::format("{}: {}", named, refusal);
  }
  return std::string(refusal);
}

std::string refusal_after_all_reduce_name(std::string_view refusal) {
  constexpr std::string_view kNamed = "all_reduce: ";
  constexpr std::string_view kHalfNamed = "all_reduce (its ";
  if (refusal.starts_with(kNamed)) return std::string(refusal.substr(kNamed.size()));
  if (refusal.starts_with(kHalfNamed)) {
    // "all_reduce (its reduce_scatter half): X" -> "its reduce_scatter half: X"
    const std::string_view rest = refusal.substr(kHalfNamed.size());
    const std::size_t close = rest.find("):");
    if (close != std::string_view::npos) {
      return fmt::format("its {}{}", rest.substr(0, close), rest.substr(close + 1));
    }
  }
  return std::string(refusal);
}

void rethrow_in_all_reduce_name() {
  try {
    throw;
  } catch (const CclParamsError& e) {
    rethrow_reworded(refusal_in_all_reduce_name(e.what()));
  }
}

}  // namespace cclmesh::runtime::ccl::all_reduce
