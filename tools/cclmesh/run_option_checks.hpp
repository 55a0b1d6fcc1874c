#pragma once
// Refusals that the run's options and the system decide, before any device is built: options
// the op or mode does not take, --chips off the system, --links no hop has, --size below a page
// per chip. Each throws UsageError naming the option.

#include <cstdint>
#include <string>
#include <vector>

#include "tools/cclmesh/run_options.hpp"
#include "topologies/topology.hpp"

namespace cclmesh::cli::detail {

// The run's shape as the user gave it, for a refusal: "--topology line", or "the line --topology
// auto chose for n300" when --topology was auto (bug bash, session 38: a refusal said "given for
// --topology line" to a user who had given no --topology).
std::string topology_as_given(const RunOptions& options);

// --chips as a refusal quotes it: as the user typed it (`typed`, commas or dashes), or, when the
// list did not come from the command line, its ids joined by ','.
std::string chips_as_given(const std::vector<std::uint32_t>& chips, const std::string& typed);

// Options the op, mode or topology does not take, on a system (or --chips) of `n_chips`.
void reject_unsupported(const RunOptions& options, std::uint32_t n_chips);

// --chips: every chip once, on the system, at least 2, not with --cluster-axis (whose groups
// are the mesh's rows or columns), and consecutive chips neighbours (a ring's last and first
// too; options.topology is resolved). Whether the hops have the links asked is the fabric
// plan's (or, in legacy mode, require_legacy_links') check.
void check_chips(const RunOptions& options, const topo::Topology& topology);

// --links above every neighbour edge's link count: no line or ring can have that many per hop,
// whatever the chips. Said naming --links and what the system has; the embedding search's
// "no line ... the chips are not connected" named --system/--topology/--cluster-axis instead.
// Legacy mode has its own, which names the group and its narrowest hop (require_legacy_links).
void reject_links_above_every_edge(const RunOptions& options, const topo::Topology& topology);

// --size below one page per chip, refused before the device is built (the same message as
// prepare_collective's): a 128x128 mesh's device cost ~8 s and ~6 GB before that refusal. Only where the group
// size follows from the options and the mesh alone (every chip on the mesh); elsewhere
// prepare_collective refuses it as before.
void reject_size_below_a_page_per_chip(const RunOptions& options, const topo::Topology& topology,
                                       std::uint32_t n_chips);

}  // namespace cclmesh::cli::detail
