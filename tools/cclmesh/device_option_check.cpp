#include "tools/cclmesh/device_option_check.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "tools/cclmesh/cli_error.hpp"

namespace cclmesh::cli {

std::set<std::string> op_options_beside_device(std::initializer_list<const char*> extra) {
  std::set<std::string> accepted{
      "--device",          "--op",             "--shape",           "--dim",
      "--dtype",           "--layout",         "--memory",          "--shard",
      "--shard-grid",      "--shard-orientation", "--shard-shape",  "--out-shard",
      "--out-shard-grid",  "--out-shard-orientation", "--out-shard-shape", "--root",
      "--rounds",          "--a2a-senders",    "--workers-per-link", "--all-reduce-algo", "--ag-ring-algorithm", "--ag-bidirectional-mode",
      "--chunks-per-sync", "--rs-line-algorithm", "--rs-ring-algorithm", "--bcast-ring-algorithm", "--cluster-axis",
      "--seed",            "--device-wait",    "--hardware"};
  accepted.insert(extra.begin(), extra.end());
  return accepted;
}

void reject_options_beside_device(const CLI::App& command, const std::set<std::string>& accepted) {
  static const std::set<std::string> kServerDecides{"--system", "--chips", "--topology", "--links", "--mode"};
  static const std::set<std::string> kServeTakes{"--fault",          "--max-sim-time",         "--max-wall",
                                                 "--link-rate",      "--link-latency",         "--no-data",
                                                 "--fabric-payload", "--fabric-rx-in-flight", "--erisc-unreserved-kib",
                                                 "--ring-flow-control", "--first-level-acks"};
  for (const CLI::Option* option : command.get_options()) {
    const std::string name = option->get_name();
    if (option->count() == 0 || accepted.contains(name) || name == "--help") continue;
    if (kServerDecides.contains(name)) {
      throw UsageError(fmt::format("--device: {} is the served device's to decide (cclmesh serve --system, --mode, "
                                   "--topology, --fabric-scope, --links); not accepted with --device",
                                   name));
    }
    if (kServeTakes.contains(name)) {
      throw UsageError(fmt::format("--device: {} shapes the simulated device, which runs on the server (faults, "
                                   "watchdogs, link what-ifs, fabric settings and the data mode are given to cclmesh "
                                   "serve); not accepted with --device",
                                   name));
    }
    if (name == "--trace" || name == "--trace-limit") {
      throw UsageError(fmt::format("--device: {} records the simulation, which runs on the server (cclmesh serve "
                                   "--trace-dir DIR writes a trace of each client session); not accepted with --device",
                                   name));
    }
    throw UsageError(fmt::format("--device: {} is a simulator option (the simulation runs on the server); not "
                                 "accepted with --device",
                                 name));
  }
}

}  // namespace cclmesh::cli
