#pragma once
// The SVG of `cclmesh sweep --plot`: busbw against size (log2 axis), one line per op and
// topology, with the line rate marked. Self-contained SVG, no scripts or fonts to fetch.

#include <string>
#include <vector>

#include "tools/cclmesh/run_options.hpp"

namespace cclmesh::cli {

std::string sweep_plot_svg(const std::vector<RunResult>& rows, const std::string& title);

}  // namespace cclmesh::cli
