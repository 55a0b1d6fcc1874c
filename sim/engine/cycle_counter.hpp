#pragma once
// A chip's free-running cycle counter (read_device_cycles) on the simulated clock, and the grid
// its edges lie on. The models time everything in picoseconds, so the same span counts a cycle
// more or less depending on where in a cycle it starts; counts taken by a loop over a span (the
// routers' idle passes, kernels/common/idle_passes.hpp) are the same only for spans a whole
// number of grid periods apart (docs/sim_device.md, "What persists between ops").

#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>

#include "sim/engine/check.hpp"
#include "sim/engine/time.hpp"

namespace cclmesh::sim {

// The whole cycles of a clock given in Hz since time zero, rounded down.
inline std::uint64_t cycles_since_zero(SimTime t, std::int64_t clock_hz) {
  __extension__ typedef unsigned __int128 Wide;  // ps x Hz overflows 64 bits after ~5 hours
  return static_cast<std::uint64_t>(static_cast<Wide>(t.ps()) * static_cast<Wide>(clock_hz) /
                                    static_cast<Wide>(detail::kPsPerSecond));
}

// The shortest span after which the edges of a clock given in Hz fall on the same picosecond
// phase again: 1e12 / gcd(1e12, clock_hz) ps (1 ns at 1 GHz, 20 ns = 27 cycles at 1.35 GHz).
inline SimTime cycle_grid_period(std::int64_t clock_hz) {
  if (clock_hz <= 0) {
    throw std::invalid_argument("cycle_grid_period: clock must be positive, got " + std::to_string(clock_hz) + " Hz");
  }
  return SimTime::from_ps(detail::kPsPerSecond / std::gcd(detail::kPsPerSecond, clock_hz));
}

// The first point origin + k x period (k >= 0) at or after `t`, which must not be before `origin`.
inline SimTime next_on_grid(SimTime t, SimTime origin, SimTime period) {
  CCLMESH_CHECK(t >= origin && period > SimTime::zero(),
                "next_on_grid: " + std::to_string(t.ps()) + " ps against a grid from " + std::to_string(origin.ps()) +
                    " ps every " + std::to_string(period.ps()) + " ps");
  const std::int64_t periods = ((t - origin) + period - SimTime::from_ps(1)) / period;
  return origin + period * periods;
}

}  // namespace cclmesh::sim
