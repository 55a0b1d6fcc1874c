// SimMeshDevice's identical groups simulated once: checked at open, kept apart, their links' counters.

#include "sim/device/sim_mesh_device.hpp"

#include <fmt/format.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sim/engine/check.hpp"

namespace cclmesh::sim::device {

void SimMeshDevice::mirror_identical_groups() {
  mirrored_.reset();
  if (options_.mirrored_groups.empty()) return;
  if (options_.data_mode != DataMode::TimingOnly || !options_.faults.empty() || options_.trace != nullptr ||
      options_.adjust_router_config) {
    throw std::invalid_argument(
        "simulated device: mirrored groups need a timing-only device without faults, a trace or a router "
        "adjustment (each chip's data, a fault's place, a trace's tracks and an adjusted router are a group's own)");
  }
  MirroredGroups groups(options_.mirrored_groups, options_.mirrored_group_sources);
  if (const std::optional<std::string> why = groups.why_systems_differ(topology_, fabric_)) {
    throw std::invalid_argument(fmt::format("simulated device: the groups cannot be mirrored: {}", *why));
  }
  mirrored_.emplace(std::move(groups));
}

bool SimMeshDevice::simulated(runtime::ChipId chip) const { return !mirrored_ || !mirrored_->mirrored(chip); }

SimMeshDevice::TrafficBetweenGroups SimMeshDevice::traffic_between_groups() const {
  TrafficBetweenGroups traffic;
  for (const auto& link : system_->links()) {
    const auto a = static_cast<runtime::ChipId>(link->a().chip().id());
    const auto b = static_cast<runtime::ChipId>(link->b().chip().id());
    if (mirrored_->same_group(a, b)) continue;
    for (const EthCore* from : {&link->a(), &link->b()}) {
      const EthCoreStats stats = from->stats();
      traffic.packets += stats.packets_sent;
      traffic.payload_bytes += stats.payload_bytes_sent;
      traffic.words += stats.words_sent;  // credits and acks written across the link
      traffic.wire_busy_ps += link->wire_from(*from).server().busy.ps();
    }
  }
  return traffic;
}

std::string SimMeshDevice::traffic_since_open_between_groups() const {
  const TrafficBetweenGroups now = traffic_between_groups();
  if (now == crossing_at_open_) return {};
  return fmt::format("{} packets ({} B of payload) and {} words crossed links between groups since the fabric started",
                     now.packets - crossing_at_open_.packets, now.payload_bytes - crossing_at_open_.payload_bytes,
                     now.words - crossing_at_open_.words);
}

void SimMeshDevice::require_groups_stayed_apart() const {
  if (!mirrored_) return;
  // The groups' programs were compared, not what they do: had the first group's traffic left
  // it, the groups would not have been independent, and the mirrors' figures would be wrong.
  const std::string crossed = traffic_since_open_between_groups();
  CCLMESH_CHECK(crossed.empty(), fmt::format("identical groups simulated once: {}, so the groups are not independent "
                                             "and cannot be mirrored",
                                             crossed));
}

std::optional<std::vector<runtime::LinkTraffic>> SimMeshDevice::link_traffic() const {
  std::vector<runtime::LinkTraffic> traffic;
  for (const auto& link : system_->links()) {
    for (const EthCore* from : {&link->a(), &link->b()}) {
      // A mirrored chip's port inside its group carried what its counterpart's did (the same
      // channel: the groups' ports were compared when the device opened); a port between groups
      // carried only its routers' start-up, on every chip (require_groups_stayed_apart).
      const auto chip = static_cast<runtime::ChipId>(from->chip().id());
      const bool mirrored_port =
          !simulated(chip) && mirrored_->same_group(chip, static_cast<runtime::ChipId>(from->peer()->chip().id()));
      const EthCore& counted =
          mirrored_port ? system_->chip(*mirrored_->counterpart(chip)).eth(from->channel()) : *from;
      CCLMESH_CHECK(counted.link() != nullptr, fmt::format("chip {} channel {}: a mirrored port's counterpart has no link",
                                                           chip, from->channel()));
      traffic.push_back(runtime::LinkTraffic{chip, static_cast<std::uint32_t>(from->channel()),
                                             static_cast<runtime::ChipId>(from->peer()->chip().id()),
                                             static_cast<std::uint32_t>(from->peer()->channel()),
                                             static_cast<std::uint64_t>(counted.stats().payload_bytes_sent),
                                             static_cast<std::uint64_t>(counted.link()->wire_from(counted).server().busy.ps())});
    }
  }
  return traffic;
}

}  // namespace cclmesh::sim::device
