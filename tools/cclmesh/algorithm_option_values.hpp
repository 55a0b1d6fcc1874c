#pragma once
// The values of run's algorithm options (--ag-ring-algorithm, --ag-bidirectional-mode, --rs-line-algorithm,
// --rs-ring-algorithm, --bcast-ring-algorithm, --all-reduce-algo) as the op builders' enums,
// and the names --json records of what a builder chose. The values were checked when parsed.

#include <string>

#include "runtime/ccl/all_gather/all_gather.hpp"
#include "runtime/ccl/all_reduce/all_reduce.hpp"
#include "runtime/ccl/all_to_all/all_to_all.hpp"
#include "runtime/ccl/broadcast/broadcast.hpp"
#include "runtime/ccl/reduce_scatter/reduce_scatter.hpp"

namespace cclmesh::cli::detail {

namespace ccl = runtime::ccl;

ccl::reduce_scatter::LineAlgorithm rs_line_algorithm(const std::string& text);
ccl::reduce_scatter::RingAlgorithm rs_ring_algorithm(const std::string& text);
ccl::broadcast::RingAlgorithm bcast_ring_algorithm(const std::string& text);
// --rs-ring-algorithm's name of an algorithm.
std::string rs_ring_algorithm_name(ccl::reduce_scatter::RingAlgorithm algorithm);
ccl::all_reduce::Algorithm all_reduce_algorithm(const std::string& text);
// --all-reduce-algo's name of an algorithm.
std::string all_reduce_algorithm_name(ccl::all_reduce::Algorithm algorithm);
ccl::all_gather::RingAlgorithm ag_ring_algorithm(const std::string& text);
ccl::all_gather::BidirectionalMode ag_bidirectional_mode(const std::string& text);
// --ag-bidirectional-mode's name of a mode (split-tensor, full-tensor, auto).
std::string ag_bidirectional_mode_name(ccl::all_gather::BidirectionalMode mode);
ccl::all_to_all::SenderLayout a2a_senders(const std::string& text);

}  // namespace cclmesh::cli::detail
