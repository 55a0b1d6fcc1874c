#pragma once
// Where a run has got to, for a progress display (Engine::set_progress_report): its own header so
// that a display's owner (the CLI's options) need not include the engine.

#include <cstdint>

#include "sim/engine/time.hpp"

namespace cclmesh::sim {

struct EngineProgress {
  SimTime now;
  std::uint64_t events_executed = 0;
};

}  // namespace cclmesh::sim
