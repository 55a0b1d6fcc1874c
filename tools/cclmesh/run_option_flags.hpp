#pragma once
// The options `cclmesh run` and `cclmesh sweep` share: what system to simulate and how to run
// the collective on it (everything in RunOptions but the op, the size and the faults). One
// place, so both commands accept the same options with the same ranges and help.

#include <CLI/CLI.hpp>

#include "tools/cclmesh/run_options.hpp"

namespace cclmesh::cli {

void add_collective_options(CLI::App& command, RunOptions& options);

}  // namespace cclmesh::cli
