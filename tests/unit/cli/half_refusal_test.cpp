// A refusal of one of all_reduce's halves names all_reduce, the op the user ran, and the half.
#include "tools/cclmesh/half_refusal.hpp"

#include <gtest/gtest.h>

namespace cclmesh::cli::detail {
namespace {

TEST(HalfRefusal, AllReduceNamesItselfAndTheHalf) {
  EXPECT_EQ(refusal_named_as_op_run(CollectiveOp::AllReduce, "reduce_scatter: the one-shot ring of 32 chips ..."),
            "all_reduce (its reduce_scatter half): the one-shot ring of 32 chips ...");
  EXPECT_EQ(refusal_named_as_op_run(CollectiveOp::AllReduce, "all_gather: chip 32 is harvested differently"),
            "all_reduce (its all_gather half): chip 32 is harvested differently");
  // A half's name followed by more of its words keeps them.
  EXPECT_EQ(refusal_named_as_op_run(CollectiveOp::AllReduce, "all_gather (ring, fabric mode): x"),
            "all_reduce (its all_gather half): all_gather (ring, fabric mode): x");
}

TEST(HalfRefusal, OtherRefusalsAndOpsAreUnchanged) {
  // all_reduce's own refusals, and words that only begin like a half's name.
  EXPECT_EQ(refusal_named_as_op_run(CollectiveOp::AllReduce, "all_reduce: 3 pages do not split"),
            "all_reduce: 3 pages do not split");
  EXPECT_EQ(refusal_named_as_op_run(CollectiveOp::AllReduce, "all_gathered pages"), "all_gathered pages");
  EXPECT_EQ(refusal_named_as_op_run(CollectiveOp::AllReduce, "all_gather"), "all_gather");
  // The op the user ran is the half itself.
  EXPECT_EQ(refusal_named_as_op_run(CollectiveOp::ReduceScatter, "reduce_scatter: a slice of 3 pages"),
            "reduce_scatter: a slice of 3 pages");
  EXPECT_EQ(refusal_named_as_op_run(CollectiveOp::AllGather, "all_gather: x"), "all_gather: x");
}

}  // namespace
}  // namespace cclmesh::cli::detail
