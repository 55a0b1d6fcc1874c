// SimMeshDevice's injected faults: applied at open, summarised for reports, recorded in the trace.

#include "sim/device/sim_mesh_device.hpp"

#include <fmt/format.h>

#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sim/device/fabric_reembed.hpp"
#include "sim/device/hang_timing.hpp"
#include "sim/model/eth_link.hpp"

namespace cclmesh::sim::device {

// --- faults ------------------------------------------------------------------------------------

namespace {

std::string link_name(const EthLink& link) {
  return fmt::format("chip {} ch {} <-> chip {} ch {}", link.a().chip().id(), link.a().channel(), link.b().chip().id(),
                     link.b().channel());
}

// The line a completed op's report gives a `drop` fault that lost `frames` (> 0) frames. A lost
// ack is made good by the next one (acks carry running counts), which is why a run can
// lose frames and complete; a packet that does not fill its slot is sent as its payload, then
// the sync word that announces it (kernels/fabric_router.cpp, send_packet), and when only the
// payload is lost the receiver takes the slot's earlier header and bytes for it: pages never
// written, their semaphores counted all the same, which the output check then finds.
std::string lost_frames_effect(const std::string& spec, std::int64_t frames) {
  return fmt::format("{}: {} frame(s) lost, and the op completed: a lost ack is made good by the next, but a packet "
                     "lost while the sync word sent after it arrived is read from what its receiver slot held before, "
                     "and the pages it carried are never written",
                     spec, frames);
}

}  // namespace

void SimMeshDevice::reembed_around_down_links() {
  try {
    options_.fabric = fabric_around_down_links(topology_, options_.fabric, options_.faults);
  } catch (const runtime::DeviceError& e) {
    fail(e.kind(), e.what());
  }
}

void SimMeshDevice::apply_faults() {
  const FaultPlan& plan = options_.faults;
  const auto links_between = [this](runtime::ChipId a, runtime::ChipId b, const std::string& spec) {
    std::vector<EthLink*> found;
    for (const auto& link : system_->links()) {
      if (joins(*link, a, b)) found.push_back(link.get());
    }
    if (found.empty()) throw std::invalid_argument(fmt::format("fault {}: chips {} and {} share no link", spec, a, b));
    return found;
  };
  for (const LinkSlowFault& fault : plan.link_slow) {
    for (EthLink* link : links_between(fault.a, fault.b, fault.spec)) link->scale_rate(fault.numerator, fault.denominator);
  }
  for (const LinkDownFault& fault : plan.link_down) {
    std::vector<EthLink*> links = links_between(fault.a, fault.b, fault.spec);
    auto take_down = [this, links, spec = fault.spec] {
      for (EthLink* link : links) {
        link->set_up(false);
        system_->faults().record(engine_->now(), link_name(*link), "link down (fault " + spec + ")");
      }
    };
    if (fault.at == SimTime::zero()) {
      take_down();
    } else {
      engine_->schedule_at(fault.at, std::move(take_down));
    }
  }
  if (plan.drop || plan.dup) {
    const FrameFaultRates base{plan.drop ? plan.drop->per_2p32 : 0, plan.dup ? plan.dup->per_2p32 : 0, 0};
    const std::uint64_t seed = (plan.drop ? plan.drop->seed : 0) * 0x9E3779B97F4A7C15ull + (plan.dup ? plan.dup->seed : 0);
    std::uint64_t index = 0;
    for (const auto& link : system_->links()) {
      FrameFaultRates rates = base;
      rates.seed = seed ^ (0xD1B54A32D192ED03ull * ++index);  // one independent stream per link
      link->set_frame_faults(rates);
    }
  }
  for (const PacketCorruptFault& fault : plan.corrupt) {
    corruptions_.push_back(std::make_unique<PacketCorruption>(fault.at, fault.seed, fault.spec));
    for (EthLink* link : links_between(fault.a, fault.b, fault.spec)) link->add_corruption(*corruptions_.back());
  }
  if (plan.skew) {
    // mt19937_64's output is fixed by the standard; the modulo keeps the draw portable.
    std::mt19937_64 random(plan.skew->seed);
    const auto span = static_cast<std::uint64_t>(plan.skew->max.ps()) + 1;
    for (const topo::ChipId id : topology_.chip_ids()) {
      launch_skew_[static_cast<runtime::ChipId>(id)] = SimTime::from_ps(static_cast<std::int64_t>(random() % span));
    }
  }
}

std::string SimMeshDevice::fault_summary() const {
  const FaultPlan& plan = options_.faults;
  if (plan.empty() && system_->faults().empty()) return "";
  std::string text = "injected faults:\n";
  for (const LinkDownFault& fault : plan.link_down) {
    text += fmt::format("  {}: every link between chips {} and {} down {}\n", fault.spec, fault.a, fault.b,
                        fault.at == SimTime::zero() ? "from the start" : "at " + to_string(fault.at));
  }
  for (const LinkSlowFault& fault : plan.link_slow) {
    text += fmt::format("  {}: every link between chips {} and {} at {}/{} of its rate\n", fault.spec, fault.a, fault.b,
                        fault.numerator, fault.denominator);
  }
  if (plan.skew) {
    std::string delays;
    for (const auto& [chip, delay] : launch_skew_) delays += fmt::format("{}{}: {}", delays.empty() ? "" : ", ", chip, to_string(delay));
    text += fmt::format("  {}: chip launch delays {}\n", plan.skew->spec, delays);
  }
  if (plan.drop || plan.dup) {
    std::int64_t dropped = 0;
    std::int64_t duplicated = 0;
    for (const auto& link : system_->links()) {
      dropped += link->frames_dropped();
      duplicated += link->frames_duplicated();
    }
    if (plan.drop) text += fmt::format("  {}: {} frame(s) lost so far\n", plan.drop->spec, dropped);
    if (plan.dup) text += fmt::format("  {}: {} frame(s) duplicated so far\n", plan.dup->spec, duplicated);
  }
  for (const auto& corruption : corruptions_) text += fmt::format("  {}: {}\n", corruption->spec(), corruption->describe());
  // What the faults did, one line per place and cause: the log can hold thousands of packets.
  struct Group {
    SimTime first;
    std::size_t count = 0;
    std::string example;
  };
  std::map<std::pair<std::string, std::string>, Group> groups;
  std::vector<std::pair<std::string, std::string>> order;
  for (const FaultRecord& record : system_->faults().records()) {
    const std::size_t colon = record.what.rfind(": ");
    const std::string cause = colon == std::string::npos ? record.what : record.what.substr(colon + 2);
    auto [it, inserted] = groups.try_emplace({record.place, cause});
    if (inserted) {
      it->second.first = record.when;
      it->second.example = record.what;
      order.push_back(it->first);
    }
    ++it->second.count;
  }
  for (const auto& key : order) {
    const Group& g = groups.at(key);
    text += g.count == 1 ? fmt::format("  at {}: {}: {}\n", to_string(g.first), key.first, g.example)
                         : fmt::format("  from {}: {}: {} events, first: {}\n", to_string(g.first), key.first, g.count,
                                       g.example);
  }
  return text;
}

std::vector<std::string> SimMeshDevice::fault_effects(std::int64_t frames_dropped_before) const {
  std::vector<std::string> effects;
  for (const auto& corruption : corruptions_) effects.push_back(fmt::format("{}: {}", corruption->spec(), corruption->describe()));
  const std::int64_t dropped = frames_dropped() - frames_dropped_before;
  if (options_.faults.drop && dropped > 0) effects.push_back(lost_frames_effect(options_.faults.drop->spec, dropped));
  return effects;
}

std::int64_t SimMeshDevice::frames_dropped() const {
  std::int64_t dropped = 0;
  if (system_ == nullptr) return dropped;
  for (const auto& link : system_->links()) dropped += link->frames_dropped();
  return dropped;
}


// What the injected faults did, into the trace where it happened, once a part of the log is
// complete (a finish() returned, the run failed, or the device closes): a trace of a hung or
// corrupted run shows each lost, duplicated or flipped frame and each link that went down, not
// only the traffic around them. Each record goes in once, so a trace written in pieces
// (`cclmesh serve`, one per session) has each finish()'s faults in that session's piece.
void SimMeshDevice::record_faults_in_trace() {
  if (options_.trace == nullptr || system_ == nullptr) return;
  const std::vector<FaultRecord>& records = system_->faults().records();
  for (; faults_traced_ < records.size(); ++faults_traced_) {
    const FaultRecord& record = records[faults_traced_];
    trace::SpanArgs args;
    args.text_key = "place";
    args.text = record.place;
    options_.trace->instant(record.when, record.what, args);
  }
}

}  // namespace cclmesh::sim::device
