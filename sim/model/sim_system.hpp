#pragma once
// A simulated system: chips plus the ethernet links between them, wired from a plain list of
// (chip, channel) <-> (chip, channel) pairs (the topologies library produces such a list).
// The wiring is validated before time 0; the smallest chip-to-chip latency is recorded as the
// lookahead a parallel (MPI) run would use.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "sim/engine/time.hpp"
#include "sim/model/arch_params.hpp"
#include "sim/model/chip.hpp"
#include "sim/model/eth_link.hpp"
#include "sim/model/sim_fault.hpp"

namespace cclmesh::sim {

class Engine;

struct EthPort {
  ChipId chip = 0;
  std::int32_t channel = 0;
  auto operator<=>(const EthPort&) const = default;
};

struct EthConnection {
  EthPort a;
  EthPort b;
  std::optional<Bandwidth> rate;       // default: the arch's line rate
  std::optional<SimTime> latency;      // default: the arch's one-way latency
};

struct ChipConfig {
  ChipId id = 0;
  ChipArch arch = ChipArch::WormholeB0;
  std::vector<std::int32_t> harvested_tensix_rows;
};

struct SystemConfig {
  std::vector<ChipConfig> chips;
  std::vector<EthConnection> links;
  DataMode mode = DataMode::Functional;
};

class SimSystem {
 public:
  // Architecture specs come from `spec_for` when given, else from the built-in files.
  using SpecSource = std::function<std::shared_ptr<const ArchSpec>(ChipArch)>;
  SimSystem(Engine& engine, const SystemConfig& config, SpecSource spec_for = {});
  SimSystem(const SimSystem&) = delete;
  SimSystem& operator=(const SimSystem&) = delete;

  Engine& engine() const { return engine_; }
  Chip& chip(ChipId id);
  std::vector<ChipId> chip_ids() const;
  std::size_t chip_count() const { return chips_.size(); }

  const std::vector<std::unique_ptr<EthLink>>& links() const { return links_; }
  // The link on a port, or nullptr when the channel is not connected.
  EthLink* link_at(EthPort port);

  // Smallest chip-to-chip latency over all links (SimTime::max() without links): no event on
  // one chip can affect another sooner.
  SimTime lookahead() const { return lookahead_; }
  FaultLog& faults() { return faults_; }
  // Sets every chip's busy window (Chip::set_busy_window; a diagnostic, no simulated effect).
  void set_busy_window(BusyWindow window);

 private:
  Engine& engine_;
  FaultLog faults_;
  std::map<ChipId, std::unique_ptr<Chip>> chips_;
  std::vector<std::unique_ptr<EthLink>> links_;
  std::map<EthPort, EthLink*> link_by_port_;
  SimTime lookahead_ = SimTime::max();
};

}  // namespace cclmesh::sim
