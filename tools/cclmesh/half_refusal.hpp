#pragma once
// A refusal one of an op's halves gave, named as the op the user ran.

#include <string>
#include <string_view>

#include "tools/cclmesh/nccl_metrics.hpp"

namespace cclmesh::cli::detail {

// all_reduce runs a reduce_scatter and an all_gather (rs-ag), or an all_gather and a local sum
// (the composite), and each half's builder names itself: "reduce_scatter: the one-shot ring of 32
// chips ..." read as if the user had run a reduce_scatter. For all_reduce, a refusal that begins
// with a half's name becomes "all_reduce (its reduce_scatter half): ..."; any other refusal, or
// another op's, is returned as it is.
std::string refusal_named_as_op_run(CollectiveOp op, std::string_view refusal);

}  // namespace cclmesh::cli::detail
