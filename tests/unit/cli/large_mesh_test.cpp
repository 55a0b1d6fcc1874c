// Large what-if meshes run to the results they gave before their set-up and the event queue
// were made to scale (docs/performance.md, "Large meshes"): a 16x16 torus (256 chips) and a
// 32x32 one (1024 chips, slow) all_gather along axis 0, timing only, every ring at once. The
// figures were main's at 55b65ea, before those changes: the simulated time and the events must
// not move. Since session 29 they are the routers' with acks sent before data in each pass
// (kernels/fabric_router.cpp; docs/performance.md), the one model change since: the 16x16's
// time 19.667 -> 19.726 us, its events 291 840 -> 292 000; the 32x32's time the same, its
// events 1 997 344 -> 1 997 408.
#include <gtest/gtest.h>

#include <cstdint>

#include "tools/cclmesh/op_runner.hpp"

namespace cclmesh::cli {
namespace {

struct LargeMeshCase {
  const char* system;
  double time_us;
  std::uint64_t sim_events;
  std::uint32_t ring_chips;
};

RunResult run_axis0_all_gather(const char* system) {
  RunOptions options;
  options.system = system;
  options.op = CollectiveOp::AllGather;
  options.size_bytes = 64 * 1024;
  options.no_data = true;
  options.cluster_axis = 0;
  // Every ring simulated: these figures are of the whole mesh's events (mirrored_run_test has
  // the identical rings simulated once).
  options.simulate_every_group = true;
  return run_collective(options);
}

void expect_as_before(const LargeMeshCase& c) {
  const RunResult r = run_axis0_all_gather(c.system);
  EXPECT_EQ(r.n_chips, c.ring_chips);
  EXPECT_EQ(r.topology, "ring");
  EXPECT_DOUBLE_EQ(r.time_us, c.time_us);
  EXPECT_EQ(r.sim_events, c.sim_events);
  // The op moved bytes over the axis-0 wires only: the per-axis fabric of axis 1 is not used.
  std::size_t used = 0;
  for (const LinkDirectionUse& u : r.links_used) {
    if (u.payload_bytes > 0) ++used;
  }
  EXPECT_GT(used, 0u);
  EXPECT_LT(used, r.links_used.size());
}

TEST(LargeMesh, Torus16x16AllGatherAlongAxis0GivesTheSameResultAsBefore) {
  expect_as_before({"torus:16x16", 19.726, 292'000, 16});
}

TEST(SlowLargeMesh, Torus32x32AllGatherAlongAxis0GivesTheSameResultAsBefore) {
  expect_as_before({"torus:32x32", 31.126, 1'997'408, 32});
}

}  // namespace
}  // namespace cclmesh::cli
