#include "sim/engine/time.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

#include "sim/engine/cycle_counter.hpp"

namespace cclmesh::sim {
namespace {
using namespace literals;

TEST(SimTime, LiteralsAreExactPicoseconds) {
  EXPECT_EQ((1_ns).ps(), 1'000);
  EXPECT_EQ((3_us).ps(), 3'000'000);
  EXPECT_EQ((2_ms).ps(), 2'000'000'000);
  EXPECT_EQ((7_ps).ps(), 7);
  EXPECT_EQ(1_us + 500_ns, SimTime::from_ps(1'500'000));
  EXPECT_LT(999_ps, 1_ns);
  EXPECT_EQ((10_ns) * 3, 30_ns);
  EXPECT_EQ((30_ns) / (10_ns), 3);
}

TEST(SimTime, ToStringPicksAUnit) {
  EXPECT_EQ(to_string(17_ps), "17 ps");
  EXPECT_EQ(to_string(1500_ps), "1.500 ns");
  EXPECT_EQ(to_string(SimTime::from_ns(2500)), "2.500 us");
  EXPECT_EQ(to_string(3_ms), "3.000 ms");
}

TEST(TransferTime, RoundsUpToThePicosecond) {
  const Bandwidth link = Bandwidth::bytes_per_second(12'500'000'000);  // 12.5 GB/s
  EXPECT_EQ(transfer_time(1500, link).ps(), 120'000);                    // exact
  EXPECT_EQ(transfer_time(1, link).ps(), 80);                            // 80 ps exact
  const Bandwidth odd = Bandwidth::bytes_per_second(3'000'000'000);       // 1/3 ns per byte
  EXPECT_EQ(transfer_time(1, odd).ps(), 334);                            // 333.33 -> 334
  EXPECT_EQ(transfer_time(3, odd).ps(), 1'000);
  EXPECT_EQ(transfer_time(0, odd).ps(), 0);
}

TEST(TransferTime, LargeTransfersDoNotOverflow) {
  const Bandwidth link = Bandwidth::bytes_per_second(12'500'000'000);
  // 8 GiB at 12.5 GB/s = 0.687194767 s.
  EXPECT_EQ(transfer_time(8LL << 30, link).ps(), 687'194'767'360);
}

// Small products divide in 64 bits, large ones in 128: on either side of the switch (2^62 ps
// of numerator, 4 611 686 B) the result is the exact ceiling.
TEST(TransferTime, RoundsTheSameOnBothSidesOfTheNarrowPath) {
  const Bandwidth odd = Bandwidth::bytes_per_second(12'345'678'901);
  __extension__ typedef unsigned __int128 Wide;
  for (std::int64_t bytes : {4'611'685LL, 4'611'686LL, 4'611'687LL, 4'611'688LL}) {
    const Wide numerator = static_cast<Wide>(bytes) * 1'000'000'000'000u;
    const auto expected = static_cast<std::int64_t>((numerator + 12'345'678'900u) / 12'345'678'901u);
    EXPECT_EQ(transfer_time(bytes, odd).ps(), expected) << bytes << " B";
  }
}

TEST(TransferTime, RejectsBadInput) {
  EXPECT_THROW(transfer_time(1, Bandwidth::bytes_per_second(0)), std::invalid_argument);
  EXPECT_THROW(transfer_time(-1, Bandwidth::bytes_per_second(1)), std::invalid_argument);
}

TEST(CyclesToTime, UsesTheClock) {
  EXPECT_EQ(cycles_to_time(9, 1'000'000'000), 9_ns);
  EXPECT_EQ(cycles_to_time(1, 1'350'000'000).ps(), 741);  // 740.74 -> 741
}

TEST(CycleCounter, CountsWholeCyclesSinceZero) {
  EXPECT_EQ(cycles_since_zero(SimTime::from_ps(999), 1'000'000'000), 0u);
  EXPECT_EQ(cycles_since_zero(SimTime::from_ps(1'000), 1'000'000'000), 1u);
  EXPECT_EQ(cycles_since_zero(SimTime::from_ps(20'000), 1'350'000'000), 27u);
  EXPECT_EQ(cycles_since_zero(SimTime::from_ps(19'999), 1'350'000'000), 26u);
  // Ten hours in picoseconds times the clock overflows 64 bits; the count does not.
  EXPECT_EQ(cycles_since_zero(SimTime::from_ms(36'000'000), 1'000'000'000), 36'000'000'000'000u);
}

TEST(CycleCounter, ItsGridRecursEveryPeriod) {
  EXPECT_EQ(cycle_grid_period(1'000'000'000), SimTime::from_ps(1'000));
  EXPECT_EQ(cycle_grid_period(1'350'000'000), SimTime::from_ps(20'000));  // 27 cycles
  EXPECT_THROW(cycle_grid_period(0), std::invalid_argument);
  // Two spans of the same length whose starts are a whole number of periods apart count the
  // same cycles; starts a fraction of a period apart need not (the reason programs launch on
  // the grid, docs/sim_device.md).
  for (std::int64_t clock_hz : {1'000'000'000LL, 1'350'000'000LL}) {
    const SimTime period = cycle_grid_period(clock_hz);
    const auto cycles_in = [&](SimTime from, SimTime length) {
      return cycles_since_zero(from + length, clock_hz) - cycles_since_zero(from, clock_hz);
    };
    bool some_fraction_differs = false;
    for (std::int64_t from_ps = 0; from_ps < period.ps(); from_ps += 37) {
      for (std::int64_t length_ps : {1LL, 500LL, 6'560LL, 344'800LL}) {
        const SimTime from = SimTime::from_ps(from_ps);
        const SimTime length = SimTime::from_ps(length_ps);
        EXPECT_EQ(cycles_in(from, length), cycles_in(from + period * 3, length)) << clock_hz << " Hz, " << from_ps;
        some_fraction_differs |= cycles_in(from, length) != cycles_in(SimTime::zero(), length);
      }
    }
    EXPECT_TRUE(some_fraction_differs) << clock_hz << " Hz";
  }
}

TEST(CycleCounter, NextOnGridMovesUpToTheNextPoint) {
  const SimTime origin = SimTime::from_ps(9'038'122);
  const SimTime period = SimTime::from_ps(1'000);
  EXPECT_EQ(next_on_grid(origin, origin, period), origin);
  EXPECT_EQ(next_on_grid(origin + SimTime::from_ps(1), origin, period), origin + period);
  EXPECT_EQ(next_on_grid(SimTime::from_ps(137'566'389), origin, period), SimTime::from_ps(137'567'122));
  EXPECT_EQ(next_on_grid(SimTime::from_ps(137'567'122), origin, period), SimTime::from_ps(137'567'122));
  EXPECT_THROW(next_on_grid(origin - SimTime::from_ps(1), origin, period), InvariantError);
}

}  // namespace
}  // namespace cclmesh::sim
