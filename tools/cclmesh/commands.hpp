#pragma once
// Each subcommand registers its options and a callback; the callback sets the exit code.
// Bad input inside a callback throws UsageError (or a library's input error, mapped to it).

#include "tools/cclmesh/cli11_fwd.hpp"

namespace cclmesh::cli {

struct CommandOutcome {
  int exit_code = 0;
};

void register_commands(CLI::App& app, CommandOutcome& outcome);

}  // namespace cclmesh::cli
