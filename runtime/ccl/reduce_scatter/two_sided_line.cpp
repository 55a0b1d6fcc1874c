#include "runtime/ccl/reduce_scatter/two_sided_line.hpp"

namespace cclmesh::runtime::ccl::reduce_scatter::plan {

// In a chain's own terms a worker at chain position q (the position for the rightward chain,
// N - 1 - position for the leftward one) sends N - 1 - q messages, message m being slice
// N - 1 - m (rightward) or m (leftward), and receives what chain position q - 1 sends. Chain
// position 0 sends its raw slices and reduces nothing. The rightward chain's last message at a
// position (slice position + 1) is the left partial of the owner position + 1, so it goes to that
// owner's leftward worker, except to the last position, which keeps the rightward chain's result
// (slice N - 1). Every other position's leftward worker is the owner's step: its last received
// message (of its own slice) plus its slice, plus the left partial, into the output.
ChainWorkers two_sided_line_workers(std::uint32_t n, std::uint32_t position) {
  const auto chain_worker = [&](bool rightward) {
    ChainWorker w;
    const std::uint32_t chain_position = rightward ? position : n - 1 - position;
    w.has_next = rightward ? position + 1 < n : position > 0;
    w.sends = n - 1 - chain_position;
    if (rightward) {
      // Middle positions forward every message (the last one goes to the leftward worker's third
      // input); the last position receives its result's partial.
      w.receives = position == 0 ? 0 : (position == n - 1 ? 1 : n - 1 - position);
      w.credited = position == 0 || position == n - 1 ? 0 : w.receives;
    } else {
      w.receives = position == n - 1 ? 0 : position + 1;
      w.credited = position == n - 1 ? 0 : position;
    }
    w.raw_messages = chain_position == 0 ? w.sends : 0;
    // Message m and received message m are of the same slice.
    for (std::uint32_t m = 0; m < w.raw_messages + w.receives; ++m) w.slices.push_back(rightward ? n - 1 - m : m);
    w.last_to_owner_step = rightward && position + 2 < n;
    w.adds_left_partial = !rightward && position > 0 && position + 1 < n;
    w.keeps_result = rightward ? position == n - 1 : position + 1 < n;
    return w;
  };
  return {chain_worker(true), chain_worker(false)};
}

Program two_sided_line_program(const Params& p, const topo::Topology& topology, const Resolved& r,
                               const FabricGroup& g, std::uint32_t position) {
  const std::vector<ChainWorkers> workers(r.runs / 2, two_sided_line_workers(g.size(), position));
  return two_sided_chains_program(p, topology, r, g, position, workers);
}

void require_two_sided_line_fits_l1(const Params& p, const topo::Topology& topology, const Resolved& r) {
  if (r.group_size < 3) return;  // no rank between the ends, so no owner's step
  // Position 1's leftward worker is an owner's step (the same CBs on every page run).
  const ChainWorker owner_step = two_sided_line_workers(r.group_size, 1).leftward;
  require_owner_step_fits_l1(p, topology, r, [&](std::uint32_t) { return owner_step; }, "two-sided line");
}

std::vector<reference::Bytes> two_sided_line_reference(const std::vector<std::vector<reference::Bytes>>& slices,
                                                       DataType dtype) {
  const auto n = static_cast<std::uint32_t>(slices.size());
  // first, first +- 1, ..., last
  const auto positions = [](std::uint32_t first, std::uint32_t last) {
    std::vector<std::uint32_t> out;
    for (std::uint32_t k = first;; k = first < last ? k + 1 : k - 1) {
      out.push_back(k);
      if (k == last) break;
    }
    return out;
  };
  // The whole slice in one part: the line's sums are the same on every page run.
  return two_sided_chains_reference(slices, dtype, {slices[0][0].size()}, [&](std::uint32_t s, std::uint32_t) {
    if (s == n - 1) return OwnerSum{positions(0, n - 1), {}};
    return OwnerSum{positions(n - 1, s), s > 0 ? positions(0, s - 1) : std::vector<std::uint32_t>{}};
  });
}

}  // namespace cclmesh::runtime::ccl::reduce_scatter::plan
