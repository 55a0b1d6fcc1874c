#include "tools/cclmesh/algorithm_option_values.hpp"

namespace cclmesh::cli::detail {

ccl::reduce_scatter::LineAlgorithm rs_line_algorithm(const std::string& text) {
  return text == "wrap" ? ccl::reduce_scatter::LineAlgorithm::Wrap : ccl::reduce_scatter::LineAlgorithm::TwoSided;
}

ccl::reduce_scatter::RingAlgorithm rs_ring_algorithm(const std::string& text) {
  if (text == "one-shot") return ccl::reduce_scatter::RingAlgorithm::OneShot;
  if (text == "chain") return ccl::reduce_scatter::RingAlgorithm::Chain;
  if (text == "half-way") return ccl::reduce_scatter::RingAlgorithm::HalfWay;
  return ccl::reduce_scatter::RingAlgorithm::Auto;
}

ccl::broadcast::RingAlgorithm bcast_ring_algorithm(const std::string& text) {
  if (text == "both-ways") return ccl::broadcast::RingAlgorithm::BothWays;
  if (text == "split") return ccl::broadcast::RingAlgorithm::Split;
  return ccl::broadcast::RingAlgorithm::Auto;
}

std::string rs_ring_algorithm_name(ccl::reduce_scatter::RingAlgorithm algorithm) {
  switch (algorithm) {
    case ccl::reduce_scatter::RingAlgorithm::OneShot:
      return "one-shot";
    case ccl::reduce_scatter::RingAlgorithm::Chain:
      return "chain";
    case ccl::reduce_scatter::RingAlgorithm::HalfWay:
      return "half-way";
    case ccl::reduce_scatter::RingAlgorithm::Auto:
      break;
  }
  return "auto";
}

ccl::all_reduce::Algorithm all_reduce_algorithm(const std::string& text) {
  if (text == "one-shot") return ccl::all_reduce::Algorithm::OneShot;
  if (text == "rs-ag") return ccl::all_reduce::Algorithm::ReduceScatterAllGather;
  if (text == "composite") return ccl::all_reduce::Algorithm::Composite;
  return ccl::all_reduce::Algorithm::Auto;
}

std::string all_reduce_algorithm_name(ccl::all_reduce::Algorithm algorithm) {
  switch (algorithm) {
    case ccl::all_reduce::Algorithm::OneShot:
      return "one-shot";
    case ccl::all_reduce::Algorithm::ReduceScatterAllGather:
      return "rs-ag";
    case ccl::all_reduce::Algorithm::Composite:
      return "composite";
    case ccl::all_reduce::Algorithm::Auto:
      break;
  }
  return "auto";
}

ccl::all_gather::RingAlgorithm ag_ring_algorithm(const std::string& text) {
  if (text == "relay") return ccl::all_gather::RingAlgorithm::Relay;
  if (text == "multicast") return ccl::all_gather::RingAlgorithm::Multicast;
  return ccl::all_gather::RingAlgorithm::Auto;
}

ccl::all_gather::BidirectionalMode ag_bidirectional_mode(const std::string& text) {
  if (text == "split-tensor") return ccl::all_gather::BidirectionalMode::SplitTensor;
  if (text == "full-tensor") return ccl::all_gather::BidirectionalMode::FullTensor;
  return ccl::all_gather::BidirectionalMode::Auto;
}

std::string ag_bidirectional_mode_name(ccl::all_gather::BidirectionalMode mode) {
  switch (mode) {
    case ccl::all_gather::BidirectionalMode::SplitTensor:
      return "split-tensor";
    case ccl::all_gather::BidirectionalMode::FullTensor:
      return "full-tensor";
    case ccl::all_gather::BidirectionalMode::Auto:
      break;
  }
  return "auto";
}

ccl::all_to_all::SenderLayout a2a_senders(const std::string& text) {
  if (text == "per-destination") return ccl::all_to_all::SenderLayout::PerDestination;
  if (text == "per-direction") return ccl::all_to_all::SenderLayout::PerDirection;
  return ccl::all_to_all::SenderLayout::Auto;
}

}  // namespace cclmesh::cli::detail
