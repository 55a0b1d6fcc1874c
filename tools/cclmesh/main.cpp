// cclmesh command line (subcommands are added as the libraries grow).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

int main(int argc, char** argv) {
  CLI::App app{"cclmesh: collective communication on simulated and real Tenstorrent meshes"};
  app.set_version_flag("--version", "cclmesh 0.1.0");
  app.require_subcommand(1);
  CLI11_PARSE(app, argc, argv);
  return 0;
}
