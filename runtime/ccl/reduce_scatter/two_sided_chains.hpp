#pragma once
// Two partial chains per page run, one rightward and one leftward, every message one neighbour
// hop: what the two-sided line (two_sided_line.hpp) and the half-way ring (half_way_ring.hpp) run.
// Each describes its workers (ChainWorker); this turns the descriptions into a chip's program,
// the workers' CBs, the L1 check of the owner's step, and the host reference's sums.
//
// Per page run a rightward worker (run i, sends to position + 1) and a leftward one (run
// i + runs / 2, sends to position - 1) on the same pages. A worker sends its messages to the next
// position: its first `raw_messages` are raw input slices, each later one a received partial plus
// this chip's slice. The rightward chain's partials land in region B of the next position's
// intermediate buffer, the leftward chain's in region A (intermediate_spec()). Each worker uses
// one fabric direction, so a chain's credits to its previous position are sent, one hop, by the
// other chain's worker on the same chip (its reader tells that worker's credit stream what it
// consumed). The owner's step: a leftward worker's last received message plus its slice, plus the
// rightward chain's partial of the same slice (the left partial, also in region B) as the
// reduction's third input.

#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include "runtime/ccl/common/host_reference.hpp"
#include "runtime/ccl/reduce_scatter/reduce_scatter.hpp"
#include "runtime/ccl/reduce_scatter/reduce_scatter_plan.hpp"
#include "runtime/device/workload.hpp"
#include "topologies/topology.hpp"

namespace cclmesh::runtime::ccl::reduce_scatter::plan {

// What one worker of a chain does on one chip and page run.
struct ChainWorker {
  bool has_next = false;           // a position to send to (not at a line's end)
  std::uint32_t sends = 0;         // messages to the next position
  std::uint32_t raw_messages = 0;  // the first ones: raw input slices, not reduced
  std::uint32_t receives = 0;      // messages from the previous position, each reduced with a slice
  std::uint32_t credited = 0;      // the first received ones, written over again (so credited)
  // The chain slice (FabricGroup position) of this chip's input each message takes: the raw
  // messages', then each received message's (what the reduction adds to it).
  std::vector<std::uint32_t> slices;
  bool last_to_owner_step = false;  // the last message is the next position's left partial
  bool adds_left_partial = false;   // the owner's step: the last reduction's third input
  bool keeps_result = false;        // the last reduction is this position's output
};

// A chip's two workers of one page run.
struct ChainWorkers {
  ChainWorker rightward;
  ChainWorker leftward;
};

// The program of the chip at `position` of group `g`, its workers page run by page run
// (workers[i]: runs i and i + r.runs / 2).
Program two_sided_chains_program(const Params& p, const topo::Topology& topology, const Resolved& r,
                                 const FabricGroup& g, std::uint32_t position, std::span<const ChainWorkers> workers);

// The CBs of `worker` on run `run`: the packet headers; the chain's (received partial, local
// input, reduced) when it receives; the left partial (a chunk) for the owner's step; the raw
// slices of its raw messages.
std::vector<CircularBufferSpec> two_sided_worker_cbs(const Params& p, const Resolved& r, std::uint32_t run,
                                                     const ChainWorker& worker);

// Throws CclParamsError, naming the size, when an owner's step's CBs do not fit a Tensix L1 (the
// device would refuse the program later, less clearly): `owner_step(i)` an owner's step worker on
// page run i, `algorithm` the error's name for it ("two-sided line").
void require_owner_step_fits_l1(const Params& p, const topo::Topology& topology, const Resolved& r,
                                const std::function<ChainWorker(std::uint32_t page_run)>& owner_step,
                                std::string_view algorithm);

// The owner's sum of a slice on some of its pages, by position: fold(own_chain) (the chain whose
// last step adds the owner's slice), then, unless empty, + fold(left_partial).
struct OwnerSum {
  std::vector<std::uint32_t> own_chain;
  std::vector<std::uint32_t> left_partial;
};

// The outputs of every position from slices[p][s] (position p's input slice s), each slice in
// parts of `part_bytes` (contiguous, in order), part k of slice s summed as sum_of(s, k).
std::vector<reference::Bytes> two_sided_chains_reference(
    const std::vector<std::vector<reference::Bytes>>& slices, DataType dtype,
    const std::vector<std::uint64_t>& part_bytes, const std::function<OwnerSum(std::uint32_t, std::uint32_t)>& sum_of);

}  // namespace cclmesh::runtime::ccl::reduce_scatter::plan
