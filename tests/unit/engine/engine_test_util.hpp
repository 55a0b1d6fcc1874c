#pragma once
// Shared by the engine and sim/model tests: a log of what happened at which simulated time, for
// comparing a run's order of events with the expected one.

#include <string>
#include <utility>
#include <vector>

#include "sim/engine/engine.hpp"

namespace cclmesh::sim::testing {

using Stamp = std::pair<SimTime, std::string>;

// Entries stamped with the running engine's now().
struct Log {
  std::vector<Stamp> entries;
  void add(std::string what) { entries.emplace_back(Engine::current().now(), std::move(what)); }
};

}  // namespace cclmesh::sim::testing
