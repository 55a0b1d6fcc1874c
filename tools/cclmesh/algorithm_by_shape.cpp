#include "tools/cclmesh/algorithm_by_shape.hpp"

#include "sim/engine/check.hpp"
#include "tools/cclmesh/algorithm_option_values.hpp"

namespace cclmesh::cli {

namespace ccl = runtime::ccl;

ShapeAlgorithm reduce_scatter_algorithm(ccl::CclTopology shape, const ccl::reduce_scatter::RingAlgorithmChoice& ring,
                                        ccl::reduce_scatter::LineAlgorithm line) {
  if (shape == ccl::CclTopology::Line) {
    return {shape, ccl::reduce_scatter::to_string(line), "a line runs --rs-line-algorithm's (two_sided by default)"};
  }
  return {shape, detail::rs_ring_algorithm_name(ring.algorithm), ring.reason};
}

std::vector<ShapeAlgorithm> reduce_scatter_algorithms(const std::vector<ccl::reduce_scatter::PartChoice>& parts) {
  std::vector<ShapeAlgorithm> shapes;
  for (const ccl::reduce_scatter::PartChoice& part : parts) {
    shapes.push_back(reduce_scatter_algorithm(part.shape, part.ring, part.line));
  }
  return shapes;
}

ShapeAlgorithm all_gather_algorithm(ccl::CclTopology shape, const ccl::all_gather::RingAlgorithmChoice& choice) {
  return {shape, ccl::all_gather::to_string(choice.algorithm), choice.reason};
}

std::vector<ShapeAlgorithm> all_gather_algorithms(const std::vector<ccl::all_gather::PartChoice>& parts) {
  std::vector<ShapeAlgorithm> shapes;
  for (const ccl::all_gather::PartChoice& part : parts) shapes.push_back(all_gather_algorithm(part.shape, part.algorithm));
  return shapes;
}

std::vector<ShapeAlgorithm> all_gather_op_algorithms(const std::vector<ccl::all_gather::PartChoice>& parts) {
  std::vector<ShapeAlgorithm> shapes = all_gather_algorithms(parts);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (parts[i].shape != ccl::CclTopology::Ring) continue;
    shapes[i].reason += "; " + detail::ag_bidirectional_mode_name(parts[i].bidirectional.mode) + ", " +
                        parts[i].bidirectional.reason;
  }
  return shapes;
}

std::vector<ShapeAlgorithm> all_reduce_algorithms(const std::vector<ccl::all_reduce::PartChoice>& parts) {
  std::vector<ShapeAlgorithm> shapes;
  for (const ccl::all_reduce::PartChoice& part : parts) {
    shapes.push_back({part.shape, detail::all_reduce_algorithm_name(part.choice.algorithm), part.choice.reason});
  }
  return shapes;
}

std::vector<ShapeAlgorithm> all_to_all_algorithms(const std::vector<ccl::all_to_all::PartChoice>& parts) {
  std::vector<ShapeAlgorithm> shapes;
  for (const ccl::all_to_all::PartChoice& part : parts) {
    shapes.push_back({part.shape, part.rounds.rounds == 1 ? "sequential" : "interleaved",
                      part.rounds.reason + "; senders " + part.senders.reason});
  }
  return shapes;
}

AlgorithmRecord algorithm_record(const std::vector<ShapeAlgorithm>& shapes, ccl::CclTopology asked) {
  // Rings first, then the lines some of them ran as (groups_by_shape): at most two shapes.
  CCLMESH_CHECK(shapes.size() == 1 || (shapes.size() == 2 && shapes.back().shape == ccl::CclTopology::Line),
                "an op's groups run as one shape, or as rings and lines");
  const auto reason = [&](const ShapeAlgorithm& s) {
    const bool opened = s.shape == ccl::CclTopology::Line && asked == ccl::CclTopology::Ring;
    return (opened ? "ran as a line around a down link: " : "") + s.reason;
  };
  AlgorithmRecord record{shapes.front().algorithm, reason(shapes.front()), "", ""};
  if (shapes.size() == 2) {
    record.lines_algorithm = shapes.back().algorithm;
    record.lines_reason = reason(shapes.back());
  }
  return record;
}

}  // namespace cclmesh::cli
