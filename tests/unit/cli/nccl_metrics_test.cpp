#include "tools/cclmesh/nccl_metrics.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tools/cclmesh/cli_error.hpp"

namespace cclmesh::cli {
namespace {

// The calibration rows of ../shared/calibration/wh_asymptotes.csv must come out of the same
// formulas: (op, n, topology, size, time_us) -> algbw, busbw, linkbw, %line.
struct Row {
  CollectiveOp op;
  std::uint32_t n;
  std::uint32_t directions;
  std::uint64_t size;
  double time_us;
  double algbw, busbw, linkbw, pct;
};

TEST(NcclMetrics, ReproducesTheCalibrationTable) {
  const Row rows[] = {
      {CollectiveOp::AllGather, 2, 1, 4294967296ull, 337895.63, 12.71, 6.36, 6.36, 50.8},
      {CollectiveOp::AllGather, 8, 2, 8589934592ull, 361268.15, 23.78, 20.81, 10.40, 83.2},
      {CollectiveOp::ReduceScatter, 4, 1, 2147483648ull, 153377.66, 14.00, 10.50, 10.50, 84.0},
      {CollectiveOp::AllReduce, 8, 2, 4294967296ull, 418371.10, 10.27, 17.97, 8.98, 71.9},
      {CollectiveOp::AllReduce, 4, 1, 2147483648ull, 291078.89, 7.38, 11.07, 11.07, 88.5},
      {CollectiveOp::AllToAll, 4, 1, 4294967296ull, 374186.66, 11.48, 8.61, 11.48, 91.8},
      {CollectiveOp::AllToAll, 8, 2, 4294967296ull, 522217.40, 8.22, 7.20, 8.22, 65.8},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(to_string(row.op) + " n=" + std::to_string(row.n));
    BandwidthInputs in{row.op, row.size, row.n, row.time_us, 1, row.directions, 12.5};
    BandwidthFigures f = compute_bandwidth(in);
    EXPECT_NEAR(f.algbw_GBps, row.algbw, 0.006);
    EXPECT_NEAR(f.busbw_GBps, row.busbw, 0.006);
    EXPECT_NEAR(f.linkbw_GBps, row.linkbw, 0.006);
    EXPECT_NEAR(f.pct_line_rate, row.pct, 0.06);
  }
}

TEST(NcclMetrics, BusFactors) {
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveOp::AllGather, 8), 7.0 / 8.0);
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveOp::AllReduce, 4), 1.5);
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveOp::Broadcast, 8), 1.0);
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveOp::SendRecv, 2), 1.0);
  // all_broadcast moves an all_gather's bytes (every chip's S / N to the N - 1 others).
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveOp::AllBroadcast, 8), 7.0 / 8.0);
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveOp::AllBroadcast, 2), 0.5);
}

TEST(NcclMetrics, OpNamesRoundTripAndBadNamesAreUsageErrors) {
  for (const char* name :
       {"all_gather", "all_broadcast", "reduce_scatter", "all_reduce", "reduce", "broadcast", "all_to_all", "send_recv"}) {
    EXPECT_EQ(to_string(parse_collective_op(name, "--op")), name);
    EXPECT_NE(collective_op_names().find(name), std::string::npos) << name;
  }
  EXPECT_THROW(parse_collective_op("allgather", "--op"), UsageError);
}

// sweep --op: "all_gather," ran all_gather alone (the trailing empty name was dropped) and
// "all_gather,all_gather" printed its table twice (session 18).
std::string op_list_error(const std::string& list) {
  try {
    parse_collective_op_list(list, "--op");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(NcclMetrics, OpListsKeepTheirOrderAndRefuseEmptyOrRepeatedNames) {
  EXPECT_EQ(parse_collective_op_list("all_gather", "--op"), std::vector<CollectiveOp>{CollectiveOp::AllGather});
  EXPECT_EQ(parse_collective_op_list("reduce_scatter,all_gather,send_recv", "--op"),
            (std::vector<CollectiveOp>{CollectiveOp::ReduceScatter, CollectiveOp::AllGather, CollectiveOp::SendRecv}));
  using ::testing::HasSubstr;
  for (const char* list : {"", "all_gather,", ",all_gather", "all_gather,,reduce_scatter", ","}) {
    EXPECT_THAT(op_list_error(list), HasSubstr("--op: '" + std::string(list) + "' has an empty op name")) << list;
  }
  EXPECT_EQ(op_list_error("all_gather,reduce_scatter,all_gather"),
            "--op: 'all_gather,reduce_scatter,all_gather' names all_gather twice; expected each op once");
  EXPECT_THAT(op_list_error("all_gather,allreduce"), HasSubstr("--op: unknown op 'allreduce'"));
}

}  // namespace
}  // namespace cclmesh::cli
