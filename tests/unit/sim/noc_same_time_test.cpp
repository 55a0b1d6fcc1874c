// A NoC completion that falls at the very time it becomes known (a write's ack on a chip whose
// NoC hops take no time, as on zero-latency what-if hardware): the waiters parked before it,
// and a polling kernel that looked just before it at that same time, must still see it.
// Completions are counted by time (CompletionClock); one that is due at once has no time left
// for an alarm, so the port reports it as it happens (NocPort::resolved).
#include "sim/model/noc.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "sim/engine/delay.hpp"
#include "sim/engine/fiber.hpp"
#include "sim/model/chip.hpp"
#include "tests/unit/sim/sim_test_util.hpp"

namespace cclmesh::sim {
namespace {
using testing::Log;

constexpr CoreCoord kA{1, 1};
constexpr CoreCoord kB{2, 1};

// Wormhole with no NoC latency: a write's ack is back at the requester when it lands.
std::shared_ptr<const ArchSpec> wormhole_without_noc_latency() {
  auto spec = std::make_shared<ArchSpec>(*testing::wormhole());
  NocParams& noc = spec->params.noc;
  noc.router_hop = SimTime::zero();
  noc.niu_to_router = SimTime::zero();
  noc.router_to_niu = SimTime::zero();
  noc.request_setup = SimTime::zero();
  noc.request_issue = SimTime::zero();
  return spec;
}

// When a 64 B write from kA issued at 0 lands at kB (and so is acked, with no latency back).
SimTime landing_time() {
  Engine engine;
  Chip chip(engine, 0, wormhole_without_noc_latency());
  SimTime landed;
  engine.spawn_fiber("writer", [&] {
    chip.noc(NocId::Noc0).write(kA, 0x1000, {kB, 0x2000}, 64);
    chip.l1(kB).wait_word_blocking(0x2000, WordCondition::Equal, 0x5a5a5a5a);
    landed = engine.now();
  });
  chip.l1(kA).write_u32(0x1000, 0x5a5a5a5a);
  engine.run();
  return landed;
}

// Session 32's hang in the ring fabric's start-up ("4 of 4 non-posted writes acked"): the
// barrier parked while the ack's time was unknown; the ack resolved at the landing, due then,
// and arming found everything done, which it read as "nothing outstanding", not as "grant".
TEST(NocSameTime, ABarrierParkedBeforeAnAckDueAtOnceIsGranted) {
  Engine engine;
  Chip chip(engine, 0, wormhole_without_noc_latency());
  Noc& noc = chip.noc(NocId::Noc0);
  Log log;
  engine.spawn_fiber("writer", [&] {
    noc.write(kA, 0x1000, {kB, 0x2000}, 64);
    block_on(noc.write_barrier(kA));
    log.add("acked");
  });
  const RunResult result = engine.run();
  EXPECT_FALSE(result.hang.has_value());
  EXPECT_EQ(log.entries, (std::vector<testing::Stamp>{{landing_time(), "acked"}}));
  EXPECT_EQ(noc.port(kA).counters().nonposted_writes_acked, 1u);
}

// A polling kernel (a fabric router waiting for its receiver's writes) parked for the kind,
// with the ack's time unknown when it parked: woken at the landing.
TEST(NocSameTime, APollingKernelParkedForAnAckDueAtOnceIsWoken) {
  Engine engine;
  Chip chip(engine, 0, wormhole_without_noc_latency());
  Noc& noc = chip.noc(NocId::Noc0);
  Log log;
  ActivityListener listener("poller");
  engine.spawn_fiber("poller", [&] {
    chip.l1(kA).activity().attach(listener);
    noc.write(kA, 0x1000, {kB, 0x2000}, 64);
    listener.wait_blocking(activity_bit(ActivityKind::NocWritesAcked));
    log.add("acked");
  });
  const RunResult result = engine.run();
  EXPECT_FALSE(result.hang.has_value());
  EXPECT_EQ(log.entries, (std::vector<testing::Stamp>{{landing_time(), "acked"}}));
}

// The kernel looks (its poll mark, acks not done) at the landing's time but before the landing
// in event order, then parks at that time after it, asking only for what happened since its
// mark. Asked by time, "done since the mark" is false (done at the mark's own time); the
// completion happened after the look, so the wait must return at once.
TEST(NocSameTime, APollThatLookedJustBeforeAnAckDueAtOnceSeesItAfterwards) {
  const SimTime landed = landing_time();
  Engine engine;
  Chip chip(engine, 0, wormhole_without_noc_latency());
  Noc& noc = chip.noc(NocId::Noc0);
  NocPort& port = noc.port(kA);
  Log log;
  ActivityListener listener("poller");
  bool done_at_look = true;
  // Spawned first: its wake-up at `landed` is scheduled before the landing, so it runs first.
  engine.spawn_fiber("poller", [&] {
    chip.l1(kA).activity().attach(listener);
    block_on(delay(landed));
    listener.mark_poll();
    done_at_look = port.complete(NocBarrierKind::Writes);
    block_on(delay(SimTime::zero()));  // after the landing, at the same time
    listener.wait_blocking(activity_bit(ActivityKind::NocWritesAcked), /*since_mark=*/true);
    log.add("returned");
  });
  engine.spawn_fiber("writer", [&] { noc.write(kA, 0x1000, {kB, 0x2000}, 64); });
  const RunResult result = engine.run();
  EXPECT_FALSE(result.hang.has_value());
  EXPECT_FALSE(done_at_look);
  EXPECT_EQ(log.entries, (std::vector<testing::Stamp>{{landed, "returned"}}));
}

}  // namespace
}  // namespace cclmesh::sim
