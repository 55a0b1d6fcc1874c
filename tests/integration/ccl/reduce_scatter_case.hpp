#pragma once
// One reduce_scatter end-to-end case and its run (real data, every chip's output checked bit for
// bit by run_reduce_scatter against reduce_scatter::reference_outputs), shared by the chain / line
// tests (reduce_scatter_test.cpp) and the half-way ring's (reduce_scatter_half_way_test.cpp).

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "runtime/ccl/reduce_scatter/reduce_scatter.hpp"
#include "tests/integration/ccl/ccl_runners.hpp"

namespace cclmesh::ccltest {

struct ReduceScatterCase {
  TensorSpec input;
  std::uint32_t dim = 3;
  CclTopology topology = CclTopology::Ring;
  Memory input_memory;  // DRAM, interleaved
  Memory output_memory;
  std::vector<std::vector<ChipId>> groups;
  std::optional<int> cluster_axis;
  std::uint32_t num_links = 1;
  std::optional<std::uint32_t> workers_per_link;  // unset: the op's size rule
  std::optional<std::uint32_t> chunk_packets;  // unset: the op's chunk fitted to each message
  std::uint32_t repeats = 1;
  std::uint32_t packet_pages = 0;  // 0: the op's default
  runtime::ccl::reduce_scatter::LineAlgorithm line_algorithm = runtime::ccl::reduce_scatter::LineAlgorithm::TwoSided;
  // Chain unless a test asks otherwise: the ring tests above the one-shot's were written for the
  // chain (its chunks, credits and barrier), and Auto would run most of them one-shot.
  runtime::ccl::reduce_scatter::RingAlgorithm ring_algorithm = runtime::ccl::reduce_scatter::RingAlgorithm::Chain;
};

inline RunOutcome run_reduce_scatter_case(sim::device::SimMeshDevice& device, const ReduceScatterCase& c) {
  runtime::ccl::reduce_scatter::Params p;
  p.input = c.input;
  p.dim = c.dim;
  p.topology = c.topology;
  p.num_links = c.num_links;
  p.workers_per_link = c.workers_per_link;
  p.groups.chips = c.groups;
  p.groups.cluster_axis = c.cluster_axis;
  p.packet_size_in_pages = c.packet_pages;
  p.chunk_packets = c.chunk_packets;
  p.line_algorithm = c.line_algorithm;
  p.ring_algorithm = c.ring_algorithm;
  const RunOutcome out = run_reduce_scatter(device, p, c.input_memory, c.output_memory, RunOptions{c.repeats});
  EXPECT_TRUE(out.verified);
  return out;
}

}  // namespace cclmesh::ccltest
