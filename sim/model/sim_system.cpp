#include "sim/model/sim_system.hpp"

#include <fmt/format.h>

#include "sim/engine/engine.hpp"

namespace cclmesh::sim {

SimSystem::SimSystem(Engine& engine, const SystemConfig& config, SpecSource spec_for) : engine_(engine) {
  // A bad_alloc while it runs names the way out for what it holds (exception_message).
  engine_.set_host_memory_use(config.mode == DataMode::TimingOnly ? HostMemoryUse::TimingOnly
                                                                  : HostMemoryUse::WithData);
  if (!spec_for) spec_for = [](ChipArch arch) { return builtin_arch_spec(arch); };
  if (config.chips.empty()) throw ModelConfigError("system: 'chips' is empty; a system needs at least one chip");
  for (const ChipConfig& c : config.chips) {
    if (c.id < 0) throw ModelConfigError(fmt::format("system: chip id {} must be non-negative", c.id));
    if (chips_.count(c.id) != 0) throw ModelConfigError(fmt::format("system: chip id {} appears twice", c.id));
    ChipOptions options;
    options.mode = config.mode;
    options.harvested_tensix_rows = c.harvested_tensix_rows;
    chips_.emplace(c.id, std::make_unique<Chip>(engine_, c.id, spec_for(c.arch), std::move(options), &faults_));
  }

  // Validate every link before building any, so a bad list builds nothing.
  auto check_port = [&](const EthPort& port, std::size_t index, const char* side) {
    auto it = chips_.find(port.chip);
    if (it == chips_.end()) {
      throw ModelConfigError(fmt::format("system: links[{}].{} names chip {}, which is not in 'chips'", index, side,
                                         port.chip));
    }
    const std::int32_t channels = it->second->eth_channel_count();
    if (port.channel < 0 || port.channel >= channels) {
      throw ModelConfigError(fmt::format("system: links[{}].{} = chip {} channel {}: channel must be in 0..{}", index,
                                         side, port.chip, port.channel, channels - 1));
    }
  };
  std::map<EthPort, std::size_t> used;
  for (std::size_t i = 0; i < config.links.size(); ++i) {
    const EthConnection& link = config.links[i];
    check_port(link.a, i, "a");
    check_port(link.b, i, "b");
    if (link.a == link.b) {
      throw ModelConfigError(fmt::format("system: links[{}] joins chip {} channel {} to itself", i, link.a.chip,
                                         link.a.channel));
    }
    for (const EthPort& port : {link.a, link.b}) {
      auto [it, fresh] = used.emplace(port, i);
      if (!fresh) {
        throw ModelConfigError(fmt::format("system: chip {} channel {} is wired twice (links[{}] and links[{}])",
                                           port.chip, port.channel, it->second, i));
      }
    }
    if (link.rate && link.rate->bytes_per_second() <= 0) {
      throw ModelConfigError(fmt::format("system: links[{}].rate must be positive", i));
    }
    if (link.latency && *link.latency < SimTime::zero()) {
      throw ModelConfigError(fmt::format("system: links[{}].latency must not be negative", i));
    }
  }

  for (const EthConnection& link : config.links) {
    Chip& chip_a = *chips_.at(link.a.chip);
    Chip& chip_b = *chips_.at(link.b.chip);
    if (chip_a.arch() != chip_b.arch()) {
      throw ModelConfigError(fmt::format("system: link chip {} channel {} <-> chip {} channel {} joins a {} and a {}",
                                         link.a.chip, link.a.channel, link.b.chip, link.b.channel,
                                         to_string(chip_a.arch()), to_string(chip_b.arch())));
    }
    const EthParams& eth = chip_a.params().eth;
    const Bandwidth rate = link.rate.value_or(eth.line_rate);
    const SimTime latency = link.latency.value_or(eth.one_way_latency);
    EthCore& a = chip_a.eth(link.a.channel);
    EthCore& b = chip_b.eth(link.b.channel);
    links_.push_back(std::make_unique<EthLink>(a, b, rate, latency));
    a.attach(*links_.back(), b);
    b.attach(*links_.back(), a);
    link_by_port_[link.a] = links_.back().get();
    link_by_port_[link.b] = links_.back().get();
    if (link.a.chip != link.b.chip) lookahead_ = std::min(lookahead_, latency);
  }
}

Chip& SimSystem::chip(ChipId id) {
  auto it = chips_.find(id);
  if (it == chips_.end()) throw ModelConfigError(fmt::format("system: no chip {}", id));
  return *it->second;
}

std::vector<ChipId> SimSystem::chip_ids() const {
  std::vector<ChipId> ids;
  for (const auto& [id, chip] : chips_) ids.push_back(id);
  return ids;
}

void SimSystem::set_busy_window(BusyWindow window) {
  for (auto& entry : chips_) entry.second->set_busy_window(window);
}

EthLink* SimSystem::link_at(EthPort port) {
  auto it = link_by_port_.find(port);
  return it == link_by_port_.end() ? nullptr : it->second;
}

}  // namespace cclmesh::sim
