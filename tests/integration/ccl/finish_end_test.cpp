// Where finish() ends its run. Without a watchdog the engine no longer asks "programs
// outstanding?" before every event: the end of the last program stops the run after its event
// (SimMeshDevice::program_done). With a watchdog armed the predicate is still asked before every
// event (the watchdogs' own tests sit in it). Both must end each finish() at the same event: the
// same clock, event count and trace hash, op after op on one device, and a finish() with nothing
// enqueued runs no event at all.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/ccl/all_gather/all_gather.hpp"
#include "tests/integration/ccl/ccl_runners.hpp"
#include "topologies/system_loader.hpp"

namespace cclmesh::ccltest {
namespace {

namespace ag = runtime::ccl::all_gather;

struct AfterFinish {
  sim::SimTime now;
  std::uint64_t events = 0;
  std::uint64_t trace_hash = 0;
  std::size_t profile_entries = 0;
  bool operator==(const AfterFinish&) const = default;
};

AfterFinish after_finish(const sim::device::SimMeshDevice& device) {
  return {device.now(), device.stats().events_executed, device.trace_hash(), device.profile().size()};
}

// Two all_gathers of different sizes, one finish() each, then an empty finish(): what the
// device looks like after each of the three.
std::vector<AfterFinish> two_ops_and_an_empty_finish(const sim::device::SimMeshDeviceOptions& options) {
  sim::device::SimMeshDevice device(topo::load_system("t3k"), options);
  std::vector<AfterFinish> seen;
  for (std::uint32_t width : {2048u, 512u}) {
    ag::Params p;
    p.input = tile({1, 1, 32, width});
    p.dim = 3;
    p.topology = CclTopology::Ring;
    EXPECT_TRUE(run_all_gather(device, p, {}, {}).verified);
    seen.push_back(after_finish(device));
  }
  device.finish();
  seen.push_back(after_finish(device));
  return seen;
}

sim::device::SimMeshDeviceOptions ring() {
  sim::device::SimMeshDeviceOptions options;
  options.fabric.mode = FabricMode::Ring;
  return options;
}

TEST(FinishEnd, TheLastProgramStopsTheRunWhereTheAskedPredicateWould) {
  const std::vector<AfterFinish> stopped = two_ops_and_an_empty_finish(ring());
  sim::device::SimMeshDeviceOptions watched = ring();
  watched.max_wall_seconds = 1.0e6;  // armed, never reached: the predicate is asked per event
  const std::vector<AfterFinish> asked = two_ops_and_an_empty_finish(watched);
  ASSERT_EQ(stopped.size(), 3u);
  ASSERT_EQ(asked.size(), 3u);
  for (std::size_t i = 0; i < stopped.size(); ++i) {
    EXPECT_EQ(stopped[i].now, asked[i].now) << "finish " << i;
    EXPECT_EQ(stopped[i].events, asked[i].events) << "finish " << i;
    EXPECT_EQ(stopped[i].trace_hash, asked[i].trace_hash) << "finish " << i;
    EXPECT_EQ(stopped[i].profile_entries, asked[i].profile_entries) << "finish " << i;
  }
  EXPECT_LT(stopped[0].events, stopped[1].events);  // the second op ran events of its own
  EXPECT_EQ(stopped[2], stopped[1]);                // nothing enqueued: no event, the clock stays
}

}  // namespace
}  // namespace cclmesh::ccltest
