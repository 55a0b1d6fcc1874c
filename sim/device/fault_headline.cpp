#include "sim/device/fault_headline.hpp"

#include <fmt/format.h>

#include <set>
#include <utility>

#include "sim/device/hang_timing.hpp"
#include "sim/model/chip.hpp"
#include "sim/model/eth_core.hpp"

namespace cclmesh::sim::device {
namespace {

std::string count_of(std::size_t n, const char* singular, const char* plural) {
  return fmt::format("{} {}", n, n == 1 ? singular : plural);
}

// How many of `ends` (parked kernels of one sort) wait on <what>: "N of the M <plural> (on K of
// the C chips with parked ones) wait on <what> (...)", or "none of the M <plural> (on C chips)
// waits on <what>" when no chain ends at a link that `matches`.
template <class Match>
std::string waiting_of(const std::vector<const ChainEnd*>& ends, Match matches, const std::string& what,
                       const char* singular, const char* plural) {
  std::set<runtime::ChipId> parked_chips;
  std::set<runtime::ChipId> waiting_chips;
  std::size_t waiting = 0;
  for (const ChainEnd* end : ends) {
    parked_chips.insert(end->chip);
    if (end->broken_link == nullptr || !matches(*end)) continue;
    ++waiting;
    waiting_chips.insert(end->chip);
  }
  if (waiting == 0) {
    return fmt::format("none of the {} (on {}) waits on {}", count_of(ends.size(), singular, plural),
                       count_of(parked_chips.size(), "chip", "chips"), what);
  }
  return fmt::format("{} of the {} (on {} of the {} with parked ones) {} on {} ({})", waiting,
                     count_of(ends.size(), singular, plural), waiting_chips.size(),
                     count_of(parked_chips.size(), "chip", "chips"), waiting == 1 ? "waits" : "wait", what,
                     waiting == 1 ? "its wait-for chain ends there" : "their wait-for chains end there");
}

// ": N of the M parked worker kernels (on K of the C chips with parked ones) wait on <what>
// (...)": the parked workers whose chain ends at a link that `matches`, and their chips; "" when
// nothing is parked. Data movers (fabric muxes, legacy EDMs) are left out: they are the
// fabric's, as the routers are, and their chains go on to the workers (or routers) that hold
// them, which are counted. When no worker is parked, only data movers (legacy EDMs waiting for
// their last acks once every worker has finished), they are what waits, and are counted: ": no
// worker kernel is parked, but 1 of the 1 parked legacy EDM (on 1 of the 1 chip ...) waits on
// it ...".
template <class Match>
std::string kernels_waiting(const std::vector<ChainEnd>& ends, Match matches, const std::string& what) {
  std::vector<const ChainEnd*> workers;
  std::vector<const ChainEnd*> movers;
  bool muxes = false;
  bool edms = false;
  for (const ChainEnd& end : ends) {
    (end.data_mover() ? movers : workers).push_back(&end);
    muxes = muxes || end.kind == ParkedKernel::FabricMux;
    edms = edms || end.kind == ParkedKernel::LegacyEdm;
  }
  if (!workers.empty()) return ": " + waiting_of(workers, matches, what, "parked worker kernel", "parked worker kernels");
  if (movers.empty()) return "";
  const auto [singular, plural] = !muxes ? std::pair("parked legacy EDM", "parked legacy EDMs")
                                 : !edms ? std::pair("parked fabric mux", "parked fabric muxes")
                                         : std::pair("parked data mover (fabric mux or legacy EDM)",
                                                     "parked data movers (fabric muxes and legacy EDMs)");
  const std::string waiting = waiting_of(movers, matches, what, singular, plural);
  return fmt::format(": no worker kernel is parked, {} {}", waiting.starts_with("none") ? "and" : "but", waiting);
}

std::string joined(const std::vector<std::string>& parts) {
  std::string text;
  for (std::size_t i = 0; i < parts.size(); ++i) text += (i == 0 ? "" : "; ") + parts[i];
  return text;
}

}  // namespace

std::string fault_headline(const FaultHeadlineInput& in) {
  const FaultPlan& plan = *in.plan;
  const std::vector<ChainEnd>& ends = *in.chain_ends;
  std::vector<std::string> effects;
  std::vector<std::string> after;  // faults after the last progress
  for (const LinkDownFault& fault : plan.link_down) {
    if (in.now < fault.at) continue;  // not down yet
    const auto ends_here = [&](const ChainEnd& end) {
      return end.how == LinkBreak::Down && joins(*end.broken_link, fault.a, fault.b);
    };
    const std::string waiting = kernels_waiting(ends, ends_here, "it");
    if (fault.at <= in.last_progress) {
      const std::string when =
          fault.at == SimTime::zero() ? "was down from the start" : "went down at " + to_string(fault.at);
      effects.push_back(fmt::format("link {}-{} {} (--fault {}){}", fault.a, fault.b, when, fault.spec, waiting));
      continue;
    }
    std::int64_t dropped = 0;
    for (const auto& link : *in.links) {
      if (joins(*link, fault.a, fault.b)) dropped += packets_dropped_while_down(*link);
    }
    const std::string head =
        fmt::format("link {}-{} went down at {} (--fault {})", fault.a, fault.b, to_string(fault.at), fault.spec);
    // A packet a router sent before the fault can start on the wire after it (and the last
    // progress) and be dropped: then the fault can be why the run hung.
    after.push_back(dropped == 0 ? head + " and dropped nothing: not why the run hung"
                                 : fmt::format("{} and dropped {} already on {} way, which can be why the run hung{}",
                                               head, count_of(static_cast<std::size_t>(dropped), "packet", "packets"),
                                               dropped == 1 ? "its" : "their", waiting));
  }
  std::int64_t dropped = 0;
  std::int64_t duplicated = 0;
  for (const auto& link : *in.links) {
    dropped += link->frames_dropped();
    duplicated += link->frames_duplicated();
  }
  if (plan.drop && dropped > 0) {
    const auto lost_frames = [](const ChainEnd& end) { return end.how == LinkBreak::LostFrames; };
    effects.push_back(fmt::format("{} frame(s) lost (--fault {}){}", dropped, plan.drop->spec,
                                  kernels_waiting(ends, lost_frames, "a link that lost frames")));
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
  std::string text;
  if (!effects.empty()) text += "injected faults in effect: " + joined(effects) + "\n";
  if (!after.empty()) {
    text += fmt::format("injected faults after the last progress (the last time any kernel ran, at {}): {}\n",
                        to_string(in.last_progress), joined(after));
  }
  return text;
}

}  // namespace cclmesh::sim::device
