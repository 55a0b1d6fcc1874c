#pragma once
// The half-way ring reduce_scatter (RingAlgorithm::HalfWay; reduce_scatter.hpp has the algorithm
// and its reduction order): the two-sided line's partial chains (two_sided_chains.hpp) on a ring,
// the chain lengths of each run, what each position's workers do, one chip's program, and the
// host reference in the same order.

#include <cstdint>
#include <vector>

#include "runtime/ccl/common/host_reference.hpp"
#include "runtime/ccl/reduce_scatter/reduce_scatter.hpp"
#include "runtime/ccl/reduce_scatter/reduce_scatter_plan.hpp"
#include "runtime/ccl/reduce_scatter/two_sided_chains.hpp"
#include "runtime/device/workload.hpp"
#include "topologies/topology.hpp"

namespace cclmesh::runtime::ccl::reduce_scatter::plan {

// How far a slice's two partial chains reach on one page run: slice s's owner gets the partial of
// positions s - rightward, ..., s - 1 (sent rightward, position + 1 each hop) and of positions
// s + leftward, ..., s + 1 (sent leftward).
struct HalfWayChains {
  std::uint32_t rightward = 0;
  std::uint32_t leftward = 0;
};

// Sets of page runs with their own chain lengths: odd n one, (n-1)/2 both ways; even n two, the
// position opposite the owner (n/2 away both ways) heading the rightward chain in set 0 and the
// leftward one in set 1, so both directions of every link carry the same bytes.
inline std::uint32_t half_way_sets(std::uint32_t n) { return n % 2 == 0 ? 2 : 1; }
// The workers per link and direction a half-way ring runs for `workers_per_link` asked or chosen:
// on an even ring ceil(W / 2) per set, so 2 for W = 1 and 4 for the default 4 (the chain's count
// at bandwidth bound); on an odd ring W.
std::uint32_t half_way_workers_per_link(std::uint32_t n, std::uint32_t workers_per_link);
// The chain lengths of page run `page_run` (runs go link by link: run i is on link i % num_links,
// and its set is (i / num_links) % half_way_sets(n)).
HalfWayChains half_way_chains(std::uint32_t n, std::uint32_t page_run, std::uint32_t num_links);

// The workers of position `position` of an `n`-ring on a page run with chain lengths `chains`.
ChainWorkers half_way_ring_workers(std::uint32_t n, std::uint32_t position, HalfWayChains chains);

// The program of the chip at `position` of ring group `g` (r.half_way): per page run a rightward
// worker (run i) and a leftward one (run i + runs / 2) on the same pages.
Program half_way_ring_program(const Params& p, const topo::Topology& topology, const Resolved& r,
                              const FabricGroup& g, std::uint32_t position);

// Throws CclParamsError, naming the size, when a leftward worker's CBs (the raw, the chain's and
// the left partial's) do not fit a Tensix L1 (require_owner_step_fits_l1).
void require_half_way_fits_l1(const Params& p, const topo::Topology& topology, const Resolved& r);

// The outputs of every position from slices[p][s] (position p's input slice s), page run by page
// run (r.run_pages, contiguous in the slice): fold(s + kR, ..., s + 1, s) + fold(s - kL, ..., s - 1)
// (positions mod n) with the run's chain lengths.
std::vector<reference::Bytes> half_way_ring_reference(const std::vector<std::vector<reference::Bytes>>& slices,
                                                      DataType dtype, const Resolved& r, std::uint32_t num_links);

}  // namespace cclmesh::runtime::ccl::reduce_scatter::plan
