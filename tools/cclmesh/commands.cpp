#include "tools/cclmesh/commands.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <string>

namespace cclmesh::cli {

void register_topo_command(CLI::App& app, CommandOutcome& outcome);
void register_run_command(CLI::App& app, CommandOutcome& outcome);
void register_sweep_command(CLI::App& app, CommandOutcome& outcome);
void register_serve_command(CLI::App& app, CommandOutcome& outcome);

namespace {

// The commands keep an option's value empty for "not given", so `--json ''` (an unset shell
// variable, say) would run and silently write nothing. Every option that takes a value refuses
// an empty one instead, with the usual one line and exit 2.
void refuse_empty_values(CLI::App& command) {
  const std::string name = command.get_name();
  for (CLI::Option* option : command.get_options()) {
    if (option->get_expected_max() == 0) continue;  // a flag takes no value
    option->check(CLI::Validator(
        [name](std::string& value) -> std::string {
          if (!value.empty()) return "";
          return fmt::format("an empty value; expected what `cclmesh {} --help` describes, or the option left out",
                             name);
        },
        ""));
  }
}

}  // namespace

void register_commands(CLI::App& app, CommandOutcome& outcome) {
  register_run_command(app, outcome);
  register_sweep_command(app, outcome);
  register_topo_command(app, outcome);
  register_serve_command(app, outcome);
  for (CLI::App* command : app.get_subcommands({})) refuse_empty_values(*command);
}

}  // namespace cclmesh::cli
