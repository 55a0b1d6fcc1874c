#pragma once
// One spdlog logger per subsystem ("engine", "noc", "eth", "fabric" ...), each line stamped with
// the simulated time of the engine running on this thread. Quiet by default (warnings only);
// CCLMESH_LOG=debug (or trace/info/...) in the environment, or set_sim_log_level(), opens it up.

#include <spdlog/spdlog.h>

#include <memory>
#include <string>

namespace cclmesh::sim {

std::shared_ptr<spdlog::logger> sim_logger(const std::string& subsystem);
void set_sim_log_level(spdlog::level::level_enum level);

}  // namespace cclmesh::sim
