#include "sim/device/hang_timing.hpp"

#include <algorithm>

#include "sim/model/chip.hpp"
#include "sim/model/eth_core.hpp"
#include "sim/model/eth_link.hpp"

namespace cclmesh::sim::device {

SimTime last_progress(const std::vector<const KernelContext*>& kernels, SimTime now) {
  SimTime latest = SimTime::zero();
  for (const KernelContext* k : kernels) {
    if (!k->started) continue;
    SimTime ran = now;  // running, or failing now (a failure stops the run)
    if (k->done) {
      ran = k->end;
    } else if (k->blocked != BlockedIn::Nothing) {
      ran = k->blocked_since;
    }
    latest = std::max(latest, ran);
  }
  return latest;
}

bool joins(const EthLink& link, runtime::ChipId a, runtime::ChipId b) {
  const auto x = static_cast<runtime::ChipId>(link.a().chip().id());
  const auto y = static_cast<runtime::ChipId>(link.b().chip().id());
  return (x == a && y == b) || (x == b && y == a);
}

std::int64_t packets_dropped_while_down(const EthLink& link) {
  return link.wire_from(link.a()).dropped_packets() + link.wire_from(link.b()).dropped_packets();
}

std::optional<SimTime> HangTiming::down_since(const EthLink& link) const {
  if (plan == nullptr) return std::nullopt;
  std::optional<SimTime> since;
  for (const LinkDownFault& fault : plan->link_down) {
    if (joins(link, fault.a, fault.b) && (!since || fault.at < *since)) since = fault.at;
  }
  return since;
}

bool HangTiming::down_for_the_hang(const EthLink& link) const {
  if (link.up()) return false;
  const std::optional<SimTime> since = down_since(link);
  return !since || *since <= last_progress || packets_dropped_while_down(link) > 0;
}

}  // namespace cclmesh::sim::device
