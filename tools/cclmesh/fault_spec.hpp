#pragma once
// `cclmesh run --fault SPEC` (repeatable, issue 8): the fault specs a user types, parsed into
// the simulated device's FaultPlan. Each spec keeps its text so reports can name it.
//
//   link-down:A-B[@T]   every link between chips A and B fails from the start, or at time T
//   link-slow:A-B:F     those links run at F times their rate, 0 < F <= 1 (a decimal)
//   skew:MAX[:SEED]     each chip launches its programs late by a seeded amount up to MAX
//   drop:P[:SEED]       each ethernet frame is lost with probability P (a decimal, 0 < P <= 1)
//   dup:P[:SEED]        each ethernet frame is delivered twice with probability P
//   corrupt:A-B[@T][:SEED]  one bit of the first data packet on a link between A and B (at or
//                       after T) is flipped: the wrong result the output check must name
//   no-bubble           what-if: ring routers without bubble flow control (REFERENCE 6.7)
//
// Seeds default to 1. Whether chips A and B are on the system and neighbours is checked against
// the system before the device is built (require_fault_links_on), naming --fault and the spec.

#include <string>
#include <string_view>
#include <vector>

#include "sim/device/fault_plan.hpp"
#include "topologies/topology.hpp"

namespace cclmesh::cli {

struct RunFaults {
  sim::device::FaultPlan plan;
  bool no_bubble = false;
  std::vector<std::string> specs;  // as given, in order
};

// Adds one spec; throws UsageError ("--fault: ...", one line) for a malformed one or a kind
// that may be given once (skew, drop, dup, no-bubble) given twice.
void add_fault_spec(RunFaults& faults, std::string_view spec);

// Every chip pair of a link-down, link-slow or corrupt spec must be two chips of `topology`
// that share a link: UsageError ("--fault: 'SPEC': ...") naming the chip that is not on the
// system, or the pair and the first chip's neighbours. The device checks the same (its
// message names only the fault), after the system is built.
void require_fault_links_on(const RunFaults& faults, const topo::Topology& topology);

// A `corrupt` fault flips a bit of payload data, which a timing-only device (--no-data) does not
// carry: UsageError naming the first one, what would not carry it (`a --no-data run`) and the
// command to give it to without --no-data ("run").
void require_data_for_corruption(const sim::device::FaultPlan& plan, bool no_data, std::string_view what,
                                 std::string_view command);

}  // namespace cclmesh::cli
