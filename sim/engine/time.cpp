#include "sim/engine/time.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <stdexcept>

namespace cclmesh::sim {

namespace {
__extension__ typedef __int128 Wide;  // 128-bit intermediate: bytes * 1e12 overflows int64

std::int64_t ceil_div(Wide numerator, Wide denominator) {
  const Wide quotient = (numerator + denominator - 1) / denominator;
  if (quotient > std::numeric_limits<std::int64_t>::max()) {
    throw std::overflow_error("simulated duration overflows int64 picoseconds");
  }
  return static_cast<std::int64_t>(quotient);
}

// Products that fit 62 bits (up to 4.6 MB or 4.6 M cycles: every packet and delay) divide in
// 64 bits, without the 128-bit division routine; the result is the same integer.
std::int64_t scaled_ceil_div(std::int64_t count, std::int64_t per_second) {
  if (count < detail::kNarrowLimit / detail::kPsPerSecond && per_second < detail::kNarrowLimit) {
    const std::int64_t numerator = count * detail::kPsPerSecond;
    return (numerator + per_second - 1) / per_second;
  }
  return ceil_div(Wide{count} * detail::kPsPerSecond, Wide{per_second});
}

}  // namespace

std::string to_string(SimTime t) {
  const std::int64_t ps = t.ps();
  const std::int64_t magnitude = ps < 0 ? -ps : ps;
  if (magnitude < 1'000) return fmt::format("{} ps", ps);
  if (magnitude < 1'000'000) return fmt::format("{:.3f} ns", static_cast<double>(ps) / 1e3);
  if (magnitude < 1'000'000'000) return fmt::format("{:.3f} us", static_cast<double>(ps) / 1e6);
  return fmt::format("{:.3f} ms", static_cast<double>(ps) / 1e9);
}

SimTime detail::transfer_time_checked(std::int64_t bytes, Bandwidth rate) {
  if (rate.bytes_per_second() <= 0) {
    throw std::invalid_argument(fmt::format("transfer_time: rate must be positive, got {} B/s",
                                            rate.bytes_per_second()));
  }
  if (bytes < 0) {
    throw std::invalid_argument(fmt::format("transfer_time: negative byte count {}", bytes));
  }
  return SimTime::from_ps(scaled_ceil_div(bytes, rate.bytes_per_second()));
}

SimTime detail::cycles_to_time_checked(std::int64_t cycles, std::int64_t clock_hz) {
  if (clock_hz <= 0) {
    throw std::invalid_argument(fmt::format("cycles_to_time: clock must be positive, got {} Hz", clock_hz));
  }
  if (cycles < 0) {
    throw std::invalid_argument(fmt::format("cycles_to_time: negative cycle count {}", cycles));
  }
  return SimTime::from_ps(scaled_ceil_div(cycles, clock_hz));
}

}  // namespace cclmesh::sim
