#pragma once
// `cclmesh run --report FILE.html`: one self-contained page (inline CSS and SVG, no script, no
// network) with the run's nccl-tests row, the topology drawing with each direction of each
// neighbour edge coloured by how busy its wires were during the op, a legend, and a table of
// every link direction.
//
// Utilisation of a wire = the wire time booked during the op (packets and credit words, with
// their headers and framing) / the op's time (first kernel start to last kernel end), i.e.
// bytes on the wire / (op time x line rate). An edge of several links shows its busiest link.

#include <string>

#include "tools/cclmesh/run_options.hpp"
#include "topologies/topology.hpp"

namespace cclmesh::cli {

std::string html_report(const RunResult& result, const topo::Topology& topology);

// The page of a run that did not complete: the title, the exit code the run ends with (3: a hang
// or fault; 4: a served device that failed mid-run) and the report, so an older run's page is
// never left in the file.
std::string html_incomplete_report(const std::string& title, const std::string& report, int exit_code);

// The colour of a utilisation (0 = idle grey scale start, 1 = full line rate) on the report's
// scale; above 1 it stays at the top colour.
std::string utilisation_colour(double utilisation);

}  // namespace cclmesh::cli
