#pragma once
// What a run reports of its op on any device, local or served: when its kernels ran, what it
// put on each wire, the result row and the check of its outputs.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "runtime/device/mesh_device.hpp"
#include "runtime/fabric/fabric_plan.hpp"
#include "tools/cclmesh/prepare_op.hpp"
#include "tools/cclmesh/run_options.hpp"
#include "topologies/topology.hpp"

namespace cclmesh::cli::detail {

// When the op's kernels ran, from the profile entries the op added (from profile_begin on).
// time: the op's worker (Tensix) kernels, first start to last end. launch: the longest any
// kernel took from its start until its part of the data path was up: a worker until its
// fabric connections are open, a legacy EDM until it has handshaken with its peer. Per kernel,
// so a composite op's later phase and a launch skew do not count as set-up. Fabric routers
// were up before the op (launched once with the device) and are not in it.
struct OpTimes {
  std::int64_t first_start_ns = std::numeric_limits<std::int64_t>::max();
  std::int64_t last_end_ns = 0;
  std::int64_t longest_setup_ns = 0;
};

// Over the op's entries: MeshDevice::profile_since(the profile_size() taken before it was enqueued).
OpTimes op_times(const std::vector<runtime::KernelProfile>& op_entries);

// What the op put on each wire: the device's link counters after it less before it, and each
// wire's busy time as a share of the op's (first kernel start to last kernel end). None, and
// links_measured false, when the device does not measure its links.
void set_links_used(RunResult& result, const std::optional<std::vector<runtime::LinkTraffic>>& before,
                    const std::optional<std::vector<runtime::LinkTraffic>>& after, const OpTimes& times);

// What a run reports on any device: the op as run, its times (dispatch: from `enqueued_us`,
// device time, until the first kernel starts; the host's dispatch gap, REFERENCE 1.8) and
// bandwidths.
RunResult op_result(const RunOptions& options, runtime::MeshDevice& device, const runtime::FabricPlan& plan,
                    const PreparedOp& op, const topo::Topology& topology, const OpTimes& t, double enqueued_us);

// The outputs read back and compared with the host reference (nothing with --no-data).
void check_op(const PreparedOp& op, RunResult& result);

}  // namespace cclmesh::cli::detail
