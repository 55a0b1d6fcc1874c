#pragma once
// The one entry point for "which machine": `cclmesh ... --system SPEC` hands SPEC here.

#include <string>

#include "topologies/topology.hpp"

namespace cclmesh::topo {

// SPEC is, in this order of precedence:
//   1. a built-in system name (builtin_systems.hpp): n150, n300, t3k, tg, galaxy, p150, p300,
//      bh_galaxy;
//   2. a parametric spec (parametric.hpp): mesh:RxC, torus:RxC[xD], ring:N, [/L] [@wh|@bh];
//   3. a path to a YAML file, either a tt-umd cluster descriptor (recognised by its
//      `ethernet_connections` or `arch` key) or the project's own format (recognised by
//      `format: cclmesh-topology`);
//   4. the name of a file NAME.yaml in systems_dir() (data_paths.hpp), for systems a user adds.
// Throws InputError saying which of these SPEC failed to be, or the loader's own message.
Topology load_system(const std::string& spec);

// What --system takes, in one line for a command's help (cclmesh run, sweep, topo, serve): the
// built-in names from builtin_system_names(), so a new built-in shows up without editing help.
std::string system_spec_help();

// Loads a YAML file of either format, detected from its keys.
Topology load_topology_any_format(const std::string& path);

}  // namespace cclmesh::topo
