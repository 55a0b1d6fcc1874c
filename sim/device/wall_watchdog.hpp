#pragma once
// The wall-time watchdog of a simulated device (`cclmesh run --max-wall SECONDS`). It is the one
// place outside the engine's statistics that reads a host clock, and it only decides whether a
// run goes on: it is polled between events, every kCheckInterval polls, so a run's simulated
// times, events and bytes do not depend on it (a run it stops reports a timeout instead).

#include <chrono>
#include <cstdint>
#include <optional>

namespace cclmesh::sim::device {

class WallWatchdog {
 public:
  static constexpr std::uint32_t kCheckInterval = 1024;

  WallWatchdog() = default;
  explicit WallWatchdog(std::optional<double> limit_seconds)
      : limit_seconds_(limit_seconds), start_(std::chrono::steady_clock::now()) {}

  bool armed() const { return limit_seconds_.has_value(); }
  double limit_seconds() const { return limit_seconds_.value_or(0.0); }
  // True once the limit has passed; reads the clock on the first poll and every
  // kCheckInterval polls after it.
  bool expired() {
    if (!limit_seconds_) return false;
    if (polls_++ % kCheckInterval != 0) return expired_;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    expired_ = elapsed >= *limit_seconds_;
    return expired_;
  }

 private:
  std::optional<double> limit_seconds_;
  std::chrono::steady_clock::time_point start_;
  std::uint64_t polls_ = 0;
  bool expired_ = false;
};

}  // namespace cclmesh::sim::device
