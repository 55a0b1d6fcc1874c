// `cclmesh topo --system NAME|SPEC|FILE [--svg FILE] [--dot FILE] [--json FILE|-]`
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <string>

#include "tools/cclmesh/cli_error.hpp"
#include "tools/cclmesh/commands.hpp"
#include "tools/cclmesh/output_file.hpp"
#include "topologies/errors.hpp"
#include "topologies/export_dot.hpp"
#include "topologies/export_svg.hpp"
#include "topologies/summary.hpp"
#include "topologies/system_loader.hpp"

namespace cclmesh::cli {

namespace {
struct TopoOptions {
  std::string system;
  std::string svg_path;
  std::string dot_path;
  std::string json_path;
};

int run_topo(const TopoOptions& options) {
  topo::Topology topology;
  try {
    topology = topo::load_system(options.system);
  } catch (const topo::InputError& e) {
    throw UsageError(fmt::format("--system: {}", e.what()));
  }
  const topo::TopologySummary summary = topo::summarize(topology);
  if (!options.svg_path.empty()) write_output(options.svg_path, topo::to_svg(topology), "--svg");
  if (!options.dot_path.empty()) write_output(options.dot_path, topo::to_dot(topology), "--dot");
  if (!options.json_path.empty()) {
    write_output(options.json_path, topo::to_json(summary).dump(2), "--json");
    if (options.json_path == "-") return kExitOk;  // stdout carries the JSON only
  }
  std::cout << topo::to_text(summary);
  return kExitOk;
}
}  // namespace

void register_topo_command(CLI::App& app, CommandOutcome& outcome) {
  auto options = std::make_shared<TopoOptions>();
  CLI::App* command = app.add_subcommand("topo", "Describe a system: chips, links, diameter, rings; draw it");
  command->add_option("--system", options->system,
                      "built-in name (n150, n300, t3k, tg, galaxy, p150, p300, bh_galaxy), parametric "
                      "(mesh:RxC, torus:RxC[xD], ring:N, optional /L and @wh|@bh) or a YAML file")
      ->required();
  command->add_option("--svg", options->svg_path, "write an SVG drawing to FILE");
  command->add_option("--dot", options->dot_path, "write a Graphviz dot file to FILE");
  command->add_option("--json", options->json_path, "write the summary as JSON to FILE, or - for stdout");
  command->callback([options, &outcome] { outcome.exit_code = run_topo(*options); });
}

}  // namespace cclmesh::cli
