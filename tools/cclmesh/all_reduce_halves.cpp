#include "tools/cclmesh/all_reduce_halves.hpp"

#include <string>
#include <vector>

#include "sim/engine/check.hpp"
#include "tools/cclmesh/algorithm_option_values.hpp"

namespace cclmesh::cli {
namespace {

namespace ccl = runtime::ccl;

// The halves of the groups of one shape. A ring group run as a line around a down link runs the
// line's algorithms; its reasons say why it is a line at all.
AllReduceHalves halves_of(const ccl::all_reduce::HalvesChoice& choice, ccl::CclTopology asked) {
  AllReduceHalves halves;
  const bool line = choice.shape == ccl::CclTopology::Line;
  const std::string opened = line && asked == ccl::CclTopology::Ring ? "ran as a line around a down link: " : "";
  if (line) {
    halves.reduce_scatter = {ccl::reduce_scatter::to_string(choice.rs_line),
                             opened + "a line runs --rs-line-algorithm's (two_sided by default)", "", ""};
  } else {
    halves.reduce_scatter = {detail::rs_ring_algorithm_name(choice.rs_ring.algorithm), choice.rs_ring.reason, "", ""};
  }
  halves.all_gather = {ccl::all_gather::to_string(choice.all_gather.algorithm), opened + choice.all_gather.reason, "",
                       ""};
  return halves;
}

nlohmann::json half_json(const HalfAlgorithm& half) {
  nlohmann::json j{{"algorithm", half.algorithm}, {"reason", half.reason}};
  if (!half.lines_algorithm.empty()) j["lines"] = {{"algorithm", half.lines_algorithm}, {"reason", half.lines_reason}};
  return j;
}

HalfAlgorithm half_from_json(const nlohmann::json& j) {
  HalfAlgorithm half{j.at("algorithm").get<std::string>(), j.at("reason").get<std::string>(), "", ""};
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
  if (choices.empty()) return std::nullopt;
  // Rings first, then the lines some of them ran as (groups_by_shape): at most two shapes.
  CCLMESH_CHECK(choices.size() == 1 || (choices.size() == 2 && choices.back().shape == ccl::CclTopology::Line),
                "all_reduce's groups run as one shape, or as rings and lines");
  AllReduceHalves halves = halves_of(choices.front(), params.topology);
  if (choices.size() == 2) {
    const AllReduceHalves lines = halves_of(choices.back(), params.topology);
    halves.reduce_scatter.lines_algorithm = lines.reduce_scatter.algorithm;
    halves.reduce_scatter.lines_reason = lines.reduce_scatter.reason;
    halves.all_gather.lines_algorithm = lines.all_gather.algorithm;
    halves.all_gather.lines_reason = lines.all_gather.reason;
  }
  return halves;
}

nlohmann::json halves_json(const AllReduceHalves& halves) {
  return {{"reduce_scatter", half_json(halves.reduce_scatter)}, {"all_gather", half_json(halves.all_gather)}};
}

AllReduceHalves halves_from_json(const nlohmann::json& j) {
  return {half_from_json(j.at("reduce_scatter")), half_from_json(j.at("all_gather"))};
}

}  // namespace cclmesh::cli
