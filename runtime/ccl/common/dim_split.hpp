#pragma once
// The check of an op that cuts a tensor into one equal part per rank along a dim (reduce_scatter,
// fabric and legacy, its slices; all_to_all its chunks): REFERENCE 11.15's shape[dim] % N != 0.
// The ops made it line for line alike; in a header of its own so that a change here rebuilds
// only them.

#include <cstdint>
#include <string>

#include "runtime/ccl/common/collective.hpp"

namespace cclmesh::runtime::ccl {

// Checks `spec`'s extent along `dim`, in pages (tiles for TILE dims 2 and 3; elements for ROW_MAJOR
// along dim 3, whose rows the op cuts in pieces, row_pieces.hpp), splits into `n` equal parts.
// Throws CclParamsError "<op>: <dim_name> <dim> is <extent> tiles|pages|elements and does not
// split into <n> equal <parts> (shape[dim] % N != 0, REFERENCE 11.15)": dim_name says which tensor
// ("input dim"), parts what the op calls them ("slices").
void require_dim_splits_evenly(const TensorSpec& spec, std::uint32_t dim, std::uint32_t n, const std::string& op,
                               const std::string& dim_name, const std::string& parts);

}  // namespace cclmesh::runtime::ccl
