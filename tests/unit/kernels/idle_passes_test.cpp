// The pass counters of a polling ERISC loop kept by parked time (kernels/common/idle_passes.hpp):
// parked cycles become idle passes, which move the sender-channel parity and bring
// run_routing() due every switch interval, however the passes were counted.
#include <gtest/gtest.h>

#include <cstdint>

#include "kernels/common/idle_passes.hpp"

namespace {

using cclmesh::kernels::IdlePassCounter;
using cclmesh::kernels::kEriscIdlePassCycles;

TEST(IdlePassCounter, ParkedCyclesCountAsWholeIdlePasses) {
  IdlePassCounter c;
  c.parked(kEriscIdlePassCycles - 1);  // not one whole pass
  EXPECT_EQ(c.pass(), 0u);
  EXPECT_EQ(c.idle_since_switch(), 0u);
  c.parked(3 * kEriscIdlePassCycles + 5);
  EXPECT_EQ(c.pass(), 3u);  // odd: the other sender channel is served next
  EXPECT_EQ(c.idle_since_switch(), 3u);
  c.next_pass();
  c.idle_pass();
  EXPECT_EQ(c.pass(), 4u);
  EXPECT_EQ(c.idle_since_switch(), 4u);
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
  // core), and the half interval carries over.
  c.parked(25 * kEriscIdlePassCycles);
  EXPECT_TRUE(c.routing_due(10));
  EXPECT_EQ(c.idle_since_switch(), 5u);
  EXPECT_FALSE(c.routing_due(10));
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
  EXPECT_EQ(c.pass() & 1u, (2u * passes) & 1u);
  EXPECT_EQ(c.idle_since_switch(), 2ull * passes);  // 64-bit: no wrap
}

}  // namespace
