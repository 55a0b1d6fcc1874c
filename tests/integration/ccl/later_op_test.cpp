// An op on a long-lived device (a served one, a sweep --device) against the same op on a fresh
// device (docs/sim_device.md, "What persists between ops"). Until session 17 a reduce_scatter
// 1 MiB on a T3K ring took 125.03 us fresh, 125.77 and 131.19 us as the second and third in a
// row and 126.68 us after an all_gather: the routers count their idle passes in whole cycles
// of the chips' free-running cycle counter, so an op started a fraction of a cycle later saw
// other counts, other passes served other sender channels first, and the packets left in
// another order. Programs now launch on the counter's grid, and an op sees what it sees on a
// fresh device, but for the state the persistent routers keep on purpose: their idle passes
// towards run_routing() (REFERENCE 1.4's SWITCH_INTERVAL), tested last.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "kernels/api/dataflow_api.hpp"
#include "kernels/common/idle_passes.hpp"
#include "runtime/ccl/all_gather/all_gather.hpp"
#include "runtime/ccl/reduce_scatter/reduce_scatter.hpp"
#include "tests/integration/ccl/ccl_runners.hpp"
#include "topologies/system_loader.hpp"

namespace {
// Args: cycles. An op that does nothing but take time, on one core, away from the fabric.
void idle_for_cycles() { spend_cycles(get_arg_val<uint32_t>(0)); }
}  // namespace

namespace cclmesh::ccltest {
namespace {

namespace rs = runtime::ccl::reduce_scatter;
namespace ag = runtime::ccl::all_gather;

sim::device::SimMeshDeviceOptions t3k_ring_options() {
  sim::device::SimMeshDeviceOptions options;
  options.fabric.mode = FabricMode::Ring;
  return options;
}

std::unique_ptr<sim::device::SimMeshDevice> t3k_ring(const sim::device::SimMeshDeviceOptions& options = t3k_ring_options()) {
  auto device = std::make_unique<sim::device::SimMeshDevice>(topo::load_system("t3k"), options);
  device->register_kernel("idle_for_cycles", &idle_for_cycles, false);
  return device;
}

// What `cclmesh run --op reduce_scatter --size 1MiB --rs-ring-algorithm chain --workers-per-link 4`
// runs (121.66 us; 125.03 us before session 29's acks-first routers). The chain, Auto's choice until
// session 33, pinned: the router context switch below falls on its critical path (the half-way ring,
// Auto's choice now, 80.36 us with 4 workers, has slack where the switch falls and takes the fresh
// time with it).
void reduce_scatter_1mib(sim::device::SimMeshDevice& device) {
  rs::Params p;
  p.input = tile({1, 1, 32, 16384});
  p.dim = 3;
  p.topology = CclTopology::Ring;
  p.ring_algorithm = rs::RingAlgorithm::Chain;
  // 4 workers per link, the size rule's choice here until session 36 (now 6): the figures above.
  p.workers_per_link = 4;
  EXPECT_TRUE(run_reduce_scatter(device, p, {}, {}).verified);
}

// What `cclmesh run --op all_gather --size 1MiB` runs (54.22 us).
void all_gather_1mib(sim::device::SimMeshDevice& device) {
  ag::Params p;
  p.input = tile({1, 1, 32, 2048});
  p.dim = 3;
  p.topology = CclTopology::Ring;
  EXPECT_TRUE(run_all_gather(device, p, {}, {}).verified);
}

void idle(sim::device::SimMeshDevice& device, std::uint32_t cycles) {
  runtime::KernelSpec kernel;
  kernel.kernel = "idle_for_cycles";
  kernel.cores = {{{0, 0}, {0, 0}}};
  kernel.common_runtime_args = {cycles};
  runtime::MeshWorkload workload;
  workload.name = "idle";
  workload.programs[0].kernels.push_back(kernel);
  device.enqueue_workload(workload);
  device.finish();
}

// Runs every event left (routers idle), then moves the clock on by `ps`, with nothing to do.
void move_clock(sim::device::SimMeshDevice& device, std::int64_t ps) {
  device.drain();
  device.engine().schedule_in(sim::SimTime::from_ps(ps), [] {});
  device.drain();
}

// One op's kernels, each start and end counted from the op's first start, and its events: from
// a drained device to the device drained again, so that neither the fabric start-up's last
// events nor an earlier op's last packets count (a drain moves the clock by any number of
// picoseconds, which the op must not see either).
struct OpProfile {
  std::vector<runtime::KernelProfile> kernels;
  std::uint64_t events = 0;
  std::uint64_t span_ns = 0;
};

template <class RunOp>
OpProfile profile_of(sim::device::SimMeshDevice& device, RunOp run_op) {
  device.drain();
  const std::size_t begin = device.profile().size();
  const std::uint64_t events_before = device.stats().events_executed;
  run_op(device);
  device.drain();
  OpProfile op;
  op.events = device.stats().events_executed - events_before;
  const std::vector<runtime::KernelProfile> all = device.profile();
  op.kernels.assign(all.begin() + static_cast<std::ptrdiff_t>(begin), all.end());
  EXPECT_FALSE(op.kernels.empty());
  std::uint64_t first = UINT64_MAX;
  std::uint64_t last = 0;
  for (const auto& k : op.kernels) {
    first = std::min(first, k.start_ns);
    last = std::max(last, k.end_ns);
  }
  for (auto& k : op.kernels) {
    k.start_ns -= first;
    k.end_ns -= first;
    if (k.ready_ns) *k.ready_ns -= first;
  }
  op.span_ns = last - first;
  return op;
}

void expect_same_op(const OpProfile& later, const OpProfile& fresh) {
  EXPECT_EQ(later.span_ns, fresh.span_ns);
  EXPECT_EQ(later.events, fresh.events);
  ASSERT_EQ(later.kernels.size(), fresh.kernels.size());
  for (std::size_t i = 0; i < fresh.kernels.size(); ++i) {
    const runtime::KernelProfile& l = later.kernels[i];
    const runtime::KernelProfile& f = fresh.kernels[i];
    if (!(l == f)) {  // the first one only: the rest follow from it
      ADD_FAILURE() << "kernel " << i << " (" << f.kernel << " on chip " << f.chip << "): " << l.start_ns << ".."
                    << l.end_ns << " ns into the op, on a fresh device " << f.start_ns << ".." << f.end_ns;
      return;
    }
  }
}

OpProfile fresh_reduce_scatter() {
  auto fresh = t3k_ring();
  return profile_of(*fresh, reduce_scatter_1mib);
}

TEST(LaterOp, RunsAsOnAFreshDeviceAfterOtherOps) {
  const OpProfile fresh = fresh_reduce_scatter();
  // The docs' 125.03 us until session 29's acks-first routers; 121.661 until session 37, whose
  // fitted chunk (1 packet: the 8-page runs) also made the reduced CB 8 pages instead of 64
  // (124.798); 121.661 again since session 38's reduced CB of two chunks (16 pages).
  EXPECT_EQ(fresh.span_ns, 121'661u);
  auto device = t3k_ring();
  for (int i = 0; i < 3; ++i) {
    SCOPED_TRACE("reduce_scatter number " + std::to_string(i + 1) + " on the device");
    expect_same_op(profile_of(*device, reduce_scatter_1mib), fresh);
  }
  all_gather_1mib(*device);
  SCOPED_TRACE("reduce_scatter after an all_gather");
  expect_same_op(profile_of(*device, reduce_scatter_1mib), fresh);
}

// The clock moved on by a fraction of the cycle counter's grid (1 ns on a Wormhole) before the
// op: before programs launched on the grid, a fresh device drained and moved on by 1, 100, 267,
// 500, 878 or 999 ps ran it in 128.21, 128.46, 126.40, 126.32, 126.81 and 128.21 us.
TEST(LaterOp, RunsAsOnAFreshDeviceAfterTheClockMovedAFractionOfACycle) {
  const OpProfile fresh = fresh_reduce_scatter();
  for (std::int64_t ps : {1, 100, 267, 500, 878, 999}) {
    SCOPED_TRACE("clock moved on by " + std::to_string(ps) + " ps");
    auto device = t3k_ring();
    move_clock(*device, ps);
    expect_same_op(profile_of(*device, reduce_scatter_1mib), fresh);
  }
}

// What the routers carry from op to op on purpose: every SWITCH_INTERVAL idle passes of its
// loop (200 000 x 64 cycles = 12.8 ms of parked idling) a router calls run_routing(), 100 cycles
// (KernelCosts), whatever runs then, as on hardware (kernels/common/idle_passes.hpp). On a
// device idle for all but 10 us of that, the call falls inside the next op, which then takes
// another time than on a fresh device (126.75 us before session 29's acks-first routers, from
// 125.03); with run_routing() free it takes the fresh device's again, so the call is the whole
// difference.
TEST(LaterOp, TakesAnotherTimeWhenARouterContextSwitchFallsInsideIt) {
  const OpProfile fresh = fresh_reduce_scatter();
  const sim::device::SimMeshDeviceOptions options = t3k_ring_options();
  const std::uint64_t switch_cycles = std::uint64_t{options.fabric.switch_interval} * kernels::kEriscIdlePassCycles;
  const auto almost_due = static_cast<std::uint32_t>(switch_cycles - 10'000);

  auto device = t3k_ring(options);
  idle(*device, almost_due);
  const OpProfile switched = profile_of(*device, reduce_scatter_1mib);
  EXPECT_NE(switched.span_ns, fresh.span_ns);

  sim::device::SimMeshDeviceOptions free_switch = options;
  free_switch.costs.run_routing_cycles = 0;
  auto free_device = t3k_ring(free_switch);
  idle(*free_device, almost_due);
  const OpProfile not_switched = profile_of(*free_device, reduce_scatter_1mib);
  EXPECT_EQ(not_switched.span_ns, fresh.span_ns);
}

}  // namespace
}  // namespace cclmesh::ccltest
