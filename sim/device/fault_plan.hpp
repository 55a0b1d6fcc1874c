#pragma once
// Faults a simulated mesh runs with (issue 8, `cclmesh run --fault SPEC`), as plain values. The
// simulated device applies them (sim_mesh_device_faults.cpp): links taken down at time zero or later,
// links slowed, chips launching their programs late, ethernet frames lost or duplicated, one
// packet's payload corrupted. Every
// fault keeps the text it came from, so a report names it. All randomness is seeded: the same
// plan gives the same run.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/device/types.hpp"
#include "sim/engine/time.hpp"

namespace cclmesh::sim::device {

// Every link between chips a and b stops carrying traffic at `at` (zero: from the start, and
// the fabric's line or ring is re-embedded around the pair when it can be).
struct LinkDownFault {
  runtime::ChipId a = 0;
  runtime::ChipId b = 0;
  SimTime at;
  std::string spec;
};

// Every link between chips a and b runs at numerator / denominator of its rate (0 < f <= 1).
struct LinkSlowFault {
  runtime::ChipId a = 0;
  runtime::ChipId b = 0;
  std::int64_t numerator = 1;
  std::int64_t denominator = 1;
  std::string spec;
};

// Each chip launches every program up to `max` late: a seeded draw per chip (REFERENCE 1.8,
// 11.12: launch skew of up to ~40 us across devices).
struct LaunchSkewFault {
  SimTime max;
  std::uint64_t seed = 0;
  std::string spec;
};

// Each ethernet frame is lost (drop) or delivered twice (dup) with a probability, kept as a
// threshold out of 2^32 (see sim/model/eth_link.hpp).
struct FrameFault {
  std::uint64_t per_2p32 = 0;
  std::uint64_t seed = 0;
  std::string spec;
};

// One bit of one data packet's payload flipped on a link between chips a and b, the first such
// packet at or after `at` (see sim/model/packet_corruption.hpp for which packet and which bit).
struct PacketCorruptFault {
  runtime::ChipId a = 0;
  runtime::ChipId b = 0;
  SimTime at;
  std::uint64_t seed = 1;
  std::string spec;
};

struct FaultPlan {
  std::vector<LinkDownFault> link_down;
  std::vector<LinkSlowFault> link_slow;
  std::optional<LaunchSkewFault> skew;
  std::optional<FrameFault> drop;
  std::optional<FrameFault> dup;
  std::vector<PacketCorruptFault> corrupt;

  bool empty() const { return link_down.empty() && link_slow.empty() && !skew && !drop && !dup && corrupt.empty(); }
};

}  // namespace cclmesh::sim::device
