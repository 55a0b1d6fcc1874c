// `cclmesh topo --system NAME|SPEC|FILE [--svg FILE] [--dot FILE] [--json FILE|-]
//   [--link-rate RATE] [--link-latency T] [--save FILE.yaml|-]`
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <string>

#include "tools/cclmesh/cli_error.hpp"
#include "tools/cclmesh/commands.hpp"
#include "tools/cclmesh/link_whatif.hpp"
#include "tools/cclmesh/output_file.hpp"
#include "topologies/errors.hpp"
#include "topologies/export_dot.hpp"
#include "topologies/export_svg.hpp"
#include "topologies/summary.hpp"
#include "topologies/system_loader.hpp"
#include "topologies/topology_yaml.hpp"

namespace cclmesh::cli {

namespace {
struct TopoOptions {
  std::string system;
  std::string svg_path;
  std::string dot_path;
  std::string json_path;
  std::string save_path;
  topo::LinkWhatIf link_whatif;
};

int run_topo(const TopoOptions& options) {
  if (options.save_path == "-" && options.json_path == "-") {
    throw UsageError("--save: '-' (stdout) cannot be used together with --json -; write one of them to a file");
  }
  topo::Topology topology;
  try {
    topology = topo::with_every_link(topo::load_system(options.system), options.link_whatif);
  } catch (const topo::InputError& e) {
    throw UsageError(fmt::format("--system: {}", e.what()));
  }
  require_distinct_outputs({{options.svg_path, "--svg"},
                            {options.dot_path, "--dot"},
                            {options.json_path, "--json"},
                            {options.save_path, "--save"}});
  // Every path first, so one that cannot be written leaves none of the others written.
  if (!options.svg_path.empty()) {
    require_output_extension(options.svg_path, "--svg", {".svg"}, "SVG");
    check_output_path(options.svg_path, "--svg");
  }
  if (!options.dot_path.empty()) {
    require_output_extension(options.dot_path, "--dot", {".dot", ".gv"}, "Graphviz DOT");
    check_output_path(options.dot_path, "--dot");
  }
  if (!options.json_path.empty()) check_output_path(options.json_path, "--json");
  if (!options.save_path.empty()) {
    // The file is YAML whatever its name; a t.json would be read back as YAML by nothing that
    // goes by the name (session 44's bug bash).
    require_output_extension(options.save_path, "--save", {".yaml", ".yml"}, "YAML");
    check_output_path(options.save_path, "--save");
  }
  const topo::TopologySummary summary = topo::summarize(topology);
  const std::optional<topo::LinkSpread> what_if = topo::links_off_arch_defaults(topology);
  if (!options.svg_path.empty()) write_output(options.svg_path, topo::to_svg(topology), "--svg");
  if (!options.dot_path.empty()) write_output(options.dot_path, topo::to_dot(topology), "--dot");
  // As every other output (a symlink's target written, a pipe in place), not save_topology's
  // temporary renamed over the path; "-" is written last below, stdout carrying the YAML alone.
  if (!options.save_path.empty() && options.save_path != "-") {
    write_output(options.save_path, topo::to_yaml(topology), "--save");
  }
  if (!options.json_path.empty()) {
    nlohmann::json json = topo::to_json(summary);
    if (what_if) json["link_whatif"] = link_whatif_json(*what_if);
    write_output(options.json_path, json.dump(2), "--json");
  }
  if (options.save_path == "-") {
    write_output("-", topo::to_yaml(topology), "--save");  // stdout carries the YAML only
    return kExitOk;
  }
  // stdout carries that output only (require_distinct_outputs allows one "-"): an SVG or dot
  // drawing piped to a viewer, as JSON to a parser, is not followed by the text summary.
  for (const std::string* path : {&options.svg_path, &options.dot_path, &options.json_path}) {
    if (*path == "-") return kExitOk;
  }
  std::cout << topo::to_text(summary);
  if (what_if) std::cout << fmt::format("note       {}\n", link_whatif_text(*what_if));
  return kExitOk;
}
}  // namespace

void register_topo_command(CLI::App& app, CommandOutcome& outcome) {
  auto options = std::make_shared<TopoOptions>();
  CLI::App* command = app.add_subcommand("topo", "Describe a system: chips, links, diameter, rings; draw it");
  command->add_option("--system", options->system, topo::system_spec_help())
      ->required();
  command->add_option("--svg", options->svg_path, "write an SVG drawing to FILE, or - for stdout");
  command->add_option("--dot", options->dot_path, "write a Graphviz dot file to FILE, or - for stdout");
  command->add_option("--json", options->json_path, "write the summary as JSON to FILE, or - for stdout");
  command->add_option("--save", options->save_path,
                      "write the system (with --link-rate/--link-latency applied) in cclmesh's own YAML format to "
                      "FILE, or - for stdout; edit it and load it back with --system FILE");
  add_link_whatif_options(*command, options->link_whatif);
  command->callback([options, &outcome] { outcome.exit_code = run_topo(*options); });
}

}  // namespace cclmesh::cli
