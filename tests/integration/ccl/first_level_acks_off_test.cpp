// FabricOptions::first_level_acks off (REFERENCE 6.4: the router before PR #33192, 2025-11, where
// a sender slot frees only on the completion ack) end to end with real data: all_gather,
// reduce_scatter and all_reduce on a T3K line, an N300 and the mid-2025 dateline-VC T3K ring (the
// era-accurate pairing: bubble flow control needs first-level acks and is refused without them),
// each output bit for bit against the host reference.
#include <gtest/gtest.h>

#include "tests/integration/ccl/ccl_runners.hpp"
#include "topologies/builtin_systems.hpp"

namespace cclmesh::ccltest {
namespace {

using runtime::ccl::DataType;
using runtime::ccl::Layout;
using runtime::ccl::TensorSpec;

struct Case {
  const char* name;
  topo::Topology (*system)();
  FabricMode mode;
};

std::unique_ptr<sim::device::SimMeshDevice> acks_off_device(const Case& c) {
  runtime::FabricOptions fabric = fabric_of(c.mode, runtime::FabricScope::System);
  fabric.first_level_acks = false;
  if (c.mode == FabricMode::Ring) fabric.ring_flow_control = runtime::RingFlowControl::Dateline;
  auto device = make_device(c.system(), fabric);
  EXPECT_FALSE(device->fabric_plan().routers().front().config.first_level_acks);
  return device;
}

CclTopology topology_of(const Case& c) { return c.mode == FabricMode::Ring ? CclTopology::Ring : CclTopology::Line; }

TensorSpec tiles(std::uint32_t height, std::uint32_t width) {
  return TensorSpec{{1, 1, height, width}, DataType::Bfloat16, Layout::Tile};
}

class FirstLevelAcksOff : public ::testing::TestWithParam<Case> {};

TEST_P(FirstLevelAcksOff, AllGather) {
  auto device = acks_off_device(GetParam());
  runtime::ccl::all_gather::Params p;
  p.input = tiles(64, 256);
  p.dim = 3;
  p.topology = topology_of(GetParam());
  EXPECT_TRUE(run_all_gather(*device, p, Memory{}, Memory{}).verified);
}

TEST_P(FirstLevelAcksOff, ReduceScatter) {
  auto device = acks_off_device(GetParam());
  runtime::ccl::reduce_scatter::Params p;
  p.input = tiles(64, 32 * 16);
  p.dim = 3;
  p.topology = topology_of(GetParam());
  EXPECT_TRUE(run_reduce_scatter(*device, p, Memory{}, Memory{}).verified);
}

TEST_P(FirstLevelAcksOff, AllReduce) {
  auto device = acks_off_device(GetParam());
  runtime::ccl::all_reduce::Params p;
  p.tensor = tiles(64, 32 * 16);
  p.topology = topology_of(GetParam());
  EXPECT_TRUE(run_all_reduce(*device, p, Memory{}).verified);
}

INSTANTIATE_TEST_SUITE_P(Fabrics, FirstLevelAcksOff,
                         ::testing::Values(Case{"t3k_line", topo::build_t3k, FabricMode::Line},
                                           Case{"n300_line", topo::build_n300, FabricMode::Line},
                                           Case{"t3k_dateline_ring", topo::build_t3k, FabricMode::Ring}),
                         [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace cclmesh::ccltest
