// The pass counters of a polling ERISC loop kept by parked time (kernels/common/idle_passes.hpp):
// parked cycles become idle passes, which move the sender-channel parity and bring
// run_routing() due every switch interval; within an idle stretch the counters depend only on
// the time parked, not on how many wake-ups without progress came between.
#include <gtest/gtest.h>

#include <cstdint>

#include "kernels/common/idle_passes.hpp"

namespace {

using cclmesh::kernels::IdlePassCounter;
using cclmesh::kernels::kEriscIdlePassCycles;

// Two idle passes (one per sender channel), as the router runs before it parks.
void two_idle_passes(IdlePassCounter& c) {
  for (int i = 0; i < 2; ++i) {
    c.idle_pass();
    c.next_pass();
  }
}

TEST(IdlePassCounter, ParkedCyclesCountAsWholeIdlePasses) {
  IdlePassCounter c;
  two_idle_passes(c);
  c.parked(kEriscIdlePassCycles - 1);  // not one whole pass
  EXPECT_EQ(c.pass(), 2u);
  EXPECT_EQ(c.idle_since_switch(), 2u);
  c.parked(2 * kEriscIdlePassCycles + 5);  // the same stretch: 3 passes in all now
  EXPECT_EQ(c.pass(), 5u);                 // odd: the other sender channel is served next
  EXPECT_EQ(c.idle_since_switch(), 5u);
}

TEST(IdlePassCounter, WakeUpsWithoutProgressDoNotMoveTheCounters) {
  IdlePassCounter woken_often;
  IdlePassCounter woken_once;
  two_idle_passes(woken_often);
  two_idle_passes(woken_once);
  for (int i = 0; i < 5; ++i) {  // five fruitless wake-ups, 100 cycles apart
    woken_often.parked(100);
    two_idle_passes(woken_often);
  }
  woken_often.parked(33);
  woken_once.parked(533);
  EXPECT_EQ(woken_often.pass(), woken_once.pass());
  EXPECT_EQ(woken_often.idle_since_switch(), woken_once.idle_since_switch());
  // Progress ends the stretch: the next one counts from its own first park.
  woken_once.next_pass();
  woken_once.progress();
  const uint32_t after_progress = woken_once.pass();
  two_idle_passes(woken_once);
  woken_once.parked(kEriscIdlePassCycles);
  EXPECT_EQ(woken_once.pass(), after_progress + 3u);
}

TEST(IdlePassCounter, RoutingIsDueOncePerIntervalOfIdlePassesSpunOrParked) {
  IdlePassCounter c;
  for (int i = 0; i < 9; ++i) c.idle_pass();
  EXPECT_FALSE(c.routing_due(10));
  c.idle_pass();
  EXPECT_TRUE(c.routing_due(10));
  EXPECT_FALSE(c.routing_due(10));  // once
  EXPECT_EQ(c.idle_since_switch(), 0u);
  // A long park holding 2.5 intervals: one call at the next park (the others fell on an idle
  // core), and the half interval carries over, also across a later wake in the same stretch.
  c.parked(25 * kEriscIdlePassCycles);
  EXPECT_TRUE(c.routing_due(10));
  EXPECT_EQ(c.idle_since_switch(), 5u);
  EXPECT_FALSE(c.routing_due(10));
  c.parked(3 * kEriscIdlePassCycles);
  EXPECT_EQ(c.idle_since_switch(), 8u);
}

TEST(IdlePassCounter, AZeroIntervalMeansRoutingAtEveryPark) {
  IdlePassCounter c;
  EXPECT_TRUE(c.routing_due(0));
  EXPECT_TRUE(c.routing_due(0));
}

TEST(IdlePassCounter, ThePassCounterWrapsWithoutLosingParity) {
  IdlePassCounter c;
  c.parked(UINT32_MAX);  // saturated parked time: UINT32_MAX / 64 passes
  const uint32_t passes = UINT32_MAX / kEriscIdlePassCycles;
  EXPECT_EQ(c.pass(), passes);
  c.parked(UINT32_MAX);
  EXPECT_EQ(c.pass(), static_cast<uint32_t>((2ull * UINT32_MAX) / kEriscIdlePassCycles));
  EXPECT_EQ(c.idle_since_switch(), (2ull * UINT32_MAX) / kEriscIdlePassCycles);  // 64-bit: no wrap
}

// The parked time from which a wake-up's idle passes would bring run_routing() due at the next
// park: before it, a wake-up known to find nothing may be skipped without moving anything.
TEST(IdlePassCounter, CyclesUntilAWakeUpWouldMakeRoutingDue) {
  constexpr uint32_t kPasses = 2;  // a wake-up runs two idle passes before it parks again
  const auto due_after_wake = [&](IdlePassCounter c, uint32_t parked_cycles) {
    c.parked(parked_cycles);
    two_idle_passes(c);
    return c.routing_due(10);
  };
  IdlePassCounter c;
  two_idle_passes(c);  // 2 idle passes, no stretch yet: due once 2 + parked passes + 2 >= 10
  EXPECT_EQ(c.cycles_until_routing_due(10, kPasses), 6 * kEriscIdlePassCycles);
  EXPECT_FALSE(due_after_wake(c, 6 * kEriscIdlePassCycles - 1));
  EXPECT_TRUE(due_after_wake(c, 6 * kEriscIdlePassCycles));
  // Within a stretch the parked cycles so far count (3 passes and 10 cycles here).
  c.parked(3 * kEriscIdlePassCycles + 10);
  two_idle_passes(c);
  EXPECT_FALSE(c.routing_due(10));
  EXPECT_EQ(c.cycles_until_routing_due(10, kPasses), 3 * kEriscIdlePassCycles - 10);
  EXPECT_FALSE(due_after_wake(c, 3 * kEriscIdlePassCycles - 11));
  EXPECT_TRUE(due_after_wake(c, 3 * kEriscIdlePassCycles - 10));
  // Already due at any wake-up, and a zero interval (routing at every park): no time at all.
  IdlePassCounter late;
  for (int i = 0; i < 8; ++i) late.idle_pass();
  EXPECT_EQ(late.cycles_until_routing_due(10, kPasses), 0u);
  EXPECT_EQ(IdlePassCounter{}.cycles_until_routing_due(0, kPasses), 0u);
}

}  // namespace
