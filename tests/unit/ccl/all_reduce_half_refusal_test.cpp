// A refusal of one of all_reduce's halves names all_reduce, the op the caller ran, and the half
// (moved from the CLI, which renamed them for its users alone, in session 39).
#include "runtime/ccl/all_reduce/half_refusal.hpp"

#include <gtest/gtest.h>

#include "runtime/ccl/common/ccl_common.hpp"
#include "runtime/ccl/common/reworded_refusal.hpp"
#include "sim/engine/check.hpp"

namespace cclmesh::runtime::ccl::all_reduce {
namespace {

TEST(AllReduceHalfRefusal, NamesAllReduceAndTheHalf) {
  EXPECT_EQ(refusal_in_all_reduce_name("reduce_scatter: the one-shot ring of 32 chips ..."),
            "all_reduce (its reduce_scatter half): the one-shot ring of 32 chips ...");
  EXPECT_EQ(refusal_in_all_reduce_name("all_gather: chip 32 is harvested differently"),
            "all_reduce (its all_gather half): chip 32 is harvested differently");
  // A half's name followed by more of its words keeps them.
  EXPECT_EQ(refusal_in_all_reduce_name("all_gather (ring, fabric mode): x"),
            "all_reduce (its all_gather half): all_gather (ring, fabric mode): x");
}

TEST(AllReduceHalfRefusal, OtherRefusalsAreUnchanged) {
  // all_reduce's own refusals, and words that only begin like a half's name.
  EXPECT_EQ(refusal_in_all_reduce_name("all_reduce: 3 pages do not split"), "all_reduce: 3 pages do not split");
  EXPECT_EQ(refusal_in_all_reduce_name("all_gathered pages"), "all_gathered pages");
  EXPECT_EQ(refusal_in_all_reduce_name("all_gather"), "all_gather");
}

// After words that name all_reduce themselves (a part's groups, all_reduce.cpp validate), the
// refusal does not name it again.
TEST(AllReduceHalfRefusal, AfterAllReduceNameSaysTheHalfAlone) {
  EXPECT_EQ(refusal_after_all_reduce_name("all_reduce (its reduce_scatter half): a slice of 1 page(s)"),
            "its reduce_scatter half: a slice of 1 page(s)");
  EXPECT_EQ(refusal_after_all_reduce_name("all_reduce (its all_gather half): all_gather (ring, fabric mode): x"),
            "its all_gather half: all_gather (ring, fabric mode): x");
  EXPECT_EQ(refusal_after_all_reduce_name("all_reduce: 3 pages do not split"), "3 pages do not split");
  EXPECT_EQ(refusal_after_all_reduce_name("page size 2048 B does not fit a fabric packet of 1024 B"),
            "page size 2048 B does not fit a fabric packet of 1024 B");
}

// A caller tells these refusals by their type (the CLI: a ring run as a line is the fault's, a
// page past the payload the tensor's), so the renamed one keeps it, and the page size.
TEST(AllReduceHalfRefusal, RethrownWithItsType) {
  try {
    try {
      throw PageExceedsPacketError(4416, 4352);
    } catch (const CclParamsError&) {
      rethrow_in_all_reduce_name();
    }
  } catch (const PageExceedsPacketError& e) {
    EXPECT_EQ(e.page_size_bytes(), 4416u);
  }
  try {
    try {
      throw RingRunsAsLineError("all_gather: group 0-1-2 runs as the line 1-2-0 around a down link");
    } catch (const CclParamsError&) {
      rethrow_in_all_reduce_name();
    }
  } catch (const RingRunsAsLineError& e) {
    EXPECT_STREQ(e.what(), "all_reduce (its all_gather half): group 0-1-2 runs as the line 1-2-0 around a down link");
  }
  EXPECT_THROW(
      {
        try {
          throw CclParamsError("reduce_scatter: x");
        } catch (const CclParamsError&) {
          rethrow_in_all_reduce_name();
        }
      },
      CclParamsError);
}

// Outside a catch block there is nothing to reword: an invariant error says so, where a bare
// `throw;` would have ended the process.
TEST(RewordedRefusal, OutsideACatchBlockIsAnInvariantError) {
  EXPECT_THROW(rethrow_reworded("all_reduce: x"), InvariantError);
}

}  // namespace
}  // namespace cclmesh::runtime::ccl::all_reduce
