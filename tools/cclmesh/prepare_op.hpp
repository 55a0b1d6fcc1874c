#pragma once
// An op of `cclmesh run` prepared on a device: its buffers and semaphores created, its params
// built from the run's options, its workloads built (or taken from the cache), its inputs
// written and the check of its outputs ready.

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "runtime/device/mesh_device.hpp"
#include "runtime/device/types.hpp"
#include "tools/cclmesh/all_reduce_halves.hpp"
#include "tools/cclmesh/op_buffers.hpp"
#include "tools/cclmesh/op_verification.hpp"
#include "tools/cclmesh/run_options.hpp"
#include "tools/cclmesh/workload_cache.hpp"

namespace cclmesh::cli::detail {

using runtime::ChipId;

// What a prepared op leaves for the run: its workloads, the chips it runs on, how to check the
// result, and the figures the metrics need.
struct PreparedOp {
  WorkloadCache::Workloads workloads;
  std::uint32_t group_size = 0;
  // The op's groups as run, in rank order (send_recv: each group's sender and receiver).
  std::vector<std::vector<ChipId>> groups;
  std::uint64_t size_bytes = 0;   // nccl-tests S as run
  std::uint64_t count = 0;        // elements
  std::function<Check()> verify;  // empty with --no-data
  std::array<std::uint32_t, 4> shape{};  // the tensor size_bytes measures
  std::optional<std::uint32_t> dim;
  std::array<std::uint32_t, 2> input_shard{};  // elements, sharded runs only
  std::array<std::uint32_t, 2> output_shard{};
  std::string algorithm;  // what the op's builder chose, as its option names it, and why (RunResult's)
  std::string algorithm_reason;
  std::string algorithm_lines;  // the lines' where some rings ran as lines (RunResult's)
  std::string algorithm_lines_reason;
  bool algorithm_fallback = false;
  bool algorithm_lines_fallback = false;  // the lines' part's (RunResult's)
  std::optional<AllReduceHalves> algorithm_halves;
};

// The op's buffers are created through `buffers`, which gives them back after (OpBuffers).
// `cache` answers a second preparation of the same op (plan_before_building's, then the run's).
PreparedOp prepare_op(const RunOptions& options, runtime::MeshDevice& device, OpBuffers& buffers, bool ring,
                      WorkloadCache& cache);

}  // namespace cclmesh::cli::detail
