#pragma once
// What a reduce_scatter or an all_gather ran, as a run records it: for the op itself and for each
// half of all_reduce's reduce_scatter + all_gather alike; and what all_reduce itself ran (legacy
// mode chooses it per shape, all_reduce::part_choices()). Each shape its groups ran as (the op's
// part_choices(), rings first) ran its own algorithm: a ring opened into a line around a down link
// runs the line's, not the ring's choice (T3K 256 KiB, link-down:0-2: reduce_scatter two_sided,
// not one-shot; all_gather multicast, not relay), so the record is what each shape ran.

#include <string>
#include <vector>

#include "runtime/ccl/all_gather/all_gather.hpp"
#include "runtime/ccl/all_reduce/all_reduce.hpp"
#include "runtime/ccl/all_to_all/all_to_all.hpp"
#include "runtime/ccl/reduce_scatter/reduce_scatter.hpp"
#include "tools/cclmesh/run_options.hpp"

namespace cclmesh::cli {

// What the groups of one shape ran and why, in the names of the option that forces it.
struct ShapeAlgorithm {
  runtime::ccl::CclTopology shape = runtime::ccl::CclTopology::Ring;
  std::string algorithm;
  std::string reason;
};

// reduce_scatter: --rs-ring-algorithm's one-shot / chain on a ring, --rs-line-algorithm's on a line.
ShapeAlgorithm reduce_scatter_algorithm(runtime::ccl::CclTopology shape,
                                        const runtime::ccl::reduce_scatter::RingAlgorithmChoice& ring,
                                        runtime::ccl::reduce_scatter::LineAlgorithm line);
std::vector<ShapeAlgorithm> reduce_scatter_algorithms(const std::vector<runtime::ccl::reduce_scatter::PartChoice>& parts);
// all_gather: --ag-ring-algorithm's relay / multicast.
ShapeAlgorithm all_gather_algorithm(runtime::ccl::CclTopology shape,
                                    const runtime::ccl::all_gather::RingAlgorithmChoice& choice);
std::vector<ShapeAlgorithm> all_gather_algorithms(const std::vector<runtime::ccl::all_gather::PartChoice>& parts);
// The all_gather op's own record: as all_gather_algorithms, a ring part's reason followed by the
// bidirectional mode it ran and why (--ag-bidirectional-mode): "auto: a fabric ring relays;
// split-tensor, auto: each chip's input ...". all_reduce's all_gather half keeps the former.
std::vector<ShapeAlgorithm> all_gather_op_algorithms(const std::vector<runtime::ccl::all_gather::PartChoice>& parts);
// all_reduce: --all-reduce-algo's rs-ag / composite / one-shot, per part (legacy mode: a ring
// opened into a line beside the other rings runs the line's choice).
std::vector<ShapeAlgorithm> all_reduce_algorithms(const std::vector<runtime::ccl::all_reduce::PartChoice>& parts);
// all_to_all: sequential (one destination after another) or interleaved (--rounds over 1); the
// reason says too which senders ran (--a2a-senders) and why.
std::vector<ShapeAlgorithm> all_to_all_algorithms(const std::vector<runtime::ccl::all_to_all::PartChoice>& parts);

// The record of an op asked as `asked` whose groups ran as `shapes` (one, or rings then the lines
// some of them ran as): the first shape's algorithm and reason, and the lines' as lines_algorithm
// and lines_reason. A line run where a ring was asked says first why it is a line at all.
AlgorithmRecord algorithm_record(const std::vector<ShapeAlgorithm>& shapes, runtime::ccl::CclTopology asked);

}  // namespace cclmesh::cli
