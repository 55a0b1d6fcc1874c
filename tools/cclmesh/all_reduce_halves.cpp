#include "tools/cclmesh/all_reduce_halves.hpp"

#include <string>
#include <vector>

#include "tools/cclmesh/algorithm_by_shape.hpp"

namespace cclmesh::cli {
namespace {

namespace ccl = runtime::ccl;

nlohmann::json half_json(const AlgorithmRecord& half) {
  nlohmann::json j{{"algorithm", half.algorithm}, {"reason", half.reason}};
  if (!half.lines_algorithm.empty()) j["lines"] = {{"algorithm", half.lines_algorithm}, {"reason", half.lines_reason}};
  return j;
}

AlgorithmRecord half_from_json(const nlohmann::json& j) {
  AlgorithmRecord half{j.at("algorithm").get<std::string>(), j.at("reason").get<std::string>(), "", ""};
  if (j.contains("lines")) {
    half.lines_algorithm = j.at("lines").at("algorithm").get<std::string>();
    half.lines_reason = j.at("lines").at("reason").get<std::string>();
  }
  return half;
}

}  // namespace

std::optional<AllReduceHalves> all_reduce_halves(const ccl::all_reduce::Params& params,
                                                 const topo::Topology& topology) {
  const std::vector<ccl::all_reduce::HalvesChoice> choices = ccl::all_reduce::halves_choices(params, topology);
  if (choices.empty()) {
    const std::vector<ccl::all_gather::PartChoice> gather = ccl::all_reduce::composite_gather_choices(params, topology);
    if (gather.empty()) return std::nullopt;
    return AllReduceHalves{std::nullopt, algorithm_record(all_gather_algorithms(gather), params.topology)};
  }
  std::vector<ShapeAlgorithm> reduce_scatter;
  std::vector<ShapeAlgorithm> all_gather;
  for (const ccl::all_reduce::HalvesChoice& choice : choices) {
    reduce_scatter.push_back(reduce_scatter_algorithm(choice.shape, choice.rs_ring, choice.rs_line));
    all_gather.push_back(all_gather_algorithm(choice.shape, choice.all_gather));
  }
  return AllReduceHalves{algorithm_record(reduce_scatter, params.topology), algorithm_record(all_gather, params.topology)};
}

nlohmann::json halves_json(const AllReduceHalves& halves) {
  nlohmann::json j{{"all_gather", half_json(halves.all_gather)}};
  if (halves.reduce_scatter) j["reduce_scatter"] = half_json(*halves.reduce_scatter);
  return j;
}

AllReduceHalves halves_from_json(const nlohmann::json& j) {
  AllReduceHalves halves{std::nullopt, half_from_json(j.at("all_gather"))};
  if (j.contains("reduce_scatter")) halves.reduce_scatter = half_from_json(j.at("reduce_scatter"));
  return halves;
}

}  // namespace cclmesh::cli
