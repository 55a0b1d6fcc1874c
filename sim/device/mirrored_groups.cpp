#include "sim/device/mirrored_groups.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <tuple>

#include "kernels/host/kernel_args_builder.hpp"

namespace cclmesh::sim::device {

MirroredGroups::MirroredGroups(std::vector<std::vector<runtime::ChipId>> groups) : groups_(std::move(groups)) {
  if (groups_.size() < 2) {
    throw std::invalid_argument(fmt::format("mirrored groups: {} group(s); expected 2 or more", groups_.size()));
  }
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    if (groups_[g].size() != groups_[0].size() || groups_[g].empty()) {
      throw std::invalid_argument(fmt::format("mirrored groups: group {} has {} chips, group 0 {}; expected the same "
                                              "number, at least 1",
                                              g, groups_[g].size(), groups_[0].size()));
    }
    for (std::size_t r = 0; r < groups_[g].size(); ++r) {
      if (!places_.emplace(groups_[g][r], Place{g, r}).second) {
        throw std::invalid_argument(fmt::format("mirrored groups: chip {} is in two places", groups_[g][r]));
      }
    }
  }
}

std::optional<MirroredGroups::Place> MirroredGroups::place_of(runtime::ChipId chip) const {
  const auto it = places_.find(chip);
  if (it == places_.end()) return std::nullopt;
  return it->second;
}

std::optional<runtime::ChipId> MirroredGroups::counterpart(runtime::ChipId chip) const {
  const std::optional<Place> place = place_of(chip);
  if (!place || place->group == 0) return std::nullopt;
  return groups_[0][place->rank];
}

std::vector<runtime::ChipId> MirroredGroups::mirrors_of(runtime::ChipId simulated) const {
  const std::optional<Place> place = place_of(simulated);
  if (!place || place->group != 0) return {};
  std::vector<runtime::ChipId> mirrors;
  for (std::size_t g = 1; g < groups_.size(); ++g) mirrors.push_back(groups_[g][place->rank]);
  return mirrors;
}

bool MirroredGroups::same_group(runtime::ChipId a, runtime::ChipId b) const {
  const std::optional<Place> pa = place_of(a);
  const std::optional<Place> pb = place_of(b);
  return pa && pb && pa->group == pb->group;
}

namespace {

// One ethernet port of a chip to another chip of its group, as the group sees it: the link's wire
// and where it leads, the peer named by its rank.
struct PortView {
  std::int32_t channel = 0;
  std::int64_t rate_bytes_per_s = 0;
  std::int64_t latency_ps = 0;
  std::size_t peer_rank = 0;
  std::int32_t peer_channel = 0;
  auto tie() const { return std::tie(channel, rate_bytes_per_s, latency_ps, peer_rank, peer_channel); }
  bool operator==(const PortView& other) const { return tie() == other.tie(); }
};

// A router as its group sees it.
struct RouterView {
  std::uint32_t channel = 0;
  std::uint32_t link = 0;
  bool forward = true;
  runtime::Noc0Coord noc0;
  std::vector<std::uint32_t> compile_time_args;
  std::size_t peer_rank = 0;
  runtime::FabricMode line_mode = runtime::FabricMode::Line;
  std::vector<std::size_t> line_ranks;
  bool line_opened = false;
  auto tie() const {
    return std::tie(channel, link, forward, noc0, compile_time_args, peer_rank, line_mode, line_ranks, line_opened);
  }
  bool operator==(const RouterView& other) const { return tie() == other.tie(); }
};

}  // namespace

std::optional<std::string> MirroredGroups::why_systems_differ(const topo::Topology& topology,
                                                              const runtime::FabricPlan& fabric) const {
  for (const auto& [chip, place] : places_) {
    if (!topology.has_chip(static_cast<topo::ChipId>(chip))) return fmt::format("chip {} is not in the system", chip);
  }
  // Every chip's ports, seen from its group.
  std::map<runtime::ChipId, std::vector<PortView>> ports;
  for (const topo::EthLink& link : topology.links()) {
    for (const auto& [from, to] : {std::pair{link.a, link.b}, std::pair{link.b, link.a}}) {
      const auto chip = static_cast<runtime::ChipId>(from.chip);
      const std::optional<Place> here = place_of(chip);
      if (!here) continue;
      // A port to another group is not compared: an edge row has fewer of them than a middle one,
      // and what crosses them is checked after each finish() (nothing may).
      const std::optional<Place> there = place_of(static_cast<runtime::ChipId>(to.chip));
      if (!there || there->group != here->group) continue;
      ports[chip].push_back(PortView{from.channel, link.rate_bytes_per_s, link.latency_ps, there->rank, to.channel});
    }
  }
  for (auto& [chip, views] : ports) {
    std::sort(views.begin(), views.end(), [](const PortView& x, const PortView& y) { return x.channel < y.channel; });
  }
  // Every router inside a group, seen from its group. A router between groups (a per-axis fabric's
  // lines along the other axis) runs on every chip as with every group simulated: it starts up
  // and, as long as nothing crosses between groups (checked after each finish()), stays idle.
  std::map<runtime::ChipId, std::vector<RouterView>> routers;
  for (const runtime::FabricRouterSite& site : fabric.routers()) {
    const std::optional<Place> here = place_of(site.chip);
    const std::optional<Place> there = place_of(site.peer);
    if (!here || !there || here->group != there->group) continue;
    const runtime::FabricLine& line = fabric.lines().at(site.line);
    RouterView view{site.channel, site.link, site.forward, site.noc0,
                    kargs::build_fabric_router_args(site.config).compile_time, there->rank, line.mode, {},
                    line.opened_at.has_value()};
    for (const runtime::ChipId on_line : line.chips) {
      const std::optional<Place> p = place_of(on_line);
      if (!p || p->group != here->group) {
        return fmt::format("the fabric {} leaves the group of chip {}", line.to_string(), site.chip);
      }
      view.line_ranks.push_back(p->rank);
    }
    routers[site.chip].push_back(std::move(view));
  }
  for (std::size_t g = 1; g < groups_.size(); ++g) {
    for (std::size_t r = 0; r < groups_[g].size(); ++r) {
      const runtime::ChipId mirror = groups_[g][r];
      const runtime::ChipId simulated = groups_[0][r];
      const topo::Chip& a = topology.chip(static_cast<topo::ChipId>(mirror));
      const topo::Chip& b = topology.chip(static_cast<topo::ChipId>(simulated));
      if (a.arch != b.arch || a.board != b.board || !(a.harvesting == b.harvesting)) {
        return fmt::format("chip {} (group {}) is not the kind of chip {} (group 0) is", mirror, g, simulated);
      }
      if (ports[mirror] != ports[simulated]) {
        return fmt::format("chip {}'s links (group {}) differ from chip {}'s (group 0)", mirror, g, simulated);
      }
      if (routers[mirror] != routers[simulated]) {
        return fmt::format("chip {}'s fabric routers (group {}) differ from chip {}'s (group 0)", mirror, g, simulated);
      }
    }
  }
  return std::nullopt;
}

std::optional<std::string> MirroredGroups::why_workloads_differ(
    const topo::Topology& topology, std::span<const runtime::MeshWorkload> workloads) const {
  for (const runtime::MeshWorkload& workload : workloads) {
    for (const auto& [chip, program] : workload.programs) {
      const std::optional<Place> here = place_of(chip);
      if (!here) return fmt::format("{}: chip {} runs a program and is in no group", workload.name, chip);
      // An ethernet kernel moves data over its core's link: that link must stay in the group.
      for (const runtime::KernelSpec& kernel : program.kernels) {
        if (kernel.core_kind != runtime::CoreKind::Ethernet) continue;
        for (const runtime::CoreRange& range : kernel.cores) {
          for (std::uint32_t channel = range.start.x; channel <= range.end.x; ++channel) {
            const topo::EthEndpoint port{static_cast<topo::ChipId>(chip), static_cast<std::int32_t>(channel)};
            if (!topology.link_at(port)) continue;
            const topo::EthEndpoint peer = topology.peer_of(port);
            const std::optional<Place> there = place_of(static_cast<runtime::ChipId>(peer.chip));
            if (!there || there->group != here->group) {
              return fmt::format("{}: kernel {} on chip {} channel {} reaches chip {} of another group", workload.name,
                                 kernel.kernel, chip, channel, peer.chip);
            }
          }
        }
      }
      if (here->group == 0) continue;
      const auto simulated = workload.programs.find(groups_[0][here->rank]);
      if (simulated == workload.programs.end() || !(simulated->second == program)) {
        return fmt::format("{}: chip {}'s program (group {}) differs from chip {}'s (group 0)", workload.name, chip,
                           here->group, groups_[0][here->rank]);
      }
    }
    for (const runtime::ChipId simulated : groups_[0]) {
      if (!workload.programs.contains(simulated)) continue;
      for (const runtime::ChipId mirror : mirrors_of(simulated)) {
        if (!workload.programs.contains(mirror)) {
          return fmt::format("{}: chip {} runs a program and chip {} (its rank in another group) none", workload.name,
                             simulated, mirror);
        }
      }
    }
  }
  return std::nullopt;
}

std::vector<runtime::KernelProfile> MirroredGroups::mirrored_profile(
    std::span<const runtime::KernelProfile> simulated) const {
  std::vector<runtime::KernelProfile> profile;
  profile.reserve(simulated.size() * groups_.size());
  for (const runtime::KernelProfile& entry : simulated) {
    profile.push_back(entry);
    for (const runtime::ChipId mirror : mirrors_of(entry.chip)) {
      profile.push_back(entry);
      profile.back().chip = mirror;
    }
  }
  return profile;
}

}  // namespace cclmesh::sim::device
