#include "tools/cclmesh/commands.hpp"

namespace cclmesh::cli {

void register_topo_command(CLI::App& app, CommandOutcome& outcome);
void register_run_command(CLI::App& app, CommandOutcome& outcome);
void register_sweep_command(CLI::App& app, CommandOutcome& outcome);
void register_serve_command(CLI::App& app, CommandOutcome& outcome);

void register_commands(CLI::App& app, CommandOutcome& outcome) {
  register_run_command(app, outcome);
  register_sweep_command(app, outcome);
  register_topo_command(app, outcome);
  register_serve_command(app, outcome);
}

}  // namespace cclmesh::cli
