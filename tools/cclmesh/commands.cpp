#include "tools/cclmesh/commands.hpp"

namespace cclmesh::cli {

void register_topo_command(CLI::App& app, CommandOutcome& outcome);

void register_commands(CLI::App& app, CommandOutcome& outcome) {
  register_topo_command(app, outcome);
}

}  // namespace cclmesh::cli
