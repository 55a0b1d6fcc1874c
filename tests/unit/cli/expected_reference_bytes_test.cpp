// A served device's client counts the expected outputs it will hold before it makes them (and
// before it sends anything; op_runner.cpp): expected_reference_bytes from the op's groups and
// buffers must say what the check each op's preparation makes holds (reference_bytes), for every
// op, on the whole system and along an axis (session 42).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/device/sim_mesh_device.hpp"
#include "tools/cclmesh/op_buffers.hpp"
#include "tools/cclmesh/op_verification.hpp"
#include "tools/cclmesh/prepare_op.hpp"
#include "tools/cclmesh/sim_device_options.hpp"
#include "tools/cclmesh/workload_cache.hpp"
#include "topologies/system_loader.hpp"

namespace cclmesh::cli::detail {
namespace {

struct Case {
  CollectiveOp op;
  std::optional<std::uint32_t> cluster_axis;
  std::vector<std::uint32_t> chips;
};

std::string name_of(const Case& c) {
  return to_string(c.op) + (c.cluster_axis ? " along axis " + std::to_string(*c.cluster_axis) : " whole") +
         (c.chips.empty() ? "" : " on --chips");
}

TEST(ExpectedReferenceBytes, EqualsWhatEveryOpsCheckHolds) {
  const std::vector<CollectiveOp> ops{CollectiveOp::AllGather, CollectiveOp::AllBroadcast,
                                     CollectiveOp::ReduceScatter, CollectiveOp::AllReduce,
                                     CollectiveOp::Reduce,    CollectiveOp::Broadcast,
                                     CollectiveOp::AllToAll,  CollectiveOp::SendRecv};
  std::vector<Case> cases;
  for (CollectiveOp op : ops) {
    cases.push_back({op, std::nullopt, {}});
    cases.push_back({op, 1, {}});
    cases.push_back({op, std::nullopt, {0, 1, 3, 2}});
  }
  for (const Case& c : cases) {
    SCOPED_TRACE(name_of(c));
    RunOptions options;
    options.system = "t3k";
    options.op = c.op;
    options.size_bytes = 256 * 1024;
    options.topology = "line";
    options.cluster_axis = c.cluster_axis;
    options.chips = c.chips;
    sim::device::SimMeshDevice device(topo::load_system("t3k"), device_options(options, false, nullptr));
    OpBuffers buffers(device);
    WorkloadCache cache;
    const PreparedOp op = prepare_op(options, device, buffers, false, cache);
    const ReferenceBytes made = reference_bytes(op.verify);
    ASSERT_GT(made.held, 0u);
    const ReferenceBytes counted = expected_reference_bytes(c.op, op.groups, buffers.buffer_bytes_per_chip(0),
                                                            buffers.buffer_bytes_per_chip(1));
    EXPECT_EQ(counted.held, made.held);
    EXPECT_EQ(counted.read_back, made.read_back);
    buffers.free_all();
  }
}

}  // namespace
}  // namespace cclmesh::cli::detail
