#pragma once
// broadcast: copy a buffer from one chip (the root) into the output buffer of every chip of
// the fabric, the root included, with one fabric multicast per packet (REFERENCE 4.8, 7.6).
//
//   root:   reader  STREAM_TENSOR_TO_CB   input -> CB
//           writer  STREAM_CB_TO_TENSOR   CB -> local output + multicast (below)
//                   ATOMIC_INC multicast  +1 on every chip's done semaphore (and locally)
//   others: stream 0  WAIT_VALUE            done semaphore >= 1
// On a line the multicast reaches the chips before and after the root. On a ring
// (RingAlgorithm) either every packet goes both ways, n/2 chips forward and (n-1)/2 backward
// (BothWays: the root's worker writes each packet into both directions' routers, so it injects
// the tensor twice), or the pages split in two halves, the first multicast forward round the
// whole ring (n-1 chips), the second backward (Split: the root injects the tensor once and each
// direction's links carry half of it, at n-1 hops' latency instead of n/2).
// num_links L (at most the device fabric's routing planes, REFERENCE 3.5): L root workers per
// multicast (the cores along the row from `worker`), worker k multicasting the k-th of L runs of
// the pages over plane k's routers; a split has 2L, direction-major (worker d*L + k: direction d,
// plane k, the (d*L + k)-th of 2L runs), direction d's along the row from `worker` moved d rows
// down (on one row the two directions' writes shared NoC0's row links). Every chip's done
// semaphore (on `worker`) waits for one increment per root worker.
// Groups (GroupSelection, as all_gather's): by default one group of every chip of the fabric;
// with cluster_axis every row (axis 1) or column (axis 0) of the mesh is its own broadcast, all
// at once, each group's root the chip at the root chip's rank in its own group (the same
// position along every row or column, as an SPMD program would run it). When every group is a
// whole fabric ring each multicasts both ways round it; otherwise every group is a line,
// multicast to both of its ends and no further (a ring opened around a down link among them).

#include <cstddef>
#include <cstdint>
#include <string>

#include "runtime/ccl/common/ccl_common.hpp"
#include "runtime/ccl/common/collective.hpp"
#include "runtime/device/mesh_device.hpp"
#include "runtime/device/types.hpp"
#include "runtime/device/workload.hpp"
#include "runtime/fabric/fabric_plan.hpp"
#include "topologies/topology.hpp"

namespace cclmesh::runtime::ccl::broadcast {

// How groups that are whole fabric rings multicast (a line ignores it): above. Auto: Split for a
// tensor of at least num_links x (n-1) x kSplitMinBytesPerLinkAndHop on a ring of n chips whose
// n-1 hops a multicast reaches (kMaxFabricHops), else BothWays. The split's extra hops cost
// latency that its halved injection pays back from about that size: the measured crossovers
// (docs/collectives.md) were 12, 16, 24, 28, 44, 72 and 104 KiB on rings of 3, 4, 5, 6, 8, 12
// and 16 chips on one link, ~96 KiB on 8 and ~30 KiB on 4 on two; the rule was within 6% of the
// faster of the two at every size measured. An explicit Split is refused where the groups run
// as a line (a line fabric, 2-chip or partial groups) and round a ring longer than the hop
// limit; where the per-axis fabric opened a ring into a line around a down link
// (FabricOptions::down_edges) every group runs as a line whatever this says, as the other ops'
// ring algorithms do.
enum class RingAlgorithm : std::uint8_t { Auto, BothWays, Split };
std::string to_string(RingAlgorithm algorithm);
inline constexpr std::uint64_t kSplitMinBytesPerLinkAndHop = 6 * 1024;

struct Params {
  ChipId root = 0;             // with several groups: sets the root's rank in every group
  BufferHandle input = {};     // read on every group's root
  BufferHandle output = {};    // written on every chip of every group
  GroupSelection groups = {};  // default: every chip of the fabric, in fabric order
  FabricOptions fabric = {};
  RingAlgorithm ring_algorithm = RingAlgorithm::Auto;
  CoreCoord worker{0, 0};        // the done core on every chip, and the root's first sender
  std::uint32_t num_links = 1;  // routing planes used, one root worker each per multicast
  std::uint32_t packet_size_in_pages = 0;  // 0: as many as a fabric payload holds
  std::uint32_t cb_packets = 2;
  bool split_reader_writer = true;  // ccl_common.hpp add_copy_kernels
  bool operator==(const Params&) const = default;
};

std::size_t hash_value(const Params& params);

// What the ring groups run: BothWays or Split (BothWays where the groups run as a line, whose
// multicast goes to both of its ends). Throws CclParamsError where an explicit Split does not apply.
RingAlgorithm resolved_ring_algorithm(const Params& params, const topo::Topology& topology);
// The same, with why ("asked for", "auto: 1048576 B reach the split's 43008 B (...)", "the groups
// run as a line: ..."): what a run records (cclmesh's --json `algorithm_reason`).
struct RingAlgorithmChoice {
  RingAlgorithm algorithm = RingAlgorithm::Auto;
  std::string reason;
};
RingAlgorithmChoice ring_algorithm_choice(const Params& params, const topo::Topology& topology);

void validate(const Params& params, const topo::Topology& topology);
MeshWorkload build(const Params& params, const topo::Topology& topology);
void run(MeshDevice& device, const Params& params);

}  // namespace cclmesh::runtime::ccl::broadcast
