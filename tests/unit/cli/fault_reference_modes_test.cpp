// REFERENCE 11's failure modes run end to end through `cclmesh run` (run_collective): the
// shapes and configurations that hung in tt-metal must complete verified in the simulator or be
// refused with a clear error (11.11), the same op on 1 and on 4 links completes and repeats
// exactly (11.10), the legacy EDM's handshake holds a skewed peer's payload back (11.9), and a
// router's packet rate bounds its bandwidth (11.14).
// What each is, and the tests of the others: docs/faults.md, "Reproduced failure modes".
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "tools/cclmesh/cli_error.hpp"
#include "tools/cclmesh/fault_spec.hpp"
#include "tools/cclmesh/op_runner.hpp"

namespace cclmesh::cli {
namespace {

using ::testing::HasSubstr;

RunOptions run_of(const char* system, CollectiveOp op) {
  RunOptions options;
  options.system = system;
  options.op = op;
  options.size_bytes = 256 * 1024;
  return options;
}

void expect_verified(const RunResult& r, const std::string& what) {
  ASSERT_TRUE(r.verified.has_value()) << what;
  EXPECT_TRUE(*r.verified) << what << ": " << r.mismatch;
  EXPECT_GT(r.time_us, 0.0) << what;
}

// The message of the error a run is refused with, "" when it runs.
std::string refusal_of(const RunOptions& options) {
  try {
    run_collective(options);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

// REFERENCE 11.11: the shapes that hung in tt-metal. Those the model runs complete verified;
// a TILE reduce_scatter whose output's last dim would be < 32 with the second-to-last >= 128
// (#25200) is refused, naming the option and what it expects (ROW_MAJOR, which cuts rows in
// 32 B pieces, runs).
TEST(ReferenceFailureModes, ShapeDependentHangsCompleteVerifiedOrAreRefused) {
  struct Case {
    const char* what;
    const char* system;
    CollectiveOp op;
    std::array<std::uint32_t, 4> shape;
    std::optional<std::uint32_t> dim;  // none for all_reduce
    const char* topology;
    const char* dtype;
    std::optional<int> axis;
  };
  const std::vector<Case> runs{
      {"fp32 all_gather (#7705), ring", "t3k", CollectiveOp::AllGather, {1, 1, 32, 8192}, 3, "ring", "fp32", {}},
      {"fp32 all_gather (#7705), line", "t3k", CollectiveOp::AllGather, {1, 1, 32, 8192}, 3, "line", "fp32", {}},
      {"all_reduce [1,1,8192,32] on 8 devices ([AR1])", "t3k", CollectiveOp::AllReduce, {1, 1, 8192, 32}, {}, "auto",
       "bf16", {}},
      {"reduce_scatter dim 1 on the T3K (#30250)", "t3k", CollectiveOp::ReduceScatter, {1, 8, 32, 256}, 1, "auto",
       "bf16", {}},
      {"reduce_scatter on every row of a mesh at once (#56769)", "galaxy", CollectiveOp::ReduceScatter,
       {1, 1, 32, 8192}, 3, "auto", "bf16", 1},
      {"all_gather on a 1D line fabric (#26929)", "t3k", CollectiveOp::AllGather, {1, 1, 8192, 32}, 2, "line", "bf16",
       {}},
  };
  for (const Case& c : runs) {
    RunOptions options = run_of(c.system, c.op);
    options.shape = c.shape;
    options.dim = c.dim;
    options.topology = c.topology;
    options.dtype = c.dtype;
    options.cluster_axis = c.axis;
    expect_verified(run_collective(options), c.what);
    if (c.op == CollectiveOp::AllReduce) {  // [AR1]'s hangs were in its RS part and its AG part
      options.all_reduce_algo = "rs-ag";
      expect_verified(run_collective(options), std::string(c.what) + ", rs-ag");
    }
  }
  // #25200: 128 x 128 cut 8 ways along dim 3 leaves 16 columns a chip, less than a tile.
  RunOptions narrow = run_of("t3k", CollectiveOp::ReduceScatter);
  narrow.shape = std::array<std::uint32_t, 4>{1, 1, 128, 128};
  narrow.dim = 3;
  EXPECT_THAT(refusal_of(narrow), HasSubstr("--shape: 1,1,128,128 has 4 tiles along dim 3, which does not split into 8 "
                                            "equal slices"));
  // ROW_MAJOR needs no whole tiles: each chip's 16 columns are a 32 B piece of every row, which
  // runs (scattered_rows.hpp) and completes verified.
  narrow.layout = "row_major";
  expect_verified(run_collective(narrow), "ROW_MAJOR 128 x 128 cut 8 ways along dim 3 (#25200)");
}

// REFERENCE 11.10: the multi-link hang (#16634) as a stress test: the same op on 1 and on 4
// links of a Galaxy column, fabric and legacy, completes verified, and the 4-link run repeats
// with the same simulated time and events.
TEST(ReferenceFailureModes, OneAndFourLinksCompleteVerifiedAndRepeatExactly) {
  for (const char* mode : {"fabric", "legacy"}) {
    for (const CollectiveOp op : {CollectiveOp::AllGather, CollectiveOp::ReduceScatter, CollectiveOp::AllReduce}) {
      RunOptions options = run_of("galaxy", op);
      options.mode = mode;
      options.cluster_axis = 0;
      options.topology = "line";
      for (const std::uint32_t links : {1u, 4u}) {
        options.links = links;
        const std::string what = std::string(mode) + " " + std::to_string(static_cast<int>(op)) + " links " +
                                 std::to_string(links);
        const RunResult r = run_collective(options);
        expect_verified(r, what);
        EXPECT_EQ(r.links, links) << what;
        if (links == 4) {
          const RunResult again = run_collective(options);
          EXPECT_EQ(again.time_us, r.time_us) << what;
          EXPECT_EQ(again.sim_events, r.sim_events) << what;
        }
      }
    }
  }
}

// REFERENCE 11.9: a legacy EDM handshakes with its peer before any payload crosses the link,
// so a peer launched late (the op's EDMs launch with the op: up to 40 us of skew here) is not
// written into while it still runs the previous op or has not started: the op completes
// verified, later; so does an all_reduce run as a reduce_scatter then an all_gather, whose
// second part's EDMs launch on links the first part's have just left.
TEST(ReferenceFailureModes, TheLegacyEdmHandshakeHoldsPayloadBackFromASkewedPeer) {
  RunOptions options = run_of("t3k", CollectiveOp::AllGather);
  options.mode = "legacy";
  const RunResult plain = run_collective(options);
  add_fault_spec(options.faults, "skew:40us:7");
  const RunResult skewed = run_collective(options);
  expect_verified(plain, "legacy");
  expect_verified(skewed, "legacy, skewed");
  EXPECT_GT(skewed.time_us, plain.time_us);
  options.op = CollectiveOp::AllReduce;  // legacy all_reduce: a reduce_scatter and an all_gather, each with its EDMs
  options.all_reduce_algo = "rs-ag";
  expect_verified(run_collective(options), "legacy rs-ag all_reduce, skewed");
}

// REFERENCE 11.14, a packet-rate-bound router (#19828): the same all_gather with larger fabric
// packets takes less time, each packet's fixed cost spread over more bytes (N300, 4 MiB,
// timing only; 2 KiB: one page a packet).
TEST(ReferenceFailureModes, APacketRateBoundRouterRunsFasterWithLargerPackets) {
  double previous_us = 0.0;
  for (const std::uint32_t payload : {2048u, 4352u, 6144u}) {
    RunOptions options = run_of("n300", CollectiveOp::AllGather);
    options.size_bytes = 4ull << 20;
    options.no_data = true;
    options.fabric_payload_bytes = payload;
    const RunResult r = run_collective(options);
    if (previous_us > 0.0) {
      EXPECT_LT(r.time_us, previous_us) << payload << " B packets";
    }
    previous_us = r.time_us;
  }
}

}  // namespace
}  // namespace cclmesh::cli
