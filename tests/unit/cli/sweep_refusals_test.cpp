// A sweep whose every point is refused says each reason once, after the points it applies to.
#include "tools/cclmesh/sweep_refusals.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace cclmesh::cli {
namespace {

const std::vector<std::uint64_t> kSizes = {1024, 2048, 4096, 8192};

std::string below_page(std::uint64_t size) {
  return fmt::format("--size: {} B is less than one 2048 B page per chip on 8 chips; expected at least 16384 B", size);
}

TEST(SweepRefusals, AlikeSaysTheReasonAlone) {
  EXPECT_EQ(every_point_refused({{"all_gather", 1024, "--x: no"}, {"all_gather", 2048, "--x: no"}}, kSizes),
            "--x: no");
}

// Refusals that differ only by the point's own size are one reason, in the last point's words
// (session 39's text), across ops too.
TEST(SweepRefusals, OneReasonInItsOwnSizesIsTheLastPoints) {
  EXPECT_EQ(every_point_refused({{"all_gather", 4096, below_page(4096)},
                                 {"all_gather", 8192, below_page(8192)},
                                 {"reduce_scatter", 4096, below_page(4096)},
                                 {"reduce_scatter", 8192, below_page(8192)}},
                                kSizes),
            "none of the sweep's 4 points can run; the last, reduce_scatter at 8192 B: " + below_page(8192));
}

// A refusal may write the size another way: as a figure derived from it (a core's share of the
// buffer), or twice. Such refusals are still one reason (session 40's review: an L1 sweep of 6
// points listed 6 "reasons", each "N B per core do not fit in L1" with its own N).
TEST(SweepRefusals, OneReasonInFiguresDerivedFromTheSize) {
  const auto per_core = [](std::uint64_t size) {
    return fmt::format("--size/--memory: buffer config: {} B per core do not fit in L1: buffers may use "
                       "0x20200..0x{:x}",
                       size / 64, 0x16e000 - size / 4096);
  };
  const auto twice = [](std::uint64_t size) {
    return fmt::format("--size: {} B makes {} B per chip; expected at most 1024 B per chip, not {} B", size,
                       size / 8, size / 8);
  };
  EXPECT_EQ(every_point_refused({{"all_gather", 4096, per_core(4096)},
                                 {"all_gather", 8192, per_core(8192)},
                                 {"reduce_scatter", 4096, per_core(4096)},
                                 {"reduce_scatter", 8192, per_core(8192)}},
                                kSizes),
            "none of the sweep's 4 points can run; the last, reduce_scatter at 8192 B: " + per_core(8192));
  EXPECT_EQ(every_point_refused({{"all_gather", 2048, twice(2048)},
                                 {"all_gather", 4096, twice(4096)},
                                 {"all_gather", 8192, "--memory: too large"}},
                                kSizes),
            "none of the sweep's 3 points can run, for 2 reasons: (1) all_gather at 2048 B to 4096 B (said for "
            "4096 B): " + twice(4096) + "; (2) all_gather at 8192 B: --memory: too large");
}

// Each reason once, numbered, in the order of its first point; a run of consecutive sizes as a
// range, others apart; a reason of several ops names each; a reason said in its sizes' own words
// says whose; a number that is not the size (a payload of 1024 B at the 1024 B point) does not
// split a reason.
TEST(SweepRefusals, SeveralReasonsEachOnceWithTheirPoints) {
  const std::string payload = "--fabric-payload: 1024 B given for all_gather in legacy mode";
  EXPECT_EQ(every_point_refused({{"all_gather", 1024, payload},
                                 {"all_gather", 2048, payload},
                                 {"all_gather", 4096, "--memory: too large"},
                                 {"all_gather", 8192, payload},
                                 {"reduce_scatter", 1024, below_page(1024)},
                                 {"reduce_scatter", 2048, below_page(2048)},
                                 {"reduce_scatter", 4096, "--memory: too large"},
                                 {"reduce_scatter", 8192, "--memory: too large"}},
                                kSizes),
            "none of the sweep's 8 points can run, for 3 reasons: (1) all_gather at 1024 B to 2048 B, 8192 B: " +
                payload + "; (2) all_gather at 4096 B, reduce_scatter at 4096 B to 8192 B: --memory: too large; (3) "
                "reduce_scatter at 1024 B to 2048 B (said for 2048 B): " + below_page(2048));
}

}  // namespace
}  // namespace cclmesh::cli
