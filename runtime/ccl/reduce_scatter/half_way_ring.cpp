#include "runtime/ccl/reduce_scatter/half_way_ring.hpp"

namespace cclmesh::runtime::ccl::reduce_scatter::plan {

std::uint32_t half_way_workers_per_link(std::uint32_t n, std::uint32_t workers_per_link) {
  return half_way_sets(n) == 1 ? workers_per_link : 2 * ((workers_per_link + 1) / 2);
}

HalfWayChains half_way_chains(std::uint32_t n, std::uint32_t page_run, std::uint32_t num_links) {
  if (half_way_sets(n) == 1) return {(n - 1) / 2, (n - 1) / 2};
  const bool opposite_goes_right = (page_run / num_links) % 2 == 0;
  return opposite_goes_right ? HalfWayChains{n / 2, n / 2 - 1} : HalfWayChains{n / 2 - 1, n / 2};
}

// Every position runs the same program, rotated. In a worker's own terms, with k its chain length
// (HalfWayChains: rightward for the rightward worker, leftward for the leftward one), it sends k
// messages to its next position, message m being the partial of slice position + k - m
// (rightward) or position - k + m (leftward): message 0 its raw slice, message m > 0 what it
// received as message m - 1 plus its own slice. The next position's message k - 1 is of this
// position's own slice: the leftward chain's lands with the leftward worker, which adds its own
// slice and then the rightward chain's (the left partial) and keeps the result; the rightward
// worker only forwards.
ChainWorkers half_way_ring_workers(std::uint32_t n, std::uint32_t position, HalfWayChains chains) {
  const auto chain_worker = [&](bool rightward) {
    const std::uint32_t k = rightward ? chains.rightward : chains.leftward;
    ChainWorker w;
    w.has_next = true;
    w.sends = k;
    w.raw_messages = 1;
    // Received messages this worker adds its slice to: the rightward worker's k - 1 (the k-th, of
    // this position's slice, is the left partial: the leftward worker's), the leftward worker's k,
    // the last its owner's step. Every one but the owner's step is written over again, so credited.
    w.receives = rightward ? k - 1 : k;
    w.credited = k - 1;
    // Message m's slice; received message m is of message m + 1's, m + 1 = k being this position's.
    for (std::uint32_t m = 0; m <= w.receives; ++m) {
      w.slices.push_back(rightward ? (position + k - m) % n : (position + n - k + m) % n);
    }
    w.last_to_owner_step = rightward;
    w.adds_left_partial = !rightward;
    w.keeps_result = !rightward;
    return w;
  };
  return {chain_worker(true), chain_worker(false)};
}

Program half_way_ring_program(const Params& p, const topo::Topology& topology, const Resolved& r,
                              const FabricGroup& g, std::uint32_t position) {
  std::vector<ChainWorkers> workers;
  for (std::uint32_t i = 0; i < r.runs / 2; ++i) {
    workers.push_back(half_way_ring_workers(g.size(), position, half_way_chains(g.size(), i, p.num_links)));
  }
  return two_sided_chains_program(p, topology, r, g, position, workers);
}

void require_half_way_fits_l1(const Params& p, const topo::Topology& topology, const Resolved& r) {
  const auto owner_step = [&](std::uint32_t page_run) {
    return half_way_ring_workers(r.group_size, 0, half_way_chains(r.group_size, page_run, p.num_links)).leftward;
  };
  require_owner_step_fits_l1(p, topology, r, owner_step, "half-way ring");
}

std::vector<reference::Bytes> half_way_ring_reference(const std::vector<std::vector<reference::Bytes>>& slices,
                                                      DataType dtype, const Resolved& r, std::uint32_t num_links) {
  const auto n = static_cast<std::uint32_t>(slices.size());
  std::vector<std::uint64_t> part_bytes;  // the page runs, contiguous in each slice
  std::uint64_t first_page = 0;
  for (std::uint32_t i = 0; i < r.runs / 2; ++i) {
    part_bytes.push_back(slice_image_offset(r, first_page + r.run_pages[i]) - slice_image_offset(r, first_page));
    first_page += r.run_pages[i];
  }
  return two_sided_chains_reference(slices, dtype, part_bytes, [&](std::uint32_t s, std::uint32_t page_run) {
    const HalfWayChains chains = half_way_chains(n, page_run, num_links);
    // The leftward chain from s + chains.leftward down to the owner, then the rightward chain from
    // s - chains.rightward up to s - 1 (the left partial).
    OwnerSum sum;
    for (std::uint32_t d = chains.leftward + 1; d-- > 0;) sum.own_chain.push_back((s + d) % n);
    for (std::uint32_t d = chains.rightward; d > 0; --d) sum.left_partial.push_back((s + n - d) % n);
    return sum;
  });
}

}  // namespace cclmesh::runtime::ccl::reduce_scatter::plan
