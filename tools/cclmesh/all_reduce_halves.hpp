#pragma once
// all_reduce's halves as a run records them: what reduce_scatter + all_gather's reduce_scatter
// half and all_gather half ran and why (all_reduce::halves_choices(), the halves' own choice
// functions on the params the builder gives them), or what the composite's all_gather ran
// (all_reduce::composite_gather_choices(); the composite has no reduce_scatter), in the names of
// the options that force them, and as --json's "halves" object (which the sweep's wire form
// carries as it is).

#include <optional>

#include <nlohmann/json.hpp>

#include "runtime/ccl/all_reduce/all_reduce.hpp"
#include "tools/cclmesh/run_options.hpp"
#include "topologies/topology.hpp"

namespace cclmesh::cli {

// Unset unless the op runs reduce_scatter + all_gather or the composite in fabric mode; the
// composite's has no reduce_scatter. A line's reduce_scatter half runs --rs-line-algorithm's; a
// ring run as a line around a down link says so first.
std::optional<AllReduceHalves> all_reduce_halves(const runtime::ccl::all_reduce::Params& params,
                                                 const topo::Topology& topology);

// {["reduce_scatter": {"algorithm", "reason"[, "lines": {"algorithm", "reason"}]},] "all_gather": ...}:
// no "reduce_scatter" where it is unset (the composite).
nlohmann::json halves_json(const AllReduceHalves& halves);
AllReduceHalves halves_from_json(const nlohmann::json& j);

}  // namespace cclmesh::cli
