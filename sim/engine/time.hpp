#pragma once
// Simulated time: a strong type over int64 picoseconds. The engine never uses floating point
// for time; bytes become a duration in exactly one place, transfer_time(), rounding up.

#include <compare>
#include <cstdint>
#include <limits>
#include <ostream>
#include <string>

namespace cclmesh::sim {

class SimTime {
 public:
  constexpr SimTime() = default;
  static constexpr SimTime from_ps(std::int64_t ps) { return SimTime{ps}; }
  static constexpr SimTime from_ns(std::int64_t ns) { return SimTime{ns * 1'000}; }
  static constexpr SimTime from_us(std::int64_t us) { return SimTime{us * 1'000'000}; }
  static constexpr SimTime from_ms(std::int64_t ms) { return SimTime{ms * 1'000'000'000}; }
  static constexpr SimTime zero() { return SimTime{0}; }
  static constexpr SimTime max() { return SimTime{std::numeric_limits<std::int64_t>::max()}; }

  constexpr std::int64_t ps() const { return ps_; }
  // Lossy conversions, for reports only (never fed back into the engine).
  constexpr double ns() const { return static_cast<double>(ps_) / 1e3; }
  constexpr double us() const { return static_cast<double>(ps_) / 1e6; }
  constexpr double seconds() const { return static_cast<double>(ps_) / 1e12; }

  constexpr auto operator<=>(const SimTime&) const = default;
  constexpr SimTime operator+(SimTime o) const { return SimTime{ps_ + o.ps_}; }
  constexpr SimTime operator-(SimTime o) const { return SimTime{ps_ - o.ps_}; }
  constexpr SimTime& operator+=(SimTime o) { ps_ += o.ps_; return *this; }
  constexpr SimTime& operator-=(SimTime o) { ps_ -= o.ps_; return *this; }
  constexpr SimTime operator*(std::int64_t k) const { return SimTime{ps_ * k}; }
  constexpr std::int64_t operator/(SimTime o) const { return ps_ / o.ps_; }

 private:
  constexpr explicit SimTime(std::int64_t ps) : ps_(ps) {}
  std::int64_t ps_ = 0;
};

constexpr SimTime operator*(std::int64_t k, SimTime t) { return t * k; }

// "12.345 us"-style rendering with an adaptive unit, exact to the picosecond.
std::string to_string(SimTime t);
inline std::ostream& operator<<(std::ostream& out, SimTime t) { return out << to_string(t); }

namespace literals {
constexpr SimTime operator""_ps(unsigned long long v) { return SimTime::from_ps(static_cast<std::int64_t>(v)); }
constexpr SimTime operator""_ns(unsigned long long v) { return SimTime::from_ns(static_cast<std::int64_t>(v)); }
constexpr SimTime operator""_us(unsigned long long v) { return SimTime::from_us(static_cast<std::int64_t>(v)); }
constexpr SimTime operator""_ms(unsigned long long v) { return SimTime::from_ms(static_cast<std::int64_t>(v)); }
}  // namespace literals

// A data rate in bytes per second, an integer so that every duration derived from it is exact.
class Bandwidth {
 public:
  constexpr Bandwidth() = default;
  static constexpr Bandwidth bytes_per_second(std::int64_t bps) { return Bandwidth{bps}; }
  // GB = 1e9 B, as in nccl-tests and REFERENCE.
  static constexpr Bandwidth gigabytes_per_second_milli(std::int64_t milli_gbps) {
    return Bandwidth{milli_gbps * 1'000'000};
  }
  constexpr std::int64_t bytes_per_second() const { return bps_; }
  constexpr double gigabytes_per_second() const { return static_cast<double>(bps_) / 1e9; }
  constexpr auto operator<=>(const Bandwidth&) const = default;

 private:
  constexpr explicit Bandwidth(std::int64_t bps) : bps_(bps) {}
  std::int64_t bps_ = 0;
};

namespace detail {
// The checked conversions behind the inline fast paths below: any rate and count, in 128 bits
// when the product needs it, and the errors.
SimTime transfer_time_checked(std::int64_t bytes, Bandwidth rate);
SimTime cycles_to_time_checked(std::int64_t cycles, std::int64_t clock_hz);
// ceil(count * 1e12 / per_second) when count * 1e12 and per_second both fit 62 bits and both
// are in range (count >= 0, per_second > 0): every packet and delay of a run. The fast path is
// inline because it runs ~once per NoC server a packet passes; the result is the same integer
// as the checked path's.
constexpr std::int64_t kNarrowLimit = std::int64_t{1} << 62;
constexpr std::int64_t kPsPerSecond = 1'000'000'000'000;
constexpr bool narrow(std::int64_t count, std::int64_t per_second) {
  return count >= 0 && count < kNarrowLimit / kPsPerSecond && per_second > 0 && per_second < kNarrowLimit;
}
}  // namespace detail

// The one conversion from bytes at a rate to simulated time: ceil(bytes * 1e12 / rate) ps.
// Throws std::invalid_argument for a non-positive rate or negative byte count.
inline SimTime transfer_time(std::int64_t bytes, Bandwidth rate) {
  const std::int64_t per_second = rate.bytes_per_second();
  if (detail::narrow(bytes, per_second)) [[likely]] {
    return SimTime::from_ps((bytes * detail::kPsPerSecond + per_second - 1) / per_second);
  }
  return detail::transfer_time_checked(bytes, rate);
}

// Cycles of a clock given in Hz, rounded up to the picosecond.
inline SimTime cycles_to_time(std::int64_t cycles, std::int64_t clock_hz) {
  if (detail::narrow(cycles, clock_hz)) [[likely]] {
    return SimTime::from_ps((cycles * detail::kPsPerSecond + clock_hz - 1) / clock_hz);
  }
  return detail::cycles_to_time_checked(cycles, clock_hz);
}

}  // namespace cclmesh::sim
