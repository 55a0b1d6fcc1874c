// `cclmesh run` prepares its op twice, on the planning device and on the simulated device, and
// the second preparation takes the first's workloads (tools/cclmesh/workload_cache.hpp). A miss
// changes no result, only the host time (a 32x32 torus's build is 7% of its run), so nothing but
// this test would notice one: every op, with data and timing only, in both modes and on the
// shapes that plan differently (a line, an axis, a chip subset, two chips), builds once.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tools/cclmesh/op_runner.hpp"

namespace cclmesh::cli {
namespace {

struct BuildCase {
  std::string name;
  RunOptions options;
};

RunOptions small(CollectiveOp op, const std::string& system = "t3k") {
  RunOptions o;
  o.system = system;
  o.op = op;
  o.size_bytes = 64 * 1024;
  return o;
}

std::vector<BuildCase> cases() {
  std::vector<BuildCase> all;
  const std::vector<std::pair<std::string, CollectiveOp>> ops = {
      {"all_gather", CollectiveOp::AllGather},       {"all_broadcast", CollectiveOp::AllBroadcast},
      {"reduce_scatter", CollectiveOp::ReduceScatter}, {"all_reduce", CollectiveOp::AllReduce},
      {"reduce", CollectiveOp::Reduce},               {"broadcast", CollectiveOp::Broadcast},
      {"all_to_all", CollectiveOp::AllToAll},         {"send_recv", CollectiveOp::SendRecv}};
  for (const auto& [name, op] : ops) {
    all.push_back({name + " with data", small(op)});
    RunOptions timing = small(op);
    timing.no_data = true;
    all.push_back({name + " timing only", timing});
  }
  RunOptions legacy = small(CollectiveOp::AllGather);
  legacy.mode = "legacy";
  all.push_back({"legacy all_gather", legacy});
  RunOptions legacy_rs = small(CollectiveOp::ReduceScatter);
  legacy_rs.mode = "legacy";
  all.push_back({"legacy reduce_scatter", legacy_rs});
  RunOptions line = small(CollectiveOp::AllReduce);
  line.topology = "line";
  line.all_reduce_algo = "rs-ag";
  line.size_bytes = 1 << 20;
  all.push_back({"all_reduce rs-ag on a line", line});
  RunOptions axis = small(CollectiveOp::AllGather, "galaxy");
  axis.cluster_axis = 1;
  axis.no_data = true;
  all.push_back({"galaxy all_gather along axis 1", axis});
  RunOptions chips = small(CollectiveOp::ReduceScatter);
  chips.chips = {0, 1, 3, 2};
  all.push_back({"reduce_scatter on t3k chips 0,1,3,2", chips});
  RunOptions n300 = small(CollectiveOp::AllGather, "n300");
  all.push_back({"n300 all_gather", n300});
  return all;
}

TEST(RunBuildsOpOnce, TheSimulatedDeviceTakesThePlanningDevicesBuild) {
  for (const BuildCase& c : cases()) {
    SCOPED_TRACE(c.name);
    const RunResult r = run_collective(c.options);
    EXPECT_EQ(r.op_preparations, 2u);
    EXPECT_EQ(r.op_builds, 1u);
    // The run did run: the reuse is not a run that skipped its op.
    EXPECT_GT(r.time_us, 0.0);
    if (!c.options.no_data) {
      EXPECT_EQ(r.verified, true);
    }
  }
}

}  // namespace
}  // namespace cclmesh::cli
