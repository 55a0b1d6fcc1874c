#include "sim/device/fault_headline.hpp"

#include <fmt/format.h>

#include <set>

#include "sim/model/chip.hpp"
#include "sim/model/eth_core.hpp"

namespace cclmesh::sim::device {
namespace {

// Chips with a parked kernel whose chain ends at a link that `matches`, and all chips with one.
template <class Match>
std::string chips_waiting(const std::vector<ChainEnd>& ends, Match matches, const std::string& what) {
  std::set<runtime::ChipId> parked;
  std::set<runtime::ChipId> waiting;
  for (const ChainEnd& end : ends) {
    parked.insert(end.chip);
    if (end.broken_link != nullptr && matches(*end.broken_link)) waiting.insert(end.chip);
  }
  if (parked.empty()) return "";
  return fmt::format(": kernels on {} of the {} chip(s) with parked kernels wait on {} (their wait-for chains end "
                     "there)",
                     waiting.size(), parked.size(), what);
}

bool joins(const EthLink& link, runtime::ChipId a, runtime::ChipId b) {
  const auto x = static_cast<runtime::ChipId>(link.a().chip().id());
  const auto y = static_cast<runtime::ChipId>(link.b().chip().id());
  return (x == a && y == b) || (x == b && y == a);
}

}  // namespace

std::string fault_headline(const FaultHeadlineInput& in) {
  const FaultPlan& plan = *in.plan;
  const std::vector<ChainEnd>& ends = *in.chain_ends;
  std::vector<std::string> effects;
  for (const LinkDownFault& fault : plan.link_down) {
    if (in.now < fault.at) continue;  // not down yet
    const std::string when =
        fault.at == SimTime::zero() ? "was down from the start" : "went down at " + to_string(fault.at);
    const auto is_this_fault = [&](const EthLink& link) { return !link.up() && joins(link, fault.a, fault.b); };
    effects.push_back(fmt::format("link {}-{} {} (--fault {}){}", fault.a, fault.b, when, fault.spec,
                                  chips_waiting(ends, is_this_fault, "it")));
  }
  std::int64_t dropped = 0;
  std::int64_t duplicated = 0;
  for (const auto& link : *in.links) {
    dropped += link->frames_dropped();
    duplicated += link->frames_duplicated();
  }
  if (plan.drop && dropped > 0) {
    const auto lost_frames = [](const EthLink& link) { return link.up() && link.frames_dropped() > 0; };
    effects.push_back(fmt::format("{} frame(s) lost (--fault {}){}", dropped, plan.drop->spec,
                                  chips_waiting(ends, lost_frames, "a link that lost frames")));
  }
  // The others change timing or data, not where a chain ends: named, the detail further down.
  for (const LinkSlowFault& fault : plan.link_slow) effects.push_back("--fault " + fault.spec);
  if (plan.skew) effects.push_back("--fault " + plan.skew->spec);
  if (plan.dup && duplicated > 0) {
    effects.push_back(fmt::format("{} frame(s) duplicated (--fault {})", duplicated, plan.dup->spec));
  }
  for (const auto& corruption : *in.corruptions) {
    if (corruption->corrupted()) effects.push_back(fmt::format("one bit flipped (--fault {})", corruption->spec()));
  }
  if (effects.empty()) return "";
  std::string text = "injected faults in effect: ";
  for (std::size_t i = 0; i < effects.size(); ++i) text += (i == 0 ? "" : "; ") + effects[i];
  return text + "\n";
}

}  // namespace cclmesh::sim::device
