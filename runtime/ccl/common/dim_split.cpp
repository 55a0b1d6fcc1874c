#include "runtime/ccl/common/dim_split.hpp"

#include <fmt/format.h>

#include "runtime/ccl/common/ccl_common.hpp"
#include "runtime/ccl/common/row_pieces.hpp"

namespace cclmesh::runtime::ccl {

void require_dim_splits_evenly(const TensorSpec& spec, std::uint32_t dim, std::uint32_t n, const std::string& op,
                               const std::string& dim_name, const std::string& parts) {
  const bool in_elements = cuts_rows(spec, dim);
  const std::uint32_t extent = in_elements ? spec.shape[3] : dim_of(shape_in_pages(spec), dim);
  if (extent % n == 0) return;
  const char* unit = in_elements ? "elements" : spec.layout == Layout::Tile && dim >= 2 ? "tiles" : "pages";
  throw CclParamsError(fmt::format("{}: {} {} is {} {} and does not split into {} equal {} (shape[dim] % N != 0, "
                                   "REFERENCE 11.15)",
                                   op, dim_name, dim, extent, unit, n, parts));
}

}  // namespace cclmesh::runtime::ccl
