#include "runtime/ccl/all_reduce/half_refusal.hpp"

#include <fmt/format.h>

#include "runtime/ccl/common/ccl_common.hpp"

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

void rethrow_in_all_reduce_name() {
  try {
    throw;
  } catch (const RingRunsAsLineError& e) {
    throw RingRunsAsLineError(refusal_in_all_reduce_name(e.what()));
  } catch (const PageExceedsPacketError& e) {
    throw PageExceedsPacketError(refusal_in_all_reduce_name(e.what()), e.page_size_bytes());
  } catch (const CclParamsError& e) {
    throw CclParamsError(refusal_in_all_reduce_name(e.what()));
  }
}

}  // namespace cclmesh::runtime::ccl::all_reduce
