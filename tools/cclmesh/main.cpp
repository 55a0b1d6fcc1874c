// cclmesh command line: `cclmesh run | sweep | topo ...`. Bad input prints one line and exits 2.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <exception>

#include "tools/cclmesh/cli_error.hpp"
#include "tools/cclmesh/commands.hpp"

int main(int argc, char** argv) {
  using namespace cclmesh::cli;
  CLI::App app{"cclmesh: collective communication on simulated and real Tenstorrent meshes", "cclmesh"};
  app.set_version_flag("--version", "cclmesh 0.1.0");
  app.require_subcommand(1);
  CommandOutcome outcome;
  register_commands(app, outcome);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "cclmesh: error: %s\n", e.what());
    return kExitBadInput;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "cclmesh: error: %s\n", e.what());
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cclmesh: internal error: %s\n", e.what());
    return kExitInternalError;
  }
  return outcome.exit_code;
}
