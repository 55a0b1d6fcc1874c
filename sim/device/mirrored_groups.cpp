#include "sim/device/mirrored_groups.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <functional>
#include <numeric>
#include <stdexcept>
#include <tuple>

#include "kernels/host/kernel_args_builder.hpp"

namespace cclmesh::sim::device {

MirroredGroups::MirroredGroups(std::vector<std::vector<runtime::ChipId>> groups, std::vector<std::size_t> sources)
    : groups_(std::move(groups)), sources_(std::move(sources)) {
  if (groups_.size() < 2) {
    throw std::invalid_argument(fmt::format("mirrored groups: {} group(s); expected 2 or more", groups_.size()));
  }
  if (sources_.empty()) sources_.assign(groups_.size(), 0);
  if (sources_.size() != groups_.size()) {
    throw std::invalid_argument(fmt::format("mirrored groups: {} sources for {} groups; expected one per group",
                                            sources_.size(), groups_.size()));
  }
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    const std::size_t source = sources_[g];
    if (source >= groups_.size() || sources_[source] != source) {
      throw std::invalid_argument(fmt::format("mirrored groups: group {} mirrors group {}, which is not a simulated "
                                              "group of the {}",
                                              g, source, groups_.size()));
    }
    if (groups_[g].size() != groups_[source].size() || groups_[g].empty()) {
      throw std::invalid_argument(fmt::format("mirrored groups: group {} has {} chips, group {} (its source) {}; "
                                              "expected the same number, at least 1",
                                              g, groups_[g].size(), source, groups_[source].size()));
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

std::size_t MirroredGroups::count_mirrored(std::span<const std::size_t> sources) {
  std::size_t count = 0;
  for (std::size_t g = 0; g < sources.size(); ++g) count += sources[g] != g ? 1 : 0;
  return count;
}

std::optional<runtime::ChipId> MirroredGroups::counterpart(runtime::ChipId chip) const {
  const std::optional<Place> place = place_of(chip);
  if (!place || sources_[place->group] == place->group) return std::nullopt;
  return groups_[sources_[place->group]][place->rank];
}

std::vector<runtime::ChipId> MirroredGroups::mirrors_of(runtime::ChipId simulated) const {
  const std::optional<Place> place = place_of(simulated);
  if (!place || sources_[place->group] != place->group) return {};
  std::vector<runtime::ChipId> mirrors;
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    if (g != place->group && sources_[g] == place->group) mirrors.push_back(groups_[g][place->rank]);
  }
  return mirrors;
}

bool MirroredGroups::same_group(runtime::ChipId a, runtime::ChipId b) const {
  const std::optional<Place> pa = place_of(a);
  const std::optional<Place> pb = place_of(b);
  return pa && pb && pa->group == pb->group;
}

std::string MirroredGroups::simulated_chips() const {
  std::vector<std::string> simulated;
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    if (sources_[g] == g) simulated.push_back(fmt::format("{}", fmt::join(groups_[g], "-")));
  }
  return fmt::format("{}", fmt::join(simulated, ", "));
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

// Every grouped chip's ports and routers inside its group.
struct GroupViews {
  std::map<runtime::ChipId, std::vector<PortView>> ports;
  std::map<runtime::ChipId, std::vector<RouterView>> routers;
};

using PlaceOf = std::function<std::optional<MirroredGroups::Place>(runtime::ChipId)>;

// The views, or why the system cannot be split into these groups at all.
std::optional<std::string> build_views(const PlaceOf& place_of, const topo::Topology& topology,
                                       const runtime::FabricPlan& fabric, GroupViews& views) {
  for (const topo::EthLink& link : topology.links()) {
    for (const auto& [from, to] : {std::pair{link.a, link.b}, std::pair{link.b, link.a}}) {
      const auto chip = static_cast<runtime::ChipId>(from.chip);
      const std::optional<MirroredGroups::Place> here = place_of(chip);
      if (!here) continue;
      // A port to another group is not compared: an edge row has fewer of them than a middle one,
      // and what crosses them is checked after each finish() (nothing may).
      const std::optional<MirroredGroups::Place> there = place_of(static_cast<runtime::ChipId>(to.chip));
      if (!there || there->group != here->group) continue;
      views.ports[chip].push_back(
          PortView{from.channel, link.rate_bytes_per_s, link.latency_ps, there->rank, to.channel});
    }
  }
  for (auto& [chip, ports] : views.ports) {
    std::sort(ports.begin(), ports.end(), [](const PortView& x, const PortView& y) { return x.channel < y.channel; });
  }
  // A router between groups (a per-axis fabric's lines along the other axis) runs on every chip
  // as with every group simulated: it starts up and, as long as nothing crosses between groups
  // (checked after each finish()), stays idle.
  for (const runtime::FabricRouterSite& site : fabric.routers()) {
    const std::optional<MirroredGroups::Place> here = place_of(site.chip);
    const std::optional<MirroredGroups::Place> there = place_of(site.peer);
    if (!here || !there || here->group != there->group) continue;
    const runtime::FabricLine& line = fabric.lines().at(site.line);
    RouterView view{site.channel, site.link, site.forward, site.noc0,
                    kargs::build_fabric_router_args(site.config).compile_time, there->rank, line.mode, {},
                    line.opened_at.has_value()};
    for (const runtime::ChipId on_line : line.chips) {
      const std::optional<MirroredGroups::Place> p = place_of(on_line);
      if (!p || p->group != here->group) {
        return fmt::format("the fabric {} leaves the group of chip {}", line.to_string(), site.chip);
      }
      view.line_ranks.push_back(p->rank);
    }
    views.routers[site.chip].push_back(std::move(view));
  }
  return std::nullopt;
}

// Why group g's chips are not the chips of group `source`, rank by rank.
std::optional<std::string> group_system_differs(const std::vector<std::vector<runtime::ChipId>>& groups,
                                                std::size_t g, std::size_t source, const topo::Topology& topology,
                                                GroupViews& views) {
  for (std::size_t r = 0; r < groups[g].size(); ++r) {
    const runtime::ChipId mirror = groups[g][r];
    const runtime::ChipId simulated = groups[source][r];
    const topo::Chip& a = topology.chip(static_cast<topo::ChipId>(mirror));
    const topo::Chip& b = topology.chip(static_cast<topo::ChipId>(simulated));
    if (a.arch != b.arch || a.board != b.board || !(a.harvesting == b.harvesting)) {
      return fmt::format("chip {} (group {}) is not the kind of chip {} (group {}) is", mirror, g, simulated, source);
    }
    if (views.ports[mirror] != views.ports[simulated]) {
      return fmt::format("chip {}'s links (group {}) differ from chip {}'s (group {})", mirror, g, simulated, source);
    }
    if (views.routers[mirror] != views.routers[simulated]) {
      return fmt::format("chip {}'s fabric routers (group {}) differ from chip {}'s (group {})", mirror, g, simulated,
                         source);
    }
  }
  return std::nullopt;
}

// Why the workloads cannot be split into these groups at all: a program on a chip outside every
// group, or an ethernet kernel (a legacy EDM) on a link out of its group.
std::optional<std::string> workloads_leave_groups(const PlaceOf& place_of, const topo::Topology& topology,
                                                  std::span<const runtime::MeshWorkload> workloads) {
  for (const runtime::MeshWorkload& workload : workloads) {
    for (const auto& [chip, program] : workload.programs) {
      const std::optional<MirroredGroups::Place> here = place_of(chip);
      if (!here) return fmt::format("{}: chip {} runs a program and is in no group", workload.name, chip);
      for (const runtime::KernelSpec& kernel : program.kernels) {
        if (kernel.core_kind != runtime::CoreKind::Ethernet) continue;
        for (const runtime::CoreRange& range : kernel.cores) {
          for (std::uint32_t channel = range.start.x; channel <= range.end.x; ++channel) {
            const topo::EthEndpoint port{static_cast<topo::ChipId>(chip), static_cast<std::int32_t>(channel)};
            if (!topology.link_at(port)) continue;
            const topo::EthEndpoint peer = topology.peer_of(port);
            const std::optional<MirroredGroups::Place> there = place_of(static_cast<runtime::ChipId>(peer.chip));
            if (!there || there->group != here->group) {
              return fmt::format("{}: kernel {} on chip {} channel {} reaches chip {} of another group", workload.name,
                                 kernel.kernel, chip, channel, peer.chip);
            }
          }
        }
      }
    }
  }
  return std::nullopt;
}

// Why group g does not run group `source`'s programs, rank by rank.
std::optional<std::string> group_programs_differ(const std::vector<std::vector<runtime::ChipId>>& groups,
                                                 std::size_t g, std::size_t source,
                                                 std::span<const runtime::MeshWorkload> workloads) {
  for (const runtime::MeshWorkload& workload : workloads) {
    for (std::size_t r = 0; r < groups[g].size(); ++r) {
      const auto mirror = workload.programs.find(groups[g][r]);
      const auto simulated = workload.programs.find(groups[source][r]);
      const bool mirror_runs = mirror != workload.programs.end();
      const bool simulated_runs = simulated != workload.programs.end();
      if (mirror_runs != simulated_runs || (mirror_runs && !(mirror->second == simulated->second))) {
        return fmt::format("{}: chip {}'s program (group {}) differs from chip {}'s (group {})", workload.name,
                           groups[g][r], g, groups[source][r], source);
      }
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> MirroredGroups::why_systems_differ(const topo::Topology& topology,
                                                              const runtime::FabricPlan& fabric) const {
  for (const auto& [chip, place] : places_) {
    if (!topology.has_chip(static_cast<topo::ChipId>(chip))) return fmt::format("chip {} is not in the system", chip);
  }
  GroupViews views;
  const PlaceOf place = [this](runtime::ChipId chip) { return place_of(chip); };
  if (std::optional<std::string> why = build_views(place, topology, fabric, views)) return why;
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    if (sources_[g] == g) continue;
    if (std::optional<std::string> why = group_system_differs(groups_, g, sources_[g], topology, views)) return why;
  }
  return std::nullopt;
}

std::optional<std::string> MirroredGroups::why_workloads_differ(
    const topo::Topology& topology, std::span<const runtime::MeshWorkload> workloads) const {
  const PlaceOf place = [this](runtime::ChipId chip) { return place_of(chip); };
  if (std::optional<std::string> why = workloads_leave_groups(place, topology, workloads)) return why;
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    if (sources_[g] == g) continue;
    if (std::optional<std::string> why = group_programs_differ(groups_, g, sources_[g], workloads)) return why;
  }
  return std::nullopt;
}

std::vector<std::size_t> MirroredGroups::fewest_sources(const std::vector<std::vector<runtime::ChipId>>& groups,
                                                        const topo::Topology& topology,
                                                        const runtime::FabricPlan& fabric,
                                                        std::span<const runtime::MeshWorkload> workloads) {
  std::vector<std::size_t> sources(groups.size());
  std::iota(sources.begin(), sources.end(), std::size_t{0});
  const MirroredGroups every_group_simulated(groups, sources);
  for (const auto& [chip, place] : every_group_simulated.places_) {
    if (!topology.has_chip(static_cast<topo::ChipId>(chip))) return sources;
  }
  const PlaceOf place = [&every_group_simulated](runtime::ChipId chip) {
    return every_group_simulated.place_of(chip);
  };
  GroupViews views;
  if (build_views(place, topology, fabric, views) || workloads_leave_groups(place, topology, workloads)) return sources;
  std::vector<std::size_t> simulated;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    for (const std::size_t candidate : simulated) {
      if (groups[g].size() == groups[candidate].size() &&
          !group_system_differs(groups, g, candidate, topology, views) &&
          !group_programs_differ(groups, g, candidate, workloads)) {
        sources[g] = candidate;
        break;
      }
    }
    if (sources[g] == g) simulated.push_back(g);
  }
  return sources;
}

std::vector<runtime::KernelProfile> MirroredGroups::mirrored_profile(
    const std::deque<runtime::KernelProfile>& simulated) const {
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

std::size_t MirroredGroups::mirrored_profile_size(const std::deque<runtime::KernelProfile>& simulated) const {
  std::size_t size = 0;
  for (const runtime::KernelProfile& entry : simulated) size += 1 + mirrors_of(entry.chip).size();
  return size;
}

}  // namespace cclmesh::sim::device
