// A timing-only run along --cluster-axis simulates identical groups once (mirror_choice.hpp,
// sim/device/mirrored_groups.hpp) and prints what simulating every group prints: the same time,
// bandwidths, set-up figures and per-link bytes and busy time, from fewer events. Runs it cannot
// mirror (data, a fault, --simulate-every-group, groups that differ) simulate every chip.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cctype>

#include <string>
#include <tuple>
#include <vector>

#include "tools/cclmesh/cli_error.hpp"
#include "tools/cclmesh/fault_spec.hpp"
#include "tools/cclmesh/nccl_metrics.hpp"
#include "tools/cclmesh/op_runner.hpp"

namespace cclmesh::cli {
namespace {

RunOptions axis_run(const char* system, CollectiveOp op, int axis) {
  RunOptions options;
  options.system = system;
  options.op = op;
  options.size_bytes = 1024 * 1024;
  options.no_data = true;
  options.cluster_axis = axis;
  return options;
}

void expect_same_figures(const RunOptions& options, std::size_t groups_mirrored) {
  RunOptions every_group = options;
  every_group.simulate_every_group = true;
  const RunResult full = run_collective(every_group);
  const RunResult mirrored = run_collective(options);
  EXPECT_EQ(full.groups_mirrored, 0u);
  EXPECT_EQ(mirrored.groups_mirrored, groups_mirrored);
  EXPECT_EQ(mirrored.time_us, full.time_us);
  EXPECT_EQ(mirrored.bandwidth.busbw_GBps, full.bandwidth.busbw_GBps);
  EXPECT_EQ(mirrored.bandwidth.linkbw_GBps, full.bandwidth.linkbw_GBps);
  EXPECT_EQ(mirrored.dispatch_us, full.dispatch_us);
  EXPECT_EQ(mirrored.launch_us, full.launch_us);
  EXPECT_EQ(mirrored.algorithm, full.algorithm);
  ASSERT_EQ(mirrored.links_used.size(), full.links_used.size());
  std::int64_t bytes = 0;
  for (std::size_t i = 0; i < full.links_used.size(); ++i) {
    const LinkDirectionUse& m = mirrored.links_used[i];
    const LinkDirectionUse& f = full.links_used[i];
    EXPECT_EQ(std::tie(m.chip, m.channel, m.peer_chip, m.peer_channel, m.payload_bytes, m.busy_ps),
              std::tie(f.chip, f.channel, f.peer_chip, f.peer_channel, f.payload_bytes, f.busy_ps))
        << "link direction " << i;
    EXPECT_EQ(m.utilisation, f.utilisation);
    bytes += f.payload_bytes;
  }
  EXPECT_GT(bytes, 0);
  ASSERT_TRUE(mirrored.sim_events && full.sim_events);
  if (groups_mirrored > 0) {
    EXPECT_LT(*mirrored.sim_events, *full.sim_events);
  } else {
    EXPECT_EQ(*mirrored.sim_events, *full.sim_events);
  }
}

TEST(MirroredRun, GalaxyColumnsAllReduceGivesTheFiguresOfEveryColumnSimulated) {
  expect_same_figures(axis_run("galaxy", CollectiveOp::AllReduce, 0), 7);
}

TEST(MirroredRun, GalaxyRowsReduceScatterOnTwoLinksGivesTheFiguresOfEveryRowSimulated) {
  RunOptions options = axis_run("galaxy", CollectiveOp::ReduceScatter, 1);
  options.links = 2;
  expect_same_figures(options, 3);
}

TEST(MirroredRun, TorusRingsAllGatherGivesTheFiguresOfEveryRingSimulated) {
  expect_same_figures(axis_run("torus:4x4", CollectiveOp::AllGather, 1), 3);
}

TEST(MirroredRun, LegacyGalaxyRowsAllGatherGivesTheFiguresOfEveryRowSimulated) {
  RunOptions options = axis_run("galaxy", CollectiveOp::AllGather, 1);
  options.mode = "legacy";
  expect_same_figures(options, 3);
}

// Every op along both axes of the Galaxy, and the legacy ops, at a small size: the matrix that
// catches a model change making a chip's behaviour depend on something the groups' comparison
// does not see (its id, board, PCIe slot, mesh position).
struct MatrixCase {
  const char* system;
  CollectiveOp op;
  int axis;
  const char* mode;
  std::size_t groups_mirrored;
};

class MirroredRunMatrix : public ::testing::TestWithParam<MatrixCase> {};

TEST_P(MirroredRunMatrix, GivesTheFiguresOfEveryGroupSimulated) {
  const MatrixCase& c = GetParam();
  RunOptions options = axis_run(c.system, c.op, c.axis);
  options.size_bytes = 256 * 1024;
  options.mode = c.mode;
  expect_same_figures(options, c.groups_mirrored);
}

std::vector<MatrixCase> matrix_cases() {
  std::vector<MatrixCase> cases;
  for (const CollectiveOp op : {CollectiveOp::AllGather, CollectiveOp::AllBroadcast, CollectiveOp::ReduceScatter,
                                CollectiveOp::AllReduce, CollectiveOp::Reduce, CollectiveOp::AllToAll,
                                CollectiveOp::Broadcast}) {
    cases.push_back({"galaxy", op, 0, "fabric", 7});
    cases.push_back({"galaxy", op, 1, "fabric", 3});
    cases.push_back({"t3k", op, 0, "fabric", 2});  // columns: two classes of two
  }
  for (const CollectiveOp op : {CollectiveOp::AllGather, CollectiveOp::ReduceScatter, CollectiveOp::AllReduce}) {
    cases.push_back({"galaxy", op, 0, "legacy", 7});
    cases.push_back({"torus:4x4", op, 0, "legacy", 3});
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(EveryOp, MirroredRunMatrix, ::testing::ValuesIn(matrix_cases()),
                         [](const ::testing::TestParamInfo<MatrixCase>& info) {
                           std::string name = fmt::format("{}_{}_axis{}_{}", info.param.system,
                                                          to_string(info.param.op), info.param.axis, info.param.mode);
                           for (char& ch : name) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return name;
                         });

TEST(MirroredRun, T3kRowsAreNotIdenticalSoEveryChipIsSimulated) {
  // The T3K's two rows are not the same sub-system rank for rank (MirroredGroups::why_systems_differ).
  expect_same_figures(axis_run("t3k", CollectiveOp::AllGather, 1), 0);
}

TEST(MirroredRun, DataFaultsAndTheOptionSimulateEveryGroup) {
  RunOptions with_data = axis_run("galaxy", CollectiveOp::AllGather, 1);
  with_data.no_data = false;
  EXPECT_EQ(run_collective(with_data).groups_mirrored, 0u);
  RunOptions with_fault = axis_run("galaxy", CollectiveOp::AllGather, 1);
  add_fault_spec(with_fault.faults, "link-slow:0-1:0.5");
  EXPECT_EQ(run_collective(with_fault).groups_mirrored, 0u);
  RunOptions every_group = axis_run("galaxy", CollectiveOp::AllGather, 1);
  every_group.simulate_every_group = true;
  EXPECT_EQ(run_collective(every_group).groups_mirrored, 0u);
  EXPECT_EQ(run_collective(axis_run("galaxy", CollectiveOp::AllGather, 1)).groups_mirrored, 3u);
}

TEST(MirroredRun, SimulateEveryGroupWhereEveryChipIsSimulatedAnywayIsBadInput) {
  RunOptions with_data = axis_run("galaxy", CollectiveOp::AllGather, 1);
  with_data.no_data = false;
  with_data.simulate_every_group = true;
  try {
    run_collective(with_data);
    FAIL() << "ran";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--simulate-every-group: given for a run with data"), std::string::npos)
        << e.what();
  }
  RunOptions whole_system = axis_run("galaxy", CollectiveOp::AllGather, 1);
  whole_system.cluster_axis.reset();
  whole_system.simulate_every_group = true;
  EXPECT_THROW(run_collective(whole_system), UsageError);
}

}  // namespace
}  // namespace cclmesh::cli
